package heapstate_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// TestInt64CellsModel drives an int64 value state kept unboxed (cell.n)
// through every way to reach it, interleaved over keys, namespaces and
// marks: ValueState Value/Update (the typed path), the table's Get/Put
// (boxed), Clear, Mark, RollBack and Release. After every step the state
// must equal a model map kept beside it, each live mark's state
// (MarkedEntries) the model saved when it was taken, and the entries a
// restore into a new backend reads back must equal the model too. Values
// cover the boxes Go and the state package keep (small), those they do not
// (large, negative) and the extremes.
func TestInt64CellsModel(t *testing.T) {
	type key struct{ k, ns string }
	values := []int64{0, 1, 255, 256, 65535, 65536, 1 << 40, -1, -65537, math.MaxInt64, math.MinInt64}
	keys := []string{"a", "b", "flink", "über", "k42"}
	nss := []string{"", "w1", "w2"}
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 15))
			b := heapstate.New(maxPar, all())
			tbl := must(b.Register(state.Value("v", state.Int64).Desc()))(t)
			if _, isTyped := tbl.(state.Int64Table); !isTyped {
				t.Fatal("the heap table of an int64 value state is not a state.Int64Table")
			}
			vs := state.NewValueState[int64](tbl)
			model := map[key]int64{}
			type mark struct {
				m     state.Mark
				model map[key]int64
			}
			var marks []mark
			check := func(step int, what string) {
				t.Helper()
				for _, k := range keys {
					for _, ns := range nss {
						setKey(b, k)
						vs.SetNamespace([]byte(ns))
						got, found, err := vs.Value()
						ok(t, err)
						want, has := model[key{k, ns}]
						if found != has || got != want {
							t.Fatalf("step %d (%s): %s/%q: Value = %d, %v; want %d, %v", step, what, k, ns, got, found, want, has)
						}
						bv, found, err := tbl.Get([]byte(ns))
						ok(t, err)
						if found != has || (has && bv != any(want)) {
							t.Fatalf("step %d (%s): %s/%q: Get = %v, %v; want %d, %v", step, what, k, ns, bv, found, want, has)
						}
					}
				}
			}
			for step := range 400 {
				k, ns := keys[rng.IntN(len(keys))], nss[rng.IntN(len(nss))]
				setKey(b, k)
				vs.SetNamespace([]byte(ns))
				var what string
				switch op := rng.IntN(10); {
				case op < 3: // read-modify-write through the typed path
					what = "Value+Update"
					n, _, err := vs.Value()
					ok(t, err)
					n += values[rng.IntN(len(values))]
					ok(t, vs.Update(n))
					model[key{k, ns}] = n
				case op < 5: // a boxed Put, then a typed read of the same key
					what = "Put"
					n := values[rng.IntN(len(values))]
					ok(t, tbl.Put([]byte(ns), n))
					model[key{k, ns}] = n
				case op < 6:
					what = "Clear"
					ok(t, vs.Clear())
					delete(model, key{k, ns})
				case op < 7:
					what = "Mark"
					m, err := b.Mark()
					ok(t, err)
					marks = append(marks, mark{m, maps.Clone(model)})
				case op < 8 && len(marks) > 0:
					what = "RollBack"
					i := rng.IntN(len(marks))
					ok(t, b.RollBack(marks[i].m))
					model = maps.Clone(marks[i].model)
					marks = marks[:i+1]
				case op < 9 && len(marks) > 0:
					what = "Release"
					i := rng.IntN(len(marks))
					b.Release(marks[i].m)
					marks = append(marks[:i], marks[i+1:]...)
				default:
					what = "Update"
					n := values[rng.IntN(len(values))]
					ok(t, vs.Update(n))
					model[key{k, ns}] = n
				}
				check(step, what)
				if len(marks) > 0 && step%25 == 0 {
					mk := marks[rng.IntN(len(marks))]
					got := map[key]int64{}
					for kg := range maxPar {
						for e, err := range b.MarkedEntries(mk.m, kg) {
							ok(t, err)
							got[key{string(e.Key), string(e.Namespace)}] = must(state.Int64.Decode(e.Value))(t)
						}
					}
					if !maps.Equal(got, mk.model) {
						t.Fatalf("step %d: state at mark %d = %v, want %v", step, mk.m, got, mk.model)
					}
					check(step, "after MarkedEntries")
				}
			}
			// A restore decodes the entries into unboxed cells again.
			metas, es := snapshot(t, b)
			nb := heapstate.New(maxPar, all())
			ok(t, nb.Restore(metas, seq(es)))
			nt := must(nb.Register(state.Value("v", state.Int64).Desc()))(t)
			nvs := state.NewValueState[int64](nt)
			got := map[key]int64{}
			for _, k := range keys {
				for _, ns := range nss {
					setKey(nb, k)
					nvs.SetNamespace([]byte(ns))
					if n, found, err := nvs.Value(); err != nil {
						t.Fatal(err)
					} else if found {
						got[key{k, ns}] = n
					}
				}
			}
			if !maps.Equal(got, model) {
				t.Fatalf("restored state = %v, want %v", got, model)
			}
		})
	}
}

// TestInt64CellsNoBoxing: a counter's read-modify-write on the heap
// allocates nothing, even past the boxes of small values that the state
// package keeps (65536 and up), which boxed values cost an allocation per
// update.
func TestInt64CellsNoBoxing(t *testing.T) {
	b := heapstate.New(maxPar, all())
	count := must(state.Value("count", state.Int64).Bind(registry{b}))(t)
	setKey(b, "flink")
	ok(t, count.Update(1<<20))
	allocs := testing.AllocsPerRun(1000, func() {
		n, _, err := count.Value()
		if err != nil {
			t.Fatal(err)
		}
		if err := count.Update(n + 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Value+Update of a large count: %v allocations, want 0", allocs)
	}
	if n, _, _ := count.Value(); n != 1<<20+1001 {
		t.Errorf("count = %d, want %d", n, 1<<20+1001)
	}
}

// TestInt64PutWrongType: a boxed Put of a value that is not an int64 into
// an int64 value state is an error naming the state, and leaves the value.
func TestInt64PutWrongType(t *testing.T) {
	b := heapstate.New(maxPar, all())
	tbl := must(b.Register(state.Value("count", state.Int64).Desc()))(t)
	setKey(b, "a")
	ok(t, tbl.Put(nil, int64(7)))
	err := tbl.Put(nil, "seven")
	if err == nil || !strings.Contains(err.Error(), `"count"`) || !strings.Contains(err.Error(), "string") {
		t.Fatalf("Put of a string: %v, want an error naming the state and the type", err)
	}
	if v, _, _ := tbl.Get(nil); v != any(int64(7)) {
		t.Errorf("value after the failed Put = %v, want 7", v)
	}
}
