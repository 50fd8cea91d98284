package flink_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdbg/savepoint/flink"
	"streamdbg/state"
)

const rewriteSamples = "../../../shared/flink-savepoints"

// keyEdit sets or drops the values of Tuple1<Long> keys of one state.
type keyEdit struct {
	op, state string
	set       map[int64]any
	drop      map[int64]bool
}

func (e *keyEdit) Touches(op, st string) bool { return op == e.op && st == e.state }

func (e *keyEdit) Edit(row *state.KeyedRow) (flink.EntryEdit, error) {
	k := row.Key.([]any)[0].(int64)
	if e.drop[k] {
		return flink.EntryEdit{Drop: true}, nil
	}
	if v, ok := e.set[k]; ok {
		return flink.EntryEdit{Set: true, Value: v}, nil
	}
	return flink.EntryEdit{}, nil
}

// canonicalPair is one (key, value) pair as the test's own decoder of
// FullSnapshotAsyncWriter's key-group layout reads it: a u16 state id, then
// pairs of int-length-prefixed keys and values; bit 0x80 of a key's first
// byte says a state id or the end mark 0xFFFF follows the pair.
type canonicalPair struct {
	state      uint16
	key, value []byte // key without the flag bit
}

func decodeCanonical(t *testing.T, b []byte) []canonicalPair {
	t.Helper()
	var out []canonicalPair
	pos := 0
	u16 := func() uint16 {
		if len(b)-pos < 2 {
			t.Fatalf("key group ends at %d", pos)
		}
		pos += 2
		return binary.BigEndian.Uint16(b[pos-2:])
	}
	field := func() []byte {
		if len(b)-pos < 4 {
			t.Fatalf("key group ends at %d", pos)
		}
		n := int(binary.BigEndian.Uint32(b[pos:]))
		pos += 4
		if n > len(b)-pos {
			t.Fatalf("field of %d bytes at %d", n, pos)
		}
		pos += n
		return slices.Clone(b[pos-n : pos])
	}
	id := u16()
	for {
		k, v := field(), field()
		more := k[0]&0x80 != 0
		k[0] &^= 0x80
		out = append(out, canonicalPair{id, k, v})
		if more {
			if id = u16(); id == 0xffff {
				break
			}
		}
	}
	if pos != len(b) {
		t.Fatalf("%d bytes after the end mark", len(b)-pos)
	}
	return out
}

// tupleLongKey reads the Tuple1<Long> key out of a canonical key: one byte
// of key group (max parallelism ≤ 128), then the long.
func tupleLongKey(k []byte) int64 { return int64(binary.BigEndian.Uint64(k[1:9])) }

