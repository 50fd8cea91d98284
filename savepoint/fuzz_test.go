package savepoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
	"streamdbg/state"
)

// fuzzSavepoint is a small valid savepoint in memory and its files.
func fuzzSavepoint(f testing.TB) (*vfs.MemFS, map[string][]byte) {
	f.Helper()
	fx := newFixture(40, 4, 11)
	fs := vfs.NewMem()
	if err := Write(fs, "/sp", fx.snapshot(2)); err != nil {
		f.Fatal(err)
	}
	files := map[string][]byte{}
	names, _ := fs.List("/sp")
	for _, n := range names {
		file, err := fs.Open("/sp/" + n)
		if err != nil {
			f.Fatal(err)
		}
		st, _ := file.Stat()
		b := make([]byte, st.Size())
		_, _ = file.ReadAt(b, 0)
		_ = file.Close()
		files[n] = b
	}
	return fs, files
}

func writeMem(t testing.TB, fs vfs.FS, path string, b []byte) {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(append([]byte(nil), b...))
	_ = f.Close()
}

// FuzzOpen feeds arbitrary _metadata over valid state files. Open either
// refuses it with an error marked ErrInvalid (a listed file that is absent
// too) or ErrChecksum naming /sp, or everything it then reads is
// either read or refused with a marked error; allocations stay bounded (the
// files are small: no length from _metadata may make a reader allocate
// more); and the unmodified _metadata opens and reads back its entries.
func FuzzOpen(f *testing.F) {
	_, files := fuzzSavepoint(f)
	valid := files[MetadataFile]
	f.Add(valid)
	f.Add([]byte(`{"format":"streamdbg-savepoint","version":1,"operators":[{"id":"0123456789abcdef0123456789abcdef","parallelism":1,"max_parallelism":1,"subtasks":[{"index":0,"key_groups":{"start":0,"end":0},"keyed":{"name":"../../etc/passwd","size":3}}]}]}`))
	f.Add(bytes.Replace(valid, []byte(`"position": 42`), []byte(`"position": -1`), 1))
	f.Add(bytes.Replace(valid, []byte(`"size": `), []byte(`"size": 1`), 1))
	f.Fuzz(fuzzOpenBody(files, valid))
}

func fuzzOpenBody(files map[string][]byte, valid []byte) func(t *testing.T, meta []byte) {
	return func(t *testing.T, meta []byte) {
		fs := vfs.NewMem()
		_ = fs.MkdirAll("/sp", 0o755)
		for n, b := range files {
			writeMem(t, fs, "/sp/"+n, b)
		}
		writeMem(t, fs, "/sp/"+MetadataFile, meta)
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		sp, err := Open(fs, "/sp")
		if err != nil {
			// A listed file that is absent is ErrInvalid too.
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrChecksum) {
				t.Fatalf("Open: unmarked error: %v", err)
			}
			if !strings.Contains(err.Error(), "/sp/") {
				t.Fatalf("Open: error names no file: %v", err)
			}
			if bytes.Equal(meta, valid) {
				t.Fatalf("valid _metadata refused: %v", err)
			}
			return
		}
		err = readEverything(sp)
		if err == nil {
			err = sp.Verify()
		}
		goruntime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
			t.Fatalf("opening and reading %d bytes of files allocated %d bytes", len(meta)+len(files), d)
		}
		if err != nil {
			if !errors.Is(err, ErrChecksum) && !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("read: unmarked error: %v", err)
			}
			if !strings.Contains(err.Error(), "/sp/") && !strings.Contains(err.Error(), "operator ") {
				t.Fatalf("read: error names no file or operator: %v", err)
			}
		}
		if bytes.Equal(meta, valid) {
			if err != nil {
				t.Fatalf("valid savepoint: %v", err)
			}
			fx := newFixture(40, 4, 11)
			var got []state.Entry
			for e, err := range sp.KeyedEntriesFor(sumID, state.KeyGroupRange{Start: 0, End: 3}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, cloneEntry(e))
			}
			sameEntries(t, got, fx.all)
		}
	}
}

// FuzzReadSection feeds arbitrary bytes as one key group of a keyed file,
// with a _metadata whose checksums match them, so that the decoder behind
// the checksum sees them: errors, never panics or disordered entries. With
// format1 false the section is a format 2 one whose last indexSize bytes
// are its block index; the scans then include point lookups, which read
// the index and blocks.
func FuzzReadSection(f *testing.F) {
	seeds, body := fuzzReadSection(f)
	for _, s := range seeds {
		f.Add(s.b, s.indexSize, s.format1)
	}
	f.Fuzz(body)
}

type readSectionSeed struct {
	b         []byte
	indexSize uint32
	format1   bool
}

