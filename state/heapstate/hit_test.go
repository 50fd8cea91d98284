package heapstate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// TestHitAcrossNamespaces: reads and writes under one current key that
// move between namespaces, the void one among them, and between keys,
// find each namespace's own value (the table's hit cache must not hand
// one namespace's cell to another), for an int64 value state (typed
// cells) and a string one, against a model map.
func TestHitAcrossNamespaces(t *testing.T) {
	nss := []string{"", "w1", "w2", ""}
	keys := []string{"a", "b"}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 5))
		b := heapstate.New(maxPar, all())
		nums := state.NewValueState[int64](must(b.Register(state.Value("n", state.Int64).Desc()))(t))
		strs := state.NewValueState[string](must(b.Register(state.Value("s", state.String).Desc()))(t))
		type key struct{ k, ns string }
		wantN, wantS := map[key]int64{}, map[key]string{}
		k := keys[0]
		setKey(b, k)
		for step := range 300 {
			if rng.IntN(8) == 0 {
				k = keys[rng.IntN(len(keys))]
				setKey(b, k)
			}
			ns := nss[rng.IntN(len(nss))]
			nums.SetNamespace([]byte(ns))
			strs.SetNamespace([]byte(ns))
			at := key{k, ns}
			n, foundN, err := nums.Value()
			ok(t, err)
			s, foundS, err := strs.Value()
			ok(t, err)
			if wn, has := wantN[at]; n != wn || foundN != has {
				t.Fatalf("seed %d step %d: %s/%q: n = %d, %v; want %d, %v", seed, step, k, ns, n, foundN, wn, has)
			}
			if ws, has := wantS[at]; s != ws || foundS != has {
				t.Fatalf("seed %d step %d: %s/%q: s = %q, %v; want %q, %v", seed, step, k, ns, s, foundS, ws, has)
			}
			switch rng.IntN(3) {
			case 0:
				ok(t, nums.Update(n+1))
				wantN[at] = n + 1
			case 1:
				v := fmt.Sprintf("%s/%s/%d", k, ns, step)
				ok(t, strs.Update(v))
				wantS[at] = v
			}
		}
	}
}
