package savepoint

import (
	"iter"
	"reflect"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"streamdbg/state"
)

// catalogOnly hides a catalog's TimersOfState: what TimersOfState does for
// a catalog that reads all timers at once (a live job).
type catalogOnly struct{ state.Catalog }

// TestTimerRowsNameTheirState: a timer row says which timer state it is
// of, so two timer states of one domain (as a Flink process table
// function keeps) are told apart: in Timers, and in TimersOfState whether
// the catalog reads one state (TimerStateReader) or all of them.
func TestTimerRowsNameTheirState(t *testing.T) {
	const maxPar = 4
	a, b, p := state.TimerStateName("event_a"), state.TimerStateName("event_b"), state.TimerStateName("processing_timers")
	timer := func(name, key string, ts int64) state.Entry {
		k := []byte(key)
		return state.Entry{State: name, KeyGroup: state.KeyGroupFor(k, maxPar), Key: k, UserKey: state.Int64.Append(nil, ts)}
	}
	all := []state.Entry{timer(a, "k1", 10), timer(b, "k1", 20), timer(b, "k2", 30), timer(p, "k2", 40)}
	slices.SortFunc(all, state.CompareEntries)
	meta := func(name string) state.StateMeta {
		return state.StateMeta{StateName: name, Scope: state.ScopeKeyed, Kind: state.KindTimers, KeyType: "string", NamespaceType: "void", ValueType: "int64"}
	}
	op := OperatorSnapshot{ID: sumID, UID: "ptf", Name: "ptf", Parallelism: 1, MaxParallelism: maxPar,
		States: []state.StateMeta{meta(a), meta(b), meta(p)},
		Subtasks: []SubtaskSnapshot{{Index: 0, KeyGroups: state.KeyGroupRange{Start: 0, End: maxPar - 1},
			Keyed: func(kg int) iter.Seq2[state.Entry, error] {
				return func(yield func(state.Entry, error) bool) {
					for _, e := range all {
						if e.KeyGroup == kg && !yield(e, nil) {
							return
						}
					}
				}
			}}}}
	sp := mustWrite(t, vfs.NewMem(), "/sp", &Snapshot{JobName: "ptf", Operators: []OperatorSnapshot{op}})

	row := func(name, key string, ts int64) state.TimerRow {
		return state.TimerRow{OperatorID: sumID, OperatorName: "ptf", KeyGroup: state.KeyGroupFor([]byte(key), maxPar), StateName: name,
			Key: key, Domain: state.TimerDomain(name), Timestamp: ts}
	}
	var want []state.TimerRow
	for _, e := range all {
		ts, _ := state.Int64.Decode(e.UserKey)
		want = append(want, row(e.State, string(e.Key), ts))
	}
	read := func(seq iter.Seq2[state.TimerRow, error]) []state.TimerRow {
		t.Helper()
		var out []state.TimerRow
		for r, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	if got := read(sp.Timers(state.TimerScan{})); !reflect.DeepEqual(got, want) {
		t.Errorf("Timers:\n got %+v\nwant %+v", got, want)
	}
	for _, cat := range []state.Catalog{sp, catalogOnly{sp}} {
		for _, name := range []string{a, b, p} {
			var wantOf []state.TimerRow
			for _, r := range want {
				if r.StateName == name {
					wantOf = append(wantOf, r)
				}
			}
			if got := read(TimersOfState(cat, state.TimerScan{OperatorID: sumID}, name)); !reflect.DeepEqual(got, wantOf) {
				t.Errorf("%T: TimersOfState(%s):\n got %+v\nwant %+v", cat, name, got, wantOf)
			}
		}
	}
}
