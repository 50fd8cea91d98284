package modify_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/golang/snappy"

	"streamdbg/savepoint/flink"
	"streamdbg/savepoint/modify"
	"streamdbg/state"
)

// Synthetic Flink canonical savepoints with list and map state, written
// here from Flink's formats (FullSnapshotAsyncWriter's key groups,
// KeyedBackendSerializationProxy's header, HeapKeyValueStateIterator's and
// RocksDB's value layouts: ListDelimitedSerializer's ',' between elements,
// a map entry per pair with the user key after the namespace and a null
// flag before the value, which for a null value is followed by what the
// value serializer writes for null; CompositeKeySerializationUtils' key
// lengths when key and namespace both have a variable length), modified
// through SQL, and checked with this file's own decoder, not the reader.

const (
	fsLong   = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	fsString = "org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot"
	fsVoid   = "org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot"
	fsList   = "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot"
	fsMap    = "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot"
	fsOpID   = "0123456789abcdeffedcba9876543210"
)

type fenc struct{ bytes.Buffer }

func (e *fenc) u8(v byte)    { e.WriteByte(v) }
func (e *fenc) u16(v uint16) { e.Write(binary.BigEndian.AppendUint16(nil, v)) }
func (e *fenc) i32(v int32)  { e.Write(binary.BigEndian.AppendUint32(nil, uint32(v))) }
func (e *fenc) i64(v int64)  { e.Write(binary.BigEndian.AppendUint64(nil, uint64(v))) }
func (e *fenc) utf(s string) { e.u16(uint16(len(s))); e.WriteString(s) }

// simple is TypeSerializerSnapshotSerializationUtil's framing (2) around a
// SimpleTypeSerializerSnapshot (version 3, no payload).
func (e *fenc) simple(class string) { e.i32(2); e.utf(class); e.i32(3) }

// composite is a CompositeTypeSerializerSnapshot: magic 911108, outer
// version, then the nested snapshots (magic 1333245, version 1, count,
// each class and version with an empty payload).
func (e *fenc) composite(class string, nested ...string) {
	e.i32(2)
	e.utf(class)
	e.i32(1)
	e.i32(911108)
	e.i32(1)
	e.i32(1333245)
	e.i32(1)
	e.i32(int32(len(nested)))
	for _, n := range nested {
		e.utf(n)
		e.i32(3)
	}
}

// flinkString is StringValue.writeString (ASCII here): length+1 as a
// base-128 varint, then one varint per UTF-16 unit; null is the byte 0.
func flinkString(s *string) []byte {
	if s == nil {
		return []byte{0}
	}
	b := binary.AppendUvarint(nil, uint64(len(*s)+1))
	for _, c := range []byte(*s) {
		b = binary.AppendUvarint(b, uint64(c))
	}
	return b
}

func str(s string) *string { return &s }

func javaStringHash(s string) int32 {
	var h int32
	for _, c := range s {
		h = 31*h + int32(c)
	}
	return h
}

// fsState is one state of the synthetic savepoints.
type fsState struct {
	name, kind string // KEYED_STATE_TYPE
	value      func(e *fenc)
	stringNS   bool // a String namespace (else VoidNamespace)
}

var fsStates = []fsState{
	{"items", "LIST", func(e *fenc) { e.composite(fsList, fsString) }, false},
	{"prices", "MAP", func(e *fenc) { e.composite(fsMap, fsString, fsLong) }, false},
	{"notes", "MAP", func(e *fenc) { e.composite(fsMap, fsLong, fsString) }, false},
	{"total", "VALUE", func(e *fenc) { e.simple(fsLong) }, false},
	{"counts", "LIST", func(e *fenc) { e.composite(fsList, fsLong) }, true},
}

// fsEntry is one logical entry: a list element (uk = position), a map
// entry (uk = the map key, value nil for NULL) or a value.
type fsEntry struct {
	state int
	key   any // int64 or string
	ns    *string
	uk    any
	value any // int64, string or nil
}

func (e fsEntry) id() string {
	ns := "-"
	if e.ns != nil {
		ns = *e.ns
	}
	return fmt.Sprintf("%d/%v/%s/%v", e.state, e.key, ns, e.uk)
}

type fsOptions struct {
	rocks       bool // RocksDB order (states by id, keys sorted); else heap order
	maxParallel int
	compressed  bool
	stringKeys  bool
}

