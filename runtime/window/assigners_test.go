package window_test

import (
	"strings"
	"testing"
	"time"

	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
)

const msec = time.Millisecond

// assign returns a's windows for an element at ts, failing the test on an
// error.
func assign(t *testing.T, a window.Assigner, ts int64, ctx window.AssignerContext) []window.Window {
	t.Helper()
	ws, err := a.AssignWindows("String", ts, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// expectWindows is Flink's contains / containsInAnyOrder.
func expectWindows(t *testing.T, got []window.Window, want ...window.Window) {
	t.Helper()
	if !sameSet(got, want) || len(got) != len(want) {
		t.Fatalf("windows %v, want %v", got, want)
	}
}

// expectInvalid checks that a is refused with an error containing msg.
func expectInvalid(t *testing.T, a window.Assigner, msg string) {
	t.Helper()
	err := a.Validate()
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("%v: error %v, want one containing %q", a, err, msg)
	}
}

func expectProperties(t *testing.T, a window.Assigner, eventTime bool, trigger window.Trigger) {
	t.Helper()
	if a.EventTime() != eventTime {
		t.Fatalf("%v: event time %v, want %v", a, a.EventTime(), eventTime)
	}
	if got := a.DefaultTrigger(); got != trigger {
		t.Fatalf("%v: default trigger %v, want %v", a, got, trigger)
	}
}

// mergesOf is Flink's MergeCallback verification: the merges, in any order.
func expectMerges(t *testing.T, got []window.Merge, want ...window.Merge) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d merges %v, want %d %v", len(got), got, len(want), want)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if g.Result == w.Result && sameSet(g.Merged, w.Merged) {
				found = true
			}
		}
		if !found {
			t.Fatalf("merges %v lack %v", got, w)
		}
	}
}

func TestTumblingEventTimeWindowsTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWindowAssignment": func(t *testing.T) {
			a := window.TumblingEventTime(5000 * msec)
			expectWindows(t, assign(t, a, 0, &ctxAt{}), tw(0, 5000))
			expectWindows(t, assign(t, a, 4999, &ctxAt{}), tw(0, 5000))
			expectWindows(t, assign(t, a, 5000, &ctxAt{}), tw(5000, 10000))
		},
		"testWindowAssignmentWithStagger": func(t *testing.T) {
			a := window.Tumbling{Size: 5000 * msec}.Staggered(window.Natural)
			ctx := &ctxAt{now: 150}
			expectWindows(t, assign(t, a, 150, ctx), tw(150, 5150))
			expectWindows(t, assign(t, a, 5099, ctx), tw(150, 5150))
			expectWindows(t, assign(t, a, 5300, ctx), tw(5150, 10150))
		},
		"testWindowAssignmentWithGlobalOffset": func(t *testing.T) {
			a := window.Tumbling{Size: 5000 * msec, Offset: 100 * msec}
			expectWindows(t, assign(t, a, 100, &ctxAt{}), tw(100, 5100))
			expectWindows(t, assign(t, a, 5099, &ctxAt{}), tw(100, 5100))
			expectWindows(t, assign(t, a, 5100, &ctxAt{}), tw(5100, 10100))
		},
		"testWindowAssignmentWithNegativeGlobalOffset": func(t *testing.T) {
			a := window.Tumbling{Size: 5000 * msec, Offset: -100 * msec}
			if err := a.Validate(); err != nil {
				t.Fatal(err)
			}
			expectWindows(t, assign(t, a, 0, &ctxAt{}), tw(-100, 4900))
			expectWindows(t, assign(t, a, 4899, &ctxAt{}), tw(-100, 4900))
			expectWindows(t, assign(t, a, 4900, &ctxAt{}), tw(4900, 9900))
		},
		"testTimeUnits": func(t *testing.T) {
			a := window.Tumbling{Size: 5 * time.Second, Offset: time.Second}
			expectWindows(t, assign(t, a, 1000, &ctxAt{}), tw(1000, 6000))
			expectWindows(t, assign(t, a, 5999, &ctxAt{}), tw(1000, 6000))
			expectWindows(t, assign(t, a, 6000, &ctxAt{}), tw(6000, 11000))
		},
		"testInvalidParameters": func(t *testing.T) {
			expectInvalid(t, window.TumblingEventTime(-time.Second), "abs(offset) < size")
			expectInvalid(t, window.Tumbling{Size: 10 * time.Second, Offset: 20 * time.Second}, "abs(offset) < size")
			expectInvalid(t, window.Tumbling{Size: 10 * time.Second, Offset: -11 * time.Second}, "abs(offset) < size")
		},
		"testProperties": func(t *testing.T) {
			expectProperties(t, window.Tumbling{Size: 5 * time.Second, Offset: 100 * msec}, true, window.EventTimeTrigger{})
		},
	})
}

func TestSlidingEventTimeWindowsTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWindowAssignment": func(t *testing.T) {
			a := window.SlidingEventTime(5000*msec, 1000*msec)
			expectWindows(t, assign(t, a, 0, &ctxAt{}), tw(-4000, 1000), tw(-3000, 2000), tw(-2000, 3000), tw(-1000, 4000), tw(0, 5000))
			expectWindows(t, assign(t, a, 4999, &ctxAt{}), tw(0, 5000), tw(1000, 6000), tw(2000, 7000), tw(3000, 8000), tw(4000, 9000))
			expectWindows(t, assign(t, a, 5000, &ctxAt{}), tw(1000, 6000), tw(2000, 7000), tw(3000, 8000), tw(4000, 9000), tw(5000, 10000))
		},
		"testWindowAssignmentWithOffset": func(t *testing.T) {
			a := window.Sliding{Size: 5000 * msec, Slide: 1000 * msec, Offset: 100 * msec}
			expectWindows(t, assign(t, a, 100, &ctxAt{}), tw(-3900, 1100), tw(-2900, 2100), tw(-1900, 3100), tw(-900, 4100), tw(100, 5100))
			expectWindows(t, assign(t, a, 5099, &ctxAt{}), tw(100, 5100), tw(1100, 6100), tw(2100, 7100), tw(3100, 8100), tw(4100, 9100))
			expectWindows(t, assign(t, a, 5100, &ctxAt{}), tw(1100, 6100), tw(2100, 7100), tw(3100, 8100), tw(4100, 9100), tw(5100, 10100))
		},
		"testWindowAssignmentWithNegativeOffset": func(t *testing.T) {
			a := window.Sliding{Size: 5000 * msec, Slide: 1000 * msec, Offset: -100 * msec}
			if err := a.Validate(); err != nil {
				t.Fatal(err)
			}
			expectWindows(t, assign(t, a, 0, &ctxAt{}), tw(-4100, 900), tw(-3100, 1900), tw(-2100, 2900), tw(-1100, 3900), tw(-100, 4900))
			expectWindows(t, assign(t, a, 4899, &ctxAt{}), tw(-100, 4900), tw(900, 5900), tw(1900, 6900), tw(2900, 7900), tw(3900, 8900))
			expectWindows(t, assign(t, a, 4900, &ctxAt{}), tw(900, 5900), tw(1900, 6900), tw(2900, 7900), tw(3900, 8900), tw(4900, 9900))
		},
		"testTimeUnits": func(t *testing.T) {
			a := window.Sliding{Size: 5 * time.Second, Slide: time.Second, Offset: 500 * msec}
			expectWindows(t, assign(t, a, 100, &ctxAt{}), tw(-4500, 500), tw(-3500, 1500), tw(-2500, 2500), tw(-1500, 3500), tw(-500, 4500))
			expectWindows(t, assign(t, a, 5499, &ctxAt{}), tw(500, 5500), tw(1500, 6500), tw(2500, 7500), tw(3500, 8500), tw(4500, 9500))
			expectWindows(t, assign(t, a, 5100, &ctxAt{}), tw(500, 5500), tw(1500, 6500), tw(2500, 7500), tw(3500, 8500), tw(4500, 9500))
		},
		"testInvalidParameters": func(t *testing.T) {
			const msg = "abs(offset) < slide and size > 0"
			expectInvalid(t, window.SlidingEventTime(-2*time.Second, time.Second), msg)
			expectInvalid(t, window.SlidingEventTime(2*time.Second, -time.Second), msg)
			expectInvalid(t, window.Sliding{Size: -20 * time.Second, Slide: 10 * time.Second, Offset: -time.Second}, msg)
			expectInvalid(t, window.Sliding{Size: 20 * time.Second, Slide: 10 * time.Second, Offset: -11 * time.Second}, msg)
			expectInvalid(t, window.Sliding{Size: 20 * time.Second, Slide: 10 * time.Second, Offset: 11 * time.Second}, msg)
		},
		"testProperties": func(t *testing.T) {
			expectProperties(t, window.SlidingEventTime(5*time.Second, 100*msec), true, window.EventTimeTrigger{})
		},
	})
}

