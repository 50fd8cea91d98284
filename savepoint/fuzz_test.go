package savepoint

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// fuzzSavepoint is a small valid savepoint in memory and its files.
func fuzzSavepoint(f *testing.F) (*vfs.MemFS, map[string][]byte) {
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

// FuzzOpen feeds arbitrary _metadata over valid state files: Open either
// refuses it or everything it then reads is checked, without panics.
func FuzzOpen(f *testing.F) {
	base, files := fuzzSavepoint(f)
	f.Add(files[MetadataFile])
	f.Add([]byte(`{"format":"streamdbg-savepoint","version":1,"operators":[{"id":"0123456789abcdef0123456789abcdef","parallelism":1,"max_parallelism":1,"subtasks":[{"index":0,"key_groups":{"start":0,"end":0},"keyed":{"name":"../../etc/passwd","size":3}}]}]}`))
	f.Fuzz(func(t *testing.T, meta []byte) {
		fs := vfs.NewMem()
		_ = fs.MkdirAll("/sp", 0o755)
		for n, b := range files {
			writeMem(t, fs, "/sp/"+n, b)
		}
		_ = base
		writeMem(t, fs, "/sp/"+MetadataFile, meta)
		sp, err := Open(fs, "/sp")
		if err != nil {
			return
		}
		err = readEverything(sp)
		if err != nil && !errors.Is(err, ErrChecksum) && !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, ErrInvalid) {
			// Names that pass validation but are absent are plain I/O errors.
			if _, statErr := fs.Stat("/sp"); statErr != nil {
				t.Fatalf("unexpected error: %v", err)
			}
		}
	})
}

// FuzzReadSection feeds arbitrary bytes as one key group of a keyed file,
// with a _metadata whose checksum matches them, so that the decoder behind
// the checksum sees them: errors, never panics or disordered entries.
func FuzzReadSection(f *testing.F) {
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
		f.Add(data[s.Offset : s.Offset+s.Size])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		m := meta
		ops := append([]OperatorMeta(nil), meta.Operators...)
		for i := range ops {
			if ops[i].ID != sumID {
				continue
			}
			subs := append([]SubtaskMeta(nil), ops[i].Subtasks...)
			subs[0].Keyed = &KeyedFile{Name: kf.Name, Size: int64(len(b)), Sections: []Section{
				{KeyGroup: subs[0].KeyGroups.Start, Offset: 0, Size: int64(len(b)), CRC32C: state.CRC32C(b), Entries: 1},
			}}
			ops[i].Subtasks = subs
		}
		m.Operators = ops
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
	})
}
