package savepoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
	"streamdbg/state"
)

// entriesByRead is the reference the batches are checked against: the
// entries of groups decoded one at a time by decodeSection (state's Read),
// cloned, then the error that ended them.
func entriesByRead(sp *Savepoint, id string, groups state.KeyGroupRange) ([]state.Entry, error) {
	var out []state.Entry
	err := sp.keyedSections(id, groups, func(f *KeyedFile, secs []Section) (bool, error) {
		for _, sec := range secs {
			more, err := sp.scanKeyed(f, []Section{sec}, false, func(e state.Entry, _ error) bool {
				out = append(out, cloneEntry(e))
				return true
			})
			if err != nil || !more {
				return false, err
			}
		}
		return true, nil
	})
	return out, err
}

// entriesByBatches is every entry of KeyedBatchesFor, cloned, then its
// error; it checks that every batch is non-empty, of one key group, and no
// longer than state.BatchEntries.
func entriesByBatches(t *testing.T, sp *Savepoint, id string, groups state.KeyGroupRange) ([]state.Entry, error) {
	t.Helper()
	var out []state.Entry
	for es, err := range sp.KeyedBatchesFor(id, groups) {
		if err != nil {
			if es != nil {
				t.Fatalf("an error comes with %d entries", len(es))
			}
			return out, err
		}
		if len(es) == 0 || len(es) > state.BatchEntries {
			t.Fatalf("batch of %d entries", len(es))
		}
		for _, e := range es {
			if e.KeyGroup != es[0].KeyGroup {
				t.Fatalf("batch of key groups %d and %d", es[0].KeyGroup, e.KeyGroup)
			}
			out = append(out, cloneEntry(e))
		}
	}
	return out, nil
}

// entriesByEach is every entry of KeyedEntriesFor, cloned, then its error.
func entriesByEach(sp *Savepoint, id string, groups state.KeyGroupRange) ([]state.Entry, error) {
	var out []state.Entry
	for e, err := range sp.KeyedEntriesFor(id, groups) {
		if err != nil {
			return out, err
		}
		out = append(out, cloneEntry(e))
	}
	return out, nil
}

// benchLikeFixture is state in the shape of the benchmark's (and of most
// jobs'): one value per key of two states, keys that differ in their last
// bytes, so most entries take ReadBatch's common path; some keys and values
// are long.
func benchLikeFixture(keys, maxPar int, seed uint64) *fixture {
	rng := rand.New(rand.NewPCG(seed, 9))
	f := &fixture{maxPar: maxPar, byGroup: map[int][]state.Entry{}}
	for i := range keys {
		key := fmt.Appendf(nil, "customer_%07d", i*3+rng.IntN(3))
		if rng.IntN(25) == 0 {
			key = fmt.Appendf(key, "-%s", strings.Repeat("x", 20+rng.IntN(200)))
		}
		kg := state.KeyGroupFor(key, maxPar)
		v := fmt.Appendf(nil, `{"product":"p%d","n":%d}`, i%97, i)
		if rng.IntN(40) == 0 {
			v = bytes.Repeat([]byte("v"), 200+rng.IntN(5000))
		}
		f.all = append(f.all, state.Entry{State: "total", KeyGroup: kg, Key: key, Value: state.Int64.Append(nil, int64(i))},
			state.Entry{State: "win", KeyGroup: kg, Key: key, UserKey: state.Position.Append(nil, 0), Value: v})
		if rng.IntN(4) == 0 {
			f.all = append(f.all, state.Entry{State: "idle", KeyGroup: kg, Key: key})
		}
	}
	slices.SortFunc(f.all, state.CompareEntries)
	f.all = slices.CompactFunc(f.all, func(a, b state.Entry) bool { return state.CompareEntries(a, b) == 0 })
	for _, e := range f.all {
		f.byGroup[e.KeyGroup] = append(f.byGroup[e.KeyGroup], e)
	}
	f.opState = newFixture(1, maxPar, seed).opState
	return f
}

