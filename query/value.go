package query

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"streamdbg/state"
)

// vtype is what the checker knows statically of a value: a column's type, a
// literal's, or tAny for dynamic values (key, value, paths into them) whose
// type is only known row by row.
type vtype uint8

const (
	tAny vtype = iota
	tNull
	tBool
	tInt
	tFloat
	tString
	tTime
	tBytes
)

var vtypeNames = [...]string{tAny: "any", tNull: "null", tBool: "bool", tInt: "int64", tFloat: "float64", tString: "string", tTime: "time", tBytes: "bytes"}

func (t vtype) String() string { return vtypeNames[t] }

func (t vtype) numeric() bool { return t == tInt || t == tFloat }

// typeOf is the static type of a dynamic value.
func typeOf(v any) vtype {
	switch v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case int64:
		return tInt
	case float64:
		return tFloat
	case string:
		return tString
	case time.Time:
		return tTime
	case []byte, state.Hex:
		return tBytes
	}
	return tAny
}

// typeName names the type of a dynamic value in messages.
func typeName(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case map[string]any, state.Pairs:
		return "object"
	case *state.Row:
		return "row"
	case state.Decimal:
		return "decimal"
	}
	if t := typeOf(v); t != tAny {
		return t.String()
	}
	return "unknown"
}

// comparable reports whether values of static types a and b can be
// compared; lit is the constant on one side, if any, for time literals.
func comparableTypes(a, b vtype) bool {
	switch {
	case a == tAny || b == tAny || a == tNull || b == tNull:
		return true
	case a.numeric() && b.numeric():
		return true
	case a == b:
		return true
	case a == tTime && b == tString, a == tString && b == tTime:
		return true
	case a == tBytes && b == tString, a == tString && b == tBytes:
		return true
	}
	return false
}

// compare orders two dynamic values of comparable types. ok is false when
// either is NULL or their types cannot be compared (the comparison is then
// NULL). Numbers compare across int64 and float64; a time compares with an
// RFC 3339 string, bytes with a "0x..." string.
func compare(a, b any) (c int, ok bool) {
	a, b = scalarOf(a), scalarOf(b)
	if x, ok := b.(numStr); ok {
		b = x.against(a)
	}
	if x, ok := a.(numStr); ok {
		a = x.against(b)
	}
	switch x := a.(type) {
	case state.Decimal:
		return compareDecimal(x, b)
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y), true
		case float64:
			return cmp.Compare(float64(x), y), true
		case state.Decimal:
			c, ok := compareDecimal(y, a)
			return -c, ok
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, float64(y)), true
		case float64:
			return cmp.Compare(x, y), true
		case state.Decimal:
			c, ok := compareDecimal(y, a)
			return -c, ok
		}
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y), true
		case time.Time, []byte, state.Hex:
			c, ok := compare(b, a)
			return -c, ok
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmpBool(x, y), true
		}
	case time.Time:
		switch y := b.(type) {
		case time.Time:
			return x.Compare(y), true
		case string:
			if t, ok := parseTime(y); ok {
				return x.Compare(t), true
			}
		}
	case []byte:
		return compareBytes(x, b)
	case state.Hex:
		return compareBytes(x, b)
	}
	return 0, false
}

// numStr is a string constant that reads as a number (state.ParseNumber),
// compared with a value whose type is known only row by row (key, value,
// paths into them): against a number it is that number, against anything
// else its text. So `value = '3'` finds the int64 3 as Flink SQL, casting
// '3' to a BIGINT column's type, would, and still finds the string "3".
// Only constants are read so: a string value of a row never compares as a
// number.
type numStr struct {
	s string
	n any // int64 or float64
}

func (x numStr) against(other any) any {
	switch other.(type) {
	case int64, float64, state.Decimal:
		return x.n
	}
	return x.s
}

// scalarOf is the field of a one-field row, so that a Flink SQL key of one
// column (ROW<b BIGINT>) compares with a literal as its column does; any
// other value is itself.
func scalarOf(v any) any {
	if r, ok := v.(*state.Row); ok && len(r.Values) == 1 && r.Type() == "" {
		return r.Values[0]
	}
	return v
}

