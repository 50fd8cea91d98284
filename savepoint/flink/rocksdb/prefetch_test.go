package rocksdb

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// prefetchStore builds a store of two disjoint L1 tables and an L0 table of
// overwrites and deletions, in the layout of optsVariants(v), with values
// from 0 to 300 bytes (one- and two-byte length varints): many blocks, so
// a scan reads most of them in batches.
func prefetchStore(t *testing.T, v, n int) MapSource {
	t.Helper()
	s := &store{files: map[string][]byte{}}
	val := prefetchValue
	var l1 []kv
	for i := range n {
		l1 = append(l1, kv{ikey(fmt.Sprintf("key%06d", i), uint64(i+1), typeValue), val(i, 0)})
	}
	for i, part := range splitRange(l1, 2) {
		s.add(1, 1, optsVariants(v+i, "state"), part, nil)
	}
	var l0 []kv
	for i := 0; i < n; i += 7 {
		typ := byte(typeValue)
		if i%3 == 0 {
			typ = typeDeletion
		}
		l0 = append(l0, kv{ikey(fmt.Sprintf("key%06d", i), uint64(n+i+1), typ), val(i, 1)})
	}
	s.add(0, 1, optsVariants(v+2, "state"), l0, nil)
	return s.finish(map[uint32]string{0: "default", 1: "state"})
}

type entryKV struct{ k, v string }

func prefetchValue(i, round int) []byte {
	return []byte(fmt.Sprintf("v%d-%d-%s", i, round, strings.Repeat("abcdefgh", (i*7)%38)))
}

