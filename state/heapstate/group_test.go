package heapstate_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// TestGroupsBuiltLate: a value table keeps its per-key-group maps only
// once something lists a key group (Entries), so writes, clears, merges
// and a roll back made before the first listing, in key groups past 127
// as well, must all show in it, and the ones made after it too. The
// model is a Go map of what each key and namespace holds.
func TestGroupsBuiltLate(t *testing.T) {
	const maxP = 300
	groups := state.KeyGroupRange{Start: 0, End: maxP - 1}
	kgs := []int{0, 3, 127, 128, 250, 299}
	nss := []string{"a", "b", "c"}
	type at struct {
		k  string
		kg int
		ns string
	}
	r := rand.New(rand.NewPCG(7, 8))
	b := heapstate.New(maxP, groups)
	sum := must(b.Register(state.Reducing("sum", state.Int64, func(a, b int64) int64 { return a + b }).Desc()))(t)
	want := map[at]int64{}
	set := func(k string, kg int) { b.SetCurrentKey([]byte(k), kg) }
	step := func() {
		k, kg, ns := fmt.Sprint("k", r.IntN(20)), kgs[r.IntN(len(kgs))], nss[r.IntN(len(nss))]
		set(k, kg)
		switch r.IntN(4) {
		case 0, 1:
			v := int64(r.IntN(100))
			ok(t, sum.Put([]byte(ns), v))
			want[at{k, kg, ns}] = v
		case 2:
			ok(t, sum.Clear([]byte(ns)))
			delete(want, at{k, kg, ns})
		default: // merge the other two namespaces into ns
			var srcs [][]byte
			acc, have := want[at{k, kg, ns}]
			for _, o := range nss {
				if o == ns {
					continue
				}
				srcs = append(srcs, []byte(o))
				if v, h := want[at{k, kg, o}]; h {
					acc, have = acc+v, true
					delete(want, at{k, kg, o})
				}
			}
			ok(t, sum.MergeNamespaces([]byte(ns), srcs))
			if have {
				want[at{k, kg, ns}] = acc
			}
		}
	}
	check := func(when string) {
		t.Helper()
		got := map[at]int64{}
		for _, kg := range kgs {
			for e, err := range b.Entries(kg, "sum") {
				ok(t, err)
				v, err := state.Int64.Decode(e.Value)
				ok(t, err)
				a := at{string(e.Key), kg, string(e.Namespace)}
				if _, dup := got[a]; dup {
					t.Fatalf("%s: %v listed twice", when, a)
				}
				got[a] = v
			}
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%s: Entries hold %d values, the model %d:\n got %v\nwant %v", when, len(got), len(want), got, want)
		}
		// And each value is found by its key.
		for a, v := range want {
			set(a.k, a.kg)
			g, found, err := sum.Get([]byte(a.ns))
			ok(t, err)
			if !found || g.(int64) != v {
				t.Fatalf("%s: Get %v = %v, %v; want %d", when, a, g, found, v)
			}
		}
	}
	check("empty") // as a session's first checkpoint lists its tables
	for range 300 {
		step()
	}
	m := must(b.Mark())(t)
	before := maps.Clone(want)
	for range 300 {
		step()
	}
	ok(t, b.RollBack(m))
	want = before
	check("writes, merges, clears and a roll back before any listing")
	for range 300 {
		step()
	}
	check("after more writes")
	m = must(b.Mark())(t)
	before = maps.Clone(want)
	for range 300 {
		step()
	}
	check("after the writes since the mark")
	ok(t, b.RollBack(m))
	want = before
	check("after the second roll back")
}