// fsKey is the i-th key of a savepoint.
func (o fsOptions) key(i int) any {
	if o.stringKeys {
		return fmt.Sprintf("k%04d", i)
	}
	return int64(i)
}

func (o fsOptions) keyGroup(k any) int {
	var h int32
	switch x := k.(type) {
	case int64:
		h = int32(x ^ int64(uint64(x)>>32))
	case string:
		h = javaStringHash(x)
	}
	return state.KeyGroupForHash(h, o.maxParallel)
}

func (o fsOptions) keyBytes(k any) []byte {
	if s, ok := k.(string); ok {
		return flinkString(&s)
	}
	return binary.BigEndian.AppendUint64(nil, uint64(k.(int64)))
}

// vint is CompositeKeySerializationUtils.writeVariableIntBytes.
func vint(b []byte, n int) []byte {
	for {
		b = append(b, byte(n))
		n = int(uint32(n) >> 8)
		if n == 0 {
			return b
		}
	}
}

// compositeKey is the key of a pair: key-group prefix, key, namespace,
// (map) user key.
func (o fsOptions) compositeKey(st fsState, kg int, key any, ns *string, uk any) []byte {
	var b []byte
	if o.maxParallel > 128 {
		b = append(b, byte(kg>>8))
	}
	b = append(b, byte(kg))
	ambiguous := o.stringKeys && st.stringNS
	kb := o.keyBytes(key)
	b = append(b, kb...)
	if ambiguous {
		b = vint(b, len(kb))
	}
	var nb []byte
	if st.stringNS {
		nb = flinkString(ns)
	} else {
		nb = []byte{0} // VoidNamespace
	}
	b = append(b, nb...)
	if ambiguous {
		b = vint(b, len(nb))
	}
	switch u := uk.(type) {
	case string:
		b = append(b, flinkString(&u)...)
	case int64:
		if st.kind == "MAP" {
			b = binary.BigEndian.AppendUint64(b, uint64(u))
		}
	}
	return b
}

func encodeScalar(v any) []byte {
	switch x := v.(type) {
	case int64:
		return binary.BigEndian.AppendUint64(nil, uint64(x))
	case string:
		return flinkString(&x)
	}
	panic(fmt.Sprintf("%T", v))
}

// fsModel is a savepoint's content: entries in key-group order, as pairs.
type fsPair struct {
	kg      int
	state   int
	entries []fsEntry
}

// fsContent generates the savepoint's entries.
func fsContent(o fsOptions, n int) []fsEntry {
	var out []fsEntry
	for i := range n {
		k := o.key(i)
		if i%9 != 8 {
			for p := range i%4 + 1 {
				out = append(out, fsEntry{0, k, nil, int64(p), fmt.Sprintf("e%d-%d", i, p)})
			}
		}
		if i%3 != 2 {
			for j, f := range []string{"apple", "pear", "fig"} {
				out = append(out, fsEntry{1, k, nil, f, int64(i*10 + j)})
			}
		}
		if i%2 == 0 {
			out = append(out, fsEntry{2, k, nil, int64(1), "n1"}, fsEntry{2, k, nil, int64(2), nil}, fsEntry{2, k, nil, int64(3), "n3"})
		}
		out = append(out, fsEntry{3, k, nil, nil, int64(i * 7)})
		if i%5 == 0 {
			ns := str(fmt.Sprintf("w%d", i%3))
			out = append(out, fsEntry{4, k, ns, int64(0), int64(i)}, fsEntry{4, k, ns, int64(1), int64(i + 1)})
		}
	}
	return out
}

