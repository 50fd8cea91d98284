package flink

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"streamdbg/state"
)

// This file computes the key group of a Flink SQL key from a query's
// literal, so that a point lookup reads one key group: the literal is
// written as the BinaryRowData Flink's key selector makes (BinaryRowWriter:
// zeroed slots, short strings inline, longer ones in the variable part
// padded to 8 bytes) and hashed as BinaryRowData.hashCode does
// (BinarySegmentUtils.hashByWords: murmur3 over its 4-byte words, seed 42).

// rowHashCode is BinaryRowData.hashCode of a row's bytes (a multiple of 8
// bytes long, as every BinaryRowData is).
func rowHashCode(b []byte) int32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	h := uint32(42)
	for i := 0; i+4 <= len(b); i += 4 {
		k := binary.LittleEndian.Uint32(b[i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	h ^= uint32(len(b))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

// encodeKeyRow writes a key literal as a BinaryRowData of the key's field
// types: a literal for a one-field key, a []any of every field, a
// map[string]any naming every field, or a *state.Row. ok is false when
// the literal cannot be such a key (the query then scans).
func encodeKeyRow(l *rowLayout, literal any) ([]byte, bool) {
	n := len(l.types)
	vals := make([]any, n)
	switch x := literal.(type) {
	case *state.Row:
		if len(x.Values) != n {
			return nil, false
		}
		copy(vals, x.Values)
	case []any:
		if len(x) != n {
			return nil, false
		}
		copy(vals, x)
	case map[string]any:
		if len(x) != n {
			return nil, false
		}
		for i := range n {
			name := "f" + strconv.Itoa(i)
			if i < len(l.names) && l.names[i] != "" {
				name = l.names[i]
			}
			v, ok := x[name]
			if !ok {
				return nil, false
			}
			vals[i] = v
		}
	default:
		if n != 1 {
			return nil, false
		}
		vals[0] = literal
	}
	fixed := l.nullBits + 8*n
	b := make([]byte, fixed, fixed+32)
	for i, v := range vals {
		slot := l.nullBits + 8*i
		if v == nil {
			bit := i + 8
			b[bit>>3] |= 1 << (bit & 7)
			continue
		}
		t := l.fields[i].t
		var ok bool
		b, ok = encodeKeyField(b, slot, t, v)
		if !ok {
			return nil, false
		}
	}
	return b, true
}

func encodeKeyField(b []byte, slot int, t *ltype, v any) ([]byte, bool) {
	le := binary.LittleEndian
	if s, ok := v.(string); ok && numericRoot(t.root) {
		// A string that reads as a number compares with a numeric field
		// as that number (a query's numStr). A DECIMAL reads strings
		// exactly itself (decimalRat).
		n, ok := state.ParseNumber(s)
		if !ok {
			return nil, false
		}
		v = n
	}
	i, isInt := v.(int64)
	if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		i, isInt = int64(f), true
	}
	switch t.root {
	case rootBoolean:
		x, ok := v.(bool)
		if ok && x {
			b[slot] = 1
		}
		return b, ok
	case rootTinyint:
		if !isInt || i < math.MinInt8 || i > math.MaxInt8 {
			return nil, false
		}
		b[slot] = byte(int8(i))
	case rootSmallint:
		if !isInt || i < math.MinInt16 || i > math.MaxInt16 {
			return nil, false
		}
		le.PutUint16(b[slot:], uint16(int16(i)))
	case rootInteger, rootIntervalYearMonth:
		if !isInt || i < math.MinInt32 || i > math.MaxInt32 {
			return nil, false
		}
		le.PutUint32(b[slot:], uint32(int32(i)))
	case rootBigint, rootIntervalDayTime:
		if !isInt {
			return nil, false
		}
		le.PutUint64(b[slot:], uint64(i))
	case rootDouble:
		f, ok := toFloat64(v)
		if !ok {
			return nil, false
		}
		le.PutUint64(b[slot:], math.Float64bits(f))
	case rootFloat:
		f, ok := toFloat64(v)
		if !ok || float64(float32(f)) != f {
			return nil, false
		}
		le.PutUint32(b[slot:], math.Float32bits(float32(f)))
	case rootDate:
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, false
		}
		le.PutUint32(b[slot:], uint32(int32(d.Unix()/86400)))
	case rootDecimal:
		if t.precision > maxCompactDecimal {
			return nil, false
		}
		r, ok := decimalRat(v)
		if !ok {
			return nil, false
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.scale)), nil)))
		if !r.IsInt() || !r.Num().IsInt64() {
			return nil, false
		}
		le.PutUint64(b[slot:], uint64(r.Num().Int64()))
	case rootTimestamp, rootTimestampLTZ:
		s, ok := v.(string)
		if !ok || t.precision > maxCompactTimestamp {
			return nil, false
		}
		ms, ok := parseSQLTimestamp(s)
		if !ok {
			return nil, false
		}
		le.PutUint64(b[slot:], uint64(ms))
	case rootChar, rootVarchar, rootBinary, rootVarbinary:
		var data []byte
		switch x := v.(type) {
		case string:
			if t.root == rootBinary || t.root == rootVarbinary {
				return nil, false
			}
			data = []byte(x)
		case []byte:
			if t.root == rootChar || t.root == rootVarchar {
				return nil, false
			}
			data = x
		default:
			return nil, false
		}
		if len(data) <= 7 {
			copy(b[slot:], data)
			b[slot+7] = 0x80 | byte(len(data))
			return b, true
		}
		off := len(b)
		le.PutUint64(b[slot:], uint64(off)<<32|uint64(len(data)))
		b = append(b, data...)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
	default:
		return nil, false
	}
	return b, true
}

func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func decimalRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x), true
	case state.Decimal:
		r := x.Rat()
		return r, r != nil
	case string:
		return new(big.Rat).SetString(x)
	case float64:
		return new(big.Rat).SetString(strconv.FormatFloat(x, 'f', -1, 64))
	}
	return nil, false
}

// parseSQLTimestamp reads a timestamp as formatTimestamp prints it (or in
// RFC 3339) into epoch milliseconds; sub-millisecond digits are refused.
func parseSQLTimestamp(s string) (int64, bool) {
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Nanosecond()%1_000_000 != 0 {
				return 0, false
			}
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

// numericRoot reports whether values of a type of root t are int64 or
// float64 numbers to a query.
func numericRoot(t typeRoot) bool {
	switch t {
	case rootTinyint, rootSmallint, rootInteger, rootBigint, rootFloat, rootDouble:
		return true
	}
	return false
}
