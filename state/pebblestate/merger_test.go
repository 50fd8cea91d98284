package pebblestate

import "testing"

// TestListMergerAssociative checks pebble's contract for merge operators:
// operands delivered newest first or oldest first join the same way.
func TestListMergerAssociative(t *testing.T) {
	ops := []string{"a", "", "bc", "d", "efg"} // oldest first
	newestFirst := must(listMerger.Merge(nil, []byte(ops[len(ops)-1])))
	for i := len(ops) - 2; i >= 0; i-- {
		check(t, newestFirst.MergeOlder([]byte(ops[i])))
	}
	oldestFirst := must(listMerger.Merge(nil, []byte(ops[0])))
	for _, op := range ops[1:] {
		check(t, oldestFirst.MergeNewer([]byte(op)))
	}
	a, _, err := newestFirst.Finish(true)
	check(t, err)
	b, _, err := oldestFirst.Finish(false)
	check(t, err)
	if string(a) != "abcdefg" || string(b) != "abcdefg" {
		t.Fatalf("merged %q and %q, want abcdefg", a, b)
	}
}