// pairsOf groups entries into the pairs a canonical key group holds, in the
// layout's order: RocksDB's (states by id, then by key bytes) or the heap's
// (states in the order of the heap's snapshot map, entries as they were
// put, map entries in another order).
func (o fsOptions) pairsOf(es []fsEntry) map[int][]fsPair {
	type pk struct {
		kg, state int
		key       []byte // composite key without user key
		uk        []byte
	}
	byKG := map[int][]fsPair{}
	var keys []pk
	group := map[string]*fsPair{}
	for _, e := range es {
		st := fsStates[e.state]
		kg := o.keyGroup(e.key)
		ck := o.compositeKey(st, kg, e.key, e.ns, nil)
		id := fmt.Sprint(e.state, "/", string(ck))
		if st.kind == "MAP" {
			id += "/" + fmt.Sprint(e.uk)
		}
		if p := group[id]; p != nil {
			p.entries = append(p.entries, e)
			continue
		}
		group[id] = &fsPair{kg: kg, state: e.state, entries: []fsEntry{e}}
		full := o.compositeKey(st, kg, e.key, e.ns, e.uk)
		keys = append(keys, pk{kg, e.state, full, []byte(id)})
	}
	heapOrder := []int{2, 0, 4, 3, 1}
	rank := func(s int) int {
		if o.rocks {
			return s
		}
		return slices.Index(heapOrder, s)
	}
	slices.SortStableFunc(keys, func(a, b pk) int {
		if a.kg != b.kg {
			return a.kg - b.kg
		}
		if a.state != b.state {
			return rank(a.state) - rank(b.state)
		}
		if o.rocks {
			return bytes.Compare(a.key, b.key)
		}
		return 0 // as put
	})
	for _, k := range keys {
		byKG[k.kg] = append(byKG[k.kg], *group[string(k.uk)])
	}
	if !o.rocks {
		// Map entries of one key come out of a HashMap: not in the order
		// they were put.
		for kg, ps := range byKG {
			for i := 0; i+1 < len(ps); i++ {
				if fsStates[ps[i].state].kind == "MAP" && ps[i].state == ps[i+1].state && i%2 == 0 {
					ps[i], ps[i+1] = ps[i+1], ps[i]
				}
			}
			byKG[kg] = ps
		}
	}
	return byKG
}

// pairBytes encodes one pair's key and value.
func (o fsOptions) pairBytes(p fsPair) (key, value []byte) {
	st := fsStates[p.state]
	e := p.entries[0]
	key = o.compositeKey(st, p.kg, e.key, e.ns, e.uk)
	switch st.kind {
	case "LIST":
		for i, x := range p.entries {
			if i > 0 {
				value = append(value, ',')
			}
			value = append(value, encodeScalar(x.value)...)
		}
	case "MAP":
		if e.value == nil {
			// The flag, then the serializer's null (a String: byte 0).
			value = append([]byte{1}, flinkString(nil)...)
		} else {
			value = append([]byte{0}, encodeScalar(e.value)...)
		}
	default:
		value = encodeScalar(e.value)
	}
	return key, value
}

// fsLayout is where the writer put what.
type fsLayout struct {
	file        []byte
	header      int64
	offsets     []int64 // per key group, 0 for empty
	offsetsAt   int64   // in _metadata
	sizeAt      int64
	metadataLen int
}

// keyGroupBytes encodes one key group (FullSnapshotAsyncWriter).
func (o fsOptions) keyGroupBytes(ps []fsPair) []byte {
	var g fenc
	for i, p := range ps {
		if i == 0 || ps[i-1].state != p.state {
			g.u16(uint16(p.state))
		}
		k, v := o.pairBytes(p)
		k = slices.Clone(k)
		last := i == len(ps)-1 || ps[i+1].state != p.state
		if last {
			k[0] |= 0x80
		}
		g.i32(int32(len(k)))
		g.Write(k)
		g.i32(int32(len(v)))
		g.Write(v)
		if last && i == len(ps)-1 {
			g.u16(0xffff)
		}
	}
	if !o.compressed {
		return g.Bytes()
	}
	var z bytes.Buffer
	w := snappy.NewBufferedWriter(&z)
	w.Write(g.Bytes())
	w.Close()
	return z.Bytes()
}