// compareDecimal compares a decimal exactly with a decimal or an integer,
// and as a float64 with a float64.
func compareDecimal(x state.Decimal, b any) (int, bool) {
	switch y := b.(type) {
	case float64:
		return cmp.Compare(x.Float(), y), true
	case int64:
		if r := x.Rat(); r != nil {
			return r.Cmp(new(big.Rat).SetInt64(y)), true
		}
	case state.Decimal:
		if r, s := x.Rat(), y.Rat(); r != nil && s != nil {
			return r.Cmp(s), true
		}
	}
	return 0, false
}

func compareBytes(x []byte, b any) (int, bool) {
	switch y := b.(type) {
	case []byte:
		return bytes.Compare(x, y), true
	case state.Hex:
		return bytes.Compare(x, y), true
	case string:
		if h, ok := parseHex(y); ok {
			return bytes.Compare(x, h), true
		}
	}
	return 0, false
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// parseTime reads an RFC 3339 time, or a date alone (midnight UTC).
func parseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// parseHex reads "0x..." into bytes.
func parseHex(s string) ([]byte, bool) {
	if len(s) < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return nil, false
	}
	b, err := hex.DecodeString(s[2:])
	return b, err == nil
}

// orderRank orders values of different types for ORDER BY, MIN and MAX:
// NULL first, then bool, numbers, strings, times, bytes, lists, objects.
func orderRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int64, float64, state.Decimal:
		return 2
	case string:
		return 3
	case time.Time:
		return 4
	case []byte, state.Hex:
		return 5
	case []any, *state.Row:
		return 6
	}
	return 7
}

// orderCompare is a total order over dynamic values, for sorting.
func orderCompare(a, b any) int {
	ra, rb := orderRank(a), orderRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	if ra == 0 {
		return 0
	}
	if c, ok := compare(a, b); ok {
		return c
	}
	return strings.Compare(formatText(a), formatText(b))
}

// arith applies + - * / % to two dynamic values: int64 with int64 stays
// int64, a float64 (or decimal) on either side makes a float64. NULL,
// non-numbers and division by zero give NULL. An int64 result that does
// not fit (it would wrap) sets overflow: the caller reports it, naming the
// expression.
func arith(op string, a, b any) (v any, overflow bool) {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			switch op {
			case "+":
				r := x + y
				return r, (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0)
			case "-":
				r := x - y
				return r, (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0)
			case "*":
				if x == 0 || y == 0 {
					return int64(0), false
				}
				r := x * y
				return r, r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64)
			case "/":
				if y == 0 {
					return nil, false
				}
				return x / y, x == math.MinInt64 && y == -1
			case "%":
				if y == 0 {
					return nil, false
				}
				if y == -1 {
					return int64(0), false
				}
				return x % y, false
			}
			return nil, false
		}
	}
	x, ok1 := toFloat(a)
	y, ok2 := toFloat(b)
	if !ok1 || !ok2 {
		return nil, false
	}
	switch op {
	case "+":
		return x + y, false
	case "-":
		return x - y, false
	case "*":
		return x * y, false
	case "/":
		if y == 0 {
			return nil, false
		}
		return x / y, false
	case "%":
		if y == 0 {
			return nil, false
		}
		return math.Mod(x, y), false
	}
	return nil, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case state.Decimal:
		return x.Float(), true
	}
	return 0, false
}

func negate(v any) any {
	switch x := v.(type) {
	case state.Decimal:
		if strings.HasPrefix(string(x), "-") {
			return state.Decimal(x[1:])
		}
		return "-" + x
	case int64:
		return -x
	case float64:
		return -x
	}
	return nil
}

// formatTime prints a time as RFC 3339, with milliseconds when it has any;
// a time outside the years 0000–9999, which RFC 3339 cannot write (a Flink
// timer at Long.MIN_VALUE+10), as state.Sentinel names it.
func formatTime(t time.Time) string {
	if y := t.Year(); y < 0 || y > 9999 {
		if s, ok := state.Sentinel(t.UnixMilli()); ok {
			return s
		}
	}
	if t.Nanosecond() == 0 {
		return t.Format(time.RFC3339)
	}
	return t.Format("2006-01-02T15:04:05.000Z07:00")
}

// formatText prints a dynamic value for a table cell or a CSV field.
func formatText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return formatTime(x)
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case state.Hex:
		return "0x" + hex.EncodeToString(x)
	case state.Decimal:
		return string(x)
	case *state.Row:
		return x.String()
	}
	return string(appendJSON(nil, v))
}
