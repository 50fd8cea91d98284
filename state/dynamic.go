package state

import (
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Row is a dynamic value whose fields have an order: a Flink SQL RowData
// (Kind is its RowKind), a tagged record (its schema's Type names what it
// is, e.g. "Ttl", "StreamRecord", "Lockable": JSON shows the tag as a
// "type" field before the others), or a plain record (neither). Fields are
// found by name, or by position as f0, f1, … when they have no name.
//
// Rows are small (a scan decodes millions): what every row of one type
// shares is in its Schema, which is never modified.
type Row struct {
	Values []any
	Schema *RowSchema // nil: no type tag, no names
	Kind   RowKind
}

// RowSchema is what the rows of one type share: the tag of a tagged record
// and the field names (an empty name: the field is shown by position).
type RowSchema struct {
	Type  string
	Names []string
}

// NewSchema makes a schema of a record type (typ "" for a plain record).
func NewSchema(typ string, names ...string) *RowSchema {
	return &RowSchema{Type: typ, Names: names}
}

// RowKind is Flink's RowKind of a RowData, or NotRowData for a record.
type RowKind uint8

const (
	NotRowData   RowKind = iota
	Insert               // +I
	UpdateBefore         // -U
	UpdateAfter          // +U
	Delete               // -D
)

var rowKindNames = [...]string{"", "+I", "-U", "+U", "-D"}

// String is Flink's short string of the kind (+I, -U, +U, -D), "" for a
// record.
func (k RowKind) String() string {
	if int(k) < len(rowKindNames) {
		return rowKindNames[k]
	}
	return "?"
}

// Type is the record's tag, "" for a RowData or a plain record.
func (r *Row) Type() string {
	if r.Schema == nil {
		return ""
	}
	return r.Schema.Type
}

// Names are the field names, nil when none is known.
func (r *Row) Names() []string {
	if r.Schema == nil {
		return nil
	}
	return r.Schema.Names
}

// FieldName is the name of field i: its declared name, else f<i>.
func (r *Row) FieldName(i int) string {
	if names := r.Names(); i < len(names) && names[i] != "" {
		return names[i]
	}
	return "f" + strconv.Itoa(i)
}

// Field returns the field called name: by declared name first, then by
// position (f0, f1, …).
func (r *Row) Field(name string) (any, bool) {
	for i, n := range r.Names() {
		if n == name && i < len(r.Values) {
			return r.Values[i], true
		}
	}
	if len(name) > 1 && name[0] == 'f' {
		if i, err := strconv.Atoi(name[1:]); err == nil && i >= 0 && i < len(r.Values) && strconv.Itoa(i) == name[1:] {
			return r.Values[i], true
		}
	}
	return nil, false
}

// String prints a row as Flink prints RowData, +I[2, 4, 'Hello'], a tagged
// record as Type(name=value, …) and a plain record as {name=value, …}.
func (r *Row) String() string {
	var b strings.Builder
	r.appendText(&b)
	return b.String()
}

func (r *Row) appendText(b *strings.Builder) {
	if r.Kind == NotRowData {
		open, end := byte('{'), byte('}')
		if t := r.Type(); t != "" {
			b.WriteString(t)
			open, end = '(', ')'
		}
		b.WriteByte(open)
		for i, v := range r.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.FieldName(i))
			b.WriteByte('=')
			appendValueText(b, v)
		}
		b.WriteByte(end)
		return
	}
	b.WriteString(r.Kind.String())
	b.WriteByte('[')
	for i, v := range r.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		appendValueText(b, v)
	}
	b.WriteByte(']')
}

// appendValueText prints a value inside a row: strings quoted, as SQL
// literals are, so that a row of strings reads unambiguously.
func appendValueText(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case string:
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(x, "'", "''"))
		b.WriteByte('\'')
	case *Row:
		x.appendText(b)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case Decimal:
		b.WriteString(string(x))
	case []byte:
		b.WriteString("x'" + hex.EncodeToString(x) + "'")
	case Hex:
		b.WriteString(x.String())
	case time.Time:
		b.WriteString(x.UTC().Format(time.RFC3339Nano))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			appendValueText(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteByte('=')
			appendValueText(b, x[k])
		}
		b.WriteByte('}')
	case interface{ String() string }:
		b.WriteString(x.String())
	default:
		b.WriteString("?")
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Pairs is a dynamic map whose keys need not be strings (rows, numbers,
// arrays: SQL MAP and MULTISET values, Flink's map serializers), as its
// key/value pairs in their stored order.
type Pairs []Pair

// Pair is one key and its value.
type Pair struct {
	Key, Value any
}

// String prints the pairs as {k=v, …}.
func (e Pairs) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range e {
		if i > 0 {
			b.WriteString(", ")
		}
		appendValueText(&b, p.Key)
		b.WriteByte('=')
		appendValueText(&b, p.Value)
	}
	b.WriteByte('}')
	return b.String()
}

// Decimal is an exact decimal number (SQL DECIMAL) as its text: an optional
// minus sign, digits, and the fraction digits of its scale ("-12.30").
type Decimal string

// String is the decimal's text.
func (d Decimal) String() string { return string(d) }

// Float is the nearest float64.
func (d Decimal) Float() float64 {
	f, err := strconv.ParseFloat(string(d), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// Rat is the exact value, or nil when the text is not a decimal.
func (d Decimal) Rat() *big.Rat {
	r, ok := new(big.Rat).SetString(string(d))
	if !ok {
		return nil
	}
	return r
}

// NewDecimal formats an unscaled integer with scale fraction digits.
func NewDecimal(unscaled *big.Int, scale int) Decimal {
	s := unscaled.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	} else if scale < 0 && s != "0" {
		s += strings.Repeat("0", -scale)
	}
	if neg {
		s = "-" + s
	}
	return Decimal(s)
}
