package window_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
	"streamdbg/state"
	"streamdbg/state/heapstate"
	"streamdbg/state/pebblestate"
)

// spyTable counts the writes to a table.
type spyTable struct {
	state.Table
	writes int
}

func (s *spyTable) MapPut(ns, uk []byte, v any) error { s.writes++; return s.Table.MapPut(ns, uk, v) }
func (s *spyTable) MapDelete(ns, uk []byte) error     { s.writes++; return s.Table.MapDelete(ns, uk) }

// mergingSetTable is the "merging-window-set" map state of one key in a
// real backend (Flink's test mocks the ListState).
func mergingSetTable(t *testing.T, backend string) *spyTable {
	t.Helper()
	groups := state.KeyGroupRange{Start: 0, End: 127}
	var kb state.KeyedBackend = heapstate.New(128, groups)
	if backend == "pebble" {
		pb, err := pebblestate.Open(pebblestate.Options{FS: vfs.NewMem(), MaxParallelism: 128, KeyGroups: groups})
		if err != nil {
			t.Fatal(err)
		}
		kb = pb
	}
	t.Cleanup(func() { kb.Close() })
	d := state.Map(window.MergingSetState, state.WindowCodec, state.WindowCodec).Desc()
	d.Namespace = state.Erase(state.VoidCodec)
	tab, err := kb.Register(d)
	if err != nil {
		t.Fatal(err)
	}
	key := state.String.Append(nil, "k")
	kb.SetCurrentKey(key, state.KeyGroupFor(key, 128))
	return &spyTable{Table: tab}
}

// mergeRecorder is Flink's TestingMergeFunction.
type mergeRecorder struct {
	t                        *testing.T
	merged                   bool
	target, stateWindow      window.Window
	sources, mergedStateWins []window.Window
}

func (m *mergeRecorder) reset() { *m = mergeRecorder{t: m.t} }

func (m *mergeRecorder) merge(result window.Window, merged []window.Window, sw window.Window, msw []window.Window) error {
	if m.merged {
		m.t.Fatal("more than one merge for adding a window")
	}
	m.merged, m.target, m.sources, m.stateWindow, m.mergedStateWins = true, result, slices.Clone(merged), sw, slices.Clone(msw)
	return nil
}

func tw(s, e int64) window.Window { return window.Window{Start: s, End: e} }

// sameSet reports whether a and b hold the same windows in any order.
func sameSet(a, b []window.Window) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	less := func(x, y window.Window) int {
		if x.Start != y.Start {
			return int(x.Start - y.Start)
		}
		return int(x.End - y.End)
	}
	slices.SortFunc(a, less)
	slices.SortFunc(b, less)
	return slices.Equal(a, b)
}

func oneOf(w window.Window, ws ...window.Window) bool { return slices.Contains(ws, w) }

// nonEager is Flink's NonEagerlyMergingWindowAssigner: windows grow when
// they merge, so merges happen lazily and may involve windows that do not
// overlap the new one.
type nonEager struct{ window.Session }

func (nonEager) MergeWindows(ws []window.Window) []window.Merge {
	earliest := ws[0]
	for _, w := range ws {
		if w.Start < earliest.Start {
			earliest = w
		}
	}
	var assoc []window.Window
	for _, w := range ws {
		if w.Start < earliest.End && w.Start >= earliest.Start {
			assoc = append(assoc, w)
		}
	}
	if len(assoc) > 1 {
		return []window.Merge{{Result: tw(earliest.Start, earliest.End+1), Merged: assoc}}
	}
	return nil
}

