package querytest_test

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/cputime"
	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// The savepoint BenchmarkQuery and TestQueryMemory read: one operator
// "sum" at parallelism 2 with one reducing state "total" of N string keys
// key_0 … key_<N-1>, key_i's value i.
//
//	STREAMDBG_BENCH_ENTRIES   N (default 1M)
//	STREAMDBG_BENCH_MAXPAR    max parallelism, the number of key groups (default 128)
//	STREAMDBG_BENCH_DIR       keep the savepoint under this directory and reuse it
//	                          in later runs (default: a temporary directory)
const (
	benchOperatorID = "239c254b5ff89532b198266322bc819f"
	benchParallel   = 2
)

type benchConfig struct {
	entries, maxPar int
	dir             string // the savepoint
}

// benchTemp is the temporary directory of the savepoint, if one was made.
var benchTemp string

func envInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			panic(fmt.Sprintf("%s=%q: want a positive integer", name, s))
		}
		return n
	}
	return def
}

// benchSavepoint builds the savepoint once per process (or finds it in
// STREAMDBG_BENCH_DIR).
var benchSavepoint = sync.OnceValues(func() (*benchConfig, error) {
	c := &benchConfig{entries: envInt("STREAMDBG_BENCH_ENTRIES", 1_000_000), maxPar: envInt("STREAMDBG_BENCH_MAXPAR", state.DefaultMaxParallelism)}
	root := os.Getenv("STREAMDBG_BENCH_DIR")
	if root == "" {
		tmp, err := os.MkdirTemp("", "streamdbg-bench-")
		if err != nil {
			return nil, err
		}
		root = tmp
		benchTemp = tmp
	}
	c.dir = filepath.Join(root, fmt.Sprintf("sum-%d-kg%d", c.entries, c.maxPar))
	if _, err := os.Stat(filepath.Join(c.dir, savepoint.MetadataFile)); err == nil {
		return c, nil
	}
	start := time.Now()
	if err := savepoint.Write(vfs.Default, c.dir, benchSnapshot(c.entries, c.maxPar)); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "querytest: wrote a savepoint of %d entries in %d key groups to %s in %v\n",
		c.entries, c.maxPar, c.dir, time.Since(start).Round(time.Millisecond))
	return c, nil
})

// benchSnapshot is the synthetic snapshot: keys bucketed by key group and
// sorted within each, generated per key group as Write streams them.
func benchSnapshot(n, maxPar int) *savepoint.Snapshot {
	groups := make([][]int32, maxPar)
	var key []byte
	for i := range n {
		key = strconv.AppendInt(append(key[:0], "key_"...), int64(i), 10)
		kg := state.KeyGroupFor(key, maxPar)
		groups[kg] = append(groups[kg], int32(i))
	}
	entries := func(kg int) iter.Seq2[state.Entry, error] {
		return func(yield func(state.Entry, error) bool) {
			ids := groups[kg]
			keys := make([][]byte, len(ids))
			arena := make([]byte, 0, len(ids)*12)
			for j, i := range ids {
				k := len(arena)
				arena = strconv.AppendInt(append(arena, "key_"...), int64(i), 10)
				keys[j] = arena[k:len(arena):len(arena)]
			}
			order := make([]int, len(ids))
			for j := range order {
				order[j] = j
			}
			slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
			var val []byte
			for _, j := range order {
				val = state.Int64.Append(val[:0], int64(ids[j]))
				if !yield(state.Entry{State: "total", KeyGroup: kg, Key: keys[j], Value: val}, nil) {
					return
				}
			}
		}
	}
	op := savepoint.OperatorSnapshot{ID: benchOperatorID, UID: "sum", Name: "sum", Parallelism: benchParallel, MaxParallelism: maxPar,
		States: []state.StateMeta{{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", NamespaceType: "void", ValueType: "int64"}}}
	for i := range benchParallel {
		op.Subtasks = append(op.Subtasks, savepoint.SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(maxPar, benchParallel, i), Keyed: entries})
	}
	return &savepoint.Snapshot{JobName: "bench", Created: time.Unix(0, 0).UTC(), Operators: []savepoint.OperatorSnapshot{op}}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchTemp != "" {
		_ = os.RemoveAll(benchTemp)
	}
	os.Exit(code)
}

// countRows runs a query and counts its rows.
func countRows(tb testing.TB, cat query.Catalog, text string) int {
	rows, err := query.RunText(context.Background(), cat, text)
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, err := range rows.All() {
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
	return n
}

// The scan's filter keeps one row in a thousand.
const scanQuery = "SELECT key, value FROM keyed_state WHERE value % 1000 = 7"

// BenchmarkQuery reads the savepoint of benchSavepoint (opened once, as the
// CLI and the TUI browser do): point is a key equality (one key group's
// section read and decoded), scan a full scan with a value filter.
// scan-baseline is a hand-written loop over the same catalog iterator: the
// cost of reading the savepoint without the query engine.
func BenchmarkQuery(b *testing.B) {
	c, err := benchSavepoint()
	if err != nil {
		b.Fatal(err)
	}
	sp, err := savepoint.Open(vfs.Default, c.dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d entries in %d key groups (%.0f per group)", c.entries, c.maxPar, float64(c.entries)/float64(c.maxPar))
	b.Run("point", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			k := (i * 7919) % c.entries
			q := fmt.Sprintf("SELECT value FROM keyed_state WHERE operator_name = 'sum' AND state_name = 'total' AND key = 'key_%d'", k)
			if n := countRows(b, sp, q); n != 1 {
				b.Fatalf("key_%d: %d rows, want 1", k, n)
			}
		}
	})
	want := c.entries / 1000
	if c.entries%1000 > 7 {
		want++
	}
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		c0 := cputime.Process()
		for b.Loop() {
			if n := countRows(b, sp, scanQuery); n != want {
				b.Fatalf("%d rows, want %d", n, want)
			}
		}
		b.ReportMetric(float64(c.entries)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		// CPU time of the process (every goroutine) per row scanned: what
		// load on a shared machine disturbs least.
		b.ReportMetric(float64(cputime.Process()-c0)/float64(c.entries)/float64(b.N), "cpu-ns/row")
	})
	b.Run("scan-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for r, err := range sp.Keyed(state.KeyedScan{}) {
				if err != nil {
					b.Fatal(err)
				}
				if v, ok := r.Value.(int64); ok && v%1000 == 7 {
					_ = []any{r.Key, r.Value}
					n++
				}
			}
			if n != want {
				b.Fatalf("%d rows, want %d", n, want)
			}
		}
		b.ReportMetric(float64(c.entries)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