// TestRewriteCanonical changes a keyed ValueState of the same job in a heap
// and a RocksDB canonical savepoint, then checks the result with the test's
// own decoding: every file but the rewritten ones is the source's byte for
// byte; _metadata differs only in the patched offsets and sizes, which name
// the new layout; a rewritten file keeps its header and untouched key
// groups byte for byte; a re-encoded key group holds the source's pairs,
// field by field, with exactly the change; and the reader sees it.
func TestRewriteCanonical(t *testing.T) {
	const op = "d5c8b168c6cbfe8c507a10f88b325243" // CheckpointingKeyedStateFlatMap1
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "udf-flink2.0-rocksdb-savepoint"} {
		t.Run(name, func(t *testing.T) {
			srcDir := filepath.Join(rewriteSamples, name)
			if _, err := os.Stat(srcDir); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatal("samples absent under CI")
				}
				t.Skip("samples absent")
			}
			sp, err := flink.Open(srcDir)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "out")
			// Key 1 shares key group 2 with key 0; key 2 is alone in group 3.
			edit := &keyEdit{op: op, state: "state-name", set: map[int64]any{1: int64(1001)}, drop: map[int64]bool{2: true}}
			rep, err := sp.Rewrite(dst, edit)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Changed != 1 || rep.Dropped != 1 || len(rep.Files) != 2 {
				t.Fatalf("report: %d changed, %d dropped, %d files", rep.Changed, rep.Dropped, len(rep.Files))
			}
			rewritten := map[string]flink.RewrittenFile{}
			for _, f := range rep.Files {
				rewritten[f.Name] = f
			}
			read := func(dir, name string) []byte {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			// Every other file, byte for byte; nothing more, nothing less.
			srcFiles, _ := os.ReadDir(srcDir)
			dstFiles, _ := os.ReadDir(dst)
			if len(srcFiles) != len(dstFiles) {
				t.Fatalf("%d files, source %d", len(dstFiles), len(srcFiles))
			}
			for _, f := range srcFiles {
				if _, ok := rewritten[f.Name()]; ok || f.Name() == "_metadata" {
					continue
				}
				if !bytes.Equal(read(srcDir, f.Name()), read(dst, f.Name())) {
					t.Fatalf("%s differs from the source", f.Name())
				}
			}
			// _metadata: the patched fields and nothing else.
			om, nm := read(srcDir, "_metadata"), read(dst, "_metadata")
			if len(om) != len(nm) {
				t.Fatalf("_metadata of %d bytes, source %d", len(nm), len(om))
			}
			patched := make([]bool, len(om))
			for _, p := range rep.Patched {
				if got := int64(binary.BigEndian.Uint64(nm[p.At:])); got != p.New || int64(binary.BigEndian.Uint64(om[p.At:])) != p.Old {
					t.Fatalf("%s at %d: %d, report says %d (was %d)", p.What, p.At, got, p.New, p.Old)
				}
				for i := range 8 {
					patched[p.At+int64(i)] = true
				}
			}
			for i := range om {
				if om[i] != nm[i] && !patched[i] {
					t.Fatalf("_metadata byte %d changed outside the patched fields", i)
				}
			}
			if len(rep.Patched) == 0 {
				t.Fatal("no field of _metadata patched")
			}
			encoded := 0
			for fname, f := range rewritten {
				ob, nb := read(srcDir, fname), read(dst, fname)
				if int64(len(nb)) != f.NewSize || int64(len(ob)) != f.OldSize {
					t.Fatalf("%s: %d bytes, report says %d", fname, len(nb), f.NewSize)
				}
				if !bytes.Equal(ob[:f.Header], nb[:f.Header]) {
					t.Fatalf("%s: header (serializer snapshots) changed", fname)
				}
				covered := f.Header
				for _, g := range f.KeyGroups {
					covered += g.NewSize
					if g.OldSize == 0 {
						continue
					}
					o, n := ob[g.OldOffset:g.OldOffset+g.OldSize], nb[g.NewOffset:g.NewOffset+g.NewSize]
					if !g.Encoded {
						if !bytes.Equal(o, n) {
							t.Fatalf("%s key group %d: untouched but its bytes differ", fname, g.KeyGroup)
						}
						continue
					}
					encoded++
					before := decodeCanonical(t, o)
					var after []canonicalPair
					if g.NewSize > 0 {
						after = decodeCanonical(t, n)
					}
					var want []canonicalPair
					for _, p := range before {
						switch tupleLongKey(p.key) {
						case 2:
							continue
						case 1:
							p.value = binary.BigEndian.AppendUint64(nil, 1001)
						}
						want = append(want, p)
					}
					if fmt.Sprint(after) != fmt.Sprint(want) {
						t.Fatalf("%s key group %d:\n got %v\nwant %v", fname, g.KeyGroup, after, want)
					}
				}
				if covered != f.NewSize {
					t.Fatalf("%s: header and key groups cover %d of %d bytes", fname, covered, f.NewSize)
				}
			}
			if encoded != 2 {
				t.Fatalf("%d key groups encoded again, want 2", encoded)
			}
			// The reader sees the change, and only it.
			out, err := flink.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[int64]any{}
			for r, err := range out.Keyed(state.KeyedScan{StateName: "state-name"}) {
				if err != nil {
					t.Fatal(err)
				}
				if got[r.OperatorID] == nil {
					got[r.OperatorID] = map[int64]any{}
				}
				got[r.OperatorID][r.Key.([]any)[0].(int64)] = r.Value
			}
			if fmt.Sprint(got[op]) != "map[0:0 1:1001 3:3]" {
				t.Fatalf("rewritten state reads %v", got[op])
			}
			if other := got["dab25811652d3d4983a30c6e4afacb1c"]; fmt.Sprint(other) != "map[0:0 1:1 2:2 3:3]" {
				t.Fatalf("the other operator's state reads %v", other)
			}
		})
	}
}

// TestRewriteRefuses: what cannot be rewritten exactly is an error, and
// leaves no target behind.
func TestRewriteRefuses(t *testing.T) {
	dir := filepath.Join(rewriteSamples, "spapi-table-state")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("samples absent under CI")
		}
		t.Skip("samples absent")
	}
	sp, err := flink.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	edit := &keyEdit{op: "928f3b38bde6af749ed4cb45aa1237db", state: "KeyedPrimitiveValue", set: map[int64]any{1: int64(5)}}
	if _, err := sp.Rewrite(dst, edit); err == nil || !(strings.Contains(err.Error(), "inline") || strings.Contains(err.Error(), "heap-native")) {
		t.Fatalf("rewrote a heap checkpoint with inline, heap-native state: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a failed rewrite left its target")
	}
	if _, err := sp.Rewrite(dir, edit); err == nil || !strings.Contains(err.Error(), "is the source") {
		t.Fatalf("rewrote in place: %v", err)
	}
	// A changelog checkpoint's keyed state is a materialized part and a
	// change log: not rewritten.
	sp, err = flink.Open(filepath.Join(rewriteSamples, "datastream/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	edit = &keyEdit{op: "4b818c7923a927796d24b727201ba34d", state: "state-name", set: map[int64]any{1: int64(5)}}
	if _, err := sp.Rewrite(dst, edit); err == nil || !strings.Contains(err.Error(), "changelog state backend") {
		t.Fatalf("rewrote a changelog checkpoint: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a failed rewrite left its target")
	}
	// A native RocksDB savepoint's keyed state is RocksDB's own files:
	// refused (it was copied unchanged, and 0 entries said changed). An
	// edit of states it does not touch still copies it.
	sp, err = flink.Open(filepath.Join(rewriteSamples, "udf-flink1.20-rocksdb-savepoint-native"))
	if err != nil {
		t.Fatal(err)
	}
	edit = &keyEdit{op: "d5c8b168c6cbfe8c507a10f88b325243", state: "state-name", set: map[int64]any{1: int64(5)}}
	if _, err := sp.Rewrite(dst, edit); err == nil || !errors.Is(err, flink.ErrUnsupported) || !strings.Contains(err.Error(), "native RocksDB") {
		t.Fatalf("rewrote a native RocksDB savepoint: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a failed rewrite left its target")
	}
	if _, err := sp.Rewrite(dst, &keyEdit{op: "d5c8b168c6cbfe8c507a10f88b325243", state: "no-such-state"}); err != nil {
		t.Fatalf("an edit of no state of the native savepoint: %v", err)
	}
}
