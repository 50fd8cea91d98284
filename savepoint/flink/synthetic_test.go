package flink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/golang/snappy"

	"streamdbg/state"
)

// This file builds synthetic Flink savepoints: one keyed operator whose
// ValueState "count" (Long key, VoidNamespace, Long value) holds key → key*2,
// written in the canonical layout, optionally Snappy-compressed. They test
// what the samples cannot (compression, size, handle kinds) and feed the
// benchmarks.

const (
	synthOperatorID = "00112233445566778899aabbccddeeff"
	longSnapshot    = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	voidNSSnapshot  = "org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot"
)

type enc struct{ bytes.Buffer }

func (e *enc) u8(v byte)    { e.WriteByte(v) }
func (e *enc) u16(v uint16) { e.Write(binary.BigEndian.AppendUint16(nil, v)) }
func (e *enc) i32(v int32)  { e.Write(binary.BigEndian.AppendUint32(nil, uint32(v))) }
func (e *enc) i64(v int64)  { e.Write(binary.BigEndian.AppendUint64(nil, uint64(v))) }
func (e *enc) utf(s string) { e.u16(uint16(len(s))); e.WriteString(s) }
func (e *enc) snapshot(class string) {
	e.i32(2)
	e.utf(class)
	e.i32(3)
}

type synthOptions struct {
	keys        int
	compressed  bool
	handle      byte   // handleRelativeFile (default), handleFile or handleByteStream
	absPrefix   string // directory prefix of a handleFile path
	fileName    string
	maxParallel int
	// stringKeys keys the state by the String "key_%07d" of each key
	// (StringSerializer) instead of the Long.
	stringKeys bool
}

// synthStringKey is the String key k stands for with stringKeys.
func synthStringKey(k int64) string { return fmt.Sprintf("key_%07d", k) }

// synthKeyedFile returns the keyed state file and the key-group offsets.
func synthKeyedFile(o synthOptions) ([]byte, []int64) {
	var f enc
	f.i32(6)
	f.u8(b2u(o.compressed))
	if o.stringKeys {
		f.snapshot(stringSnapshot)
	} else {
		f.snapshot(longSnapshot)
	}
	f.u16(1)
	f.utf("count")
	f.i32(backendKeyValue)
	f.i32(1)
	f.utf("KEYED_STATE_TYPE")
	f.utf("VALUE")
	f.i32(2)
	f.utf("VALUE_SERIALIZER")
	f.snapshot(longSnapshot)
	f.utf("NAMESPACE_SERIALIZER")
	f.snapshot(voidNSSnapshot)

	groups := make([][]int64, o.maxParallel)
	for k := range int64(o.keys) {
		hash := int32(k ^ int64(uint64(k)>>32))
		if o.stringKeys {
			hash = stringHashCode(synthStringKey(k))
		}
		kg := state.KeyGroupForHash(hash, o.maxParallel)
		groups[kg] = append(groups[kg], k)
	}
	offsets := make([]int64, o.maxParallel)
	for kg, keys := range groups {
		if len(keys) == 0 {
			continue
		}
		offsets[kg] = int64(f.Len())
		var g enc
		g.u16(0)
		for i, k := range keys {
			var key enc
			if o.maxParallel > 128 {
				key.u16(uint16(kg))
			} else {
				key.u8(byte(kg))
			}
			if o.stringKeys {
				key.Write(flinkStr(synthStringKey(k)))
			} else {
				key.i64(k)
			}
			key.u8(0)
			kb := key.Bytes()
			if i == len(keys)-1 {
				kb[0] |= 0x80
			}
			g.i32(int32(len(kb)))
			g.Write(kb)
			g.i32(8)
			g.i64(k * 2)
		}
		g.u16(endOfKeyGroup)
		if o.compressed {
			w := snappy.NewBufferedWriter(&f)
			w.Write(g.Bytes())
			w.Close()
		} else {
			f.Write(g.Bytes())
		}
	}
	return f.Bytes(), offsets
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// synthMetadata writes a version 4 `_metadata` for one keyed operator.
func synthMetadata(o synthOptions, file []byte, offsets []int64) []byte {
	var m enc
	m.i32(Magic)
	m.i32(4)
	m.i64(7)
	m.i32(0) // master states
	m.i32(1) // operators
	id := []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}
	m.Write(id)
	m.i32(1)
	m.i32(int32(o.maxParallel))
	m.u8(handleNull) // coordinator
	m.i32(1)         // subtasks
	m.i32(0)
	m.i32(0) // managed operator state
	m.i32(0) // raw operator state
	m.u8(handleSavepointKeyGroups)
	m.i32(0)
	m.i32(int32(len(offsets)))
	for _, off := range offsets {
		m.i64(off)
	}
	switch o.handle {
	case handleByteStream:
		m.u8(handleByteStream)
		m.utf("inline-keyed")
		m.i32(int32(len(file)))
		m.Write(file)
	case handleFile:
		m.u8(handleFile)
		m.i64(int64(len(file)))
		m.utf(o.absPrefix + o.fileName)
	default:
		m.u8(handleRelativeFile)
		m.utf(o.fileName)
		m.i64(int64(len(file)))
	}
	m.u8(handleNull) // raw keyed state
	m.i32(0)
	m.i32(0)
	m.u8(0x70) // Java null: no checkpoint properties
	return m.Bytes()
}

