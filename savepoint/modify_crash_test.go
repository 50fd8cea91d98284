package savepoint_test

import (
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/savepoint"
	"streamdbg/savepoint/modify"
	"streamdbg/state"
)

// TestModifyCrashAtomicity extends the crash test to savepoint modify: a
// modification killed at any step of its write leaves no savepoint that
// opens at the target (nor in any crash image), and the source is intact.
func TestModifyCrashAtomicity(t *testing.T) {
	const maxPar = 8
	id := state.OperatorID("sum")
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	byGroup := make([][]int, maxPar)
	for i := range 300 {
		kg := state.KeyGroupFor(key(i), maxPar)
		byGroup[kg] = append(byGroup[kg], i)
	}
	snap := &savepoint.Snapshot{JobName: "crash", Created: time.Unix(0, 0), Operators: []savepoint.OperatorSnapshot{{
		ID: id, UID: "sum", Name: "sum", Parallelism: 2, MaxParallelism: maxPar,
		States: []state.StateMeta{{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", ValueType: "int64"}},
	}}}
	for i := range 2 {
		snap.Operators[0].Subtasks = append(snap.Operators[0].Subtasks, savepoint.SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(maxPar, 2, i),
			Keyed: func(kg int) iter.Seq2[state.Entry, error] {
				return func(yield func(state.Entry, error) bool) {
					for _, k := range byGroup[kg] {
						if !yield(state.Entry{State: "total", KeyGroup: kg, Key: key(k), Value: state.Int64.Append(nil, int64(k))}, nil) {
							return
						}
					}
				}
			}})
	}
	const src, dst = "/sps/src", "/sps/dst"
	verify := func(sp *savepoint.Savepoint) {
		got := map[string]int64{}
		for e, err := range sp.KeyedEntriesFor(id, state.KeyGroupRange{Start: 0, End: maxPar - 1}) {
			if err != nil {
				t.Fatal(err)
			}
			v, _ := state.Int64.Decode(e.Value)
			got[string(e.Key)] = v
		}
		if len(got) != 299 || got["k007"] != 1007 || got["k008"] != 8 {
			t.Fatalf("modified savepoint: %d keys, k007=%d, k008=%d", len(got), got["k007"], got["k008"])
		}
		if _, ok := got["k009"]; ok {
			t.Fatal("k009 not deleted")
		}
	}
	steps := savepoint.CrashEveryStep(t, dst, func(fs vfs.FS) {
		if err := savepoint.Write(fs, src, snap); err != nil {
			t.Fatal(err)
		}
	}, func(fs vfs.FS) error {
		sp, err := savepoint.Open(fs, src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := modify.Compile(sp, `UPDATE "sum"."total" SET value = value + 1000 WHERE key = 'k007'; DELETE FROM "sum"."total" WHERE key = 'k009'`)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Write(fs, dst)
		// Whatever happened to the target, the source still reads whole.
		again, oerr := savepoint.Open(fs, src)
		if oerr != nil {
			t.Fatalf("source damaged: %v", oerr)
		}
		n := 0
		for _, err := range again.KeyedEntriesFor(id, state.KeyGroupRange{Start: 0, End: maxPar - 1}) {
			if err != nil {
				t.Fatalf("source damaged: %v", err)
			}
			n++
		}
		if n != 300 {
			t.Fatalf("source has %d entries", n)
		}
		return err
	}, verify)
	if steps < 10 {
		t.Fatalf("only %d steps", steps)
	}
	t.Logf("crashed at each of %d steps", steps)
}
