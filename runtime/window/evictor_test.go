package window_test

import (
	"math"
	"slices"
	"testing"

	"streamdbg/runtime/window"
)

// TestDeltaEvictorKeepsNaN: the delta evictor removes an element when
// delta >= threshold, as Flink's DeltaEvictor.evict does, so an element
// whose delta is NaN stays (before, it was evicted: delta < threshold was
// the test for keeping).
func TestDeltaEvictorKeepsNaN(t *testing.T) {
	e := window.Delta(1, func(old, new float64) float64 { return new - old })
	elems := []window.Element{{Value: math.NaN()}, {Value: 0.0}, {Value: 5.0}, {Value: 5.5}}
	var got []float64
	for _, el := range e.EvictBefore(elems, window.GlobalWindow) {
		got = append(got, el.Value.(float64))
	}
	// 5.5-NaN is NaN: kept; 5.5-0 = 5.5 >= 1: evicted; 5.5-5 = 0.5: kept.
	if len(got) != 3 || !math.IsNaN(got[0]) || !slices.Equal(got[1:], []float64{5, 5.5}) {
		t.Fatalf("kept %v, want [NaN 5 5.5]", got)
	}
}
