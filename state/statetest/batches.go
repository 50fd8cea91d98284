package statetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"streamdbg/state"
)

// FillLarge puts thousands of entries into b, through its tables and
// timers: a value state of int64 (most keys), a value state of strings
// (some of them tens of KiB), a list and a map state with window
// namespaces, and a timer queue, so that key groups hold more entries than
// one batch (state.BatchEntries) and more bytes than a batch keeps. The
// keys hash into b's key groups of maxParallelism.
func FillLarge(t testing.TB, b state.KeyedBackend, maxParallelism int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 15))
	reg := func(d state.StateDesc) state.Table {
		tb, err := b.Register(d)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	count := reg(state.Value("count", state.Int64).Desc())
	text := reg(state.Value("text", state.String).Desc())
	list := reg(state.List("list", state.Int64).Desc())
	m := reg(state.Map("map", state.String, state.Int64).Desc())
	timers, err := b.Timers("event", state.StateMeta{StateName: state.TimerStateName("event"), Kind: state.KindTimers})
	if err != nil {
		t.Fatal(err)
	}
	groups := b.KeyGroups()
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 40_000; i++ {
		key := fmt.Appendf(nil, "key_%06d", i)
		kg := state.KeyGroupFor(key, maxParallelism)
		if !groups.Contains(kg) {
			continue
		}
		b.SetCurrentKey(key, kg)
		ok(count.Put(nil, int64(i)))
		if rng.IntN(4) == 0 {
			s := fmt.Sprint("t", i)
			if rng.IntN(50) == 0 {
				s = strings.Repeat("x", 20_000+rng.IntN(40_000))
			}
			ok(text.Put(nil, s))
		}
		if rng.IntN(5) == 0 {
			ns := state.WindowCodec.Append(nil, state.Window{Start: int64(rng.IntN(3)) * 1000, End: 5000})
			for j := range 1 + rng.IntN(4) {
				ok(list.ListAppend(ns, int64(j)))
			}
			ok(m.MapPut(ns, state.String.Append(nil, fmt.Sprint("u", rng.IntN(9))), int64(i)))
			_, err := timers.Add(state.Timer{Timestamp: int64(rng.IntN(100)), KeyGroup: kg, Key: key, Namespace: ns})
			ok(err)
		}
	}
}

// CheckEntryBatches checks that b's EntryBatches yields, for every key
// group of b and for every state alone and all together, the entries
// Entries yields (nil slices included), in order, each batch read at its
// own step, in batches of 1 to state.BatchEntries; that a key group
// outside b and an unknown state fail with Entries' error; and that a
// consumer may stop after any batch. It returns the number of entries and
// batches read with all states together.
func CheckEntryBatches(t testing.TB, b state.EntryBatcher) (entries, batches int) {
	t.Helper()
	check := func(kg int, name string) int {
		var want []state.Entry
		var wantErr error
		for e, err := range b.Entries(kg, name) {
			if err != nil {
				wantErr = err
				break
			}
			want = append(want, cloneEntry(e))
		}
		n := matchBatches(t, b, kg, name, want, wantErr)
		// Stopping after the first batches.
		stop := 0
		for range b.EntryBatches(kg, name) {
			if stop++; stop == 2 {
				break
			}
		}
		if name == "" {
			entries += len(want)
		}
		return n
	}
	groups := b.KeyGroups()
	for kg := groups.Start; kg <= groups.End; kg++ {
		batches += check(kg, "")
		for _, m := range b.Describe() {
			check(kg, m.StateName)
		}
	}
	check(groups.End+1, "")
	check(groups.Start, "no such state")
	return entries, batches
}

// matchBatches checks that b's EntryBatches(kg, name) yields the entries
// want and then the error wantErr (by its text) that Entries yielded (nil
// slices included), each batch copied at its own step, in batches of 1 to
// state.BatchEntries. It returns how many batches it read.
func matchBatches(t testing.TB, b state.EntryBatcher, kg int, name string, want []state.Entry, wantErr error) int {
	t.Helper()
	var got []state.Entry
	var gotErr error
	n := 0
	for batch, err := range b.EntryBatches(kg, name) {
		if err != nil {
			gotErr = err
			break
		}
		if len(batch) == 0 || len(batch) > state.BatchEntries {
			t.Fatalf("EntryBatches(%d, %q): a batch of %d entries", kg, name, len(batch))
		}
		n++
		for _, e := range batch {
			got = append(got, cloneEntry(e))
		}
	}
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("EntryBatches(%d, %q): error %v, Entries' %v", kg, name, gotErr, wantErr)
	}
	if len(got) != len(want) {
		t.Fatalf("EntryBatches(%d, %q): %d entries, Entries yields %d", kg, name, len(got), len(want))
	}
	nils := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	for i, e := range want {
		g := got[i]
		if g.State != e.State || g.KeyGroup != e.KeyGroup || !nils(g.Key, e.Key) || !nils(g.Namespace, e.Namespace) || !nils(g.UserKey, e.UserKey) || !nils(g.Value, e.Value) {
			t.Fatalf("EntryBatches(%d, %q): entry %d is\n  %s\nEntries yields\n  %s", kg, name, i, rawEntry(g), rawEntry(e))
		}
	}
	return n
}
