package savepoint

import (
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
	"streamdbg/state/heapstate"
	"streamdbg/state/pebblestate"
)

// backendRegistry binds typed descriptors straight to a backend.
type backendRegistry struct{ b state.KeyedBackend }

func (r backendRegistry) KeyedTable(d state.StateDesc) (state.Table, error) { return r.b.Register(d) }
func (r backendRegistry) Operator() *state.OperatorStore                    { return nil }

// BenchmarkSavepointFromBackend writes a savepoint of real backends: two
// subtasks' backends at max parallelism 128 holding 250k keys each in a
// ValueState[int64] and a ValueState[string] of ~30 bytes (1M entries in
// all, the shape of BenchmarkSavepoint's fixture). What each side does:
// Write of the snapshot, everything BenchmarkSavepoint's write does, the
// entries coming from the backends (heap: values encoded from the
// backend's Go values; pebble: read from its store):
//
//   - batches: through EntryBatches (SubtaskSnapshot.KeyedBatches, what
//     the runtime's SavepointSnapshot passes), heap only: pebble has no
//     EntryBatches (copying every entry out of its iterator cost what the
//     batches saved: x-each-cpu 0.94-0.97 when it had);
//   - each: through Entries, one entry per iterator step (Keyed only).
//
// The -ratio sub-benchmarks interleave the two in every iteration
// (alternating which goes first, each after a garbage collection);
// x-each is each's time over batches' (above 1: batches are faster),
// x-each-cpu the same in process CPU time.
func BenchmarkSavepointFromBackend(b *testing.B) {
	const keys = 500_000
	fs := vfs.Default
	for _, kind := range []string{"heap", "pebble"} {
		var backends []state.KeyedBackend
		for i := range 2 {
			groups := state.KeyGroupRangeFor(128, 2, i)
			var be state.KeyedBackend
			if kind == "heap" {
				be = heapstate.New(128, groups)
			} else {
				p, err := pebblestate.Open(pebblestate.Options{Dir: b.TempDir(), MaxParallelism: 128, KeyGroups: groups, CacheSize: 64 << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = p.Close() }()
				be = p
			}
			total, err := state.Value("total", state.Int64).Bind(backendRegistry{be})
			if err != nil {
				b.Fatal(err)
			}
			last, err := state.Value("last", state.String).Bind(backendRegistry{be})
			if err != nil {
				b.Fatal(err)
			}
			for k := range keys {
				key := fmt.Appendf(nil, "customer_%07d", k)
				kg := state.KeyGroupFor(key, 128)
				if !groups.Contains(kg) {
					continue
				}
				be.SetCurrentKey(key, kg)
				if err := total.Update(int64(k)); err != nil {
					b.Fatal(err)
				}
				if err := last.Update(fmt.Sprintf(`{"product":"p%d","amount":%d}`, k%97, k%1000)); err != nil {
					b.Fatal(err)
				}
			}
			backends = append(backends, be)
		}
		snapshot := func(batches bool) *Snapshot {
			op := OperatorSnapshot{ID: sumID, UID: "sum", Name: "sum", Parallelism: 2, MaxParallelism: 128, States: backends[0].Describe()}
			for i, be := range backends {
				sub := SubtaskSnapshot{Index: i, KeyGroups: be.KeyGroups(),
					Keyed: func(kg int) iter.Seq2[state.Entry, error] { return be.Entries(kg, "") }}
				if batches {
					eb := be.(state.EntryBatcher)
					sub.KeyedBatches = func(kg int) iter.Seq2[[]state.Entry, error] { return eb.EntryBatches(kg, "") }
				}
				op.Subtasks = append(op.Subtasks, sub)
			}
			return &Snapshot{JobName: "bench", Created: time.Unix(0, 0), Operators: []OperatorSnapshot{op}}
		}
		root := b.TempDir()
		n := 0
		write := func(b *testing.B, batches bool) {
			n++
			dir := fs.PathJoin(root, fmt.Sprint(n))
			if err := Write(fs, dir, snapshot(batches)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = fs.RemoveAll(dir)
			b.StartTimer()
		}
		b.Run(kind+"/each", func(b *testing.B) {
			for range b.N {
				write(b, false)
			}
		})
		if _, ok := backends[0].(state.EntryBatcher); !ok {
			continue
		}
		b.Run(kind+"/batches", func(b *testing.B) {
			for range b.N {
				write(b, true)
			}
		})
		b.Run(kind+"/ratio", func(b *testing.B) {
			bt, et, bc, ec := alternate(b, func(int) { write(b, true) }, func(int) { write(b, false) })
			b.ReportMetric(float64(et)/float64(bt), "x-each")
			if bc > 0 {
				b.ReportMetric(float64(ec)/float64(bc), "x-each-cpu")
			}
			b.ReportMetric(float64(bc.Microseconds())/float64(b.N)/1e3, "batches-cpu-ms/op")
			b.ReportMetric(float64(ec.Microseconds())/float64(b.N)/1e3, "each-cpu-ms/op")
		})
	}
}
