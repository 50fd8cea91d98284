package export

import (
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"streamdbg/query"
	"streamdbg/state"
)

// schema is one state's Parquet schema with a converter per column.
type schema struct {
	schema   *parquet.Schema
	template *format.FileMetaData // the library's metadata for it (fileTemplate)
	err      error                // from fileTemplate
	cols     []column             // in the schema's column order
	kinds    [6]kind              // per column of Columns
	index    [6]int               // schema column index per column of Columns
}

type column struct {
	index int // the leaf column index in the schema
	src   int // index in Columns of the value it writes
	conv  func(any, *colBuf) error
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

// physical is the Parquet type a kind is stored as.
func physical(k kind) format.Type {
	switch k {
	case kInt32:
		return format.Int32
	case kInt64, kTime, kMillis:
		return format.Int64
	case kDouble:
		return format.Double
	case kBool:
		return format.Boolean
	}
	return format.ByteArray
}

// converter appends a dynamic value to a column of kind k.
func converter(k kind) func(any, *colBuf) error {
	bad := func(v any, want string) error {
		return fmt.Errorf("%v (%T) is not %s", v, v, want)
	}
	switch k {
	case kInt32:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case int32:
				c.int32(x)
			default:
				return bad(v, "an int32")
			}
			return nil
		}
	case kInt64, kMillis:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case int64:
				c.int64(x)
			case time.Time:
				if k != kMillis {
					return bad(v, "an integer")
				}
				c.int64(x.UnixMilli())
			default:
				return bad(v, "an integer")
			}
			return nil
		}
	case kString:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case string:
				c.bytes([]byte(x))
			default:
				return bad(v, "a string")
			}
			return nil
		}
	case kDouble:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case float64:
				c.double(x)
			default:
				return bad(v, "a number")
			}
			return nil
		}
	case kBool:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case bool:
				c.boolean(x)
			default:
				return bad(v, "a boolean")
			}
			return nil
		}
	case kTime:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case time.Time:
				c.int64(x.UnixNano())
			default:
				return bad(v, "a time")
			}
			return nil
		}
	case kBytes:
		return func(v any, c *colBuf) error {
			switch x := v.(type) {
			case nil:
				c.null()
			case []byte:
				c.bytes(x)
			default:
				return bad(v, "bytes")
			}
			return nil
		}
	}
	return func(v any, c *colBuf) error {
		if v == nil {
			c.null()
			return nil
		}
		c.scratch = query.AppendJSON(c.scratch[:0], v)
		c.bytes(c.scratch)
		return nil
	}
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
	}
	s.template, s.err = fileTemplate(ps)
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