// writeSynthetic writes a synthetic savepoint into a new directory.
func writeSynthetic(tb testing.TB, o synthOptions) string {
	tb.Helper()
	dir, _ := writeSyntheticOffsets(tb, o)
	return dir
}

// writeSyntheticOffsets is writeSynthetic that also returns the key-group
// offsets written into the keyed file.
func writeSyntheticOffsets(tb testing.TB, o synthOptions) (string, []int64) {
	tb.Helper()
	if o.fileName == "" {
		o.fileName = "keyed-0"
	}
	if o.maxParallel == 0 {
		o.maxParallel = 128
	}
	dir := tb.TempDir()
	file, offsets := synthKeyedFile(o)
	if o.handle != handleByteStream {
		if err := os.WriteFile(filepath.Join(dir, o.fileName), file, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), synthMetadata(o, file, offsets), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir, offsets
}

func TestSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    synthOptions
	}{
		{"relative", synthOptions{keys: 1000}},
		{"snappy", synthOptions{keys: 1000, compressed: true}},
		{"inline", synthOptions{keys: 1000, handle: handleByteStream}},
		{"absolute moved", synthOptions{keys: 1000, handle: handleFile, absPrefix: "hdfs://namenode:8020/flink/savepoints/savepoint-123/"}},
		{"two-byte prefix", synthOptions{keys: 1000, maxParallel: 1024}},
		{"string keys", synthOptions{keys: 1000, stringKeys: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Open(writeSynthetic(t, tc.o))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for r, err := range sp.Keyed(state.KeyedScan{}) {
				if err != nil {
					t.Fatal(err)
				}
				var k int64
				key := r.Key
				if tc.o.stringKeys {
					str, _ := r.Key.(string)
					if _, err := fmt.Sscanf(str, "key_%d", &k); err != nil || synthStringKey(k) != str {
						t.Fatalf("row %+v: key %#v is not key_NNNNNNN", r, r.Key)
					}
				} else {
					k = r.Key.(int64)
				}
				if r.Value != k*2 || r.StateName != "count" || r.Namespace != nil {
					t.Fatalf("row %+v", r)
				}
				kg, ok := sp.KeyGroupOf(sp.States()[0], key)
				if !ok || kg != r.KeyGroup {
					t.Fatalf("key %d: KeyGroupOf = %d, %v; row in %d", k, kg, ok, r.KeyGroup)
				}
				seen[k] = true
			}
			if len(seen) != tc.o.keys {
				t.Fatalf("%d keys, want %d", len(seen), tc.o.keys)
			}
		})
	}
}

func TestAbsoluteHandleNotFound(t *testing.T) {
	o := synthOptions{keys: 10, handle: handleFile, absPrefix: "/elsewhere/", fileName: "keyed-0"}
	dir := writeSynthetic(t, o)
	os.Remove(filepath.Join(dir, "keyed-0"))
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range sp.Keyed(state.KeyedScan{OperatorID: synthOperatorID}) {
		got = err
	}
	if got == nil || !bytes.Contains([]byte(got.Error()), []byte("not found in savepoint directory")) {
		t.Fatalf("error %v, want a not-found error", got)
	}
}

func TestRelativeHandleEscapes(t *testing.T) {
	h := &streamHandle{kind: handleRelativeFile, name: "../../etc/passwd"}
	h.resolve(t.TempDir())
	if h.path != "" || h.err == nil {
		t.Fatalf("resolved %q, err %v", h.path, h.err)
	}
	h = &streamHandle{kind: handleFile, name: "file:/tmp/x/.."}
	h.resolve(t.TempDir())
	if h.path != "" || h.err == nil {
		t.Fatalf("resolved %q, err %v", h.path, h.err)
	}
}

// TestKeyGroupPushdown proves a key-equality read touches one key group.
func TestKeyGroupPushdown(t *testing.T) {
	sp, err := Open(writeSynthetic(t, synthOptions{keys: 5000}))
	if err != nil {
		t.Fatal(err)
	}
	meta := sp.States()[0] // reads and caches the header
	kg, ok := sp.KeyGroupOf(meta, int64(4242))
	if !ok {
		t.Fatal("no key group for a Long key")
	}
	before := sp.sections.Load()
	found := 0
	for r, err := range sp.Keyed(state.KeyedScan{OperatorID: meta.OperatorID, StateName: "count", KeyGroups: []int{kg}}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.KeyGroup != kg {
			t.Fatalf("row of key group %d in a scan of %d", r.KeyGroup, kg)
		}
		if r.Key == int64(4242) {
			found++
		}
	}
	if read := sp.sections.Load() - before; read != 1 || found != 1 {
		t.Fatalf("read %d sections, found key %d times; want 1 and 1", read, found)
	}
}

// TestStopsEarly checks that a consumer that stops ends the reading.
func TestStopsEarly(t *testing.T) {
	sp, err := Open(writeSynthetic(t, synthOptions{keys: 5000}))
	if err != nil {
		t.Fatal(err)
	}
	sp.States()
	before := sp.sections.Load()
	n := 0
	for range sp.Keyed(state.KeyedScan{}) {
		if n++; n == 3 {
			break
		}
	}
	if read := sp.sections.Load() - before; read != 1 {
		t.Fatalf("read %d sections for 3 rows, want 1", read)
	}
}