func writeFlinkSynthetic(t *testing.T, o fsOptions, es []fsEntry) (string, *fsLayout) {
	t.Helper()
	var f fenc
	f.i32(6)
	f.u8(map[bool]byte{false: 0, true: 1}[o.compressed])
	if o.stringKeys {
		f.simple(fsString)
	} else {
		f.simple(fsLong)
	}
	f.u16(uint16(len(fsStates)))
	for _, st := range fsStates {
		f.utf(st.name)
		f.i32(0) // key-value state
		f.i32(1)
		f.utf("KEYED_STATE_TYPE")
		f.utf(st.kind)
		f.i32(2)
		f.utf("VALUE_SERIALIZER")
		st.value(&f)
		f.utf("NAMESPACE_SERIALIZER")
		if st.stringNS {
			f.simple(fsString)
		} else {
			f.simple(fsVoid)
		}
	}
	lay := &fsLayout{header: int64(f.Len()), offsets: make([]int64, o.maxParallel)}
	byKG := o.pairsOf(es)
	for kg := range o.maxParallel {
		if len(byKG[kg]) == 0 {
			continue
		}
		lay.offsets[kg] = int64(f.Len())
		f.Write(o.keyGroupBytes(byKG[kg]))
	}
	lay.file = f.Bytes()

	var m fenc
	m.i32(0x4960672d)
	m.i32(4)
	m.i64(11)
	m.i32(0) // master states
	m.i32(1) // operators
	id := make([]byte, 16)
	fmt.Sscanf(fsOpID, "%x", &id)
	m.Write(id)
	m.i32(1)
	m.i32(int32(o.maxParallel))
	m.u8(0) // no coordinator state
	m.i32(1)
	m.i32(0)
	m.i32(0) // managed operator state
	m.i32(0) // raw operator state
	m.u8(7)  // KeyGroupsSavepointStateHandle
	m.i32(0)
	m.i32(int32(o.maxParallel))
	lay.offsetsAt = int64(m.Len())
	for _, off := range lay.offsets {
		m.i64(off)
	}
	m.u8(6) // relative file
	m.utf("keyed-state")
	lay.sizeAt = int64(m.Len())
	m.i64(int64(len(lay.file)))
	m.u8(0) // raw keyed state
	m.i32(0)
	m.i32(0)
	m.u8(0x70) // Java null: no checkpoint properties
	lay.metadataLen = m.Len()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keyed-state"), lay.file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, lay
}

// fsDecoded is one pair as this file's decoder reads it back.
type fsDecoded struct {
	state      int
	key, value []byte // the key without the flag bit
	entries    []fsEntry
}

type fdec struct {
	t   *testing.T
	b   []byte
	pos int
}

func (d *fdec) need(n int) []byte {
	if n < 0 || len(d.b)-d.pos < n {
		d.t.Fatalf("%d bytes wanted at %d of %d", n, d.pos, len(d.b))
	}
	d.pos += n
	return d.b[d.pos-n : d.pos]
}
func (d *fdec) u16() uint16 { return binary.BigEndian.Uint16(d.need(2)) }
func (d *fdec) i32() int    { return int(int32(binary.BigEndian.Uint32(d.need(4)))) }
func (d *fdec) long() int64 { return int64(binary.BigEndian.Uint64(d.need(8))) }
func (d *fdec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.t.Fatalf("bad varint at %d", d.pos)
	}
	d.pos += n
	return v
}
func (d *fdec) str() *string {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	var b []byte
	for range n - 1 {
		c := d.uvarint()
		if c >= 0x80 {
			d.t.Fatalf("non-ASCII char %d", c)
		}
		b = append(b, byte(c))
	}
	s := string(b)
	return &s
}
func (d *fdec) vint(want int) {
	got := 0
	for shift := 0; ; shift += 8 {
		got |= int(d.need(1)[0]) << shift
		if want>>shift>>8 == 0 {
			break
		}
	}
	if got != want {
		d.t.Fatalf("key length %d, want %d", got, want)
	}
}

// decodePair decodes one pair's key and value into entries.
func (o fsOptions) decodePair(t *testing.T, kg, stID int, key, value []byte) []fsEntry {
	st := fsStates[stID]
	d := &fdec{t: t, b: key}
	got := int(d.need(1)[0])
	if o.maxParallel > 128 {
		got = got<<8 | int(d.need(1)[0])
	}
	if got != kg {
		t.Fatalf("entry of key group %d in key group %d", got, kg)
	}
	ambiguous := o.stringKeys && st.stringNS
	start := d.pos
	var k any
	if o.stringKeys {
		k = *d.str()
	} else {
		k = d.long()
	}
	if ambiguous {
		d.vint(d.pos - start)
	}
	var ns *string
	start = d.pos
	if st.stringNS {
		ns = d.str()
	} else if b := d.need(1)[0]; b != 0 {
		t.Fatalf("VoidNamespace byte %d", b)
	}
	if ambiguous {
		d.vint(d.pos - start)
	}
	v := &fdec{t: t, b: value}
	var out []fsEntry
	switch st.kind {
	case "MAP":
		var uk any
		if stID == 1 {
			uk = *d.str()
		} else {
			uk = d.long()
		}
		null := v.need(1)[0]
		var val any
		switch {
		case null == 1 && stID == 2:
			if s := v.str(); s != nil {
				t.Fatalf("null flag before %q", *s)
			}
		case null == 1:
			t.Fatalf("null flag for a Long value")
		case null != 0:
			t.Fatalf("null flag %d", null)
		case stID == 1:
			val = v.long()
		default:
			val = *v.str()
		}
		out = append(out, fsEntry{stID, k, ns, uk, val})
	case "LIST":
		for p := int64(0); ; p++ {
			var x any
			if stID == 0 {
				x = *v.str()
			} else {
				x = v.long()
			}
			out = append(out, fsEntry{stID, k, ns, p, x})
			if v.pos == len(value) {
				break
			}
			if c := v.need(1)[0]; c != ',' {
				t.Fatalf("list element followed by %q", c)
			}
		}
	default:
		out = append(out, fsEntry{stID, k, ns, nil, v.long()})
	}
	if d.pos != len(key) || v.pos != len(value) {
		t.Fatalf("%d key and %d value bytes left", len(key)-d.pos, len(value)-v.pos)
	}
	return out
}

