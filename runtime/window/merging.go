package window

import (
	"fmt"
	"maps"
	"slices"

	"streamdbg/state"
)

// MergingWindowSet is Flink's MergingWindowSet for the current key of a
// merging window operator: each window in flight maps to its state window,
// the window whose namespace holds its contents. Merging windows only
// changes the mapping; the contents of the merged state windows are folded
// into one of them by the merge function, so a merge moves no state until
// it has to.
//
// It is kept in the map state MergingSetState (window → state window) of
// the current key: NewMergingWindowSet reads it, Persist writes back what
// changed, and nothing when nothing did.
//
// INVARIANT: no two windows of the set intersect (for a well-behaved
// assigner), and every window maps to the state window of one of the
// windows merged into it.
type MergingWindowSet struct {
	assigner MergingAssigner
	table    state.Table
	mapping  map[Window]Window
	initial  map[Window]Window
}

// MergeFunc is told of one merge: result is the new window, merged the
// windows that went into it (the new window itself excluded), stateWindow
// the state window result keeps, mergedStateWindows the state windows whose
// contents must fold into stateWindow.
type MergeFunc func(result Window, merged []Window, stateWindow Window, mergedStateWindows []Window) error

// NewMergingWindowSet reads the set of the current key from table (a map
// state of windows to windows).
func NewMergingWindowSet(a MergingAssigner, table state.Table) (*MergingWindowSet, error) {
	s := &MergingWindowSet{assigner: a, table: table, mapping: map[Window]Window{}}
	var derr error
	err := table.MapRange(nil, func(uk []byte, v any) bool {
		w, err := state.WindowCodec.Decode(uk)
		if err != nil {
			derr = err
			return false
		}
		sw, ok := v.(Window)
		if !ok {
			derr = fmt.Errorf("state window is a %T", v)
			return false
		}
		s.mapping[w] = sw
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", MergingSetState, err)
	}
	s.initial = maps.Clone(s.mapping)
	return s, nil
}

// StateWindow returns the state window of w, false when w is not in flight.
func (s *MergingWindowSet) StateWindow(w Window) (Window, bool) {
	sw, ok := s.mapping[w]
	return sw, ok
}

// Windows lists the windows in flight, by start.
func (s *MergingWindowSet) Windows() []Window {
	return slices.SortedFunc(maps.Keys(s.mapping), compareWindows)
}

// RetireWindow removes w (its state is gone).
func (s *MergingWindowSet) RetireWindow(w Window) error {
	if _, ok := s.mapping[w]; !ok {
		return fmt.Errorf("window %s is not in the set of windows in flight", w)
	}
	delete(s.mapping, w)
	return nil
}

// AddWindow adds a new window: it merges with the windows in flight the
// assigner merges it with, merge is called once per merge that involves a
// window in flight, and AddWindow returns the window the new one is now
// part of (itself when nothing merged).
func (s *MergingWindowSet) AddWindow(nw Window, merge MergeFunc) (Window, error) {
	ws := append(s.Windows(), nw)
	result, mergedNew := nw, false
	merges := s.assigner.MergeWindows(ws)
	for _, mg := range merges {
		merged := slices.Clone(mg.Merged)
		if i := slices.Index(merged, nw); i >= 0 {
			merged = slices.Delete(merged, i, i+1)
			mergedNew, result = true, mg.Result
		}
		if len(merged) == 0 {
			continue // the assigner merged nw with nothing in flight
		}
		// The result keeps the state window of one of the merged windows.
		target := s.mapping[merged[0]]
		var mergedState []Window
		for _, m := range merged {
			if sw, ok := s.mapping[m]; ok {
				delete(s.mapping, m)
				mergedState = append(mergedState, sw)
			}
		}
		s.mapping[mg.Result] = target
		if i := slices.Index(mergedState, target); i >= 0 {
			mergedState = slices.Delete(mergedState, i, i+1)
		}
		// A window in flight merging only with the new window, without
		// growing, is no merge: the new window never had state.
		if len(merged) == 1 && merged[0] == mg.Result {
			continue
		}
		if err := merge(mg.Result, merged, target, mergedState); err != nil {
			return Window{}, err
		}
	}
	if len(merges) == 0 || (result == nw && !mergedNew) {
		s.mapping[result] = result
	}
	return result, nil
}

// Persist writes to the table what changed since the set was read.
func (s *MergingWindowSet) Persist() error {
	if maps.Equal(s.mapping, s.initial) {
		return nil
	}
	for _, w := range slices.SortedFunc(maps.Keys(s.initial), compareWindows) {
		if _, ok := s.mapping[w]; !ok {
			if err := s.table.MapDelete(nil, encode(w)); err != nil {
				return err
			}
		}
	}
	for _, w := range s.Windows() {
		if old, ok := s.initial[w]; !ok || old != s.mapping[w] {
			if err := s.table.MapPut(nil, encode(w), s.mapping[w]); err != nil {
				return err
			}
		}
	}
	s.initial = maps.Clone(s.mapping)
	return nil
}
