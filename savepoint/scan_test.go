package savepoint

import (
	"fmt"
	"iter"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// A scan applies its prefilter inside the stream reader (no Entry for a
// row it drops) in every section, not only in the first section each
// worker reads: with one state, a filter that keeps every row is called
// twice for each entry the reader's fast path decodes (once by the reader,
// once before the row is made), once for the others. Before, every
// section after a worker's first one called it once per entry only.
func TestScanPrefiltersInEverySection(t *testing.T) {
	const keysPerGroup = 400
	entries := func(kg int) iter.Seq2[state.Entry, error] {
		return func(yield func(state.Entry, error) bool) {
			for i := range keysPerGroup {
				e := state.Entry{State: "total", KeyGroup: kg, Key: fmt.Appendf(nil, "k%03d_%05d", kg, i), Value: state.Int64.Append(nil, int64(i))}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
	op := OperatorSnapshot{ID: sumID, UID: "sum", Name: "sum", Parallelism: 2, MaxParallelism: 32,
		States: []state.StateMeta{{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", ValueType: "int64"}}}
	for i := range 2 {
		op.Subtasks = append(op.Subtasks, SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(32, 2, i), Keyed: entries})
	}
	fs := vfs.NewMem()
	if err := Write(fs, "/sp", &Snapshot{JobName: "t", Created: time.Unix(0, 0), Operators: []OperatorSnapshot{op}}); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	scan := state.KeyedScan{OperatorID: sumID, Prefilter: func(m state.StateMeta) func(key, value []byte, kg int) bool {
		return func(key, value []byte, kg int) bool { calls.Add(1); return true }
	}}
	rows := 0
	for r, err := range sp.Keyed(scan) {
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("k%03d_%05d", r.KeyGroup, rows%keysPerGroup); r.Key != want {
			t.Fatalf("row %d: key %v, want %s", rows, r.Key, want)
		}
		rows++
	}
	const n = 32 * keysPerGroup
	if rows != n {
		t.Fatalf("%d rows, want %d", rows, n)
	}
	// Blocks of 4 KiB hold about 250 of these entries: under 2% of the
	// entries start a block and take the reader's general path.
	if c := calls.Load(); c < 2*n-n/50 || c > 2*n {
		t.Fatalf("prefilter called %d times for %d entries, want about %d (twice per entry of the reader's fast path)", c, n, 2*n)
	}
}

// bigSections is a savepoint of one operator at parallelism 1 whose key
// groups hold perGroup rows each: sections far larger than a scan's batch.
func bigSections(tb testing.TB, groups, perGroup int) *Savepoint {
	tb.Helper()
	entries := func(kg int) iter.Seq2[state.Entry, error] {
		return func(yield func(state.Entry, error) bool) {
			for i := range perGroup {
				e := state.Entry{State: "total", KeyGroup: kg, Key: fmt.Appendf(nil, "k%d_%06d", kg, i), Value: state.Int64.Append(nil, int64(1000+i))}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
	op := OperatorSnapshot{ID: sumID, UID: "sum", Name: "sum", Parallelism: 1, MaxParallelism: groups,
		States: []state.StateMeta{{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", ValueType: "int64"}}}
	op.Subtasks = []SubtaskSnapshot{{Index: 0, KeyGroups: state.KeyGroupRangeFor(groups, 1, 0), Keyed: entries}}
	fs := vfs.NewMem()
	if err := Write(fs, "/sp", &Snapshot{JobName: "t", Created: time.Unix(0, 0), Operators: []OperatorSnapshot{op}}); err != nil {
		tb.Fatal(err)
	}
	sp, err := Open(fs, "/sp")
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// heldAfter scans sp, stops after n rows, waits for the workers to run as
// far ahead as they may and returns the heap held then (above before the
// scan); it checks the rows' order on the way.
func heldAfter(tb testing.TB, sp *Savepoint, n, perGroup int) int64 {
	before := liveHeap()
	rows := 0
	for r, err := range sp.Keyed(state.KeyedScan{OperatorID: sumID}) {
		if err != nil {
			tb.Fatal(err)
		}
		if want := fmt.Sprintf("k%d_%06d", r.KeyGroup, rows%perGroup); r.Key != want {
			tb.Fatalf("row %d: key %v, want %s", rows, r.Key, want)
		}
		rows++
		if rows == n {
			time.Sleep(100 * time.Millisecond)
			return liveHeap() - before
		}
	}
	tb.Fatalf("%d rows, want at least %d", rows, n)
	return 0
}

// A scan holds a bounded number of rows ahead of its consumer, whatever
// the size of a section: rows are handed over in batches, and a worker
// waits while its unit's batches are not taken. Before, a worker made a
// whole section's rows before the consumer saw any, and maxAhead sections
// per worker were held so: here 71 MiB after the first row; at 10M
// entries in 128 key groups (78k rows a section) `SELECT … LIMIT 10`
// raised the peak RSS by 106 MiB, and `open` passed its 150 MB budget
// while paging with a filter.
func TestScanHoldsBoundedRows(t *testing.T) {
	const groups, perGroup = 4, 100_000
	sp := bigSections(t, groups, perGroup)
	const limit = 8 << 20 // the rows of the whole state take about 60 MiB
	for _, stopAt := range []int{1, groups * perGroup / 2} {
		held := heldAfter(t, sp, stopAt, perGroup)
		t.Logf("after %d rows: %.1f MiB held", stopAt, float64(held)/(1<<20))
		if held > limit {
			t.Errorf("after %d rows: %.1f MiB held ahead of the consumer, want at most %d MiB", stopAt, float64(held)/(1<<20), limit>>20)
		}
	}
}

// BenchmarkScanRows scans 4 key groups of 100k rows each (sections far
// larger than a batch): rows is the keyed scan of queries and the browser
// (rows/s; held-MiB is the heap held ahead of a consumer that stops after
// its first row and waits, measured once), entries-baseline the same
// sections decoded into entries one at a time without rows
// (KeyedEntriesFor, as a restore reads them). all-rows-MiB is what every
// row of the state takes, held at once.
func BenchmarkScanRows(b *testing.B) {
	const groups, perGroup = 4, 100_000
	sp := bigSections(b, groups, perGroup)
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, err := range sp.Keyed(state.KeyedScan{OperatorID: sumID}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != groups*perGroup {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(groups*perGroup)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(heldAfter(b, sp, 1, perGroup))/(1<<20), "held-MiB")
		before := liveHeap()
		var all []state.KeyedRow
		for r, err := range sp.Keyed(state.KeyedScan{OperatorID: sumID}) {
			if err != nil {
				b.Fatal(err)
			}
			all = append(all, r)
		}
		b.ReportMetric(float64(liveHeap()-before)/(1<<20), "all-rows-MiB")
		goruntime.KeepAlive(all)
	})
	b.Run("entries-baseline", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, err := range sp.KeyedEntriesFor(sumID, state.KeyGroupRange{Start: 0, End: groups - 1}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != groups*perGroup {
				b.Fatalf("%d entries", n)
			}
		}
		b.ReportMetric(float64(groups*perGroup)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
