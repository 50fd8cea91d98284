package heapstate_test

import (
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
	"streamdbg/state/statetest"
)

// TestEntryBatchesLarge: EntryBatches yields Entries' entries over key
// groups of thousands of entries (several batches each, some large
// values), from declared tables and timers and, after a restore into a
// backend that declares nothing, from states kept as bytes.
func TestEntryBatchesLarge(t *testing.T) {
	const maxPar = 8
	groups := state.KeyGroupRange{Start: 2, End: 5}
	b := heapstate.New(maxPar, groups)
	statetest.FillLarge(t, b, maxPar, 1)
	n, batches := statetest.CheckEntryBatches(t, b)
	if n < 20_000 || batches < 4*groups.Len() {
		t.Fatalf("%d entries in %d batches: the fixture is too small to test batches", n, batches)
	}
	r := heapstate.New(maxPar, groups)
	var all []state.Entry
	for kg := groups.Start; kg <= groups.End; kg++ {
		for e, err := range b.Entries(kg, "") {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, cloneEntry(e))
		}
	}
	if err := r.Restore(b.States(), func(yield func(state.Entry, error) bool) {
		for _, e := range all {
			if !yield(e, nil) {
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if m, _ := statetest.CheckEntryBatches(t, r); m != n {
		t.Fatalf("%d entries restored, %d written", m, n)
	}
}

func cloneEntry(e state.Entry) state.Entry {
	c := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		return append([]byte{}, b...)
	}
	return state.Entry{State: e.State, KeyGroup: e.KeyGroup, Key: c(e.Key), Namespace: c(e.Namespace), UserKey: c(e.UserKey), Value: c(e.Value)}
}
