package query

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"strings"

	"streamdbg/state"
)

// prefilter.go compiles the conjuncts of a WHERE that a catalog can decide
// on encoded entries, per state: columns whose type has a fixed encoding
// (int64, float64, string, bool keys and values, the key group), literals,
// arithmetic, comparisons, BETWEEN and IN. A catalog calls the predicate
// before it decodes an entry and drops what it rejects. The evaluation
// follows the evaluator's rules exactly (compare, arith): a value that does
// not decode is NULL there too (it would display as Hex), and a conjunct
// that is NULL or false cannot be TRUE, so the row could not be kept. Any
// other conjunct is left to the evaluator, which still runs the whole WHERE
// on every row it gets: the prefilter only saves work, never changes a
// result.

// bkind is the type of an unboxed value.
type bkind uint8

const (
	bNull bkind = iota
	bInt
	bFloat
	bStr
	bBool
)

// bval is one value of a byte predicate, unboxed.
type bval struct {
	kind bkind
	i    int64
	f    float64
	s    []byte
	b    bool
	// nk is, for a string constant that reads as a number
	// (state.ParseNumber), the kind of that number (in i or f), which it
	// compares as with a number (numStr); bNull otherwise.
	nk bkind
}

// rawEntry is what a byte predicate reads of an entry, passed by value:
// in registers, so evaluating it neither allocates nor writes pointers.
type rawEntry struct {
	key, value []byte
	kg         int
}

// bexpr evaluates one expression on an encoded entry.
type bexpr func(e rawEntry) bval

// prefilterFor returns the KeyedScan.Prefilter of a WHERE, or nil when no
// conjunct can be decided on bytes for any type.
func prefilterFor(where *xexpr) func(m state.StateMeta) func(key, value []byte, keyGroup int) bool {
	if where == nil {
		return nil
	}
	conj := []*xexpr{where}
	if where.kind == xAnd {
		conj = where.args
	}
	return func(m state.StateMeta) func(key, value []byte, keyGroup int) bool {
		var preds []pred
		for _, x := range conj {
			if p := compilePred(x, m); p != nil {
				preds = append(preds, p)
			}
		}
		switch len(preds) {
		case 0:
			return nil
		case 1:
			if len(conj) == 1 && !mayOverflow(conj[0]) && conj[0].kind == xCmp {
				if rp := compileIntCmpRaw(conj[0], m); rp != nil {
					return rp
				}
			}
			p := preds[0]
			return func(key, value []byte, kg int) bool { return p(rawEntry{key, value, kg}) }
		}
		return func(key, value []byte, kg int) bool {
			e := rawEntry{key, value, kg}
			for _, p := range preds {
				if !p(e) {
					return false
				}
			}
			return true
		}
	}
}

// pred is a conjunct of a WHERE decided on bytes: true when it is TRUE,
// false when it is FALSE or NULL (either way the row is not kept). In a
// conjunction NULL and FALSE need not be told apart, which lets the
// common shapes compile to one closure.
type pred func(e rawEntry) bool

func compilePred(x *xexpr, m state.StateMeta) pred {
	if mayOverflow(x) {
		// int64 arithmetic that can overflow is an error in the evaluator:
		// a prefilter would drop the row (its wrapped value) instead.
		return nil
	}
	switch x.kind {
	case xCmp:
		if p := compileIntCmp(x, m); p != nil {
			return p
		}
	case xAnd:
		var parts []pred
		for _, y := range x.args {
			p := compilePred(y, m)
			if p == nil {
				return nil
			}
			parts = append(parts, p)
		}
		return func(e rawEntry) bool {
			for _, p := range parts {
				if !p(e) {
					return false
				}
			}
			return true
		}
	}
	b := compileBytes(x, m)
	if b == nil {
		return nil
	}
	return func(e rawEntry) bool { v := b(e); return v.kind == bBool && v.b }
}

// int64 column sources of compileIntCmp.
const (
	srcKey = iota
	srcValue
	srcKeyGroup
)