// scanWith reads [lo, hi) with reading ahead on or off, recording the data
// blocks read; opened is called once the tables are open.
func scanWith(t *testing.T, src Source, ahead bool, lo, hi []byte, opened func()) ([]entryKV, []BlockRef, error) {
	t.Helper()
	noPrefetch = !ahead
	defer func() { noPrefetch = false }()
	db, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var refs []BlockRef
	it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{Lower: lo, Upper: hi, Trace: func(r BlockRef) { refs = append(refs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if opened != nil {
		opened()
	}
	var out []entryKV
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, entryKV{string(it.Key()), string(it.Value())})
	}
	return out, refs, it.Err()
}

// TestPrefetchSameAsOrdinary scans stores of every table layout with and
// without reading ahead: the same entries, the same blocks, and the batches
// read no byte outside the blocks the scan uses.
func TestPrefetchSameAsOrdinary(t *testing.T) {
	for v := range 10 {
		src := prefetchStore(t, v*4, 2000)
		for _, b := range [][2][]byte{{nil, nil}, {[]byte("key000500"), []byte("key001700")}, {[]byte("key001234"), nil}} {
			want, wantRefs, err := scanWith(t, src, false, b[0], b[1], nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingSource{src: src}
			got, gotRefs, err := scanWith(t, rec, true, b[0], b[1], rec.scan)
			if err != nil {
				t.Fatalf("variant %d: %v", v, err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("variant %d [%q, %q): %d entries with reading ahead, %d without", v, b[0], b[1], len(got), len(want))
			}
			if len(want) < 100 {
				t.Fatalf("variant %d: only %d entries", v, len(want))
			}
			// The values are the ones written (newest wins, deletions
			// hide), values of up to 300 bytes included.
			for _, e := range want {
				var i int
				fmt.Sscanf(e.k, "key%06d", &i)
				round := 0
				if i%7 == 0 {
					round = 1
				}
				if i%7 == 0 && i%3 == 0 || e.v != string(prefetchValue(i, round)) {
					t.Fatalf("variant %d: %s = %q", v, e.k, e.v)
				}
			}
			if !slices.Equal(gotRefs, wantRefs) {
				t.Fatalf("variant %d: blocks %v, without reading ahead %v", v, gotRefs, wantRefs)
			}
			// Every read of the scan is one block it uses or a run of
			// consecutive ones (a batch).
			runs := runsOf(wantRefs)
			for _, r := range rec.scanReads() {
				if !runs.covers(r) {
					t.Fatalf("variant %d: read of %d bytes at %d of %s is not a run of the blocks scanned", v, r.n, r.off, r.file)
				}
			}
		}
	}
}

type readRec struct {
	file     string
	off      int64
	n        int
	scanning bool
}

// blockRuns indexes blocks by file and offset.
type blockRuns map[string]map[int64]int64 // file -> offset -> end (trailer included)

func runsOf(refs []BlockRef) blockRuns {
	m := blockRuns{}
	for _, b := range refs {
		if m[b.File] == nil {
			m[b.File] = map[int64]int64{}
		}
		m[b.File][int64(b.Offset)] = int64(b.Offset + b.Size + blockTrailerLen)
	}
	return m
}

// covers reports whether the read covers exactly one or more consecutive
// blocks (their trailers included).
func (m blockRuns) covers(r readRec) bool {
	end := r.off
	for end < r.off+int64(r.n) {
		next, ok := m[r.file][end]
		if !ok {
			return false
		}
		end = next
	}
	return end == r.off+int64(r.n)
}

// recordingSource records the reads of its files.
type recordingSource struct {
	src      Source
	mu       sync.Mutex
	reads    []readRec
	scanning bool
}

func (s *recordingSource) scan() {
	s.mu.Lock()
	s.scanning = true
	s.mu.Unlock()
}

type recordingFile struct {
	File
	s *recordingSource
}

func (f recordingFile) ReadAt(p []byte, off int64) (int, error) {
	f.s.mu.Lock()
	f.s.reads = append(f.s.reads, readRec{file: f.Name(), off: off, n: len(p), scanning: f.s.scanning})
	f.s.mu.Unlock()
	return f.File.ReadAt(p, off)
}

func (s *recordingSource) Open(name string) (File, error) {
	f, err := s.src.Open(name)
	if err != nil {
		return nil, err
	}
	return recordingFile{f, s}, nil
}

// scanReads are the reads made once the tables were open.
func (s *recordingSource) scanReads() []readRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []readRec
	for _, r := range s.reads {
		if r.scanning {
			out = append(out, r)
		}
	}
	return out
}

// TestPrefetchErrorsAsOrdinary corrupts data blocks far into a table
// (where batches read them): the scan fails with the same error, after the
// same entries, as without reading ahead.
func TestPrefetchErrorsAsOrdinary(t *testing.T) {
	for _, v := range []int{0, 4, 9, 13} {
		src := prefetchStore(t, v, 2000)
		_, refs, err := scanWith(t, src, false, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []int{5, len(refs) / 2, len(refs) - 1} {
			r := refs[at]
			bad := MapSource{}
			for k, b := range src {
				bad[k] = b
			}
			b := bytes.Clone(src[r.File])
			b[r.Offset+r.Size/2] ^= 0x40
			bad[r.File] = b
			want, _, wantErr := scanWith(t, bad, false, nil, nil, nil)
			got, _, gotErr := scanWith(t, bad, true, nil, nil, nil)
			if o := optsVariants(v, ""); o.checksum == checksumNone && wantErr == nil {
				// Without checksums a flipped value byte may read fine:
				// then both ways read the same.
				if gotErr != nil || !slices.Equal(got, want) {
					t.Fatalf("variant %d block %d: %v with reading ahead", v, at, gotErr)
				}
				continue
			}
			if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() {
				t.Fatalf("variant %d block %d: error %v with reading ahead, %v without", v, at, gotErr, wantErr)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("variant %d block %d: %d entries before the error with reading ahead, %d without", v, at, len(got), len(want))
			}
		}
	}
}

// TestPrefetchDroppedIterators leaves iterators in the middle of their
// scans: their loaders finish and exit, and the memory budget comes back
// once the iterators are collected.
func TestPrefetchDroppedIterators(t *testing.T) {
	src := prefetchStore(t, 0, 6000)
	before := runtime.NumGoroutine()
	budget := prefetchBudget.Load()
	func() {
		db, err := Open(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for ok := it.First(); ok && n < 200+100*i; ok = it.Next() {
				n++
			}
			if n < 200 {
				t.Fatalf("%d entries", n)
			}
		}
	}()
	if prefetchBudget.Load() >= budget {
		t.Fatalf("the scans read nothing ahead (budget %d, was %d)", prefetchBudget.Load(), budget)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before || prefetchBudget.Load() != budget {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines (%d before), budget %d (%d before)", runtime.NumGoroutine(), before, prefetchBudget.Load(), budget)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPrefetchPointLookupsExact: a lookup reads the same bytes with and
// without reading ahead (never a batch).
func TestPrefetchPointLookupsExact(t *testing.T) {
	src := prefetchStore(t, 1, 3000)
	for _, k := range []string{"key000000", "key001500", "key002999", "key000777"} {
		var n [2]int
		for i, ahead := range []bool{false, true} {
			rec := &recordingSource{src: src}
			lo := []byte(k)
			got, _, err := scanWith(t, rec, ahead, lo, append(bytes.Clone(lo), 0), nil)
			if err != nil || len(got) > 1 {
				t.Fatalf("%s: %v %v", k, got, err)
			}
			for _, r := range rec.reads {
				n[i] += r.n
			}
		}
		if n[0] != n[1] {
			t.Errorf("%s: %d bytes read with reading ahead, %d without", k, n[1], n[0])
		}
	}
}

// TestPrefetchReleasedAtEnd: a scan that ends (at the end of the store or
// at its upper bound, batches still loading) gives its read-ahead buffers
// back at once, and leaves no loader running; scans running side by side
// while others end and hand their buffers on read what the ordinary reads
// read (go test -race checks no buffer is written while in use).
func TestPrefetchReleasedAtEnd(t *testing.T) {
	srcs := []MapSource{prefetchStore(t, 0, 6000), prefetchStore(t, 5, 6000)}
	bounds := [][2][]byte{{nil, nil}, {nil, []byte("key001000")}, {[]byte("key002000"), []byte("key004000")}}
	want := map[[2]int][]entryKV{}
	for i, src := range srcs {
		for j, b := range bounds {
			got, _, err := scanWith(t, src, false, b[0], b[1], nil)
			if err != nil || len(got) < 500 {
				t.Fatalf("store %d, bounds %d: %d entries, %v", i, j, len(got), err)
			}
			want[[2]int{i, j}] = got
		}
	}
	before := runtime.NumGoroutine()
	budget := prefetchBudget.Load()
	for k, b := range bounds {
		db, err := Open(srcs[0], Options{})
		if err != nil {
			t.Fatal(err)
		}
		it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{Lower: b[0], Upper: b[1]})
		if err != nil {
			t.Fatal(err)
		}
		n, least := 0, budget
		for ok := it.First(); ok; ok = it.Next() {
			n++
			least = min(least, prefetchBudget.Load())
		}
		if it.Err() != nil || n != len(want[[2]int{0, k}]) {
			t.Fatalf("bounds %d: %d entries, %v", k, n, it.Err())
		}
		if least >= budget {
			t.Fatalf("bounds %d: the scan read nothing ahead", k)
		}
		if got := prefetchBudget.Load(); got != budget {
			t.Fatalf("bounds %d: budget %d after the scan, %d before", k, got, budget)
		}
		runtime.KeepAlive(it)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 6 {
				i, j := (g+r)%2, (g*r)%3
				db, err := Open(srcs[i], Options{})
				if err != nil {
					errs <- err
					return
				}
				it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{Lower: bounds[j][0], Upper: bounds[j][1]})
				if err != nil {
					errs <- err
					return
				}
				var got []entryKV
				for ok := it.First(); ok; ok = it.Next() {
					got = append(got, entryKV{string(it.Key()), string(it.Value())})
				}
				if it.Err() != nil || !slices.Equal(got, want[[2]int{i, j}]) {
					errs <- fmt.Errorf("goroutine %d, scan %d (store %d, bounds %d): %d entries, %d without reading ahead, %v", g, r, i, j, len(got), len(want[[2]int{i, j}]), it.Err())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before || prefetchBudget.Load() != budget {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines (%d before), budget %d (%d before)", runtime.NumGoroutine(), before, prefetchBudget.Load(), budget)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
