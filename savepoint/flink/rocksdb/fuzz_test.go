package rocksdb

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// allocated runs f and returns the bytes it allocated (the fuzz worker
// runs one input at a time).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// checkKind asserts what every error of this package must be: a *Error
// naming a file, marked corrupt or unsupported.
func checkKind(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.File == "" {
		t.Fatalf("error %v (%T) is not a *rocksdb.Error naming a file", err, err)
	}
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("error %v is neither ErrCorrupt nor ErrUnsupported", err)
	}
}

func seedTables() [][]byte {
	var out [][]byte
	for i := range 12 {
		var es []kv
		for j := range 40 + i*7 {
			es = append(es, kv{ikey(fmt.Sprintf("key%03d", j), uint64(j+1), byte([]int{typeValue, typeMerge, typeDeletion}[j%3])), []byte(fmt.Sprintf("v%d", j))})
		}
		var ts []Tombstone
		if i%2 == 0 {
			ts = []Tombstone{{Start: []byte("key010"), End: []byte("key020"), Seq: 99}}
		}
		out = append(out, buildTable(optsVariants(i, "cf"), es, ts))
	}
	return out
}

// FuzzBlock feeds arbitrary bytes to the block decoder as a data block and
// as an index block (with and without delta-encoded handles): it must end
// in valid entries or an ErrCorrupt naming the offset, in at most one step
// per byte, with keys no longer than the block.
func FuzzBlock(f *testing.F) {
	for _, tb := range seedTables() {
		t, err := OpenTable(&BytesFile{"seed", tb}, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(t.index.data, byte(0))
		it := newTableIter(t, nil, nil, new(prefetch))
		if it.first() {
			f.Add(it.data.b.data, byte(1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		b, err := parseBlock(data, "fuzz.sst", 100)
		if err != nil {
			checkKind(t, err)
			return
		}
		var it blockIter
		it.index = mode&1 != 0
		it.deltaValue = mode&2 != 0
		it.firstKey = mode&4 != 0
		it.init(b)
		steps := 0
		var entries [][2]string
		for ok := it.first(); ok; ok = it.next() {
			if steps++; steps > len(data) {
				t.Fatalf("%d entries in a block of %d bytes", steps, len(data))
			}
			if len(it.key) > len(data) {
				t.Fatalf("key of %d bytes from a block of %d", len(it.key), len(data))
			}
			entries = append(entries, [2]string{string(it.key), string(it.val)})
		}
		checkKind(t, it.err)
		if !it.index && !it.deltaValue {
			// A data block's short path (nextData, what scans use)
			// decodes the same entries and fails the same way.
			errAll := it.err
			it.init(b)
			i := 0
			for ok := it.first(); ok; ok = it.nextData() {
				if i >= len(entries) || string(it.key) != entries[i][0] || string(it.val) != entries[i][1] {
					t.Fatalf("entry %d: nextData read %q = %q, next read %d entries", i, it.key, it.val, len(entries))
				}
				i++
			}
			if i != len(entries) || (it.err == nil) != (errAll == nil) || it.err != nil && it.err.Error() != errAll.Error() {
				t.Fatalf("nextData read %d entries (error %v), next %d (error %v)", i, it.err, len(entries), errAll)
			}
		}
		it.init(b)
		it.seekGE([]byte("key020"), identity)
		checkKind(t, it.err)
	})
}

// FuzzTable opens arbitrary bytes as a table and reads it whole and by
// seeks: errors are ErrCorrupt or ErrUnsupported naming the file; nothing
// panics; allocation stays within what the file's size allows.
func FuzzTable(f *testing.F) {
	for _, tb := range seedTables() {
		f.Add(tb)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var err error
		n := allocated(func() {
			var tb *Table
			tb, err = OpenTable(&BytesFile{"fuzz.sst", data}, 0)
			if err != nil {
				return
			}
			it := newTableIter(tb, nil, nil, new(prefetch))
			steps := 0
			for ok := it.first(); ok; ok = it.next() {
				if steps++; steps > len(data) {
					t.Fatalf("%d entries in a table of %d bytes", steps, len(data))
				}
			}
			if err = it.error(); err != nil {
				return
			}
			it = newTableIter(tb, []byte("key030"), nil, new(prefetch))
			it.seekGE([]byte("key010"))
			err = it.error()
		})
		checkKind(t, err)
		if limit := uint64(decompressLimit(len(data)))*4 + 4<<20; n > limit {
			t.Fatalf("allocated %d bytes for a table of %d", n, len(data))
		}
	})
}

// FuzzManifest replays arbitrary bytes as a MANIFEST.
func FuzzManifest(f *testing.F) {
	s := &store{files: map[string][]byte{}}
	for i, tb := range seedTables()[:4] {
		t, _ := OpenTable(&BytesFile{"seed", tb}, 0)
		_ = t
		var es []kv
		for j := range 5 {
			es = append(es, kv{ikey(fmt.Sprintf("k%d-%d", i, j), uint64(j+1), typeValue), []byte("v")})
		}
		s.add(i%3, uint32(i%2), optsVariants(i, "cf"), es, nil)
	}
	s.edits = append(s.edits, (&editBuilder{}).tag(tagDeletedFile).u(0).u(1))
	src := s.finish(map[uint32]string{0: "default", 1: "cf"})
	f.Add(src["MANIFEST-000007"])
	f.Fuzz(func(t *testing.T, data []byte) {
		var err error
		n := allocated(func() { _, err = ReadManifest("MANIFEST-000001", data) })
		checkKind(t, err)
		if n > uint64(64*len(data))+1<<20 {
			t.Fatalf("allocated %d bytes for a MANIFEST of %d", n, len(data))
		}
	})
}
