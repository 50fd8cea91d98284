package flink

import (
	"math"
	"unicode/utf16"

	"streamdbg/state"
)

// KeyGroupOf returns the key group of a key literal for one keyed state:
// Flink's murmur hash of the key's Java hashCode, modulo the operator's max
// parallelism. Only keys whose hashCode is reproducible are supported:
// Long, Integer, Short, Byte, Boolean, String and Tuples of those. A
// numeric key's literal may be a string that reads as its number, and a
// Tuple1 key's its one field.
func (sp *Savepoint) KeyGroupOf(meta state.StateMeta, key any) (int, bool) {
	for _, op := range sp.md.operators {
		if op.id != meta.OperatorID || op.maxParallelism <= 0 {
			continue
		}
		for _, st := range op.subtasks {
			if st.keyed == nil {
				continue
			}
			kh := sp.keyedHeaderOf(op, st.keyed)
			if kh.key == nil {
				continue
			}
			h, ok := javaHashCode(kh.key, key)
			if !ok {
				return 0, false
			}
			return state.KeyGroupForHash(h, op.maxParallelism), true
		}
	}
	return 0, false
}

// javaHashCode is the hashCode Java gives the value a serializer reads,
// for a dynamic value of the shape the serializer decodes to.
func javaHashCode(s serializer, v any) (int32, bool) {
	switch s {
	case longSer:
		x, ok := state.IntLiteral(v)
		return int32(x ^ int64(uint64(x)>>32)), ok
	case intSer:
		x, ok := state.IntLiteral(v)
		return int32(x), ok && x >= math.MinInt32 && x <= math.MaxInt32
	case shortSer:
		x, ok := state.IntLiteral(v)
		return int32(x), ok && x >= math.MinInt16 && x <= math.MaxInt16
	case byteSer:
		x, ok := state.IntLiteral(v)
		return int32(x), ok && x >= math.MinInt8 && x <= math.MaxInt8
	case boolSer:
		x, ok := v.(bool)
		if x {
			return 1231, ok
		}
		return 1237, ok
	case stringSer:
		x, ok := v.(string)
		return stringHashCode(x), ok
	}
	if rs, ok := s.(*rowDataSer); ok {
		b, ok := encodeKeyRow(rs.layout, v)
		if !ok {
			return 0, false
		}
		return rowHashCode(b), true
	}
	if t, ok := s.(*tupleSer); ok {
		fields, ok := tupleLiteral(len(t.fields), v)
		if !ok {
			return 0, false
		}
		// Flink's TupleN.hashCode: h = 31*h + hash(field), from f0 on.
		var h int32
		for i, f := range t.fields {
			fh, ok := javaHashCode(f, fields[i])
			if !ok {
				return 0, false
			}
			if i == 0 {
				h = fh
			} else {
				h = 31*h + fh
			}
		}
		return h, true
	}
	return 0, false
}

// stringHashCode is java.lang.String.hashCode over UTF-16 code units.
func stringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			a, b := utf16.EncodeRune(r)
			h = 31*h + int32(a)
			h = 31*h + int32(b)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// tupleLiteral is a key literal as the fields of a Flink TupleN key: a list
// of n values, an object of the n fields by their names (key.f0 = 1 AND
// key.f1 = 'x' pins one), or for a Tuple1 the field's own value (key = 3).
func tupleLiteral(n int, v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, len(x) == n
	case map[string]any:
		if len(x) != n {
			return nil, false
		}
		fields := make([]any, n)
		for name, f := range x {
			i, ok := state.TupleField(name)
			if !ok || i >= n {
				return nil, false
			}
			fields[i] = f
		}
		return fields, true
	}
	if n == 1 {
		return []any{v}, true
	}
	return nil, false
}
