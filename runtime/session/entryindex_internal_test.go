package session

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// entryIndex against a plain map of the same histories, over random
// lookups, gets, deletions, filters and walks, with the full hash and with
// the hash narrowed to 1 and 5 keys (most EntryIDs then share a chain, so
// that taking out the head, the middle and the last of a chain, and
// comparing by the whole EntryID, are all exercised).
func TestEntryIndexMatchesMap(t *testing.T) {
	ids := make([]EntryID, 300)
	for i := range ids {
		// Equal but for one field: a hash or compare that leaves a field
		// out mixes them up.
		ids[i] = EntryID{Operator: "op", Subtask: i % 3, State: "s", Key: fmt.Sprint(i % 50), Namespace: fmt.Sprint(i / 150), UserKey: fmt.Sprint(i % 2)}
	}
	for i := range ids {
		for j := range i {
			if ids[i] == ids[j] {
				t.Fatalf("ids %d and %d are equal", i, j)
			}
		}
	}
	for _, narrow := range []uint64{0, 1, 5} {
		t.Run(fmt.Sprint("narrow", narrow), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, narrow))
			x := entryIndex{narrow: narrow}
			model := map[EntryID]*histEntry{}
			check := func(step int) {
				t.Helper()
				if x.n != len(model) {
					t.Fatalf("step %d: n = %d, want %d", step, x.n, len(model))
				}
				seen := map[*histEntry]bool{}
				x.each(func(he *histEntry) {
					if seen[he] || model[he.id] != he {
						t.Fatalf("step %d: each gave %v (twice: %v), not the index's history of it", step, he.id, seen[he])
					}
					seen[he] = true
				})
				if len(seen) != len(model) {
					t.Fatalf("step %d: each gave %d histories, want %d", step, len(seen), len(model))
				}
			}
			for step := range 5000 {
				id := ids[r.IntN(len(ids))]
				switch op := r.IntN(10); {
				case op < 5:
					var spare *histEntry
					if r.IntN(2) == 0 {
						spare = &histEntry{num: 99}
					}
					he, made := x.lookup(id, spare)
					if want := model[id]; made != (want == nil) || (want != nil && he != want) {
						t.Fatalf("step %d: lookup(%v) = %p, %v; want %p", step, id, he, made, want)
					}
					if made {
						if he.id != id || !he.indexed || he.num != 0 || (spare != nil && he != spare) {
							t.Fatalf("step %d: lookup made %+v", step, he)
						}
						model[id] = he
					}
				case op < 7:
					if he := x.get(id); he != model[id] {
						t.Fatalf("step %d: get(%v) = %p, want %p", step, id, he, model[id])
					}
				case op < 9:
					if he := model[id]; he != nil {
						x.del(he)
						delete(model, id)
						if x.get(id) != nil {
							t.Fatalf("step %d: %v still in after del", step, id)
						}
					} else {
						x.del(&histEntry{id: id}) // not in it: nothing changes
					}
				default:
					k := r.IntN(3)
					dropped := 0
					x.filter(func(he *histEntry) bool { return (he.id.Subtask+len(he.id.Key))%3 != k },
						func(he *histEntry) {
							if model[he.id] != he || (he.id.Subtask+len(he.id.Key))%3 != k {
								t.Fatalf("step %d: filter dropped %v", step, he.id)
							}
							delete(model, he.id)
							dropped++
						})
					for id := range model {
						if (id.Subtask+len(id.Key))%3 == k {
							t.Fatalf("step %d: filter kept %v", step, id)
						}
					}
				}
				check(step)
			}
		})
	}
}
