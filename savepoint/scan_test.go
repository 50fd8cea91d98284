package savepoint

import (
	"fmt"
	"iter"
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