// decodeKeyGroup reads a key group's pairs (decompressing when the file is
// compressed).
func (o fsOptions) decodeKeyGroup(t *testing.T, kg int, b []byte) []fsDecoded {
	if o.compressed {
		var err error
		if b, err = io.ReadAll(snappy.NewReader(bytes.NewReader(b))); err != nil {
			t.Fatalf("key group %d: %v", kg, err)
		}
	}
	d := &fdec{t: t, b: b}
	var out []fsDecoded
	id := int(d.u16())
	for {
		k := slices.Clone(d.need(d.i32()))
		v := slices.Clone(d.need(d.i32()))
		more := k[0]&0x80 != 0
		k[0] &^= 0x80
		out = append(out, fsDecoded{state: id, key: k, value: v, entries: o.decodePair(t, kg, id, k, v)})
		if more {
			if id = int(d.u16()); id == 0xffff {
				break
			}
		}
	}
	if d.pos != len(b) {
		t.Fatalf("key group %d: %d bytes after the end mark", kg, len(b)-d.pos)
	}
	return out
}

// readKeyGroups splits a keyed file at the offsets of _metadata.
func readKeyGroups(t *testing.T, o fsOptions, file []byte, offsets []int64) map[int][]fsDecoded {
	sorted := slices.Sorted(slices.Values(offsets))
	out := map[int][]fsDecoded{}
	for kg, off := range offsets {
		if off == 0 {
			continue
		}
		i, _ := slices.BinarySearch(sorted, off)
		end := int64(len(file))
		for _, s := range sorted[i:] {
			if s > off {
				end = s
				break
			}
		}
		out[kg] = o.decodeKeyGroup(t, kg, file[off:end])
	}
	return out
}

// fsApply is the statements of TestModifyFlinkListMap applied to the
// model, entry by entry, in order (a later statement sees an earlier
// one's value); lists lose their deleted elements and renumber.
func fsApply(o fsOptions, es []fsEntry, bound func(int) any) []fsEntry {
	less := func(k any, i int) bool {
		if s, ok := k.(string); ok {
			return s < bound(i).(string)
		}
		return k.(int64) < bound(i).(int64)
	}
	var out []fsEntry
	for _, e := range es {
		switch e.state {
		case 0:
			if e.key == bound(41) {
				continue
			}
			if less(e.key, 30) && e.uk == int64(1) {
				e.value = "changed"
			}
			if e.uk == int64(0) && !less(e.key, 30) && less(e.key, 40) {
				continue
			}
		case 1:
			if e.uk == "apple" && less(e.key, 30) {
				e.value = e.value.(int64) + 1000
			}
			if e.uk == "pear" && !less(e.key, 30) && less(e.key, 40) {
				continue
			}
			if e.key == bound(42) {
				continue
			}
		case 2:
			if e.uk == int64(3) && less(e.key, 30) {
				e.value = nil
			}
			if e.value == nil && !less(e.key, 30) && less(e.key, 40) {
				e.value = "filled"
			}
		case 4:
			if e.ns != nil && *e.ns == "w1" {
				e.value = e.value.(int64) * 100
			}
		}
		out = append(out, e)
	}
	// Renumber list positions.
	pos := map[string]int64{}
	for i, e := range out {
		if fsStates[e.state].kind == "LIST" {
			id := fmt.Sprint(e.state, e.key, e.ns)
			out[i].uk = pos[id]
			pos[id]++
		}
	}
	return out
}