// withProcs runs fn at GOMAXPROCS procs: with 1 the section read ahead
// and the decoding take turns on one thread.
func withProcs(procs int, fn func()) {
	old := goruntime.GOMAXPROCS(procs)
	defer goruntime.GOMAXPROCS(old)
	fn()
}

func TestKeyedBatchesForEqualsRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 12 {
		maxPar := []int{4, 16, 128}[i%3]
		f := newFixture(50+rng.IntN(2000), maxPar, uint64(i))
		if i%2 == 1 {
			f = benchLikeFixture(100+rng.IntN(8000), maxPar, uint64(i))
		}
		fs := vfs.NewMem()
		version := 2
		if i%4 == 3 {
			version = 1
		}
		dir := fmt.Sprintf("/sp%d", i)
		if err := write(fs, dir, f.snapshot(1+rng.IntN(3)), version); err != nil {
			t.Fatal(err)
		}
		sp, err := Open(fs, dir)
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			// A restore's range at some parallelism, or everything.
			groups := state.KeyGroupRange{Start: 0, End: maxPar - 1}
			if rng.IntN(2) == 0 {
				p := 1 + rng.IntN(4)
				groups = state.KeyGroupRangeFor(maxPar, p, rng.IntN(p))
			}
			want, err := entriesByRead(sp, sumID, groups)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 && groups.Len() == maxPar {
				t.Fatal("fixture without entries")
			}
			for _, procs := range []int{1, 2, 4} {
				withProcs(procs, func() {
					got, err := entriesByBatches(t, sp, sumID, groups)
					if err != nil {
						t.Fatal(err)
					}
					sameEntries(t, got, want)
					got, err = entriesByEach(sp, sumID, groups)
					if err != nil {
						t.Fatal(err)
					}
					sameEntries(t, got, want)
				})
			}
		}
		for _, procs := range []int{1, 2} {
			withProcs(procs, func() {
				for range sp.KeyedBatchesFor("00000000000000000000000000000000", state.KeyGroupRange{Start: 0, End: maxPar - 1}) {
					t.Fatal("an operator the savepoint does not hold yields batches")
				}
			})
		}
	}
}

