package diff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"streamdbg/state"
)

// A canonical encoding of dynamic values: two values encode alike exactly
// when they are the same value of the same type, so encodings serve as map
// keys, for ordering and for equality; they also decode again (spill files).
// Maps encode with their keys sorted, so encoding never depends on Go's map
// order.

const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagBytes
	tagHex
	tagTime
	tagList
	tagMap
)

// maxDepth bounds the nesting the decoder follows.
const maxDepth = 64

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, tagNil)
	case bool:
		if x {
			return append(b, tagTrue)
		}
		return append(b, tagFalse)
	case int64:
		b = append(b, tagInt)
		return binary.BigEndian.AppendUint64(b, uint64(x)^(1<<63))
	case float64:
		b = append(b, tagFloat)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	case string:
		b = append(b, tagString)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...)
	case []byte:
		b = append(b, tagBytes)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...)
	case state.Hex:
		b = append(b, tagHex)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...)
	case time.Time:
		b = append(b, tagTime)
		return binary.BigEndian.AppendUint64(b, uint64(x.UnixNano())^(1<<63))
	case []any:
		b = append(b, tagList)
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, e := range x {
			b = appendValue(b, e)
		}
		return b
	case map[string]any:
		b = append(b, tagMap)
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = appendValue(b, x[k])
		}
		return b
	}
	// Not a dynamic value: its text, so that it still compares.
	return appendValue(b, fmt.Sprint(v))
}

var errBadValue = errors.New("diff: bad spilled value")

type valueReader struct {
	b   []byte
	pos int
}

func (r *valueReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		return 0, errBadValue
	}
	r.pos += n
	return v, nil
}

func (r *valueReader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.pos) {
		return nil, errBadValue
	}
	out := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return out, nil
}

func (r *valueReader) value(depth int) (any, error) {
	if depth > maxDepth || r.pos >= len(r.b) {
		return nil, errBadValue
	}
	tag := r.b[r.pos]
	r.pos++
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagInt, tagFloat, tagTime:
		p, err := r.take(8)
		if err != nil {
			return nil, err
		}
		u := binary.BigEndian.Uint64(p)
		switch tag {
		case tagInt:
			return int64(u ^ (1 << 63)), nil
		case tagFloat:
			return math.Float64frombits(u), nil
		}
		return time.Unix(0, int64(u^(1<<63))).UTC(), nil
	case tagString, tagBytes, tagHex:
		n, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		p, err := r.take(n)
		if err != nil {
			return nil, err
		}
		switch tag {
		case tagString:
			return string(p), nil
		case tagBytes:
			return slices.Clone(p), nil
		}
		return state.Hex(slices.Clone(p)), nil
	case tagList:
		n, err := r.uvarint()
		if err != nil || n > uint64(len(r.b)-r.pos) {
			return nil, errBadValue
		}
		out := make([]any, 0, n)
		for range n {
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case tagMap:
		n, err := r.uvarint()
		if err != nil || n > uint64(len(r.b)-r.pos) {
			return nil, errBadValue
		}
		out := make(map[string]any, n)
		for range n {
			kl, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			k, err := r.take(kl)
			if err != nil {
				return nil, err
			}
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out[string(k)] = v
		}
		return out, nil
	}
	return nil, errBadValue
}
