package heapstate_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// TestIndexKeepsKeyGroupsApart: a value table finds its cells through one
// map for all key groups (its index), so the same key bytes set with two
// key groups (as a Flink savepoint's keys, grouped by their Java hash, may
// be) must stay two values through Get, Put, Clear, a roll back, Entries
// and a restore. Key group indexes from 0 to past 127 and keys longer than
// 127 bytes take the index's multi-byte prefixes.
func TestIndexKeepsKeyGroupsApart(t *testing.T) {
	const maxP = 300
	groups := state.KeyGroupRange{Start: 0, End: maxP - 1}
	keys := []string{"w", strings.Repeat("k", 200)}
	kgs := []int{0, 5, 127, 128, 299}
	nss := []string{"", "win"}
	type at struct {
		k  string
		kg int
		ns string
	}
	var ats []at
	for _, k := range keys {
		for _, kg := range kgs {
			for _, ns := range nss {
				ats = append(ats, at{k, kg, ns})
			}
		}
	}
	b := heapstate.New(maxP, groups)
	n := must(state.Value("n", state.Int64).Bind(registry{b}))(t)
	s := must(state.Value("s", state.String).Bind(registry{b}))(t)
	set := func(a at) {
		b.SetCurrentKey([]byte(a.k), a.kg)
		n.SetNamespace([]byte(a.ns))
		s.SetNamespace([]byte(a.ns))
	}
	check := func(when string, want map[at]int64) {
		t.Helper()
		for _, a := range ats {
			set(a)
			got, found, err := n.Value()
			ok(t, err)
			str, foundS, err := s.Value()
			ok(t, err)
			w, has := want[a]
			if got != w || found != has || foundS != has || (has && str != fmt.Sprint("s", w)) {
				t.Fatalf("%s: key %.5q… group %d ns %q: n = %d, %v; s = %q, %v; want %d, %v", when, a.k, a.kg, a.ns, got, found, str, foundS, w, has)
			}
		}
		// Entries: each key group holds exactly its own values.
		entries := 0
		for _, kg := range kgs {
			for e, err := range b.Entries(kg, "n") {
				ok(t, err)
				a := at{string(e.Key), kg, string(e.Namespace)}
				w, has := want[a]
				if !has || string(e.Value) != string(state.Int64.Append(nil, w)) {
					t.Fatalf("%s: Entries of group %d: key %.5q… ns %q = %x; want %d (present %v)", when, kg, e.Key, e.Namespace, e.Value, w, has)
				}
				entries++
			}
		}
		if entries != len(want) {
			t.Fatalf("%s: Entries yields %d values of n, want %d", when, entries, len(want))
		}
	}
	put := func(a at, v int64, want map[at]int64) {
		set(a)
		// A read-modify-write, as a counter does it (the hit path).
		_, _, err := n.Value()
		ok(t, err)
		ok(t, n.Update(v))
		ok(t, s.Update(fmt.Sprint("s", v)))
		want[a] = v
	}
	want := map[at]int64{}
	for i, a := range ats {
		put(a, int64(i+1), want)
	}
	check("after the writes", want)
	m := must(b.Mark())(t)
	before := maps.Clone(want)
	for i, a := range ats {
		switch i % 3 {
		case 0:
			set(a)
			ok(t, n.Clear())
			ok(t, s.Clear())
			delete(want, a)
		case 1:
			put(a, int64(100+i), want)
		}
	}
	check("after clears and writes", want)
	ok(t, b.RollBack(m))
	check("after the roll back", before)

	// A restore of the entries gives the same values.
	var es []state.Entry
	for _, kg := range kgs {
		for e, err := range b.Entries(kg, "") {
			ok(t, err)
			es = append(es, cloneEntry(e))
		}
	}
	r := heapstate.New(maxP, groups)
	ok(t, r.Restore(b.Describe(), func(yield func(state.Entry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}))
	b = r
	n = must(state.Value("n", state.Int64).Bind(registry{b}))(t)
	s = must(state.Value("s", state.String).Bind(registry{b}))(t)
	check("after a restore", before)
}
