package flink

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf16"
)

// The encoder side of the serializers, for rewriting state (rewrite.go):
// the inverse of decode for the serializers whose layout is fixed by their
// snapshot. Anything else is an error naming the serializer, never a guess.

// encodeValue appends the serialized form of a dynamic value.
func encodeValue(s serializer, dst []byte, v any) ([]byte, error) {
	bad := func(want string) ([]byte, error) {
		return nil, fmt.Errorf("%v (%T) is not %s (serializer %s)", v, v, want, typeOf(s))
	}
	integer := func(lo, hi int64) (int64, bool) {
		x, ok := v.(int64)
		return x, ok && x >= lo && x <= hi
	}
	switch s {
	case longSer:
		x, ok := v.(int64)
		if !ok {
			return bad("an integer")
		}
		return binary.BigEndian.AppendUint64(dst, uint64(x)), nil
	case intSer:
		x, ok := integer(math.MinInt32, math.MaxInt32)
		if !ok {
			return bad("a 32-bit integer")
		}
		return binary.BigEndian.AppendUint32(dst, uint32(int32(x))), nil
	case shortSer:
		x, ok := integer(math.MinInt16, math.MaxInt16)
		if !ok {
			return bad("a 16-bit integer")
		}
		return binary.BigEndian.AppendUint16(dst, uint16(int16(x))), nil
	case byteSer:
		x, ok := integer(math.MinInt8, math.MaxInt8)
		if !ok {
			return bad("an 8-bit integer")
		}
		return append(dst, byte(int8(x))), nil
	case doubleSer, floatSer:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			return bad("a number")
		}
		if s == floatSer {
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case boolSer:
		x, ok := v.(bool)
		if !ok {
			return bad("a boolean")
		}
		if x {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case stringSer:
		x, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		return appendFlinkString(dst, x), nil
	case bytesSer:
		x, ok := v.([]byte)
		if !ok {
			return bad("bytes")
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(x)))
		return append(dst, x...), nil
	}
	if t, ok := s.(*tupleSer); ok {
		fields, ok := v.([]any)
		if !ok || len(fields) != len(t.fields) {
			return bad(fmt.Sprintf("a list of %d fields", len(t.fields)))
		}
		var err error
		for i, f := range t.fields {
			if dst, err = encodeValue(f, dst, fields[i]); err != nil {
				return nil, fmt.Errorf("field f%d: %w", i, err)
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("values of serializer %s cannot be written", typeOf(s))
}

// nullEncoding is what a serializer writes for null where it can (a
// String: length+1 = 0); the others write nothing (Flink's own cannot
// write null at all, and its readers skip the value after a null flag).
func nullEncoding(s serializer) []byte {
	if s == stringSer {
		return []byte{0}
	}
	return nil
}

// canEncode reports whether encodeValue knows a serializer.
func canEncode(s serializer) bool {
	switch s {
	case longSer, intSer, shortSer, byteSer, doubleSer, floatSer, boolSer, stringSer, bytesSer:
		return true
	}
	if t, ok := s.(*tupleSer); ok {
		for _, f := range t.fields {
			if !canEncode(f) {
				return false
			}
		}
		return true
	}
	return false
}

// EncodableType is the static type (as query.CompileTyped names them) that
// values of a StateMeta type name of this package must have to be written,
// "any" for tuples (checked value by value), or ok=false when this package
// cannot write them.
func EncodableType(typeName string) (static string, ok bool) {
	switch typeName {
	case longSer.name, intSer.name, shortSer.name, byteSer.name:
		return "int64", true
	case doubleSer.name, floatSer.name:
		return "float64", true
	case boolSer.name:
		return "bool", true
	case stringSer.name:
		return "string", true
	case bytesSer.name:
		return "bytes", true
	}
	if len(typeName) > 6 && typeName[:5] == "Tuple" {
		return "any", true
	}
	return "", false
}

// appendFlinkString is StringValue.writeString: varint length+1, then each
// UTF-16 code unit as a varint.
func appendFlinkString(dst []byte, s string) []byte {
	units := utf16.Encode([]rune(s))
	dst = appendVarUint(dst, uint32(len(units)+1))
	for _, u := range units {
		dst = appendVarUint(dst, uint32(u))
	}
	return dst
}
