package heapstate_test

import (
	"fmt"
	"maps"
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

// TestEntriesAfterRollBackRestoresCells: Entries after cells came, went
// and came back (a key cleared and written again, then rolled back past
// both; a new key rolled away) yields the values the state holds, not
// those of cells Entries saw before: its cache of a key group's cells in
// order must be dropped whenever a cell enters or leaves a map.
func TestEntriesAfterRollBackRestoresCells(t *testing.T) {
	b := heapstate.New(maxPar, all())
	v := must(state.Value("v", state.Int64).Bind(registry{b}))(t)
	s := must(state.Value("s", state.String).Bind(registry{b}))(t)
	put := func(k string, n int64) {
		setKey(b, k)
		ok(t, v.Update(n))
		ok(t, s.Update(fmt.Sprint("s", n)))
	}
	read := func() map[string]string {
		out := map[string]string{}
		for kg := range maxPar {
			for e, err := range b.Entries(kg, "") {
				ok(t, err)
				out[e.State+"/"+string(e.Key)] = fmt.Sprintf("%x", e.Value)
			}
		}
		return out
	}
	for i := range 50 {
		put(fmt.Sprint("k", i), int64(i))
	}
	want := read()
	m := must(b.Mark())(t)
	for i := range 50 {
		k := fmt.Sprint("k", i)
		setKey(b, k)
		ok(t, v.Clear())
		ok(t, s.Clear())
		if i%2 == 0 {
			put(k, int64(1000+i))
		}
	}
	put("new", 7)
	mid := read()
	if len(mid) != 2*(25+1) {
		t.Fatalf("%d entries after the changes, want %d", len(mid), 2*26)
	}
	ok(t, b.RollBack(m))
	if got := read(); !maps.Equal(got, want) {
		for k, w := range want {
			if got[k] != w {
				t.Fatalf("after the roll back Entries yields %d entries, %s = %q; want %d, %s = %q", len(got), k, got[k], len(want), k, w)
			}
		}
		t.Fatalf("after the roll back Entries yields %d entries, want %d", len(got), len(want))
	}
	// And forward again through the same keys.
	for i := range 50 {
		put(fmt.Sprint("k", i), int64(2000+i))
	}
	got := read()
	for i := range 50 {
		k := fmt.Sprint("k", i)
		if got["v/"+k] != fmt.Sprintf("%x", state.Int64.Append(nil, int64(2000+i))) {
			t.Fatalf("v/%s = %s after writing %d", k, got["v/"+k], 2000+i)
		}
	}
}