// TestSlidingWindowsCap: an element may belong to at most
// MaxWindowsPerElement windows.
func TestSlidingWindowsCap(t *testing.T) {
	ok := window.SlidingEventTime(window.MaxWindowsPerElement*msec, msec)
	if err := ok.Validate(); err != nil {
		t.Fatalf("%d windows per element refused: %v", window.MaxWindowsPerElement, err)
	}
	expectInvalid(t, window.SlidingEventTime((window.MaxWindowsPerElement+1)*msec, msec), "at most 10000000")
	expectInvalid(t, window.SlidingProcessingTime(24*time.Hour, msec), "in 86400000 windows")
}

// sessionMergeCases are the merge cases Flink's event- and processing-time
// session tests share.
func sessionMergeCases(a window.MergingAssigner) map[string]func(t *testing.T) {
	return map[string]func(t *testing.T){
		"testMergeSinglePointWindow": func(t *testing.T) {
			expectMerges(t, a.MergeWindows([]window.Window{tw(0, 0)}))
		},
		"testMergeSingleWindow": func(t *testing.T) {
			expectMerges(t, a.MergeWindows([]window.Window{tw(0, 1)}))
		},
		"testMergeConsecutiveWindows": func(t *testing.T) {
			expectMerges(t, a.MergeWindows([]window.Window{tw(0, 1), tw(1, 2), tw(2, 3), tw(4, 5), tw(5, 6)}),
				window.Merge{Result: tw(0, 3), Merged: []window.Window{tw(0, 1), tw(1, 2), tw(2, 3)}},
				window.Merge{Result: tw(4, 6), Merged: []window.Window{tw(4, 5), tw(5, 6)}})
		},
		"testMergeCoveringWindow": func(t *testing.T) {
			expectMerges(t, a.MergeWindows([]window.Window{tw(1, 1), tw(0, 2), tw(4, 7), tw(5, 6)}),
				window.Merge{Result: tw(0, 2), Merged: []window.Window{tw(1, 1), tw(0, 2)}},
				window.Merge{Result: tw(4, 7), Merged: []window.Window{tw(5, 6), tw(4, 7)}})
		},
	}
}

func TestEventTimeSessionWindowsTest(t *testing.T) {
	cases := sessionMergeCases(window.EventTimeSession(5000 * msec))
	cases["testWindowAssignment"] = func(t *testing.T) {
		a := window.EventTimeSession(5000 * msec)
		expectWindows(t, assign(t, a, 0, &ctxAt{}), tw(0, 5000))
		expectWindows(t, assign(t, a, 4999, &ctxAt{}), tw(4999, 9999))
		expectWindows(t, assign(t, a, 5000, &ctxAt{}), tw(5000, 10000))
	}
	cases["testTimeUnits"] = func(t *testing.T) {
		a := window.EventTimeSession(5 * time.Second)
		expectWindows(t, assign(t, a, 0, &ctxAt{}), tw(0, 5000))
		expectWindows(t, assign(t, a, 4999, &ctxAt{}), tw(4999, 9999))
		expectWindows(t, assign(t, a, 5000, &ctxAt{}), tw(5000, 10000))
	}
	cases["testInvalidParameters"] = func(t *testing.T) {
		expectInvalid(t, window.EventTimeSession(-time.Second), "0 < size")
		expectInvalid(t, window.EventTimeSession(0), "0 < size")
	}
	cases["testProperties"] = func(t *testing.T) {
		expectProperties(t, window.EventTimeSession(5*time.Second), true, window.EventTimeTrigger{})
	}
	cases["testDynamicGapProperties"] = func(t *testing.T) {
		a := window.DynamicEventTimeSession(func(string) time.Duration { return time.Second })
		if err := a.Validate(); err != nil || !a.EventTime() {
			t.Fatalf("dynamic event-time sessions: %v, event time %v", err, a.EventTime())
		}
	}
	optest.Run(t, cases)
}

func TestTumblingProcessingTimeWindowsTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWindowAssignment": func(t *testing.T) {
			a := window.TumblingProcessingTime(5000 * msec)
			expectWindows(t, assign(t, a, 0, &ctxAt{0}), tw(0, 5000))
			expectWindows(t, assign(t, a, 0, &ctxAt{4999}), tw(0, 5000))
			expectWindows(t, assign(t, a, 0, &ctxAt{5000}), tw(5000, 10000))
		},
		"testWindowAssignmentWithStagger": func(t *testing.T) {
			a := window.TumblingProcessingTime(5000 * msec).Staggered(window.Natural)
			expectWindows(t, assign(t, a, 0, &ctxAt{150}), tw(150, 5150))
			expectWindows(t, assign(t, a, 0, &ctxAt{5049}), tw(150, 5150))
			expectWindows(t, assign(t, a, 0, &ctxAt{5150}), tw(5150, 10150))
		},
		"testWindowAssignmentWithGlobalOffset": func(t *testing.T) {
			a := window.Tumbling{Size: 5000 * msec, Offset: 100 * msec, Processing: true}
			expectWindows(t, assign(t, a, 0, &ctxAt{100}), tw(100, 5100))
			expectWindows(t, assign(t, a, 0, &ctxAt{5099}), tw(100, 5100))
			expectWindows(t, assign(t, a, 0, &ctxAt{5100}), tw(5100, 10100))
		},
		"testWindowAssignmentWithNegativeGlobalOffset": func(t *testing.T) {
			a := window.Tumbling{Size: 5000 * msec, Offset: -100 * msec, Processing: true}
			expectWindows(t, assign(t, a, 0, &ctxAt{100}), tw(-100, 4900))
			expectWindows(t, assign(t, a, 0, &ctxAt{4899}), tw(-100, 4900))
			expectWindows(t, assign(t, a, 0, &ctxAt{4900}), tw(4900, 9900))
		},
		"testTimeUnits": func(t *testing.T) {
			a := window.Tumbling{Size: 5 * time.Second, Offset: time.Second, Processing: true}
			expectWindows(t, assign(t, a, 0, &ctxAt{1000}), tw(1000, 6000))
			expectWindows(t, assign(t, a, 0, &ctxAt{5999}), tw(1000, 6000))
			expectWindows(t, assign(t, a, 0, &ctxAt{6000}), tw(6000, 11000))
		},
		"testInvalidParameters": func(t *testing.T) {
			expectInvalid(t, window.TumblingProcessingTime(-time.Second), "abs(offset) < size")
			expectInvalid(t, window.Tumbling{Size: 10 * time.Second, Offset: 20 * time.Second, Processing: true}, "abs(offset) < size")
			expectInvalid(t, window.Tumbling{Size: 10 * time.Second, Offset: -11 * time.Second, Processing: true}, "abs(offset) < size")
		},
		"testProperties": func(t *testing.T) {
			expectProperties(t, window.Tumbling{Size: 5 * time.Second, Offset: 100 * msec, Processing: true}, false, window.ProcessingTimeTrigger{})
		},
	})
}

func TestSlidingProcessingTimeWindowsTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWindowAssignment": func(t *testing.T) {
			a := window.SlidingProcessingTime(5000*msec, 1000*msec)
			expectWindows(t, assign(t, a, 0, &ctxAt{0}), tw(-4000, 1000), tw(-3000, 2000), tw(-2000, 3000), tw(-1000, 4000), tw(0, 5000))
			expectWindows(t, assign(t, a, 0, &ctxAt{4999}), tw(0, 5000), tw(1000, 6000), tw(2000, 7000), tw(3000, 8000), tw(4000, 9000))
			expectWindows(t, assign(t, a, 0, &ctxAt{5000}), tw(1000, 6000), tw(2000, 7000), tw(3000, 8000), tw(4000, 9000), tw(5000, 10000))
		},
		"testWindowAssignmentWithOffset": func(t *testing.T) {
			a := window.Sliding{Size: 5000 * msec, Slide: 1000 * msec, Offset: 100 * msec, Processing: true}
			expectWindows(t, assign(t, a, 0, &ctxAt{100}), tw(-3900, 1100), tw(-2900, 2100), tw(-1900, 3100), tw(-900, 4100), tw(100, 5100))
			expectWindows(t, assign(t, a, 0, &ctxAt{5099}), tw(100, 5100), tw(1100, 6100), tw(2100, 7100), tw(3100, 8100), tw(4100, 9100))
			expectWindows(t, assign(t, a, 0, &ctxAt{5100}), tw(1100, 6100), tw(2100, 7100), tw(3100, 8100), tw(4100, 9100), tw(5100, 10100))
		},
		"testTimeUnits": func(t *testing.T) {
			a := window.Sliding{Size: 5 * time.Second, Slide: time.Second, Offset: 500 * msec, Processing: true}
			expectWindows(t, assign(t, a, 0, &ctxAt{100}), tw(-4500, 500), tw(-3500, 1500), tw(-2500, 2500), tw(-1500, 3500), tw(-500, 4500))
			expectWindows(t, assign(t, a, 0, &ctxAt{5499}), tw(500, 5500), tw(1500, 6500), tw(2500, 7500), tw(3500, 8500), tw(4500, 9500))
			expectWindows(t, assign(t, a, 0, &ctxAt{5100}), tw(500, 5500), tw(1500, 6500), tw(2500, 7500), tw(3500, 8500), tw(4500, 9500))
		},
		"testInvalidParameters": func(t *testing.T) {
			// The stored test still refuses offset -1s of slide 10s (it
			// predates negative offsets); Flink now accepts |offset| < slide
			// as its event-time twin does, and so does streamdbg.
			const msg = "abs(offset) < slide and size > 0"
			expectInvalid(t, window.SlidingProcessingTime(-2*time.Second, time.Second), msg)
			expectInvalid(t, window.SlidingProcessingTime(2*time.Second, -time.Second), msg)
			if err := (window.Sliding{Size: 20 * time.Second, Slide: 10 * time.Second, Offset: -time.Second, Processing: true}).Validate(); err != nil {
				t.Fatalf("offset -1s of slide 10s: %v", err)
			}
			expectInvalid(t, window.Sliding{Size: 20 * time.Second, Slide: 10 * time.Second, Offset: -11 * time.Second, Processing: true}, msg)
		},
		"testProperties": func(t *testing.T) {
			expectProperties(t, window.SlidingProcessingTime(5*time.Second, 100*msec), false, window.ProcessingTimeTrigger{})
		},
	})
}