// TestMergingWindowSetTest ports Flink's MergingWindowSetTest.
func TestMergingWindowSetTest(t *testing.T) {
	session3 := window.EventTimeSession(3 * time.Millisecond)
	type env struct {
		t   *testing.T
		set *window.MergingWindowSet
		tab *spyTable
		m   *mergeRecorder
	}
	newEnv := func(t *testing.T, backend string, a window.MergingAssigner) *env {
		tab := mergingSetTable(t, backend)
		set, err := window.NewMergingWindowSet(a, tab)
		if err != nil {
			t.Fatal(err)
		}
		return &env{t: t, set: set, tab: tab, m: &mergeRecorder{t: t}}
	}
	add := func(e *env, w window.Window) window.Window {
		e.t.Helper()
		e.m.reset()
		got, err := e.set.AddWindow(w, e.m.merge)
		if err != nil {
			e.t.Fatal(err)
		}
		return got
	}
	expectAdd := func(e *env, w, want window.Window, merges bool) {
		e.t.Helper()
		if got := add(e, w); got != want {
			e.t.Fatalf("adding %v gave %v, want %v", w, got, want)
		}
		if e.m.merged != merges {
			e.t.Fatalf("adding %v: merged %v, want %v", w, e.m.merged, merges)
		}
	}
	stateWindow := func(e *env, w window.Window) window.Window {
		e.t.Helper()
		sw, ok := e.set.StateWindow(w)
		if !ok {
			e.t.Fatalf("window %v is not in the set", w)
		}
		return sw
	}
	expectMerge := func(e *env, target, sw window.Window, sources, mergedStates []window.Window) {
		e.t.Helper()
		if e.m.target != target || e.m.stateWindow != sw || !sameSet(e.m.sources, sources) || !sameSet(e.m.mergedStateWins, mergedStates) {
			e.t.Fatalf("merge into %v (state %v) of %v folding %v; want into %v (state %v) of %v folding %v",
				e.m.target, e.m.stateWindow, e.m.sources, e.m.mergedStateWins, target, sw, sources, mergedStates)
		}
	}
	cases := map[string]func(t *testing.T, backend string){
		"testNonEagerMerging": func(t *testing.T, backend string) {
			e := newEnv(t, backend, nonEager{window.EventTimeSession(3 * time.Second)})
			for _, w := range []window.Window{tw(0, 2), tw(2, 5), tw(1, 2), tw(10, 12)} {
				stateWindow(e, add(e, w))
			}
		},
		"testIncrementalMerging": func(t *testing.T, backend string) {
			e := newEnv(t, backend, session3)
			expectAdd(e, tw(0, 4), tw(0, 4), false)
			if sw := stateWindow(e, tw(0, 4)); sw != tw(0, 4) {
				t.Fatalf("state window %v", sw)
			}
			expectAdd(e, tw(0, 4), tw(0, 4), false)
			expectAdd(e, tw(3, 5), tw(0, 5), true)
			expectMerge(e, tw(0, 5), tw(0, 4), []window.Window{tw(0, 4)}, nil)
			expectAdd(e, tw(4, 6), tw(0, 6), true)
			expectMerge(e, tw(0, 6), tw(0, 4), []window.Window{tw(0, 5)}, nil)
			if sw := stateWindow(e, tw(0, 6)); sw != tw(0, 4) {
				t.Fatalf("state window %v", sw)
			}
			// windows inside the merged region
			expectAdd(e, tw(1, 4), tw(0, 6), false)
			expectAdd(e, tw(0, 4), tw(0, 6), false)
			expectAdd(e, tw(3, 5), tw(0, 6), false)
			expectAdd(e, tw(4, 6), tw(0, 6), false)
			if sw := stateWindow(e, tw(0, 6)); sw != tw(0, 4) {
				t.Fatalf("state window %v", sw)
			}
			// a second bunch
			expectAdd(e, tw(11, 14), tw(11, 14), false)
			if stateWindow(e, tw(0, 6)) != tw(0, 4) || stateWindow(e, tw(11, 14)) != tw(11, 14) {
				t.Fatal("state windows changed")
			}
			expectAdd(e, tw(10, 13), tw(10, 14), true)
			expectMerge(e, tw(10, 14), tw(11, 14), []window.Window{tw(11, 14)}, nil)
			expectAdd(e, tw(12, 15), tw(10, 15), true)
			expectMerge(e, tw(10, 15), tw(11, 14), []window.Window{tw(10, 14)}, nil)
			expectAdd(e, tw(11, 14), tw(10, 15), false)
			if stateWindow(e, tw(0, 6)) != tw(0, 4) || stateWindow(e, tw(10, 15)) != tw(11, 14) {
				t.Fatal("state windows changed")
			}
			// retire the first bunch
			if err := e.set.RetireWindow(tw(0, 6)); err != nil {
				t.Fatal(err)
			}
			if _, ok := e.set.StateWindow(tw(0, 6)); ok {
				t.Fatal("a retired window is still in the set")
			}
			if stateWindow(e, tw(10, 15)) != tw(11, 14) {
				t.Fatal("the second bunch changed")
			}
		},
		"testLateMerging": func(t *testing.T, backend string) {
			e := newEnv(t, backend, session3)
			for _, w := range []window.Window{tw(0, 3), tw(5, 8), tw(10, 13)} {
				expectAdd(e, w, w, false)
				if stateWindow(e, w) != w {
					t.Fatalf("state window of %v", w)
				}
			}
			// merges the later two
			expectAdd(e, tw(8, 10), tw(5, 13), true)
			if e.m.target != tw(5, 13) || !oneOf(e.m.stateWindow, tw(5, 8), tw(10, 13)) || !sameSet(e.m.sources, []window.Window{tw(5, 8), tw(10, 13)}) {
				t.Fatalf("merge %+v", e.m)
			}
			if len(e.m.mergedStateWins) != 1 || !oneOf(e.m.mergedStateWins[0], tw(5, 8), tw(10, 13)) || slices.Contains(e.m.mergedStateWins, e.m.stateWindow) {
				t.Fatalf("merged state windows %v (state window %v)", e.m.mergedStateWins, e.m.stateWindow)
			}
			if stateWindow(e, tw(0, 3)) != tw(0, 3) {
				t.Fatal("[0,3) changed")
			}
			expectAdd(e, tw(5, 8), tw(5, 13), false)
			expectAdd(e, tw(8, 10), tw(5, 13), false)
			expectAdd(e, tw(10, 13), tw(5, 13), false)
			if !oneOf(stateWindow(e, tw(5, 13)), tw(5, 8), tw(10, 13)) {
				t.Fatal("state window of [5,13)")
			}
			// merges all
			expectAdd(e, tw(3, 5), tw(0, 13), true)
			if e.m.target != tw(0, 13) || !oneOf(e.m.stateWindow, tw(0, 3), tw(5, 8), tw(10, 13)) || !sameSet(e.m.sources, []window.Window{tw(0, 3), tw(5, 13)}) {
				t.Fatalf("merge %+v", e.m)
			}
			if len(e.m.mergedStateWins) != 1 || !oneOf(e.m.mergedStateWins[0], tw(0, 3), tw(5, 8), tw(10, 13)) || slices.Contains(e.m.mergedStateWins, e.m.stateWindow) {
				t.Fatalf("merged state windows %v (state window %v)", e.m.mergedStateWins, e.m.stateWindow)
			}
			if !oneOf(stateWindow(e, tw(0, 13)), tw(0, 3), tw(5, 8), tw(10, 13)) {
				t.Fatal("state window of [0,13)")
			}
		},
		"testMergeLargeWindowCoveringSingleWindow": func(t *testing.T, backend string) {
			e := newEnv(t, backend, session3)
			expectAdd(e, tw(1, 2), tw(1, 2), false)
			if stateWindow(e, tw(1, 2)) != tw(1, 2) {
				t.Fatal("state window of [1,2)")
			}
			expectAdd(e, tw(0, 3), tw(0, 3), true)
			if stateWindow(e, tw(0, 3)) != tw(1, 2) {
				t.Fatal("the covering window does not keep [1,2)'s state")
			}
		},
		"testAddingIdenticalWindows": func(t *testing.T, backend string) {
			e := newEnv(t, backend, session3)
			expectAdd(e, tw(1, 2), tw(1, 2), false)
			if stateWindow(e, tw(1, 2)) != tw(1, 2) {
				t.Fatal("state window of [1,2)")
			}
			expectAdd(e, tw(1, 2), tw(1, 2), false)
			if stateWindow(e, tw(1, 2)) != tw(1, 2) {
				t.Fatal("state window of [1,2) after adding it again")
			}
		},
		"testMergeLargeWindowCoveringMultipleWindows": func(t *testing.T, backend string) {
			e := newEnv(t, backend, session3)
			for _, w := range []window.Window{tw(1, 3), tw(5, 8), tw(10, 13)} {
				expectAdd(e, w, w, false)
				if stateWindow(e, w) != w {
					t.Fatalf("state window of %v", w)
				}
			}
			expectAdd(e, tw(0, 13), tw(0, 13), true)
			msw := e.m.mergedStateWins
			if !(sameSet(msw, []window.Window{tw(1, 3), tw(5, 8)}) || sameSet(msw, []window.Window{tw(1, 3), tw(10, 13)}) || sameSet(msw, []window.Window{tw(5, 8), tw(10, 13)})) {
				t.Fatalf("merged state windows %v", msw)
			}
			if !oneOf(stateWindow(e, tw(0, 13)), tw(1, 3), tw(5, 8), tw(10, 13)) {
				t.Fatal("state window of [0,13)")
			}
		},
		"testRestoreFromState": func(t *testing.T, backend string) {
			tab := mergingSetTable(t, backend)
			for _, kv := range [][2]window.Window{{tw(17, 42), tw(42, 17)}, {tw(1, 2), tw(3, 4)}} {
				if err := tab.MapPut(nil, state.WindowCodec.Append(nil, kv[0]), kv[1]); err != nil {
					t.Fatal(err)
				}
			}
			set, err := window.NewMergingWindowSet(session3, tab)
			if err != nil {
				t.Fatal(err)
			}
			e := &env{t: t, set: set}
			if stateWindow(e, tw(17, 42)) != tw(42, 17) || stateWindow(e, tw(1, 2)) != tw(3, 4) {
				t.Fatal("restored state windows differ")
			}
		},
		"testPersist": func(t *testing.T, backend string) {
			e := newEnv(t, backend, session3)
			add(e, tw(1, 2))
			add(e, tw(17, 42))
			if stateWindow(e, tw(1, 2)) != tw(1, 2) || stateWindow(e, tw(17, 42)) != tw(17, 42) {
				t.Fatal("state windows")
			}
			if e.tab.writes != 0 {
				t.Fatalf("%d writes before Persist", e.tab.writes)
			}
			if err := e.set.Persist(); err != nil {
				t.Fatal(err)
			}
			got := map[window.Window]window.Window{}
			if err := e.tab.MapRange(nil, func(uk []byte, v any) bool {
				w, _ := state.WindowCodec.Decode(uk)
				got[w] = v.(window.Window)
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[tw(1, 2)] != tw(1, 2) || got[tw(17, 42)] != tw(17, 42) {
				t.Fatalf("persisted %v", got)
			}
			if e.tab.writes != 2 {
				t.Fatalf("%d writes, want one per window in flight", e.tab.writes)
			}
		},
		"testPersistOnlyIfHaveUpdates": func(t *testing.T, backend string) {
			tab := mergingSetTable(t, backend)
			for _, kv := range [][2]window.Window{{tw(17, 42), tw(42, 17)}, {tw(1, 2), tw(3, 4)}} {
				if err := tab.MapPut(nil, state.WindowCodec.Append(nil, kv[0]), kv[1]); err != nil {
					t.Fatal(err)
				}
			}
			tab.writes = 0
			set, err := window.NewMergingWindowSet(session3, tab)
			if err != nil {
				t.Fatal(err)
			}
			e := &env{t: t, set: set}
			if stateWindow(e, tw(17, 42)) != tw(42, 17) || stateWindow(e, tw(1, 2)) != tw(3, 4) {
				t.Fatal("restored state windows differ")
			}
			if err := set.Persist(); err != nil {
				t.Fatal(err)
			}
			if tab.writes != 0 {
				t.Fatalf("Persist without changes wrote %d times", tab.writes)
			}
		},
	}
	wrapped := map[string]func(t *testing.T){}
	for name, f := range cases {
		wrapped[name] = func(t *testing.T) { backends(t, f) }
	}
	optest.Run(t, wrapped)
}
