package diff_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/savepoint"
	"streamdbg/savepoint/diff"
	"streamdbg/state"
)

var synthOp = state.OperatorID("synthetic")

// writeSynthetic writes a savepoint of one operator with one value state of
// n string keys; every changeEvery-th key's value is one more than its
// index (0: none).
func writeSynthetic(tb testing.TB, dir string, n, changeEvery int) {
	tb.Helper()
	const maxPar, par = 128, 2
	byGroup := make([][]int32, maxPar)
	key := func(i int) []byte { return fmt.Appendf(nil, "key_%08d", i) }
	for i := range n {
		kg := state.KeyGroupFor(key(i), maxPar)
		byGroup[kg] = append(byGroup[kg], int32(i))
	}
	op := savepoint.OperatorSnapshot{ID: synthOp, UID: "synthetic", Name: "synthetic", Parallelism: par, MaxParallelism: maxPar,
		States: []state.StateMeta{{StateName: "v", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", ValueType: "int64"}}}
	for i := range par {
		op.Subtasks = append(op.Subtasks, savepoint.SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(maxPar, par, i),
			Keyed: func(kg int) iter.Seq2[state.Entry, error] {
				return func(yield func(state.Entry, error) bool) {
					for _, id := range byGroup[kg] { // fixed-width keys: index order is byte order
						v := int64(id)
						if changeEvery > 0 && int(id)%changeEvery == 0 {
							v++
						}
						if !yield(state.Entry{State: "v", KeyGroup: kg, Key: key(int(id)), Value: state.Int64.Append(nil, v)}, nil) {
							return
						}
					}
				}
			}})
	}
	snap := &savepoint.Snapshot{JobName: "synthetic", Created: time.Unix(0, 0), Operators: []savepoint.OperatorSnapshot{op}}
	if err := savepoint.Write(vfs.Default, dir, snap); err != nil {
		tb.Fatal(err)
	}
}

var (
	pairOnce sync.Once
	pairDirs [2]string
	pairErr  error
)

// millionPair is two savepoints of 1M entries, 1% of the values changed,
// written once per test binary.
func millionPair(tb testing.TB) (a, b string) {
	pairOnce.Do(func() {
		dir, err := os.MkdirTemp("", "streamdbg-diff-bench-")
		if err != nil {
			pairErr = err
			return
		}
		pairDirs = [2]string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
		writeSynthetic(tb, pairDirs[0], 1_000_000, 0)
		writeSynthetic(tb, pairDirs[1], 1_000_000, 100)
	})
	if pairErr != nil {
		tb.Fatal(pairErr)
	}
	return pairDirs[0], pairDirs[1]
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pairDirs[0] != "" {
		os.RemoveAll(filepath.Dir(pairDirs[0]))
	}
	os.Exit(code)
}

// BenchmarkDiff compares two 1M-entry savepoints with 1% of the values
// changed. Baseline "read-both": the same two savepoints streamed through the
// reader (KeyedEntriesFor over all key groups, entry by entry), without
// comparing. "diff": diff.Run over the same pair, counting the rows.
func BenchmarkDiff(b *testing.B) {
	da, db := millionPair(b)
	sa, sb := openOurs(b, da), openOurs(b, db)
	all := state.KeyGroupRange{Start: 0, End: 127}
	b.Run("read-both", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, sp := range []*savepoint.Savepoint{sa, sb} {
				for _, err := range sp.KeyedEntriesFor(synthOp, all) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			if n != 2_000_000 {
				b.Fatalf("%d entries", n)
			}
		}
		b.ReportMetric(2e6*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	b.Run("diff", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if _, err := diff.Run(context.Background(), sa, sb, diff.Options{}, func(diff.Row) bool { n++; return true }); err != nil {
				b.Fatal(err)
			}
			if n != 10_000 {
				b.Fatalf("%d rows, want 10000", n)
			}
		}
		b.ReportMetric(2e6*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// liveHeap samples the heap marked live by the latest GC while f runs and
// returns the largest sample.
func liveHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// TestDiffMemoryFlat: diffing two 1M-entry savepoints holds no more than
// diffing two 50k-entry ones, whichever path reads them.
func TestDiffMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two 1M-entry savepoints")
	}
	da, db := millionPair(t)
	dir := t.TempDir()
	sa, sb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeSynthetic(t, sa, 50_000, 0)
	writeSynthetic(t, sb, 50_000, 100)
	for _, path := range []struct {
		name string
		wrap func(state.Catalog) state.Catalog
	}{
		{"raw", func(c state.Catalog) state.Catalog { return c }},
		{"rows", func(c state.Catalog) state.Catalog { return catalogOnly{c} }},
	} {
		t.Run(path.name, func(t *testing.T) {
			measure := func(a, b string, want int) uint64 {
				ca, cb := path.wrap(openOurs(t, a)), path.wrap(openOurs(t, b))
				n := 0
				peak := liveHeap(func() {
					if _, err := diff.Run(context.Background(), ca, cb, diff.Options{}, func(diff.Row) bool { n++; return true }); err != nil {
						t.Fatal(err)
					}
				})
				if n != want {
					t.Fatalf("%d rows, want %d", n, want)
				}
				return peak
			}
			small := measure(sa, sb, 500)
			large := measure(da, db, 10_000)
			t.Logf("live heap: %.1f MB at 50k entries, %.1f MB at 1M", float64(small)/1e6, float64(large)/1e6)
			if large > small+24<<20 || large > 64<<20 {
				t.Fatalf("live heap grows with the savepoints: %d bytes at 50k, %d at 1M", small, large)
			}
		})
	}
}
