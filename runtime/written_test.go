package runtime

import (
	"fmt"
	"io"
	"math/rand/v2"
	goruntime "runtime"
	"testing"
	"weak"
)

// TestWrittenEntriesSet: add reports exactly whether a hash was added
// before (checked against a map over 200k random hashes and their
// repeats), keeps its table at most half full as it grows, treats 0 as 1,
// and once it would hold more than maxWritten says seen for everything.
func TestWrittenEntriesSet(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	w := NewWrittenEntries()
	ref := map[uint64]bool{}
	var hs []uint64
	for i := range 400_000 {
		var h uint64
		if i%2 == 1 && len(hs) > 0 {
			h = hs[r.IntN(len(hs))] // a repeat
		} else {
			h = r.Uint64()
			hs = append(hs, h)
		}
		if got, want := w.add(h), ref[h]; got != want {
			t.Fatalf("add %d (#%d): seen %v, want %v", h, i, got, want)
		}
		ref[h] = true
		if 2*w.n > len(w.slots) {
			t.Fatalf("%d hashes in %d slots", w.n, len(w.slots))
		}
	}
	if w.n != len(ref) {
		t.Fatalf("%d hashes kept, %d added", w.n, len(ref))
	}
	if w.add(0) || !w.add(1) {
		t.Fatal("0 is not kept as 1")
	}

	defer func(n int) { maxWritten = n }(maxWritten)
	maxWritten = 100
	w = NewWrittenEntries()
	for i := range 100 {
		if w.add(uint64(i) + 10) {
			t.Fatalf("hash %d seen before it was added", i)
		}
	}
	if !w.add(5000) || !w.full || w.slots != nil {
		t.Fatal("a set over maxWritten did not turn full")
	}
	if !w.add(6000) {
		t.Fatal("a full set said a hash was not seen")
	}
}

// TestLightEntryFresh runs lightJob traced for a few records and then in
// light mode to the end, over two light runs, and requires LightEntryFresh
// to be true exactly for the writes whose LightEntry is the first of its
// key in the executor (a key written traced before, or by an earlier
// LightEntry, is not fresh; nor is a LightEntry of an earlier light run);
// with maxLightEntries 3 the generations start over every few keys, and
// HoldLightEntries must keep every generation the run wrote until
// StopLight: LightEntryIn names each LightEntry's key at the end of the
// run, and LightEntryHash is one per key. Heap and pebble.
func TestLightEntryFresh(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, max := range []int{maxLightEntries, 3} {
			t.Run(fmt.Sprintf("%s/max-%d", backend, max), func(t *testing.T) {
				defer func(n int) { maxLightEntries = n }(maxLightEntries)
				maxLightEntries = max
				e, err := NewExecutor(lightJob(), Options{Trace: true, Parallelism: 1, Backend: backend, Output: io.Discard, Written: NewWrittenEntries()}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				written := map[string]bool{} // keys written so far
				for range 3 {
					if err := e.Next(); err != nil {
						t.Fatal(err)
					}
					for _, ev := range e.TakeTrace() {
						if ev.Kind == TraceStateWrite {
							written[fmt.Sprint(ev.Key)] = true
						}
					}
				}
				traced := len(written)
				type name struct {
					gen uint32
					idx int
				}
				fresh, entries := 0, 0
				for run := range 2 {
					e.StartLight(0, nil)
					e.BatchLightWrites(64)
					e.HoldLightEntries()
					keyOf := map[name]string{}
					hashOf := map[string]uint64{}
					for i := 0; i < 12 && !e.Finished(); i++ {
						if err := e.Next(); err != nil && err != ErrFinished {
							t.Fatal(err)
						}
						e.TakeLight()
						b := e.TakeLightRecs()
						for j := range b.Recs {
							r := &b.Recs[j]
							gen, idx := r.Entry()
							n := name{gen, idx}
							key := fmt.Sprint(e.LightEntryAt(r).Key)
							if _, ok := keyOf[n]; ok {
								if e.LightEntryFresh(r) != e.LightEntryFresh(r) {
									t.Fatal("LightEntryFresh changed")
								}
								continue
							}
							keyOf[n] = key
							entries++
							want := run == 0 && !written[key]
							if got := e.LightEntryFresh(r); got != want {
								t.Fatalf("run %d, write of %s (entry %d of generation %d): fresh %v, want %v", run, key, idx, gen, got, want)
							}
							if want {
								fresh++
							}
							written[key] = true
						}
					}
					// Every generation the run named is still there.
					for n, key := range keyOf {
						if got := fmt.Sprint(e.LightEntryIn(n.gen, n.idx).Key); got != key {
							t.Fatalf("run %d: entry %d of generation %d is %s at the end, was %s", run, n.idx, n.gen, got, key)
						}
						h := e.LightEntryHash(n.gen, n.idx)
						if h0, ok := hashOf[key]; ok && h0 != h {
							t.Fatalf("two hashes of key %s", key)
						}
						hashOf[key] = h
					}
					seenHash := map[uint64]string{}
					for key, h := range hashOf {
						if k, ok := seenHash[h]; ok {
							t.Fatalf("keys %s and %s have one hash", k, key)
						}
						seenHash[h] = key
					}
					e.StopLight()
				}
				if e.LightEntryIn(1, 0) != (LightEntry{}) || e.LightEntryHash(1, 0) != 0 {
					t.Fatal("an entry outside light mode")
				}
				// lightJob has 11 keys: those not written in the first 3
				// records are fresh once.
				if fresh != 11-traced || traced == 0 {
					t.Fatalf("%d fresh entries, %d keys written traced first, of 11", fresh, traced)
				}
				if max == 3 && entries <= 11 {
					t.Fatalf("%d LightEntries for 11 keys with at most 3 kept: they never started over", entries)
				}
			})
		}
	}
}

// TestStoppedLightRunIsFreed: after StopLight nothing of the executor keeps
// the light run (its write arrays, output rings, generations map) alive:
// the tables that wrote in it keep only its number.
func TestStoppedLightRunIsFreed(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			e, err := NewExecutor(lightJob(), Options{Trace: true, Parallelism: 1, Backend: backend, Output: io.Discard, Written: NewWrittenEntries()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			for run := range 2 {
				e.StartLight(4, nil)
				e.BatchLightWrites(64)
				e.HoldLightEntries()
				writes := 0
				for range 6 {
					if err := e.Next(); err != nil && err != ErrFinished {
						t.Fatal(err)
					}
					e.TakeLight()
					b := e.TakeLightRecs()
					for i := range b.Recs {
						e.LightEntryFresh(&b.Recs[i]) // marks the generation's fresh bits
					}
					writes += len(b.Recs)
				}
				if writes == 0 {
					t.Fatalf("run %d: the light run recorded no writes", run)
				}
				w := weak.Make(e.light)
				e.StopLight()
				goruntime.GC()
				goruntime.GC()
				if w.Value() != nil {
					t.Fatalf("run %d: the stopped light run is still reachable", run)
				}
			}
		})
	}
}