func TestProcessingTimeSessionWindowsTest(t *testing.T) {
	cases := sessionMergeCases(window.ProcessingTimeSession(5000 * msec))
	cases["testWindowAssignment"] = func(t *testing.T) {
		a := window.ProcessingTimeSession(5000 * msec)
		expectWindows(t, assign(t, a, 0, &ctxAt{0}), tw(0, 5000))
		expectWindows(t, assign(t, a, 0, &ctxAt{4999}), tw(4999, 9999))
		expectWindows(t, assign(t, a, 0, &ctxAt{5000}), tw(5000, 10000))
	}
	cases["testTimeUnits"] = func(t *testing.T) {
		a := window.ProcessingTimeSession(5 * time.Second)
		expectWindows(t, assign(t, a, 0, &ctxAt{0}), tw(0, 5000))
		expectWindows(t, assign(t, a, 0, &ctxAt{4999}), tw(4999, 9999))
		expectWindows(t, assign(t, a, 0, &ctxAt{5000}), tw(5000, 10000))
	}
	cases["testInvalidParameters"] = func(t *testing.T) {
		expectInvalid(t, window.ProcessingTimeSession(-time.Second), "0 < size")
		expectInvalid(t, window.ProcessingTimeSession(0), "0 < size")
	}
	cases["testProperties"] = func(t *testing.T) {
		expectProperties(t, window.ProcessingTimeSession(5*time.Second), false, window.ProcessingTimeTrigger{})
	}
	cases["testDynamicGapProperties"] = func(t *testing.T) {
		a := window.DynamicProcessingTimeSession(func(string) time.Duration { return time.Second })
		if err := a.Validate(); err != nil || a.EventTime() {
			t.Fatalf("dynamic processing-time sessions: %v, event time %v", err, a.EventTime())
		}
	}
	optest.Run(t, cases)
}

func TestGlobalWindowsTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWindowAssignment": func(t *testing.T) {
			a := window.Global{}
			for _, ts := range []int64{0, 4999, 5000} {
				expectWindows(t, assign(t, a, ts, &ctxAt{}), window.GlobalWindow)
			}
		},
		"testProperties": func(t *testing.T) {
			expectProperties(t, window.Global{}, false, window.Never{})
		},
	})
}

func TestTimeWindowTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testGetWindowStartWithOffset": func(t *testing.T) {
			for _, c := range []struct{ ts, offset, size, want int64 }{
				// [-21, -14), [-14, -7), [-7, 0), [0, 7), [7, 14), [14, 21)...
				{-8, 0, 7, -14}, {-7, 0, 7, -7}, {-6, 0, 7, -7}, {-1, 0, 7, -7}, {1, 0, 7, 0}, {6, 0, 7, 0}, {7, 0, 7, 7}, {8, 0, 7, 7},
				// [-11, -4), [-4, 3), [3, 10), [10, 17)...
				{-10, 3, 7, -11}, {-9, 3, 7, -11}, {-3, 3, 7, -4}, {-2, 3, 7, -4}, {-1, 3, 7, -4}, {1, 3, 7, -4}, {2, 3, 7, -4},
				{3, 3, 7, 3}, {9, 3, 7, 3}, {10, 3, 7, 10},
				// [-16, -9), [-9, -2), [-2, 5), [5, 12), [12, 19)...
				{-12, -2, 7, -16}, {-7, -2, 7, -9}, {-4, -2, 7, -9}, {-3, -2, 7, -9}, {2, -2, 7, -2}, {-1, -2, 7, -2},
				{1, -2, 7, -2}, {-2, -2, 7, -2}, {3, -2, 7, -2}, {4, -2, 7, -2}, {7, -2, 7, 5}, {12, -2, 7, 12},
				// daily windows of UTC+08:00
				{1470902048450, -8 * 3600_000, 24 * 3600_000, 1470844800000},
			} {
				if got := window.StartWithOffset(c.ts, c.offset, c.size); got != c.want {
					t.Errorf("start of %d (offset %d, size %d) = %d, want %d", c.ts, c.offset, c.size, got, c.want)
				}
			}
		},
		"testIntersect": func(t *testing.T) {
			intersects := func(a, b window.Window) bool {
				t.Helper()
				if a.Intersects(b) != b.Intersects(a) {
					t.Fatalf("intersects is not symmetric for %v and %v", a, b)
				}
				return a.Intersects(b)
			}
			w := tw(10, 20)
			if !w.Intersects(w) {
				t.Fatal("a window must intersect itself")
			}
			if !intersects(w, tw(20, 30)) {
				t.Fatal("adjacent windows intersect")
			}
			if intersects(w, tw(21, 30)) {
				t.Fatal("windows with a gap do not intersect")
			}
			if !intersects(w, tw(19, 22)) {
				t.Fatal("overlapping windows intersect")
			}
		},
	})
}
