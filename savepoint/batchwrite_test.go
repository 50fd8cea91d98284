package savepoint

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
	"streamdbg/state"
)

// failAt is where a fixture's source of entries fails: before entry at of
// key group kg (kg -1: never).
type failAt struct {
	kg, at int
	err    error
}

// keyedEach is f.entries failing at fail.
func (f *fixture) keyedEach(fail failAt) func(kg int) iter.Seq2[state.Entry, error] {
	return func(kg int) iter.Seq2[state.Entry, error] {
		return func(yield func(state.Entry, error) bool) {
			for i, e := range f.byGroup[kg] {
				if kg == fail.kg && i == fail.at {
					yield(state.Entry{}, fail.err)
					return
				}
				if !yield(e, nil) {
					return
				}
			}
			if kg == fail.kg && fail.at >= len(f.byGroup[kg]) {
				yield(state.Entry{}, fail.err)
			}
		}
	}
}

// keyedBatches hands the same entries over in batches of random lengths
// (some empty, some of one), copied into one reused slice that is spoiled
// after every step, as a backend's batches are only valid until then.
// Each key group's lengths come from its own generator: the subtasks are
// written in parallel.
func (f *fixture) keyedBatches(seed uint64, fail failAt) func(kg int) iter.Seq2[[]state.Entry, error] {
	return func(kg int) iter.Seq2[[]state.Entry, error] {
		return func(yield func([]state.Entry, error) bool) {
			rng := rand.New(rand.NewPCG(seed, uint64(kg)))
			es := f.byGroup[kg]
			end := len(es)
			if kg == fail.kg {
				end = min(fail.at, len(es))
			}
			batch := make([]state.Entry, 0, state.BatchEntries)
			for i := 0; i < end || (i == 0 && rng.IntN(2) == 0); {
				n := min(end-i, []int{0, 1, 2, 7, 100, state.BatchEntries}[rng.IntN(6)])
				batch = append(batch[:0], es[i:i+n]...)
				i += n
				if !yield(batch, nil) {
					return
				}
				for j := range batch {
					batch[j] = state.Entry{State: "spoiled", Key: []byte("spoiled")}
				}
			}
			if kg == fail.kg {
				yield(nil, fail.err)
			}
		}
	}
}

// TestWriteBatchesByteIdentical: a savepoint written from batches
// (SubtaskSnapshot.KeyedBatches) is the one written from the same entries
// one at a time, byte for byte, _metadata included, in formats 1 and 2,
// over random fixtures (value, map, list, window and timer states, empty
// key groups, long keys and values); a source that fails part way fails
// both writes with the same error and leaves nothing.
func TestWriteBatchesByteIdentical(t *testing.T) {
	failures := 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 35))
		var f *fixture
		if seed%2 == 0 {
			f = newFixture(1+rng.IntN(2000), 2+rng.IntN(63), seed)
		} else {
			f = benchLikeFixture(1+rng.IntN(4000), 2+rng.IntN(63), seed)
		}
		fail := failAt{kg: -1}
		if seed%4 == 3 {
			// A key group with entries, failing before one of them or
			// after the last.
			kgs := slices.Sorted(maps.Keys(f.byGroup))
			kg := kgs[rng.IntN(len(kgs))]
			fail = failAt{kg: kg, at: rng.IntN(len(f.byGroup[kg]) + 1), err: fmt.Errorf("backend: read failed (seed %d)", seed)}
		}
		version := 1 + int(seed%3)%2
		par := 1 + rng.IntN(min(4, f.maxPar))
		fs := vfs.NewMem()
		snap := func(batches bool) *Snapshot {
			s := f.snapshot(par)
			for i := range s.Operators {
				for j := range s.Operators[i].Subtasks {
					sub := &s.Operators[i].Subtasks[j]
					if sub.Keyed == nil {
						continue
					}
					sub.Keyed = f.keyedEach(fail)
					if batches {
						sub.KeyedBatches = f.keyedBatches(seed, fail)
					}
				}
			}
			return s
		}
		name := fmt.Sprintf("seed %d (format %d, parallelism %d, max parallelism %d, failing %+v)", seed, version, par, f.maxPar, fail)
		errEach := write(fs, "/each", snap(false), version)
		errBatches := write(fs, "/batches", snap(true), version)
		if fail.kg >= 0 {
			failures++
			if errEach == nil || errBatches == nil || errEach.Error() != errBatches.Error() || !errors.Is(errBatches, fail.err) {
				t.Fatalf("%s: errors %v and %v, want the same, wrapping %v", name, errEach, errBatches, fail.err)
			}
			for _, d := range []string{"/each", "/batches"} {
				if _, err := fs.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s: %s left after a failed write: %v", name, d, err)
				}
			}
			continue
		}
		if errEach != nil || errBatches != nil {
			t.Fatalf("%s: %v, %v", name, errEach, errBatches)
		}
		each, batches := vfstest.Files(t, fs, "/each"), vfstest.Files(t, fs, "/batches")
		if len(each) != len(batches) {
			t.Fatalf("%s: %d files from entries, %d from batches", name, len(each), len(batches))
		}
		for n, b := range each {
			if !bytes.Equal(b, batches[n]) {
				t.Fatalf("%s: %s differs between the writes from entries and from batches", name, n)
			}
		}
		// And the entries read back are the fixture's.
		sp, err := Open(fs, "/batches")
		if err != nil {
			t.Fatal(err)
		}
		sameEntries(t, readAll(t, sp, sumID, state.KeyGroupRange{Start: 0, End: f.maxPar - 1}), f.all)
	}
	if failures < 5 {
		t.Fatalf("only %d writes failed", failures)
	}
}