// intSource reports which int64 column x is, if it is one.
func intSource(x *xexpr, m state.StateMeta) (int, bool) {
	if x.kind != xCol {
		return 0, false
	}
	switch strings.ToLower(x.name) {
	case "key":
		return srcKey, m.KeyType == state.Int64.TypeName()
	case "value":
		return srcValue, m.ValueType == state.Int64.TypeName()
	case "key_group":
		return srcKeyGroup, true
	}
	return 0, false
}

// compileIntCmp compiles `col op c` and `col arith c1 op c2` (int64 column,
// integer literals) into one closure: the filters of most scans.
func compileIntCmp(x *xexpr, m state.StateMeta) pred {
	rp := compileIntCmpRaw(x, m)
	if rp == nil {
		return nil
	}
	return func(e rawEntry) bool { return rp(e.key, e.value, e.kg) }
}

// rawPred is a pred in the form KeyedScan.Prefilter calls, so that a WHERE
// of one int64 comparison is that one closure.
type rawPred func(key, value []byte, kg int) bool

// Comparison codes of compileIntCmpRaw.
const (
	cmpEq = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

func compileIntCmpRaw(x *xexpr, m state.StateMeta) rawPred {
	left, right := x.args[0], x.args[1]
	y, ok := right.lit.(int64)
	if right.kind != xLit || !ok {
		return nil
	}
	aop, c := byte(0), int64(0)
	if left.kind == xArith {
		cl, ok := left.args[1].lit.(int64)
		if left.args[1].kind != xLit || !ok || len(left.op) != 1 {
			return nil
		}
		aop, c, left = left.op[0], cl, left.args[0]
		if (aop == '%' || aop == '/') && c == 0 {
			return func([]byte, []byte, int) bool { return false } // NULL for every row
		}
	}
	src, ok := intSource(left, m)
	if !ok {
		return nil
	}
	var op int
	switch x.op {
	case "=":
		op = cmpEq
	case "!=", "<>":
		op = cmpNe
	case "<":
		op = cmpLt
	case "<=":
		op = cmpLe
	case ">":
		op = cmpGt
	case ">=":
		op = cmpGe
	default:
		return nil
	}
	if src == srcValue && aop == '%' && op == cmpEq {
		// `value % c = y` (a sample of the values; BenchmarkVsSQLite's
		// filter): per row only the remainder, no switch on the source,
		// the arithmetic or the comparison. Same result as the general
		// closure below (TestPrefilterChangesNoResult compares both
		// with the evaluator).
		return func(_, value []byte, _ int) bool {
			return len(value) == 8 && int64(binary.BigEndian.Uint64(value)^(1<<63))%c == y
		}
	}
	return func(key, value []byte, kg int) bool {
		var v int64
		switch src {
		case srcKeyGroup:
			v = int64(kg)
		default:
			b := value
			if src == srcKey {
				b = key
			}
			if len(b) != 8 {
				return false
			}
			v = int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		}
		switch aop {
		case '%':
			v %= c
		case '/':
			v /= c
		case '+':
			v += c
		case '-':
			v -= c
		case '*':
			v *= c
		}
		switch op {
		case cmpEq:
			return v == y
		case cmpNe:
			return v != y
		case cmpLt:
			return v < y
		case cmpLe:
			return v <= y
		case cmpGt:
			return v > y
		}
		return v >= y
	}
}

// column decoders of the fixed encodings (state's built-in codecs).
func bytesColumn(typeName string, get func(e rawEntry) []byte) bexpr {
	switch typeName {
	case state.Int64.TypeName():
		return func(e rawEntry) bval {
			b := get(e)
			if len(b) != 8 {
				return bval{}
			}
			return bval{kind: bInt, i: int64(binary.BigEndian.Uint64(b) ^ (1 << 63))}
		}
	case state.Float64.TypeName():
		return func(e rawEntry) bval {
			b := get(e)
			if len(b) != 8 {
				return bval{}
			}
			f, err := state.Float64.Decode(b)
			if err != nil {
				return bval{}
			}
			return bval{kind: bFloat, f: f}
		}
	case state.String.TypeName():
		return func(e rawEntry) bval { return bval{kind: bStr, s: get(e)} }
	case state.Bool.TypeName():
		return func(e rawEntry) bval {
			b := get(e)
			if len(b) != 1 || b[0] > 1 {
				return bval{}
			}
			return bval{kind: bBool, b: b[0] == 1}
		}
	}
	return nil
}

// iexpr is an int64 expression on an encoded entry; ok=false is NULL.
type iexpr func(e rawEntry) (int64, bool)

// compileInt compiles x when it is statically int64 for m (int64 columns,
// the key group, integer literals, and arithmetic over them): the common
// filters then run without a dynamic value.
func compileInt(x *xexpr, m state.StateMeta) iexpr {
	switch x.kind {
	case xLit:
		if v, ok := x.lit.(int64); ok {
			return func(rawEntry) (int64, bool) { return v, true }
		}
	case xCol:
		var get func(e rawEntry) []byte
		typ := ""
		switch strings.ToLower(x.name) {
		case "key_group":
			return func(e rawEntry) (int64, bool) { return int64(e.kg), true }
		case "key":
			get, typ = func(e rawEntry) []byte { return e.key }, m.KeyType
		case "value":
			get, typ = func(e rawEntry) []byte { return e.value }, m.ValueType
		}
		if get == nil || typ != state.Int64.TypeName() {
			return nil
		}
		return func(e rawEntry) (int64, bool) {
			b := get(e)
			if len(b) != 8 {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)), true
		}
	case xNeg:
		if a := compileInt(x.args[0], m); a != nil {
			return func(e rawEntry) (int64, bool) { v, ok := a(e); return -v, ok }
		}
	case xArith:
		a, b := compileInt(x.args[0], m), compileInt(x.args[1], m)
		if a == nil || b == nil {
			return nil
		}
		// A constant right operand (value % 1000) needs no call.
		if x.args[1].kind == xLit {
			y, _ := b(rawEntry{})
			switch x.op {
			case "%":
				if y == 0 {
					return func(rawEntry) (int64, bool) { return 0, false }
				}
				return func(e rawEntry) (int64, bool) { v, ok := a(e); return v % y, ok }
			case "/":
				if y == 0 {
					return func(rawEntry) (int64, bool) { return 0, false }
				}
				return func(e rawEntry) (int64, bool) { v, ok := a(e); return v / y, ok }
			}
		}
		op := x.op
		return func(e rawEntry) (int64, bool) {
			u, ok1 := a(e)
			v, ok2 := b(e)
			if !ok1 || !ok2 {
				return 0, false
			}
			r := barith(op, bval{kind: bInt, i: u}, bval{kind: bInt, i: v})
			return r.i, r.kind == bInt
		}
	}
	return nil
}

