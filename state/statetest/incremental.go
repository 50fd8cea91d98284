package statetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"streamdbg/state"
)

// RunIncremental is a property test of IncrementalBackend: random writes of
// every kind (values, lists, maps, reducing adds, clears, namespace merges,
// timers) interleaved with marks, rollbacks and releases. After every
// rollback the state must equal what it was at the mark, byte for byte, and
// every live mark's MarkedEntries must equal its moment at all times.
func RunIncremental(t *testing.T, trials int, newBackend func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend) {
	for trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), 15))
		h := &harness{newBackend: newBackend}
		h.open(t, 16, state.KeyGroupRange{Start: 0, End: 15})
		ib, ok := h.b.(state.IncrementalBackend)
		if !ok {
			t.Fatalf("%T is not an IncrementalBackend", h.b)
		}
		sum := func(a, b any) any { return a.(int64) + b.(int64) }
		reg := func(d state.StateDesc) state.Table {
			d.Meta.OperatorID, d.Meta.OperatorName, d.Meta.KeyType = operatorID, operatorName, "string"
			d.Meta.NamespaceType = "string"
			tb, err := h.b.Register(d)
			if err != nil {
				t.Fatal(err)
			}
			return tb
		}
		val := reg(state.StateDesc{Meta: state.StateMeta{StateName: "v", Kind: state.KindValue, ValueType: "int64"}, Value: state.Erase(state.Int64)})
		red := reg(state.StateDesc{Meta: state.StateMeta{StateName: "r", Kind: state.KindReducing, ValueType: "int64"}, Value: state.Erase(state.Int64), Merge: sum})
		lst := reg(state.StateDesc{Meta: state.StateMeta{StateName: "l", Kind: state.KindList, ValueType: "string", UserKeyType: "position"}, Value: state.Erase(state.String)})
		mp := reg(state.StateDesc{Meta: state.StateMeta{StateName: "m", Kind: state.KindMap, ValueType: "int64", UserKeyType: "string"},
			UserKey: state.Erase(state.String), Value: state.Erase(state.Int64)})
		q, err := h.b.Timers("event", state.StateMeta{OperatorID: operatorID, OperatorName: operatorName, KeyType: "string", NamespaceType: "string"})
		if err != nil {
			t.Fatal(err)
		}
		type live struct {
			m       state.Mark
			entries []state.Entry
		}
		var marks []live
		ns := func() []byte { return []byte{'n', byte('0' + rng.IntN(3))} }
		check := func(step int, what string) {
			for _, l := range marks {
				var got []state.Entry
				for kg := 0; kg < 16; kg++ {
					for e, err := range ib.MarkedEntries(l.m, kg) {
						if err != nil {
							t.Fatalf("trial %d step %d: MarkedEntries(%d): %v", trial, step, l.m, err)
						}
						got = append(got, cloneEntry(e))
					}
				}
				if d := h.diff(t, l.entries, got); d != "entries identical" {
					t.Fatalf("trial %d step %d (%s): mark %d reads back wrong:\n%s", trial, step, what, l.m, d)
				}
			}
		}
		for step := range 400 {
			key := fmt.Sprintf("k%d", rng.IntN(12))
			h.b.SetCurrentKey([]byte(key), state.KeyGroupFor([]byte(key), 16))
			var err error
			what := ""
			switch r := rng.IntN(20); {
			case r < 3:
				what = "put"
				err = val.Put(ns(), rng.Int64N(100))
			case r < 4:
				what = "clear value"
				err = val.Clear(ns())
			case r < 6:
				what = "reduce"
				n := ns()
				old, ok, gerr := red.Get(n)
				v := rng.Int64N(10)
				if ok {
					v += old.(int64)
				}
				err = gerr
				if err == nil {
					err = red.Put(n, v)
				}
			case r < 7:
				what = "merge reducing"
				err = red.MergeNamespaces(ns(), [][]byte{ns(), ns()})
			case r < 9:
				what = "list append"
				err = lst.ListAppend(ns(), fmt.Sprint(rng.IntN(50)))
			case r < 10:
				what = "list put"
				vs := make([]any, rng.IntN(3))
				for i := range vs {
					vs[i] = fmt.Sprint(rng.IntN(50))
				}
				err = lst.ListPut(ns(), vs)
			case r < 11:
				what = "merge list"
				err = lst.MergeNamespaces(ns(), [][]byte{ns()})
			case r < 13:
				what = "map put"
				err = mp.MapPut(ns(), []byte(fmt.Sprint(rng.IntN(4))), rng.Int64N(100))
			case r < 14:
				what = "map delete"
				err = mp.MapDelete(ns(), []byte(fmt.Sprint(rng.IntN(4))))
			case r < 15:
				what = "map clear/merge"
				if rng.IntN(2) == 0 {
					err = mp.Clear(ns())
				} else {
					err = mp.MergeNamespaces(ns(), [][]byte{ns()})
				}
			case r < 17:
				what = "timer"
				k, kg := h.b.CurrentKey()
				tm := state.Timer{Timestamp: rng.Int64N(20), KeyGroup: kg, Key: slices.Clone(k), Namespace: ns()}
				switch rng.IntN(3) {
				case 0, 1:
					_, err = q.Add(tm)
				default:
					err = q.Delete(tm)
				}
			case r < 18:
				what = "timer pop"
				_, _, err = q.Pop()
			case r < 19:
				what = "mark"
				m, merr := ib.Mark()
				if merr != nil {
					t.Fatal(merr)
				}
				_, entries := h.collect(t)
				marks = append(marks, live{m: m, entries: entries})
			default:
				if len(marks) == 0 {
					continue
				}
				i := rng.IntN(len(marks))
				if rng.IntN(2) == 0 {
					what = "rollback"
					if err := ib.RollBack(marks[i].m); err != nil {
						t.Fatalf("trial %d step %d: rollback: %v", trial, step, err)
					}
					_, now := h.collect(t)
					if d := h.diff(t, marks[i].entries, now); d != "entries identical" {
						t.Fatalf("trial %d step %d: state after rollback to mark %d:\n%s", trial, step, marks[i].m, d)
					}
					for _, l := range marks[i+1:] {
						if err := ib.RollBack(l.m); err == nil {
							t.Fatalf("trial %d step %d: mark %d still live after rolling back before it", trial, step, l.m)
						}
					}
					marks = marks[:i+1]
				} else {
					what = "release"
					ib.Release(marks[i].m)
					marks = slices.Delete(marks, i, i+1)
				}
			}
			if err != nil {
				t.Fatalf("trial %d step %d %s: %v", trial, step, what, err)
			}
			if step%25 == 0 || what == "rollback" || what == "release" {
				check(step, what)
			}
		}
		check(400, "end")
		// The timer queue pops in firing order after all the undoing.
		var prev state.Timer
		for i := 0; q.Len() > 0; i++ {
			tm, _, err := q.Pop()
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && state.CompareTimers(prev, tm) >= 0 {
				t.Fatalf("trial %d: timers pop out of order: %v then %v", trial, prev, tm)
			}
			prev = tm
		}
		h.close(t)
	}
}