// TestKeyedBatchesForErrorsMatchRead corrupts keyed files, with and without
// their checksums in _metadata fixed (so that the decoder sees the bytes):
// the batches hold the entries Read decodes before the bad one, and the
// error is the same, word for word (file, key group, offset).
func TestKeyedBatchesForErrorsMatchRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	f := benchLikeFixture(2000, 16, 3)
	orig := vfs.NewMem()
	mustWrite(t, orig, "/sp", f.snapshot(2))
	files := vfstest.Files(t, orig, "/sp")
	var meta Metadata
	if err := json.Unmarshal(files[MetadataFile], &meta); err != nil {
		t.Fatal(err)
	}
	all := state.KeyGroupRange{Start: 0, End: 15}
	failed, checksums := 0, 0
	for i := range 100 {
		fs := vfs.NewMem()
		_ = fs.MkdirAll("/sp", 0o755)
		for n, b := range files {
			writeMem(t, fs, "/sp/"+n, b)
		}
		sub := opMeta(&meta, sumID).Subtasks[rng.IntN(2)]
		kf := sub.Keyed
		b := bytes.Clone(files[kf.Name])
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		rewrite(t, fs, "/sp/"+kf.Name, b)
		if i%3 != 0 {
			editMetadata(t, fs, files[MetadataFile], func(m *Metadata) {
				for j := range opMeta(m, sumID).Subtasks {
					s := &opMeta(m, sumID).Subtasks[j]
					if s.Keyed.Name != kf.Name {
						continue
					}
					for k := range s.Keyed.Sections {
						sec := &s.Keyed.Sections[k]
						sec.CRC32C = state.CRC32C(b[sec.Offset : sec.Offset+sec.Size])
					}
				}
			})
		}
		sp, err := Open(fs, "/sp")
		if err != nil {
			t.Fatal(err)
		}
		want, werr := entriesByRead(sp, sumID, all)
		if werr != nil {
			failed++
			if errors.Is(werr, ErrChecksum) {
				checksums++
			}
			if !strings.Contains(werr.Error(), kf.Name) {
				t.Fatalf("error names no file: %v", werr)
			}
		}
		for _, procs := range []int{1, 2} {
			withProcs(procs, func() {
				got, err := entriesByBatches(t, sp, sumID, all)
				if fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Fatalf("case %d procs %d: error\n%v\nwant\n%v", i, procs, err, werr)
				}
				sameEntries(t, got, want)
				got, err = entriesByEach(sp, sumID, all)
				if fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Fatalf("case %d procs %d: KeyedEntriesFor error\n%v\nwant\n%v", i, procs, err, werr)
				}
				sameEntries(t, got, want)
			})
		}
	}
	// Bytes after the last group of a file, inside its section (its
	// size, checksum and the file's size made to match).
	for _, sub := range opMeta(&meta, sumID).Subtasks {
		fs := vfs.NewMem()
		_ = fs.MkdirAll("/sp", 0o755)
		for n, b := range files {
			writeMem(t, fs, "/sp/"+n, b)
		}
		kf := sub.Keyed
		b := append(bytes.Clone(files[kf.Name]), 0, 0, 0)
		rewrite(t, fs, "/sp/"+kf.Name, b)
		editMetadata(t, fs, files[MetadataFile], func(m *Metadata) {
			for j := range opMeta(m, sumID).Subtasks {
				s := &opMeta(m, sumID).Subtasks[j]
				if s.Keyed.Name == kf.Name {
					sec := &s.Keyed.Sections[len(s.Keyed.Sections)-1]
					sec.Size += 3
					sec.CRC32C = state.CRC32C(b[sec.Offset : sec.Offset+sec.Size])
					s.Keyed.Size += 3
				}
			}
		})
		sp, err := Open(fs, "/sp")
		if err != nil {
			t.Fatal(err)
		}
		want, werr := entriesByRead(sp, sumID, all)
		if !errors.Is(werr, state.ErrCorrupt) {
			t.Fatalf("bytes after the last group: %v", werr)
		}
		for _, procs := range []int{1, 2} {
			withProcs(procs, func() {
				got, err := entriesByBatches(t, sp, sumID, all)
				if fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Fatalf("bytes after the last group, procs %d: error\n%v\nwant\n%v", procs, err, werr)
				}
				sameEntries(t, got, want)
			})
		}
	}
	if checksums < 25 || failed-checksums < 5 {
		t.Fatalf("%d of 100 corrupted savepoints failed (%d checksums): the test corrupts too little", failed, checksums)
	}
}

// TestKeyedBatchesForStopsEarly: a consumer that stops leaves no goroutine
// behind and no file open, whichever batch it stops at.
func TestKeyedBatchesForStopsEarly(t *testing.T) {
	f := benchLikeFixture(20000, 32, 5)
	mem := vfs.NewMem()
	if err := Write(mem, "/sp", f.snapshot(2)); err != nil {
		t.Fatal(err)
	}
	fs := &openFS{FS: mem}
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	before := goruntime.NumGoroutine()
	withProcs(2, func() {
		for _, stopAt := range []int{0, 1, 5, 40, 90} {
			n := 0
			for _, err := range sp.KeyedBatchesFor(sumID, state.KeyGroupRange{Start: 0, End: 31}) {
				if err != nil {
					t.Fatal(err)
				}
				if n == stopAt {
					break
				}
				n++
			}
			if n != stopAt {
				t.Fatalf("%d batches, wanted to stop at %d", n, stopAt)
			}
			if open := fs.open.Load(); open != 0 {
				t.Fatalf("stopped at batch %d: %d files left open", stopAt, open)
			}
		}
	})
	for deadline := time.Now().Add(5 * time.Second); goruntime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after stopping, %d before", goruntime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// openFS counts the files open at a time.
type openFS struct {
	vfs.FS
	open atomic.Int64
}

type openFile struct {
	vfs.File
	fs *openFS
}

func (o *openFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := o.FS.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	o.open.Add(1)
	return &openFile{File: f, fs: o}, nil
}

func (f *openFile) Close() error {
	f.fs.open.Add(-1)
	return f.File.Close()
}
