package pebblestate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"streamdbg/state"
)

// fill writes every kind of state, a timer queue and a restored-looking mix
// of keys that stress ordering into b, and returns the descriptors used.
func fill(t *testing.T, b state.KeyedBackend, r *rand.Rand) {
	t.Helper()
	reg := registry{b}
	keys := randomKeys(r, 30)
	v := must(state.Value("zz-value", state.Int64).Bind(reg))
	l := must(state.List("list", state.String).Bind(reg))
	m := must(state.Map("Map", state.Bytes, state.String).Bind(reg))
	red := must(reducing().Bind(reg))
	agg := must(aggregating().Bind(reg))
	q := must(b.Timers("event", state.StateMeta{}))
	for i := range 3000 {
		k := keys[r.IntN(len(keys))]
		kg := r.IntN(b.KeyGroups().Len()) + b.KeyGroups().Start
		b.SetCurrentKey(k, kg)
		ns := keys[r.IntN(5)]
		v.SetNamespace(ns)
		l.SetNamespace(ns)
		m.SetNamespace(ns)
		red.SetNamespace(ns)
		agg.SetNamespace(ns)
		switch r.IntN(6) {
		case 0:
			check(t, v.Update(int64(i)))
		case 1:
			check(t, l.Add(fmt.Sprint(i)))
		case 2:
			check(t, m.Put(keys[r.IntN(len(keys))], fmt.Sprint(i)))
		case 3:
			check(t, red.Add(fmt.Sprint(i%10)))
		case 4:
			check(t, agg.Add(int64(i)))
		case 5:
			must(q.Add(state.Timer{Timestamp: int64(r.IntN(100)), KeyGroup: kg, Key: k, Namespace: ns}))
		}
	}
}

func collect(t *testing.T, b state.KeyedBackend, kg int, name string) []state.Entry {
	t.Helper()
	var out []state.Entry
	for e, err := range b.Entries(kg, name) {
		check(t, err)
		out = append(out, cloneEntry(e))
	}
	return out
}

func cloneEntry(e state.Entry) state.Entry {
	c := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		return bytes.Clone(b)
	}
	return state.Entry{State: e.State, KeyGroup: e.KeyGroup, Key: c(e.Key), Namespace: c(e.Namespace), UserKey: c(e.UserKey), Value: c(e.Value)}
}

func TestEntriesOrder(t *testing.T) {
	b := openMem(t, state.KeyGroupRange{Start: 0, End: 7})
	fill(t, b, rand.New(rand.NewPCG(5, 6)))
	states := map[string]bool{}
	for kg := 0; kg <= 7; kg++ {
		es := collect(t, b, kg, "")
		if len(es) == 0 {
			t.Fatalf("key group %d empty", kg)
		}
		for i, e := range es {
			states[e.State] = true
			if e.KeyGroup != kg {
				t.Fatalf("entry of key group %d in Entries(%d)", e.KeyGroup, kg)
			}
			if i > 0 && state.CompareEntries(es[i-1], e) >= 0 {
				t.Fatalf("key group %d: entry %d %+v not after %+v", kg, i, e, es[i-1])
			}
		}
		// One state alone is the same entries, filtered.
		only := collect(t, b, kg, "list")
		var want []state.Entry
		for _, e := range es {
			if e.State == "list" {
				want = append(want, e)
			}
		}
		if !slices.EqualFunc(only, want, entryEqual) {
			t.Fatalf("Entries(%d, list) differs from the filtered full stream", kg)
		}
	}
	if len(states) != 6 {
		t.Fatalf("states seen: %v", states)
	}
	for _, err := range b.Entries(0, "nope") {
		if err == nil || !strings.Contains(err.Error(), "not registered") {
			t.Fatalf("unknown state: err = %v", err)
		}
	}
}

func entryEqual(a, b state.Entry) bool {
	return state.CompareEntries(a, b) == 0 && bytes.Equal(a.Value, b.Value)
}

