package flink

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"streamdbg/state"
)

// TestFastPairMatchesDecodeOne: for every fixed-size key, namespace and
// value serializer of the fast path, with one- and two-byte key-group
// prefixes (and the "meta data follows" flag set), the fast path gives the
// entry decodeOne gives for the same bytes; bytes that do not fit (a
// length off by one, another key group) are left to decodeOne, which
// refuses them.
func TestFastPairMatchesDecodeOne(t *testing.T) {
	be := binary.BigEndian
	scalars := []struct {
		s serializer
		b []byte
	}{
		{longSer, be.AppendUint64(nil, uint64(0xfedcba9876543210))},
		{longSer, be.AppendUint64(nil, 200)},
		{intSer, be.AppendUint32(nil, uint32(0x80000001))},
		{shortSer, be.AppendUint16(nil, 0xfff0)},
		{byteSer, []byte{0x85}},
		{doubleSer, be.AppendUint64(nil, math.Float64bits(-2.5))},
		{floatSer, be.AppendUint32(nil, math.Float32bits(1.25))},
		{boolSer, []byte{1}},
	}
	kinds := []string{"VALUE", "REDUCING", "AGGREGATING"}
	n := 0
	for ki, k := range scalars {
		for vi, v := range scalars {
			for _, ns := range []serializer{nil, voidNSSer} {
				for _, prefix := range []int{1, 2} {
					h := &keyedHeader{key: k.s}
					m := &stateMeta{name: "s", backendType: backendKeyValue, options: map[string]string{"KEYED_STATE_TYPE": kinds[(ki+vi)%3]}, value: v.s, namespace: ns}
					m.kindOf = m.kindFromOptions()
					r := &kgReader{file: "f", kg: 5, prefix: prefix, header: h}
					var fp fastPair
					if !fp.of(h, m) {
						t.Fatalf("%s/%s: no fast path", k.s.typeName(), v.s.typeName())
					}
					key := []byte{0x80 | 5}
					if prefix == 2 {
						key = []byte{0x80, 5}
					}
					key = append(key, k.b...)
					if ns != nil {
						key = append(key, 0)
					}
					fast, ok := fp.decode(r, m, key, v.b)
					if !ok {
						t.Fatalf("%s/%s: fast path refused good bytes", k.s.typeName(), v.s.typeName())
					}
					slow, _, ok, err := r.decodeOne(0, m, key, v.b)
					if err != nil || !ok {
						t.Fatalf("decodeOne: %v", err)
					}
					if !reflect.DeepEqual(fast, slow) {
						t.Errorf("%s/%s prefix %d ns %v: fast %+v, decodeOne %+v", k.s.typeName(), v.s.typeName(), prefix, ns != nil, fast, slow)
					}
					for _, bad := range []struct{ key, value []byte }{
						{key[:len(key)-1], v.b},
						{append(key[:len(key):len(key)], 0), v.b},
						{key, append(v.b[:len(v.b):len(v.b)], 0)},
						{append([]byte{key[0] + 1}, key[1:]...), v.b},
					} {
						if _, ok := fp.decode(r, m, bad.key, bad.value); ok {
							t.Errorf("%s/%s: fast path took %x / %x", k.s.typeName(), v.s.typeName(), bad.key, bad.value)
						}
						if _, _, _, err := r.decodeOne(0, m, bad.key, bad.value); err == nil && len(bad.value) == len(v.b) && len(bad.key) == len(key) {
							t.Errorf("decodeOne took another key group's pair")
						}
					}
					n++
				}
			}
		}
	}
	// Not on the fast path: lists, maps, timers, strings, TTL values.
	h := &keyedHeader{key: longSer}
	for _, m := range []*stateMeta{
		{backendType: backendKeyValue, options: map[string]string{"KEYED_STATE_TYPE": "LIST"}, value: &listSer{elem: longSer}},
		{backendType: backendKeyValue, value: stringSer},
		{backendType: backendPriorityQueue, value: longSer},
		{backendType: backendKeyValue, value: &ttlSer{value: longSer}},
	} {
		m.kindOf = m.kindFromOptions()
		var fp fastPair
		if fp.of(h, m) {
			t.Errorf("%v (%s): fast path", m.kind(), m.value.typeName())
		}
	}
	if k := (&stateMeta{backendType: backendKeyValue, options: map[string]string{"KEYED_STATE_TYPE": "MAP"}}); k.kindFromOptions() != state.KindMap {
		t.Error("map kind")
	}
	t.Logf("%d serializer combinations", n)
}
