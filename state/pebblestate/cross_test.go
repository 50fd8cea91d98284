package pebblestate

import (
	"math/rand/v2"
	"slices"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// TestHeapPebbleRoundTrip moves one set of entries heap → pebble (split over
// two subtasks) → heap, restoring before registration, and checks every key
// group's entries are unchanged at each hop: a savepoint taken on either
// backend restores on the other.
func TestHeapPebbleRoundTrip(t *testing.T) {
	heap := heapstate.New(128, all)
	defer heap.Close()
	fill(t, heap, rand.New(rand.NewPCG(9, 10)))
	metas := heap.States()

	stream := func(b state.KeyedBackend, g state.KeyGroupRange) func(func(state.Entry, error) bool) {
		return func(yield func(state.Entry, error) bool) {
			for kg := g.Start; kg <= g.End; kg++ {
				for e, err := range b.Entries(kg, "") {
					if !yield(e, err) {
						return
					}
				}
			}
		}
	}
	back := heapstate.New(128, all)
	defer back.Close()
	for _, g := range []state.KeyGroupRange{{Start: 0, End: 40}, {Start: 41, End: 127}} {
		p := openMem(t, g)
		check(t, p.Restore(metas, stream(heap, g)))
		for kg := g.Start; kg <= g.End; kg++ {
			if !slices.EqualFunc(collect(t, p, kg, ""), collect(t, heap, kg, ""), entryEqual) {
				t.Fatalf("heap → pebble: key group %d differs", kg)
			}
		}
		check(t, back.Restore(p.States(), stream(p, g)))
	}
	for kg := 0; kg < 128; kg++ {
		if !slices.EqualFunc(collect(t, back, kg, ""), collect(t, heap, kg, ""), entryEqual) {
			t.Fatalf("pebble → heap: key group %d differs", kg)
		}
	}
}
