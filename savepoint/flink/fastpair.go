package flink

import (
	"encoding/binary"
	"math"

	"streamdbg/state"
)

// fixedDecoders decode the fixed-size scalars from exactly their bytes,
// without a decoder: the scan's fast path for pairs whose key, namespace
// and value are all such scalars (a count per Long or Integer key, the most
// common keyed state there is). Each gives what the scalar's decode gives
// for the same bytes.
var fixedDecoders = map[serializer]func(b []byte, slab *rowSlab) any{
	longSer:   func(b []byte, s *rowSlab) any { return s.boxInt64(int64(binary.BigEndian.Uint64(b))) },
	intSer:    func(b []byte, s *rowSlab) any { return s.boxInt64(int64(int32(binary.BigEndian.Uint32(b)))) },
	shortSer:  func(b []byte, _ *rowSlab) any { return int64(int16(binary.BigEndian.Uint16(b))) },
	byteSer:   func(b []byte, _ *rowSlab) any { return int64(int8(b[0])) },
	doubleSer: func(b []byte, _ *rowSlab) any { return math.Float64frombits(binary.BigEndian.Uint64(b)) },
	floatSer:  func(b []byte, _ *rowSlab) any { return float64(math.Float32frombits(binary.BigEndian.Uint32(b))) },
	boolSer:   func(b []byte, _ *rowSlab) any { return b[0] != 0 },
	voidNSSer: func([]byte, *rowSlab) any { return nil },
}

// fastPair decodes the canonical pairs of one state whose key, namespace
// (when it has one) and value are fixed-size scalars, or whose key is a
// String and namespace and value are (stringKey: then key is nil and
// keyLen 0, and decodeString takes the pairs whose String is ASCII).
type fastPair struct {
	key, ns, value          func([]byte, *rowSlab) any
	keyLen, nsLen, valueLen int
	stringKey               bool
}

// of sets fp to the fast path for the pairs of m and reports whether they
// have one (not lists, maps, timers, variable-length or composite
// serializers).
func (fp *fastPair) of(h *keyedHeader, m *stateMeta) bool {
	*fp = fastPair{}
	if m.backendType != backendKeyValue || m.unreadable != "" {
		return false
	}
	switch m.kind() {
	case state.KindValue, state.KindReducing, state.KindAggregating:
	default:
		return false
	}
	var ok bool
	if h.key == stringSer {
		fp.stringKey = true
	} else if fp.key, fp.keyLen, ok = fixedDecoder(h.key); !ok || fp.keyLen == 0 {
		return false
	}
	if m.namespace != nil {
		if fp.ns, fp.nsLen, ok = fixedDecoder(m.namespace); !ok {
			return false
		}
	}
	fp.value, fp.valueLen, ok = fixedDecoder(m.value)
	return ok
}

func fixedDecoder(s serializer) (func([]byte, *rowSlab) any, int, bool) {
	if s == nil {
		return nil, 0, false
	}
	f, ok := fixedDecoders[s]
	if !ok {
		return nil, 0, false
	}
	return f, s.fixedLen(), true
}

// decode decodes one pair; ok=false when its bytes are not exactly what
// the serializers take (or name another key group): the general path then
// decodes it and says what is wrong.
func (fp *fastPair) decode(r *kgReader, m *stateMeta, key, value []byte) (e entry, ok bool) {
	if fp.stringKey {
		return fp.decodeString(r, m, key, value)
	}
	p := r.prefix
	if len(key) != p+fp.keyLen+fp.nsLen || len(value) != fp.valueLen {
		return e, false
	}
	kg := int(key[0] &^ 0x80) // the "meta data follows" flag of canonical keys
	if p == 2 {
		kg = kg<<8 | int(key[1])
	}
	if kg != r.kg {
		return e, false
	}
	e = entry{meta: m, keyGroup: r.kg, key: fp.key(key[p:p+fp.keyLen], &r.slab)}
	if fp.ns != nil {
		e.namespace = fp.ns(key[p+fp.keyLen:], &r.slab)
	}
	e.value = fp.value(value, &r.slab)
	return e, true
}

// decodeString is decode for a String key: it takes the keys whose String
// is ASCII and shorter than 127 chars (the length a one-byte varint, each
// char one byte below 0x80), which decode to what StringSerializer's
// decoder gives for them; ok=false for any other.
func (fp *fastPair) decodeString(r *kgReader, m *stateMeta, key, value []byte) (e entry, ok bool) {
	pre, nl := r.prefix, fp.nsLen
	if len(value) != fp.valueLen || len(key) < pre+1+nl {
		return e, false
	}
	kg := int(key[0] &^ 0x80) // the "meta data follows" flag of canonical keys
	if pre == 2 {
		kg = kg<<8 | int(key[1])
	}
	n := int(key[pre]) - 1
	if kg != r.kg || n < 0 || pre+1+n+nl != len(key) || !asciiBytes(key[pre+1:pre+1+n]) {
		return e, false
	}
	e = entry{meta: m, keyGroup: r.kg, key: r.slab.boxText(key[pre+1 : pre+1+n])}
	if fp.ns != nil {
		e.namespace = fp.ns(key[pre+1+n:], &r.slab)
	}
	e.value = fp.value(value, &r.slab)
	return e, true
}