// TestModifyFlinkListMap runs UPDATE and DELETE over list and map state
// (and next to an untouched value state) of synthetic canonical savepoints
// in RocksDB's and the heap's layout, with one- and two-byte key-group
// prefixes, Snappy and not, Long and String keys (String keys with a
// String namespace: key lengths in the composite key). The result is read
// with this file's decoder: the model with the statements applied, pair by
// pair; _metadata the same but the offsets and size, which describe the new
// file; the header and every untouched key group byte for byte; in a
// re-encoded key group every pair no statement changed byte for byte, in
// the source's order; and the reader agrees.
func TestModifyFlinkListMap(t *testing.T) {
	const n = 400
	for _, o := range []fsOptions{
		{rocks: true, maxParallel: 128},
		{rocks: false, maxParallel: 128, compressed: true},
		{rocks: true, maxParallel: 1024, compressed: true, stringKeys: true},
		{rocks: false, maxParallel: 1024, stringKeys: true},
	} {
		name := fmt.Sprintf("rocks=%v,maxpar=%d,snappy=%v,stringkeys=%v", o.rocks, o.maxParallel, o.compressed, o.stringKeys)
		t.Run(name, func(t *testing.T) {
			src := fsContent(o, n)
			dir, lay := writeFlinkSynthetic(t, o, src)
			bound := func(i int) any { return o.key(i) }
			lit := func(i int) string {
				if o.stringKeys {
					return fmt.Sprintf("'%s'", o.key(i))
				}
				return fmt.Sprint(i)
			}
			script := strings.NewReplacer("K30", lit(30), "K40", lit(40), "K41", lit(41), "K42", lit(42), "OP", fsOpID).Replace(`
UPDATE "OP"."items" SET value = 'changed' WHERE key < K30 AND user_key = 1;
DELETE FROM "OP"."items" WHERE user_key = 0 AND key >= K30 AND key < K40;
DELETE FROM "OP"."items" WHERE key = K41;
UPDATE "OP"."prices" SET value = value + 1000 WHERE user_key = 'apple' AND key < K30;
DELETE FROM "OP"."prices" WHERE user_key = 'pear' AND key >= K30 AND key < K40;
DELETE FROM "OP"."prices" WHERE key = K42;
UPDATE "OP"."notes" SET value = NULL WHERE user_key = 3 AND key < K30;
UPDATE "OP"."notes" SET value = 'filled' WHERE value IS NULL AND key >= K30 AND key < K40;
UPDATE "OP"."counts" SET value = value * 100 WHERE namespace = 'w1';
`)
			sp, err := flink.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			// The reader sees the source as written.
			if got := readerEntries(t, sp); !slices.Equal(got, entryIDs(src)) {
				t.Fatalf("the reader reads %d entries of the source, want %d", len(got), len(src))
			}
			p, err := modify.CompileFlink(sp, script)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "out")
			if err := p.Write(dst); err != nil {
				t.Fatal(err)
			}
			want := fsApply(o, src, bound)

			// _metadata: same length, the same bytes outside the offsets
			// and the size; those name the new file.
			md, err := os.ReadFile(filepath.Join(dst, "_metadata"))
			if err != nil {
				t.Fatal(err)
			}
			smd, _ := os.ReadFile(filepath.Join(dir, "_metadata"))
			if len(md) != lay.metadataLen {
				t.Fatalf("_metadata of %d bytes, source %d", len(md), lay.metadataLen)
			}
			for i := range md {
				inOffsets := int64(i) >= lay.offsetsAt && int64(i) < lay.offsetsAt+8*int64(o.maxParallel)
				inSize := int64(i) >= lay.sizeAt && int64(i) < lay.sizeAt+8
				if !inOffsets && !inSize && md[i] != smd[i] {
					t.Fatalf("_metadata byte %d changed", i)
				}
			}
			file, err := os.ReadFile(filepath.Join(dst, "keyed-state"))
			if err != nil {
				t.Fatal(err)
			}
			if size := int64(binary.BigEndian.Uint64(md[lay.sizeAt:])); size != int64(len(file)) {
				t.Fatalf("_metadata says %d bytes, the file has %d", size, len(file))
			}
			offsets := make([]int64, o.maxParallel)
			for kg := range offsets {
				offsets[kg] = int64(binary.BigEndian.Uint64(md[lay.offsetsAt+8*int64(kg):]))
			}
			if !bytes.Equal(file[:lay.header], lay.file[:lay.header]) {
				t.Fatal("the header (serializer snapshots) changed")
			}
			before := readKeyGroups(t, o, lay.file, lay.offsets)
			after := readKeyGroups(t, o, file, offsets)

			// The content: the model with the statements applied.
			var got []fsEntry
			for kg := range o.maxParallel {
				for _, p := range after[kg] {
					got = append(got, p.entries...)
				}
			}
			sortEntries(got)
			sortEntries(want)
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].id() != want[i].id() || fmt.Sprint(got[i].value) != fmt.Sprint(want[i].value) {
					t.Fatalf("entry %d: %s = %v, want %s = %v", i, got[i].id(), got[i].value, want[i].id(), want[i].value)
				}
			}

			// Untouched key groups byte for byte; in changed ones, the
			// pairs no statement changed byte for byte and in order.
			changedKGs, untouchedKGs := 0, 0
			for kg := range o.maxParallel {
				old, cur := before[kg], after[kg]
				if lay.offsets[kg] == 0 {
					if offsets[kg] != 0 {
						t.Fatalf("key group %d appeared", kg)
					}
					continue
				}
				if slices.EqualFunc(old, cur, samePair) {
					untouchedKGs++
					oldB := sectionOf(lay.file, lay.offsets, lay.offsets[kg])
					newB := sectionOf(file, offsets, offsets[kg])
					if !bytes.Equal(oldB, newB) {
						t.Fatalf("key group %d: same pairs, different bytes", kg)
					}
					continue
				}
				changedKGs++
				j := 0
				for _, p := range cur {
					for j < len(old) && !bytes.Equal(old[j].key, p.key) {
						j++ // a pair dropped
					}
					if j == len(old) {
						t.Fatalf("key group %d: pair %x is new or out of order", kg, p.key)
					}
					if !touchedPair(o, old[j]) && !bytes.Equal(old[j].value, p.value) {
						t.Fatalf("key group %d: untouched pair %x changed", kg, p.key)
					}
					j++
				}
			}
			if changedKGs == 0 || untouchedKGs == 0 {
				t.Fatalf("%d key groups changed, %d untouched: the test does not test both", changedKGs, untouchedKGs)
			}

			// The reader agrees.
			out, err := flink.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			if got := readerEntries(t, out); !slices.Equal(got, entryIDs(want)) {
				t.Fatalf("the reader reads %d entries of the result, want %d", len(got), len(want))
			}
		})
	}
}