// TestSnapshotRoundTrip restores one backend's entries into two backends
// that split its key groups (rescaling), before any state is registered;
// their entries, values and timers must be the original ones.
func TestSnapshotRoundTrip(t *testing.T) {
	src := openMem(t, all)
	fill(t, src, rand.New(rand.NewPCG(7, 8)))
	metas := src.States()
	var total int64
	for _, m := range metas {
		total += m.Entries
	}
	halves := []state.KeyGroupRange{{Start: 0, End: 63}, {Start: 64, End: 127}}
	var restored int64
	for _, g := range halves {
		dst := openMem(t, g)
		check(t, dst.Restore(metas, func(yield func(state.Entry, error) bool) {
			for kg := g.Start; kg <= g.End; kg++ {
				for e, err := range src.Entries(kg, "") {
					if !yield(e, err) {
						return
					}
				}
			}
		}))
		// Before registration the entries are there as bytes.
		for kg := g.Start; kg <= g.End; kg++ {
			if !slices.EqualFunc(collect(t, dst, kg, ""), collect(t, src, kg, ""), entryEqual) {
				t.Fatalf("%s: key group %d differs after restore", g, kg)
			}
		}
		for _, m := range dst.States() {
			restored += m.Entries
		}
		// Registered, the values read back through the codecs.
		if _, err := dst.Register(state.Value("zz-value", state.String).Desc()); err == nil ||
			err.Error() != `pebblestate: restored state "zz-value" cannot be read as declared: value type changed from int64 to string` {
			t.Fatalf("restored int64 state registered as string: %v", err)
		}
		srcRed := must(src.Register(reducing().Desc()))
		dstRed := must(dst.Register(reducing().Desc()))
		srcList := must(src.Register(state.List("list", state.String).Desc()))
		dstList := must(dst.Register(state.List("list", state.String).Desc()))
		for kg := g.Start; kg <= g.End; kg++ {
			for e := range src.Entries(kg, "r") {
				src.SetCurrentKey(e.Key, kg)
				dst.SetCurrentKey(e.Key, kg)
				want, _, _ := srcRed.Get(e.Namespace)
				got, ok, err := dstRed.Get(e.Namespace)
				if !ok || err != nil || got != want {
					t.Fatalf("reducing %q: got %v %v %v, want %v", e.Key, got, ok, err, want)
				}
				wl := must(srcList.ListGet(e.Namespace))
				gl := must(dstList.ListGet(e.Namespace))
				if !slices.Equal(wl, gl) {
					t.Fatalf("list %q: got %v, want %v", e.Key, gl, wl)
				}
			}
		}
		// Timers fire in the same order as the source's timers of these
		// key groups would.
		sq := must(src.Timers("event", state.StateMeta{}))
		dq := must(dst.Timers("event", state.StateMeta{}))
		var want []state.Timer
		for kg := g.Start; kg <= g.End; kg++ {
			for e := range src.Entries(kg, state.TimerStateName("event")) {
				ts, _ := state.Int64.Decode(e.UserKey)
				want = append(want, state.Timer{Timestamp: ts, KeyGroup: kg, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace)})
			}
		}
		slices.SortFunc(want, compareTimers)
		if dq.Len() != len(want) || len(want) == 0 {
			t.Fatalf("%s: restored %d timers, want %d", g, dq.Len(), len(want))
		}
		for i, w := range want {
			got, ok, err := dq.Pop()
			if !ok || err != nil || compareTimers(got, w) != 0 {
				t.Fatalf("%s: timer %d = %v %v %v, want %v", g, i, got, ok, err, w)
			}
		}
		_ = sq
	}
	if restored != total {
		t.Fatalf("restored %d entries of %d", restored, total)
	}
}

func TestRestoreRejects(t *testing.T) {
	b := openMem(t, state.KeyGroupRange{Start: 0, End: 3})
	metas := []state.StateMeta{{StateName: "v", Kind: state.KindValue, ValueType: "int64"}}
	one := func(e state.Entry) func(func(state.Entry, error) bool) {
		return func(yield func(state.Entry, error) bool) { yield(e, nil) }
	}
	if err := b.Restore(metas, one(state.Entry{State: "v", KeyGroup: 9})); err == nil || err.Error() != `pebblestate: restore: state "v": key group 9 outside 0–3` {
		t.Fatalf("entry outside key groups: %v", err)
	}
	if err := b.Restore(metas, one(state.Entry{State: "w", KeyGroup: 1})); err == nil || err.Error() != `pebblestate: restore: entry of state "w" without metadata` {
		t.Fatalf("entry of an undescribed state: %v", err)
	}
}