// compileBytes compiles x for entries of m, or returns nil.
func compileBytes(x *xexpr, m state.StateMeta) bexpr {
	if x.kind == xCmp {
		a, b := compileInt(x.args[0], m), compileInt(x.args[1], m)
		if a != nil && b != nil {
			op := x.op
			if x.args[1].kind == xLit {
				y, _ := b(rawEntry{})
				if op == "=" {
					return func(e rawEntry) bval {
						v, ok := a(e)
						return bval{kind: bBool, b: ok && v == y}
					}
				}
				return func(e rawEntry) bval {
					v, ok := a(e)
					return bval{kind: bBool, b: ok && cmpResult(op, cmp.Compare(v, y))}
				}
			}
			return func(e rawEntry) bval {
				u, ok1 := a(e)
				v, ok2 := b(e)
				return bval{kind: bBool, b: ok1 && ok2 && cmpResult(op, cmp.Compare(u, v))}
			}
		}
	}
	switch x.kind {
	case xLit:
		var v bval
		switch l := x.lit.(type) {
		case int64:
			v = bval{kind: bInt, i: l}
		case float64:
			v = bval{kind: bFloat, f: l}
		case string:
			v = bval{kind: bStr, s: []byte(l)}
			switch n, _ := state.ParseNumber(l); n := n.(type) {
			case int64:
				v.nk, v.i = bInt, n
			case float64:
				v.nk, v.f = bFloat, n
			}
		case bool:
			v = bval{kind: bBool, b: l}
		case nil:
		default:
			return nil
		}
		return func(rawEntry) bval { return v }
	case xCol:
		switch strings.ToLower(x.name) {
		case "key":
			return bytesColumn(m.KeyType, func(e rawEntry) []byte { return e.key })
		case "value":
			return bytesColumn(m.ValueType, func(e rawEntry) []byte { return e.value })
		case "key_group":
			return func(e rawEntry) bval { return bval{kind: bInt, i: int64(e.kg)} }
		}
		return nil
	case xNeg:
		a := compileBytes(x.args[0], m)
		if a == nil {
			return nil
		}
		return func(e rawEntry) bval {
			v := a(e)
			switch v.kind {
			case bInt:
				return bval{kind: bInt, i: -v.i}
			case bFloat:
				return bval{kind: bFloat, f: -v.f}
			}
			return bval{}
		}
	case xArith:
		a, b := compileBytes(x.args[0], m), compileBytes(x.args[1], m)
		if a == nil || b == nil {
			return nil
		}
		op := x.op
		return func(e rawEntry) bval { return barith(op, a(e), b(e)) }
	case xCmp:
		a, b := compileBytes(x.args[0], m), compileBytes(x.args[1], m)
		if a == nil || b == nil {
			return nil
		}
		op := x.op
		return func(e rawEntry) bval {
			c, ok := bcompare(a(e), b(e))
			if !ok {
				return bval{}
			}
			return bval{kind: bBool, b: cmpResult(op, c)}
		}
	case xBetween:
		a, lo, hi := compileBytes(x.args[0], m), compileBytes(x.args[1], m), compileBytes(x.args[2], m)
		if a == nil || lo == nil || hi == nil {
			return nil
		}
		not := x.not
		return func(e rawEntry) bval {
			v := a(e)
			c1, ok1 := bcompare(v, lo(e))
			c2, ok2 := bcompare(v, hi(e))
			// v >= lo AND v <= hi, three-valued.
			r1, r2 := bval{}, bval{}
			if ok1 {
				r1 = bval{kind: bBool, b: c1 >= 0}
			}
			if ok2 {
				r2 = bval{kind: bBool, b: c2 <= 0}
			}
			r := band(r1, r2)
			if not && r.kind == bBool {
				r.b = !r.b
			}
			return r
		}
	case xIn:
		a := compileBytes(x.args[0], m)
		if a == nil {
			return nil
		}
		var list []bexpr
		for _, y := range x.args[1:] {
			p := compileBytes(y, m)
			if p == nil {
				return nil
			}
			list = append(list, p)
		}
		not := x.not
		return func(e rawEntry) bval {
			v := a(e)
			if v.kind == bNull {
				return bval{}
			}
			sawNull := false
			for _, p := range list {
				c, ok := bcompare(v, p(e))
				if !ok {
					sawNull = true
					continue
				}
				if c == 0 {
					return bval{kind: bBool, b: !not}
				}
			}
			if sawNull {
				return bval{}
			}
			return bval{kind: bBool, b: not}
		}
	case xAnd:
		// Nested ANDs (inside the top level's are flattened by the caller):
		// every part must compile, else the whole is left to the evaluator.
		var parts []bexpr
		for _, y := range x.args {
			p := compileBytes(y, m)
			if p == nil {
				return nil
			}
			parts = append(parts, p)
		}
		return func(e rawEntry) bval {
			r := bval{kind: bBool, b: true}
			for _, p := range parts {
				if r = band(r, p(e)); r.kind == bBool && !r.b {
					return r
				}
			}
			return r
		}
	}
	return nil
}

