package pebblestate

import (
	"testing"

	"streamdbg/state"
	"streamdbg/state/statetest"
)

// TestEntryBatchesLarge: EntryBatches yields Entries' entries over key
// groups of thousands of entries (several batches each, some large
// values, lists whose elements share one pebble value), and the errors of
// a closed backend.
func TestEntryBatchesLarge(t *testing.T) {
	groups := state.KeyGroupRange{Start: 10, End: 13}
	b := openMem(t, groups)
	statetest.FillLarge(t, b, 128, 1)
	n, batches := statetest.CheckEntryBatches(t, b)
	if n < 800 || batches < 2*groups.Len() {
		t.Fatalf("%d entries in %d batches: the fixture is too small to test batches", n, batches)
	}
}