func fuzzReadSection(f testing.TB) ([]readSectionSeed, func(t *testing.T, b []byte, indexSize uint32, format1 bool)) {
	var seeds []readSectionSeed
	_, files := fuzzSavepoint(f)
	var meta Metadata
	if err := json.Unmarshal(files[MetadataFile], &meta); err != nil {
		f.Fatal(err)
	}
	var op *OperatorMeta
	for i := range meta.Operators {
		if meta.Operators[i].ID == sumID {
			op = &meta.Operators[i]
		}
	}
	kf := op.Subtasks[0].Keyed
	data := files[kf.Name]
	for _, s := range kf.Sections {
		seeds = append(seeds, readSectionSeed{data[s.Offset : s.Offset+s.Size], uint32(s.IndexSize), false})
	}
	// Format 1 sections.
	v1 := vfs.NewMem()
	if err := write(v1, "/sp", newFixture(40, 4, 11).snapshot(2), 1); err != nil {
		f.Fatal(err)
	}
	v1sp, err := Open(v1, "/sp")
	if err != nil {
		f.Fatal(err)
	}
	v1files := vfstest.Files(f, v1, "/sp")
	v1data := v1files[kf.Name]
	for _, s := range v1sp.Meta().Operators[0].Subtasks[0].Keyed.Sections {
		seeds = append(seeds, readSectionSeed{v1data[s.Offset : s.Offset+s.Size], 0, true})
	}
	return seeds, func(t *testing.T, b []byte, indexSize uint32, format1 bool) {
		if len(b) < 2 {
			return
		}
		m, files := meta, files
		sec := Section{KeyGroup: 0, Offset: 0, Size: int64(len(b)), CRC32C: state.CRC32C(b), Entries: 1}
		if format1 {
			m, files = *v1sp.Meta(), v1files
		} else {
			if int64(indexSize) < minIndex || int64(indexSize) >= sec.Size {
				return // _metadata itself would be invalid
			}
			sec.IndexSize = int64(indexSize)
			sec.IndexCRC32C = state.CRC32C(b[len(b)-int(indexSize):])
		}
		ops := append([]OperatorMeta(nil), m.Operators...)
		for i := range ops {
			if ops[i].ID != sumID {
				continue
			}
			subs := append([]SubtaskMeta(nil), ops[i].Subtasks...)
			sec.KeyGroup = subs[0].KeyGroups.Start
			subs[0].Keyed = &KeyedFile{Name: kf.Name, Size: int64(len(b)), Sections: []Section{sec}}
			ops[i].Subtasks = subs
		}
		m.Operators = ops
		// Keep the StateMeta table adding up (Open checks it): all the
		// operator's keyed entries on one row.
		var keyed int64
		for _, sub := range ops {
			if sub.ID != sumID {
				continue
			}
			for _, st := range sub.Subtasks {
				for _, sec := range st.Keyed.Sections {
					keyed += sec.Entries
				}
			}
		}
		m.States = append([]StateRecord(nil), m.States...)
		first := true
		for i := range m.States {
			if r := &m.States[i]; r.OperatorID == sumID && r.Scope == "keyed" {
				r.Entries = 0
				if first {
					r.Entries, first = keyed, false
				}
			}
		}
		mb, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		fs := vfs.NewMem()
		_ = fs.MkdirAll("/sp", 0o755)
		for n, fb := range files {
			writeMem(t, fs, "/sp/"+n, fb)
		}
		writeMem(t, fs, "/sp/"+kf.Name, b)
		writeMem(t, fs, "/sp/"+MetadataFile, mb)
		sp, err := Open(fs, "/sp")
		if err != nil {
			t.Fatalf("valid metadata refused: %v", err)
		}
		var prev state.Entry
		have := false
		for e, err := range sp.KeyedEntriesFor(sumID, state.KeyGroupRange{Start: 0, End: 3}) {
			if err != nil {
				if !errors.Is(err, state.ErrCorrupt) {
					t.Fatalf("error not marked corrupt: %v", err)
				}
				break
			}
			if have && e.KeyGroup == prev.KeyGroup && state.CompareEntries(prev, e) >= 0 {
				t.Fatalf("disordered entries")
			}
			prev, have = cloneEntry(e), true
		}
		if err := readEverything(sp); err != nil && !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("error not marked corrupt: %v", err)
		}
		// Point lookups: rows of the key asked for, or a marked error.
		for _, key := range []string{"key_0", "key_3", "key_17"} {
			for r, err := range sp.Keyed(state.KeyedScan{OperatorID: sumID, Keys: []any{key}}) {
				if err != nil {
					if !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, ErrChecksum) {
						t.Fatalf("lookup: error not marked: %v", err)
					}
					break
				}
				_ = r
			}
		}
	}
}

// TestReadSectionMutations runs FuzzReadSection's checks on its seeds with
// bytes flipped, deterministically: every error marked, entries in order,
// no panic, with the scan's readers and files reused across sections.
func TestReadSectionMutations(t *testing.T) {
	seeds, body := fuzzReadSection(t)
	rng := rand.New(rand.NewPCG(23, 1))
	for i, s := range seeds {
		for range 40 {
			b := bytes.Clone(s.b)
			for range 1 + rng.IntN(3) {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
			t.Run(fmt.Sprint(i), func(t *testing.T) { body(t, b, s.indexSize, s.format1) })
		}
	}
}
