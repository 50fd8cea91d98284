package pebblestate

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"streamdbg/state"
)

func compareTimers(a, b state.Timer) int {
	return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.KeyGroup, b.KeyGroup),
		bytes.Compare(a.Key, b.Key), bytes.Compare(a.Namespace, b.Namespace))
}

func TestTimersOrderAndDedup(t *testing.T) {
	b := openMem(t, all)
	q := must(b.Timers("event", state.StateMeta{}))
	add := func(tm state.Timer, want bool) {
		t.Helper()
		if got := must(q.Add(tm)); got != want {
			t.Fatalf("Add(%v) = %v, want %v", tm, got, want)
		}
	}
	add(state.Timer{Timestamp: 10, KeyGroup: 5, Key: []byte("b")}, true)
	add(state.Timer{Timestamp: 10, KeyGroup: 5, Key: []byte("a")}, true)
	add(state.Timer{Timestamp: 10, KeyGroup: 2, Key: []byte("z")}, true)
	add(state.Timer{Timestamp: -3, KeyGroup: 9, Key: []byte("a"), Namespace: []byte{1}}, true)
	add(state.Timer{Timestamp: 10, KeyGroup: 5, Key: []byte("a")}, false)
	add(state.Timer{Timestamp: 10, KeyGroup: 5, Key: []byte("a"), Namespace: []byte{0}}, true)
	if q.Len() != 5 {
		t.Fatalf("Len = %d, want 5", q.Len())
	}
	check(t, q.Delete(state.Timer{Timestamp: 10, KeyGroup: 5, Key: []byte("b")}))
	check(t, q.Delete(state.Timer{Timestamp: 11, KeyGroup: 5, Key: []byte("b")})) // absent
	if p, ok, _ := q.Peek(); !ok || p.Timestamp != -3 {
		t.Fatalf("Peek = %v %v", p, ok)
	}
	var got []string
	for {
		tm, ok, err := q.Pop()
		check(t, err)
		if !ok {
			break
		}
		got = append(got, string(tm.Key)+string(tm.Namespace))
	}
	if want := []string{"a\x01", "z", "a", "a\x00"}; !slices.Equal(got, want) {
		t.Fatalf("fired %q, want %q", got, want)
	}
	if q.Len() != 0 {
		t.Fatalf("Len after draining = %d", q.Len())
	}
	if q2 := must(b.Timers("event", state.StateMeta{})); q2 != q {
		t.Fatal("Timers gave a second queue for the same name")
	}
}

// TestTimersAgainstModel drives the queue with random operations, enough to
// cycle the in-memory head many times, and compares with a sorted slice.
func TestTimersAgainstModel(t *testing.T) {
	b := openMem(t, all)
	q := must(b.Timers("processing", state.StateMeta{}))
	r := rand.New(rand.NewPCG(3, 4))
	keys := randomKeys(r, 20)
	var model []state.Timer
	find := func(tm state.Timer) (int, bool) { return slices.BinarySearchFunc(model, tm, compareTimers) }
	now, peak := int64(0), 0
	for step := range 20000 {
		peak = max(peak, len(model))
		tm := state.Timer{Timestamp: now + r.Int64N(500) - 50, KeyGroup: r.IntN(128), Key: keys[r.IntN(len(keys))]}
		op := r.IntN(10)
		if step > 10000 {
			op = 4 + r.IntN(6) // drain: fewer adds, more pops
		}
		switch {
		case op < 5:
			i, found := find(tm)
			if got := must(q.Add(tm)); got == found {
				t.Fatalf("step %d: Add(%v) = %v, present %v", step, tm, got, found)
			}
			if !found {
				model = slices.Insert(model, i, tm)
			}
		case op < 6 && len(model) > 0:
			tm = model[r.IntN(len(model))]
			fallthrough
		case op < 7:
			check(t, q.Delete(tm))
			if i, found := find(tm); found {
				model = slices.Delete(model, i, i+1)
			}
		default:
			got, ok, err := q.Pop()
			check(t, err)
			if ok != (len(model) > 0) {
				t.Fatalf("step %d: Pop ok=%v with %d timers", step, ok, len(model))
			}
			if ok {
				if compareTimers(got, model[0]) != 0 {
					t.Fatalf("step %d: Pop = %v, want %v", step, got, model[0])
				}
				model = model[1:]
				now = got.Timestamp
			}
		}
		if q.Len() != len(model) {
			t.Fatalf("step %d: Len = %d, want %d", step, q.Len(), len(model))
		}
	}
	if peak < 4*headSize {
		t.Fatalf("peak of %d timers does not exercise the head cache", peak)
	}
}