// band is three-valued AND over booleans; anything else is NULL.
func band(a, b bval) bval {
	if a.kind == bBool && !a.b || b.kind == bBool && !b.b {
		return bval{kind: bBool, b: false}
	}
	if a.kind == bBool && b.kind == bBool {
		return bval{kind: bBool, b: true}
	}
	return bval{}
}

func cmpResult(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "!=", "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// bcompare is compare for unboxed values.
func bcompare(a, b bval) (int, bool) {
	if b.nk != bNull && (a.kind == bInt || a.kind == bFloat) {
		b.kind = b.nk
	}
	if a.nk != bNull && (b.kind == bInt || b.kind == bFloat) {
		a.kind = a.nk
	}
	switch a.kind {
	case bInt:
		switch b.kind {
		case bInt:
			return cmp.Compare(a.i, b.i), true
		case bFloat:
			return cmp.Compare(float64(a.i), b.f), true
		}
	case bFloat:
		switch b.kind {
		case bInt:
			return cmp.Compare(a.f, float64(b.i)), true
		case bFloat:
			return cmp.Compare(a.f, b.f), true
		}
	case bStr:
		if b.kind == bStr {
			return bytes.Compare(a.s, b.s), true
		}
	case bBool:
		if b.kind == bBool {
			return cmpBool(a.b, b.b), true
		}
	}
	return 0, false
}

// barith is arith for unboxed values.
func barith(op string, a, b bval) bval {
	if a.kind == bInt && b.kind == bInt {
		x, y := a.i, b.i
		switch op {
		case "+":
			return bval{kind: bInt, i: x + y}
		case "-":
			return bval{kind: bInt, i: x - y}
		case "*":
			return bval{kind: bInt, i: x * y}
		case "/":
			if y == 0 {
				return bval{}
			}
			return bval{kind: bInt, i: x / y}
		case "%":
			if y == 0 {
				return bval{}
			}
			return bval{kind: bInt, i: x % y}
		}
		return bval{}
	}
	x, ok1 := bfloat(a)
	y, ok2 := bfloat(b)
	if !ok1 || !ok2 {
		return bval{}
	}
	switch op {
	case "+":
		return bval{kind: bFloat, f: x + y}
	case "-":
		return bval{kind: bFloat, f: x - y}
	case "*":
		return bval{kind: bFloat, f: x * y}
	case "/":
		if y == 0 {
			return bval{}
		}
		return bval{kind: bFloat, f: x / y}
	case "%":
		if y == 0 {
			return bval{}
		}
		return bval{kind: bFloat, f: math.Mod(x, y)}
	}
	return bval{}
}

func bfloat(v bval) (float64, bool) {
	switch v.kind {
	case bInt:
		return float64(v.i), true
	case bFloat:
		return v.f, true
	}
	return 0, false
}

// neededColumns is the set of keyed columns a program reads anywhere (its
// outputs, WHERE, ORDER BY and GROUP BY); a star needs all.
func neededColumns(xs ...*xexpr) (need state.Columns, all bool) {
	var walk func(x *xexpr)
	walk = func(x *xexpr) {
		if x == nil {
			return
		}
		if x.kind == xCol {
			switch strings.ToLower(x.name) {
			case "key":
				need |= state.ColKey
			case "namespace":
				need |= state.ColNamespace
			case "user_key":
				need |= state.ColUserKey
			case "value":
				need |= state.ColValue
			}
		}
		if x.star && x.kind != xCall {
			all = true
		}
		for _, a := range x.args {
			walk(a)
		}
	}
	for _, x := range xs {
		walk(x)
	}
	return need, all
}

// mayOverflow reports whether x holds arithmetic whose int64 result may not
// fit: negation, + - *, and division by anything but a constant other
// than -1. (% never overflows.)
func mayOverflow(x *xexpr) bool {
	if x == nil {
		return false
	}
	switch x.kind {
	case xNeg:
		return true
	case xArith:
		switch x.op {
		case "+", "-", "*":
			return true
		case "/":
			if d, ok := x.args[1].lit.(int64); x.args[1].kind != xLit || !ok || d == -1 {
				return true
			}
		}
	}
	for _, a := range x.args {
		if mayOverflow(a) {
			return true
		}
	}
	return false
}