// touchedPair says whether a statement may have changed a pair of the
// source: the pairs of keys below K40 of items, prices and notes, of K41
// and K42, and every counts pair of namespace w1.
func touchedPair(o fsOptions, p fsDecoded) bool {
	e := p.entries[0]
	switch e.state {
	case 3:
		return false
	case 4:
		return *e.ns == "w1"
	}
	if e.key == o.key(41) || e.key == o.key(42) {
		return true
	}
	if s, ok := e.key.(string); ok {
		return s < o.key(40).(string)
	}
	return e.key.(int64) < 40
}

func samePair(a, b fsDecoded) bool {
	return a.state == b.state && bytes.Equal(a.key, b.key) && bytes.Equal(a.value, b.value)
}

func sectionOf(file []byte, offsets []int64, off int64) []byte {
	end := int64(len(file))
	for _, o := range offsets {
		if o > off && o < end {
			end = o
		}
	}
	return file[off:end]
}

func sortEntries(es []fsEntry) {
	slices.SortStableFunc(es, func(a, b fsEntry) int { return strings.Compare(a.id(), b.id()) })
}

func entryIDs(es []fsEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.id()+"="+fmt.Sprint(e.value))
	}
	slices.Sort(out)
	return out
}

// readerEntries reads a savepoint through the reader, in entryIDs' form.
func readerEntries(t *testing.T, sp *flink.Savepoint) []string {
	t.Helper()
	stateID := map[string]int{}
	for i, st := range fsStates {
		stateID[st.name] = i
	}
	var out []string
	for r, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		e := fsEntry{state: stateID[r.StateName], key: r.Key, uk: r.UserKey, value: r.Value}
		if s, ok := r.Namespace.(string); ok {
			e.ns = &s
		}
		out = append(out, e.id()+"="+fmt.Sprint(e.value))
	}
	slices.Sort(out)
	return out
}
