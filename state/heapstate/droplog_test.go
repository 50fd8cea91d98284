package heapstate_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// TestReleaseOldestMarks releases marks as a debugging session does: a
// mark every 40 writes over 3000 keys, the last four kept, and an older
// one pinned for a while (a light run's anchor) before it goes too, so
// that releasing the oldest mark drops the front of a long log again and
// again (dropLog) while later marks keep the rest. After every release
// each live mark's state (MarkedEntries) must be the state when it was
// taken, and at the end rolling back to each of them, newest first, must
// give that state back.
func TestReleaseOldestMarks(t *testing.T) {
	type key struct{ k string }
	type mark struct {
		m     state.Mark
		model map[key]int64
	}
	rng := rand.New(rand.NewPCG(7, 7))
	b := heapstate.New(maxPar, all())
	vs := state.NewValueState[int64](must(b.Register(state.Value("v", state.Int64).Desc()))(t))
	model := map[key]int64{}
	state0 := func(m state.Mark) map[key]int64 {
		got := map[key]int64{}
		for kg := range maxPar {
			for e, err := range b.MarkedEntries(m, kg) {
				ok(t, err)
				got[key{string(e.Key)}] = must(state.Int64.Decode(e.Value))(t)
			}
		}
		return got
	}
	var pinned *mark
	var marks []mark // the last ones, oldest first
	releases := 0
	for step := range 12000 {
		k := fmt.Sprint("k", rng.IntN(3000))
		setKey(b, k)
		n, _, err := vs.Value()
		ok(t, err)
		ok(t, vs.Update(n+1))
		model[key{k}] = n + 1
		if step%40 != 39 {
			continue
		}
		m, err := b.Mark()
		ok(t, err)
		marks = append(marks, mark{m, maps.Clone(model)})
		if pinned == nil && step%4000 == 39 {
			p := marks[len(marks)-1]
			pinned = &p
		}
		if len(marks) > 4 {
			if pinned == nil || marks[0].m != pinned.m {
				b.Release(marks[0].m)
				releases++
			}
			marks = marks[1:]
		}
		if pinned != nil && step%4000 == 3999 {
			b.Release(pinned.m)
			releases++
			pinned = nil
		}
		if step%400 == 399 {
			live := marks
			if pinned != nil {
				live = append([]mark{*pinned}, marks...)
			}
			for _, mk := range live {
				if got := state0(mk.m); !maps.Equal(got, mk.model) {
					t.Fatalf("step %d: state at mark %d differs from the state then (%d entries, want %d)", step, mk.m, len(got), len(mk.model))
				}
			}
		}
	}
	if releases < 250 {
		t.Fatalf("%d releases", releases)
	}
	for i := len(marks) - 1; i >= 0; i-- {
		ok(t, b.RollBack(marks[i].m))
		got := map[key]int64{}
		for k := range marks[i].model {
			setKey(b, k.k)
			if n, found, err := vs.Value(); err != nil {
				t.Fatal(err)
			} else if found {
				got[k] = n
			}
		}
		if !maps.Equal(got, marks[i].model) {
			t.Fatalf("rolled back to mark %d: the state differs from the state then", marks[i].m)
		}
	}
}
