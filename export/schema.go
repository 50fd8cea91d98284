package export

import (
	"fmt"
	"time"

	"github.com/golang/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"streamdbg/query"
	"streamdbg/state"
)

// schema is one state's Parquet schema with a converter per column.
type schema struct {
	schema *parquet.Schema
	cols   []column // in the schema's column order
	kinds  [6]kind  // per column of Columns
	index  [6]int   // schema column index per column of Columns
	nulls  [6]parquet.Value
}

type column struct {
	index int // the leaf column index in the schema
	src   int // index in Columns of the value it writes
	conv  func(any) (parquet.Value, error)
}

// kind is how a stored type name maps to a Parquet column.
type kind uint8

const (
	kJSON kind = iota
	kInt32
	kInt64
	kString
	kDouble
	kBool
	kTime
	kMillis // epoch milliseconds as a timestamp (timers)
	kBytes
)

// kindOf maps type names of our codecs and of Flink's serializers.
func kindOf(typeName string) kind {
	switch typeName {
	case "int64", "position", "java.lang.Long", "java.lang.Integer", "java.lang.Short", "java.lang.Byte":
		return kInt64
	case "string", "java.lang.String", "java.lang.Character":
		return kString
	case "float64", "java.lang.Double", "java.lang.Float":
		return kDouble
	case "bool", "java.lang.Boolean":
		return kBool
	case "time":
		return kTime
	case "bytes", "byte[]":
		return kBytes
	}
	return kJSON
}

func node(k kind) parquet.Node {
	var n parquet.Node
	switch k {
	case kInt32:
		n = parquet.Int(32)
	case kInt64:
		n = parquet.Int(64)
	case kString:
		n = parquet.String()
	case kDouble:
		n = parquet.Leaf(parquet.DoubleType)
	case kBool:
		n = parquet.Leaf(parquet.BooleanType)
	case kTime:
		n = parquet.Timestamp(parquet.Nanosecond)
	case kMillis:
		n = parquet.Timestamp(parquet.Millisecond)
	case kBytes:
		n = parquet.Leaf(parquet.ByteArrayType)
	default:
		n = parquet.JSON()
	}
	// PLAIN everywhere: every reader has it.
	return parquet.Optional(parquet.Encoded(n, &parquet.Plain))
}

func converter(k kind) func(any) (parquet.Value, error) {
	bad := func(v any, want string) (parquet.Value, error) {
		return parquet.Value{}, fmt.Errorf("%v (%T) is not %s", v, v, want)
	}
	switch k {
	case kInt32:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case int32:
				return parquet.Int32Value(x), nil
			}
			return bad(v, "an int32")
		}
	case kInt64, kMillis:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case int64:
				return parquet.Int64Value(x), nil
			case time.Time:
				if k == kMillis {
					return parquet.Int64Value(x.UnixMilli()), nil
				}
			}
			return bad(v, "an integer")
		}
	case kString:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case string:
				return parquet.ByteArrayValue([]byte(x)), nil
			}
			return bad(v, "a string")
		}
	case kDouble:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case float64:
				return parquet.DoubleValue(x), nil
			}
			return bad(v, "a number")
		}
	case kBool:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case bool:
				return parquet.BooleanValue(x), nil
			}
			return bad(v, "a boolean")
		}
	case kTime:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case time.Time:
				return parquet.Int64Value(x.UnixNano()), nil
			}
			return bad(v, "a time")
		}
	case kBytes:
		return func(v any) (parquet.Value, error) {
			switch x := v.(type) {
			case nil:
				return parquet.NullValue(), nil
			case []byte:
				return parquet.ByteArrayValue(x), nil
			}
			return bad(v, "bytes")
		}
	}
	return func(v any) (parquet.Value, error) {
		if v == nil {
			return parquet.NullValue(), nil
		}
		return parquet.ByteArrayValue(query.AppendJSON(nil, v)), nil
	}
}

// level gives a value of column src (in Columns order) its definition
// level and column index, as the column writers want them.
func (s *schema) level(src int, v parquet.Value) parquet.Value {
	if v.IsNull() {
		return s.nulls[src]
	}
	return v.Level(0, 1, s.index[src])
}

func newSchema(name string, kinds [6]kind) *schema {
	g := parquet.Group{}
	for i, c := range Columns {
		g[c] = node(kinds[i])
	}
	ps := parquet.NewSchema(name, g)
	s := &schema{schema: ps, kinds: kinds}
	for i, path := range ps.Columns() {
		src := -1
		for j, c := range Columns {
			if path[0] == c {
				src = j
			}
		}
		s.cols = append(s.cols, column{index: i, src: src, conv: converter(kinds[src])})
		s.index[src] = i
		s.nulls[src] = parquet.NullValue().Level(0, 0, i)
	}
	return s
}

func keyedSchema(m state.StateMeta, timers bool) *schema {
	uk := kindOf(m.UserKeyType)
	if m.Kind.IsList() {
		uk = kInt64
	}
	value := kindOf(m.ValueType)
	if timers {
		uk, value = kMillis, kJSON
	}
	return newSchema(m.StateName, [6]kind{kInt32, kInt32, kindOf(m.KeyType), kindOf(m.NamespaceType), uk, value})
}

func operatorSchema(m state.StateMeta) *schema {
	key := kJSON
	if m.Kind == state.KindBroadcast {
		key = kindOf(m.UserKeyType)
	}
	return newSchema(m.StateName, [6]kind{kInt32, kInt32, key, kJSON, kInt64, kindOf(m.ValueType)})
}

// fastSnappy is Parquet's SNAPPY codec with the standard (fast) encoder;
// the library's own picks the slower "better" compression level.
type fastSnappy struct{}

func (fastSnappy) String() string                            { return "SNAPPY" }
func (fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }
func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return snappy.Encode(dst[:cap(dst)], src), nil
}
func (fastSnappy) Decode(dst, src []byte) ([]byte, error) { return snappy.Decode(dst[:cap(dst)], src) }
