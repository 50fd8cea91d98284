package window_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
	"streamdbg/state"
)

// The window functions of Flink's WindowOperatorTest.

func reduceFn(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup] {
	return window.Reduce(ws, "window", sum, runtime.UID("window"))
}

// richSumReducer is Flink's RichSumReducer: it sums a window's elements,
// fails when it was not opened, and counts its closes.
type richSumReducer struct {
	opened bool
	closed *int
}

func (r *richSumReducer) Open(runtime.RuntimeContext) error { r.opened = true; return nil }
func (r *richSumReducer) Close() error                      { *r.closed++; return nil }

func (r *richSumReducer) Process(ctx *window.Context[tup], key string, es []tup) error {
	if !r.opened {
		return errors.New("open was not called")
	}
	n := 0
	for _, e := range es {
		n += e.V
	}
	ctx.Collect(tup{key, n})
	return nil
}

func richSumFn(closed *int) func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup] {
	return func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup] {
		return window.RichProcess(ws, "window", &richSumReducer{closed: closed}, runtime.UID("window"))
	}
}

// sessionFn is SessionWindowFunction: "key-sum" with the window's bounds.
func sessionFn(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup3] {
	return window.Process(ws, "window", func(ctx *window.Context[tup3], key string, es []tup) error {
		n := 0
		for _, e := range es {
			n += e.V
		}
		w := ctx.Window()
		ctx.Collect(tup3{fmt.Sprintf("%s-%d", key, n), w.Start, w.End})
		return nil
	}, runtime.UID("window"))
}

// reducedSessionFn is ReducedSessionWindowFunction over a reduce.
func reducedSessionFn(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup3] {
	return window.ReduceProcess(ws, "window", sum, func(ctx *window.Context[tup3], key string, vs []tup) error {
		w := ctx.Window()
		for _, v := range vs {
			ctx.Collect(tup3{fmt.Sprintf("%s-%d", key, v.V), w.Start, w.End})
		}
		return nil
	}, runtime.UID("window"))
}

// passThroughFn is PassThroughFunction: every element of the window.
func passThroughFn(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup] {
	return window.Process(ws, "window", func(ctx *window.Context[tup], _ string, es []tup) error {
		for _, e := range es {
			ctx.Collect(e)
		}
		return nil
	}, runtime.UID("window"))
}

// pointSessions is Flink's PointSessionWindows: elements with value 33 get
// a window of no length, [ts, ts).
type pointSessions struct{ window.Session }

func (p pointSessions) AssignWindows(e any, ts int64, _ window.AssignerContext) ([]window.Window, error) {
	if t, ok := e.(tup); ok && t.V == 33 {
		return []window.Window{{Start: ts, End: ts}}, nil
	}
	return []window.Window{{Start: ts, End: ts + p.Gap.Milliseconds()}}, nil
}

// eventTimeTriggerAccumGC fires at the window's end and at end + cleanup
// without purging on its own, to test the cleanup timer.
type eventTimeTriggerAccumGC struct{ cleanup int64 }

func (eventTimeTriggerAccumGC) OnElement(ctx window.TriggerContext, _ any, _ int64, w window.Window) (window.TriggerResult, error) {
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return window.Fire, nil
	}
	return window.Continue, ctx.RegisterEventTimeTimer(w.MaxTimestamp())
}

func (t eventTimeTriggerAccumGC) OnEventTime(_ window.TriggerContext, ts int64, w window.Window) (window.TriggerResult, error) {
	if ts == w.MaxTimestamp() || ts == w.MaxTimestamp()+t.cleanup {
		return window.FireAndPurge, nil
	}
	return window.Continue, nil
}

func (eventTimeTriggerAccumGC) OnProcessingTime(window.TriggerContext, int64, window.Window) (window.TriggerResult, error) {
	return window.Continue, nil
}
func (eventTimeTriggerAccumGC) CanMerge() bool { return true }
func (eventTimeTriggerAccumGC) OnMerge(ctx window.MergeContext, w window.Window) error {
	return ctx.RegisterEventTimeTimer(w.MaxTimestamp())
}
func (eventTimeTriggerAccumGC) Clear(ctx window.TriggerContext, w window.Window) error {
	return ctx.DeleteEventTimeTimer(w.MaxTimestamp())
}
func (eventTimeTriggerAccumGC) String() string { return "EventTimeTrigger()" }

// fireEverytime fires on every element and timer, and sets no timers.
type fireEverytime struct{}

func (fireEverytime) OnElement(window.TriggerContext, any, int64, window.Window) (window.TriggerResult, error) {
	return window.Fire, nil
}
func (fireEverytime) OnEventTime(window.TriggerContext, int64, window.Window) (window.TriggerResult, error) {
	return window.Fire, nil
}
func (fireEverytime) OnProcessingTime(window.TriggerContext, int64, window.Window) (window.TriggerResult, error) {
	return window.Fire, nil
}
func (fireEverytime) CanMerge() bool                                   { return false }
func (fireEverytime) OnMerge(window.MergeContext, window.Window) error { return nil }
func (fireEverytime) Clear(window.TriggerContext, window.Window) error { return nil }
func (fireEverytime) String() string                                   { return "FireEverytimeOnElementAndEventTimeTrigger()" }

// windowContents reads the "window-contents" list of key in window w from
// the window operator's keyed backend (what Flink's test reads through the
// operator's per-window state).
func windowContents(t *testing.T, h *optest.Harness[tup], key string, w window.Window) []tup {
	t.Helper()
	k := state.String.Append(nil, key)
	ns := state.WindowCodec.Append(nil, w)
	var out []tup
	for _, st := range h.Executor().Subtasks() {
		for _, op := range st.Operators {
			if op.Info.Name != "window" || op.Keyed == nil {
				continue
			}
			kg := state.KeyGroupFor(k, h.Executor().Plan().MaxParallelism)
			if !op.Keyed.KeyGroups().Contains(kg) {
				continue
			}
			for e, err := range op.Keyed.Entries(kg, window.ContentsState) {
				if err != nil {
					t.Fatal(err)
				}
				if string(e.Key) != string(k) || string(e.Namespace) != string(ns) {
					continue
				}
				v, err := state.JSON[tup]().Decode(e.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, v)
			}
		}
	}
	return out
}

// TestWindowOperatorTest ports Flink's WindowOperatorTest.
func TestWindowOperatorTest(t *testing.T) {
	sliding := spec{assigner: window.SlidingEventTime(3*time.Second, time.Second)}
	tumbling := spec{assigner: window.TumblingEventTime(3 * time.Second)}
	session3 := spec{assigner: window.EventTimeSession(3 * time.Second)}

	slidingEventTimeWindows := func(t *testing.T, c *windowCase) {
		c.el("key2", 1, 3999)
		c.el("key2", 1, 3000)
		c.el("key1", 1, 20)
		c.el("key1", 1, 0)
		c.el("key1", 1, 999)
		c.el("key2", 1, 1998)
		c.el("key2", 1, 1999)
		c.el("key2", 1, 1000)
		c.wm(999)
		c.expect(rec("key1", 3, 999), optest.WM(999))
		c.check()
		c.wm(1999)
		c.expect(rec("key1", 3, 1999), rec("key2", 3, 1999), optest.WM(1999))
		c.check()
		c.wm(2999)
		c.expect(rec("key1", 3, 2999), rec("key2", 3, 2999), optest.WM(2999))
		c.check()
		c.restore()
		c.wm(3999)
		c.expect(rec("key2", 5, 3999), optest.WM(3999))
		c.check()
		c.wm(4999)
		c.expect(rec("key2", 2, 4999), optest.WM(4999))
		c.check()
		c.wm(5999)
		c.expect(rec("key2", 2, 5999), optest.WM(5999))
		c.check()
		c.wm(6999) // no effect but the watermarks
		c.wm(7999)
		c.expect(optest.WM(6999), optest.WM(7999))
		c.check()
	}
	tumblingEventTimeWindows := func(t *testing.T, c *windowCase) {
		c.el("key2", 1, 3999)
		c.el("key2", 1, 3000)
		c.el("key1", 1, 20)
		c.el("key1", 1, 0)
		c.el("key1", 1, 999)
		c.el("key2", 1, 1998)
		c.el("key2", 1, 1999)
		c.el("key2", 1, 1000)
		c.wm(999)
		c.expect(optest.WM(999))
		c.check()
		c.wm(1999)
		c.expect(optest.WM(1999))
		c.check()
		c.restore()
		c.wm(2999)
		c.expect(rec("key1", 3, 2999), rec("key2", 3, 2999), optest.WM(2999))
		c.check()
		c.wm(3999)
		c.expect(optest.WM(3999))
		c.check()
		c.wm(4999)
		c.expect(optest.WM(4999))
		c.check()
		c.wm(5999)
		c.expect(rec("key2", 2, 5999), optest.WM(5999))
		c.check()
		c.wm(6999)
		c.wm(7999)
		c.expect(optest.WM(6999), optest.WM(7999))
		c.check()
	}
	sessionWindows := func(t *testing.T, c *windowCase) {
		c.el("key2", 1, 0)
		c.el("key2", 2, 1000)
		c.el("key2", 3, 2500)
		c.el("key1", 1, 10)
		c.el("key1", 2, 1000)
		c.check()
		c.restore()
		c.el("key1", 3, 2500)
		c.el("key2", 4, 5501)
		c.el("key2", 5, 6000)
		c.el("key2", 5, 6000)
		c.el("key2", 6, 6050)
		c.wm(12000)
		c.expect(rec3("key1-6", 10, 5500, 5499), rec3("key2-6", 0, 5500, 5499), rec3("key2-20", 5501, 9050, 9049), optest.WM(12000))
		c.el("key2", 10, 15000)
		c.el("key2", 20, 15000)
		c.wm(17999)
		c.expect(rec3("key2-30", 15000, 18000, 17999), optest.WM(17999))
		c.check()
	}
	reduceSessionWindows := func(t *testing.T, c *windowCase) {
		c.el("key2", 1, 0)
		c.el("key2", 2, 1000)
		c.el("key2", 3, 2500)
		c.restore()
		c.el("key1", 1, 10)
		c.el("key1", 2, 1000)
		c.el("key1", 3, 2500)
		c.el("key2", 4, 5501)
		c.el("key2", 5, 6000)
		c.el("key2", 5, 6000)
		c.el("key2", 6, 6050)
		c.wm(12000)
		c.expect(rec3("key1-6", 10, 5500, 5499), rec3("key2-6", 0, 5500, 5499), rec3("key2-20", 5501, 9050, 9049), optest.WM(12000))
		c.el("key2", 10, 15000)
		c.el("key2", 20, 15000)
		c.wm(17999)
		c.expect(rec3("key2-30", 15000, 18000, 17999), optest.WM(17999))
		c.check()
	}
	// The late-data session tests share their first half.
	lateSessionsStart := func(c *windowCase) {
		c.el("key2", 1, 1000)
		c.wm(1999)
		c.expect(optest.WM(1999))
		c.el("key2", 1, 2000)
		c.wm(4998)
		c.expect(optest.WM(4998))
		c.el("key2", 1, 4500) // joins the session: its end is after the watermark
		c.el("key2", 1, 8500) // a new session
		c.wm(7400)
		c.expect(optest.WM(7400))
		c.el("key2", 1, 7000) // merges the two
		c.wm(11501)
		c.expect(rec3("key2-5", 1000, 11500, 11499), optest.WM(11501))
		c.el("key2", 1, 11600) // a new session
		c.wm(14600)
		c.expect(rec3("key2-1", 11600, 14600, 14599), optest.WM(14600))
	}
	cleanupTimer := func(c *windowCase, watermarks ...int64) {
		c.el("key2", 1, 1000)
		for _, w := range watermarks {
			c.wm(w)
		}
	}

	run := func(t *testing.T, s spec, body func(t *testing.T, c *windowCase), fn func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup]) {
		backends(t, func(t *testing.T, backend string) {
			body(t, &windowCase{t: t, h: windowHarness(t, backend, s, fn)})
		})
	}
	run3 := func(t *testing.T, s spec, body func(t *testing.T, c *windowCase), fn func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup3]) {
		backends(t, func(t *testing.T, backend string) {
			body(t, &windowCase{t: t, h: windowHarness(t, backend, s, fn)})
		})
	}

	optest.Run(t, map[string]func(t *testing.T){
		"testSlidingEventTimeWindowsReduce": func(t *testing.T) { run(t, sliding, slidingEventTimeWindows, reduceFn) },
		"testSlidingEventTimeWindowsApply": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				closed := 0
				c := &windowCase{t: t, h: windowHarness(t, backend, sliding, richSumFn(&closed))}
				slidingEventTimeWindows(t, c)
				if err := c.h.Close(); err != nil {
					t.Fatal(err)
				}
				if closed != 2 {
					t.Fatalf("the window function was closed %d times, want 2 (once per harness)", closed)
				}
			})
		},
		"testTumblingEventTimeWindowsReduce": func(t *testing.T) { run(t, tumbling, tumblingEventTimeWindows, reduceFn) },
		"testTumblingEventTimeWindowsApply": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				closed := 0
				c := &windowCase{t: t, h: windowHarness(t, backend, tumbling, richSumFn(&closed))}
				tumblingEventTimeWindows(t, c)
				if err := c.h.Close(); err != nil {
					t.Fatal(err)
				}
				if closed != 2 {
					t.Fatalf("the window function was closed %d times, want 2", closed)
				}
			})
		},
		"testSessionWindows":                          func(t *testing.T) { run3(t, session3, sessionWindows, sessionFn) },
		"testSessionWindowsWithProcessFunction":       func(t *testing.T) { run3(t, session3, sessionWindows, sessionFn) },
		"testReduceSessionWindows":                    func(t *testing.T) { run3(t, session3, reduceSessionWindows, reducedSessionFn) },
		"testReduceSessionWindowsWithProcessFunction": func(t *testing.T) { run3(t, session3, reduceSessionWindows, reducedSessionFn) },
		"testSessionWindowsWithCountTrigger": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), trigger: window.Purging(window.Count(4))}
			run3(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 0)
				c.el("key2", 2, 1000)
				c.el("key2", 3, 2500)
				c.el("key2", 4, 3500)
				c.el("key1", 1, 10)
				c.el("key1", 2, 1000)
				c.expect(rec3("key2-10", 0, 6500, 6499))
				c.check()
				c.restore()
				c.el("key1", 3, 2500)
				c.el("key1", 1, 6000)
				c.el("key1", 2, 6500)
				c.el("key1", 3, 7000)
				c.check()
				// merges the two key1 sessions: 6 elements and this one
				c.el("key1", 10, 4500)
				c.expect(rec3("key1-22", 10, 10000, 9999))
				c.check()
			}, sessionFn)
		},
		"testSessionWindowsWithContinuousEventTimeTrigger": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), trigger: window.ContinuousEventTime(2 * time.Second)}
			run3(t, s, func(t *testing.T, c *windowCase) {
				c.el("key1", 1, 1500) // first firing at 2000
				c.el("key2", 1, 0)
				c.el("key2", 3, 2500)
				c.el("key2", 2, 1000)
				c.wm(2500) // fires; the next firing is at 4000
				c.expect(rec3("key1-1", 1500, 4500, 4499), rec3("key2-6", 0, 5500, 5499), optest.WM(2500))
				c.el("key2", 5, 4000)
				c.wm(3000)
				c.expect(optest.WM(3000))
				c.check()
				c.restore()
				c.el("key1", 2, 4000)
				c.el("key2", 4, 3500)
				c.wm(4000) // fires; the next firing is at 6000
				c.expect(rec3("key1-3", 1500, 7000, 6999), rec3("key2-15", 0, 7000, 6999), optest.WM(4000))
				c.check()
			}, sessionFn)
		},
		"testPointSessions": func(t *testing.T) {
			s := spec{assigner: pointSessions{window.EventTimeSession(3 * time.Second)}}
			run3(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 0)
				c.el("key2", 33, 1000)
				c.restore()
				c.el("key2", 33, 2500)
				c.el("key1", 1, 10)
				c.el("key1", 2, 1000)
				c.el("key1", 33, 2500)
				c.wm(12000)
				c.expect(rec3("key1-36", 10, 4000, 3999), rec3("key2-67", 0, 3000, 2999), optest.WM(12000))
				c.check()
			}, sessionFn)
		},
		"testContinuousWatermarkTrigger": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.ContinuousEventTime(3 * time.Second)}
			run(t, s, func(t *testing.T, c *windowCase) {
				const end = math.MaxInt64 // the global window's max timestamp
				c.el("key1", 1, 0)
				c.el("key2", 1, 3000)
				c.el("key2", 1, 3999)
				c.el("key1", 1, 20)
				c.el("key1", 1, 999)
				c.el("key2", 1, 1998)
				c.el("key2", 1, 1999)
				c.el("key2", 1, 1000)
				c.wm(1000)
				c.expect(optest.WM(1000))
				c.check()
				c.wm(2000)
				c.expect(optest.WM(2000))
				c.check()
				c.wm(3000)
				c.expect(rec("key1", 3, end), optest.WM(3000))
				c.check()
				c.wm(4000)
				c.expect(optest.WM(4000))
				c.check()
				c.wm(5000)
				c.expect(optest.WM(5000))
				c.check()
				c.wm(6000)
				c.expect(rec("key1", 3, end), rec("key2", 5, end), optest.WM(6000))
				c.check()
				c.wm(7000)
				c.wm(8000)
				c.expect(optest.WM(7000), optest.WM(8000))
				c.check()
			}, reduceFn)
		},
		"testCountTrigger": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Purging(window.Count(4))}
			run(t, s, func(t *testing.T, c *windowCase) {
				const end = math.MaxInt64
				c.el("key2", 1, 3000)
				c.el("key2", 1, 3999)
				c.el("key1", 1, 20)
				c.el("key1", 1, 0)
				c.el("key1", 1, 999)
				c.el("key2", 1, 1998)
				c.el("key2", 1, 1999)
				before := slices.Clone(c.h.Output(""))
				c.restore()
				c.el("key2", 1, 1000)
				all := func() []optest.Element { return append(slices.Clone(before), c.h.Output("")...) }
				expectSorted(t, all(), []optest.Element{rec("key2", 4, end)})
				c.el("key1", 1, 10999)
				c.el("key2", 1, 1000)
				c.el("key2", 1, 1000)
				c.el("key2", 1, 1000)
				expectSorted(t, all(), []optest.Element{rec("key2", 4, end), rec("key1", 4, end), rec("key2", 4, end)})
			}, reduceFn)
		},
		"testEndOfStreamTrigger": func(t *testing.T) {
			s := spec{assigner: window.GlobalWithEndOfStream()}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 3000)
				c.el("key2", 1, 3999)
				c.el("key1", 1, 20)
				c.el("key1", 1, 0)
				c.el("key1", 1, 999)
				c.el("key2", 1, 1998)
				c.el("key2", 1, 1999)
				c.el("key2", 1, 1000)
				c.check()
				c.wm(math.MaxInt64)
				c.expect(rec("key1", 3, math.MaxInt64), rec("key2", 5, math.MaxInt64), optest.WM(math.MaxInt64))
				c.check()
			}, reduceFn)
		},
		"testProcessingTimeTumblingWindows": func(t *testing.T) {
			s := spec{assigner: window.TumblingProcessingTime(3 * time.Second)}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.pt(3)
				c.el("key2", 1, math.MaxInt64) // timestamps are ignored
				c.el("key2", 1, 7000)
				c.el("key2", 1, 7000)
				c.el("key1", 1, 7000)
				c.el("key1", 1, 7000)
				c.pt(5000)
				c.expect(rec("key2", 3, 2999), rec("key1", 2, 2999))
				c.check()
				c.el("key1", 1, 7000)
				c.el("key1", 1, 7000)
				c.el("key1", 1, 7000)
				c.pt(7000)
				c.expect(rec("key1", 3, 5999))
				c.check()
			}, reduceFn)
		},
		"testProcessingTimeSlidingWindows": func(t *testing.T) {
			s := spec{assigner: window.SlidingProcessingTime(3*time.Second, time.Second)}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.pt(3)
				c.el("key2", 1, math.MaxInt64)
				c.pt(1000)
				c.expect(rec("key2", 1, 999))
				c.check()
				c.el("key2", 1, math.MaxInt64)
				c.el("key2", 1, math.MaxInt64)
				c.pt(2000)
				c.expect(rec("key2", 3, 1999))
				c.check()
				c.el("key1", 1, math.MaxInt64)
				c.el("key1", 1, math.MaxInt64)
				c.pt(3000)
				c.expect(rec("key2", 3, 2999), rec("key1", 2, 2999))
				c.check()
				c.el("key1", 1, math.MaxInt64)
				c.el("key1", 1, math.MaxInt64)
				c.el("key1", 1, math.MaxInt64)
				c.pt(7000)
				c.expect(rec("key2", 2, 3999), rec("key1", 5, 3999), rec("key1", 5, 4999), rec("key1", 3, 5999))
				c.check()
			}, reduceFn)
		},
		"testProcessingTimeSessionWindows": func(t *testing.T) {
			s := spec{assigner: window.ProcessingTimeSession(3 * time.Second)}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.pt(3)
				c.el("key2", 1, 1)
				c.pt(1000)
				c.el("key2", 1, 1002)
				c.pt(5000)
				c.expect(rec("key2", 2, 3999))
				c.check()
				c.el("key2", 1, 5000)
				c.el("key2", 1, 5000)
				c.el("key1", 1, 5000)
				c.el("key1", 1, 5000)
				c.el("key1", 1, 5000)
				c.pt(10000)
				c.expect(rec("key2", 2, 7999), rec("key1", 3, 7999))
				c.check()
			}, reduceFn)
		},
		"testDynamicEventTimeSessionWindows": func(t *testing.T) {
			s := spec{assigner: window.DynamicEventTimeSession(gapOf)}
			run3(t, s, func(t *testing.T, c *windowCase) {
				c.el("key1", 3, 10) // different gaps for different keys
				c.el("key2", 4, 5000)
				c.el("key2", 5, 6000)
				c.wm(8999)
				c.expect(rec3("key1-3", 10, 3010, 3009), rec3("key2-9", 5000, 8000, 7999), optest.WM(8999))
				// a gap ending before the session's end: the later end stays
				c.el("key2", 1, 9000)
				c.el("key2", 2, 10000)
				c.el("key2", 10, 10500)
				c.wm(12999)
				c.expect(rec3("key2-13", 9000, 12000, 11999), optest.WM(12999))
				// a gap ending after it
				c.el("key2", 10, 13000)
				c.el("key2", 10, 13500)
				c.el("key2", 1, 14000)
				c.wm(16999)
				c.expect(rec3("key2-21", 13000, 16000, 15999), optest.WM(16999))
				c.check()
			}, sessionFn)
		},
		"testDynamicProcessingTimeSessionWindows": func(t *testing.T) {
			s := spec{assigner: window.DynamicProcessingTimeSession(gapOf)}
			run3(t, s, func(t *testing.T, c *windowCase) {
				c.pt(10)
				c.el("key1", 3, 10)
				c.pt(5000)
				c.el("key2", 4, 5000)
				c.pt(6000)
				c.el("key2", 5, 6000)
				c.pt(8999)
				c.expect(rec3("key1-3", 10, 3010, 3009), rec3("key2-9", 5000, 8000, 7999))
				c.pt(9000)
				c.el("key2", 1, 9000)
				c.pt(10000)
				c.el("key2", 2, 10000)
				c.pt(10500)
				c.el("key2", 10, 10500)
				c.pt(10500)
				c.expect(rec3("key2-13", 9000, 12000, 11999))
				c.pt(13000)
				c.el("key2", 10, 13000)
				c.pt(13500)
				c.el("key2", 10, 13500)
				c.pt(14000)
				c.el("key2", 1, 14000)
				c.pt(16999)
				c.expect(rec3("key2-21", 13000, 16000, 15999))
				c.check()
			}, sessionFn)
		},
		"testLateness": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(2 * time.Second), trigger: window.Purging(window.EventTimeTrigger{}), lateness: 500 * time.Millisecond, late: true}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 500)
				c.wm(1500)
				c.expect(optest.WM(1500))
				c.el("key2", 1, 1300)
				c.wm(2300)
				c.expect(rec("key2", 2, 1999), optest.WM(2300))
				// not late: max timestamp + lateness > watermark
				c.el("key2", 1, 1997)
				c.wm(6000)
				c.expect(rec("key2", 1, 1999), optest.WM(6000)) // 1, not 3: the trigger purges
				// late: max timestamp + lateness < watermark
				c.el("key2", 1, 1998)
				c.wm(7000)
				c.expectLate(rec("key2", 1, 1998))
				c.expect(optest.WM(7000))
				c.check()
			}, reduceFn)
		},
		"testCleanupTimeOverflow": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(time.Second), lateness: 2 * time.Second}
			run(t, s, func(t *testing.T, c *windowCase) {
				ts := int64(math.MaxInt64 - 1750)
				ws, err := s.assigner.AssignWindows(tup{"key2", 1}, ts, &ctxAt{})
				if err != nil || len(ws) != 1 {
					t.Fatalf("windows %v, %v", ws, err)
				}
				w := ws[0]
				c.el("key2", 1, ts)
				lateness := int64(2000)
				if w.MaxTimestamp()+lateness >= w.MaxTimestamp() {
					t.Fatal("the cleanup time should wrap around")
				}
				if w.MaxTimestamp()+lateness >= math.MaxInt64-1500 {
					t.Fatal("the wrapped cleanup time should be before the first watermark")
				}
				// a wrapped cleanup timer would clear the window here
				c.wm(math.MaxInt64 - 1500)
				if !(w.MaxTimestamp() > math.MaxInt64-1500 && w.MaxTimestamp() < math.MaxInt64) {
					t.Fatal("the window should end between the two watermarks")
				}
				c.wm(w.MaxTimestamp())
				c.expect(optest.WM(math.MaxInt64-1500), rec("key2", 1, w.MaxTimestamp()), optest.WM(w.MaxTimestamp()))
				c.check()
			}, reduceFn)
		},
		"testSideOutputDueToLatenessTumbling": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(2 * time.Second), late: true}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 1000)
				c.wm(1985)
				c.expect(optest.WM(1985))
				c.el("key2", 1, 1980) // not late: the window is not done
				c.wm(1999)
				c.expect(rec("key2", 2, 1999), optest.WM(1999))
				c.el("key2", 1, 1998) // late
				c.expectLate(rec("key2", 1, 1998))
				c.el("key2", 1, 2001)
				c.wm(2999)
				c.expect(optest.WM(2999))
				c.wm(3999)
				c.expect(rec("key2", 1, 3999), optest.WM(3999))
				c.check()
			}, reduceFn)
		},
		"testSideOutputDueToLatenessSliding": func(t *testing.T) {
			s := spec{assigner: window.SlidingEventTime(3*time.Second, time.Second), late: true}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 1000)
				c.wm(1999)
				c.expect(rec("key2", 1, 1999), optest.WM(1999))
				c.el("key2", 1, 2000)
				c.wm(3000)
				c.expect(rec("key2", 2, 2999), optest.WM(3000))
				c.el("key1", 1, 3001)
				// 2400 belongs to the windows ending at 2999 (late: dropped),
				// 3999 and 4999 (kept)
				c.el("key2", 1, 2400)
				c.el("key2", 1, 2400)
				c.el("key1", 1, 3001)
				c.el("key2", 1, 3900)
				c.wm(6000)
				c.expect(rec("key2", 5, 3999), rec("key1", 2, 3999), rec("key2", 4, 4999), rec("key1", 2, 4999),
					rec("key2", 1, 5999), rec("key1", 2, 5999), optest.WM(6000))
				c.el("key1", 1, 3001) // late for all its windows
				c.expectLate(rec("key1", 1, 3001))
				c.wm(25000)
				c.expect(optest.WM(25000))
				c.check()
			}, reduceFn)
		},
		"testSideOutputDueToLatenessSessionZeroLatenessPurgingTrigger": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), trigger: window.Purging(window.EventTimeTrigger{}), late: true}
			run3(t, s, func(t *testing.T, c *windowCase) {
				lateSessionsStart(c)
				c.el("key2", 1, 10000)
				c.expectLate(rec("key2", 1, 10000))
				c.el("key2", 1, 10100) // also late, not merged with 10000
				c.expectLate(rec("key2", 1, 10100))
				c.el("key2", 1, 14500)
				c.wm(20000)
				c.expect(rec3("key2-1", 14500, 17500, 17499), optest.WM(20000))
				c.wm(100000)
				c.expect(optest.WM(100000))
				c.check()
			}, reducedSessionFn)
		},
		"testSideOutputDueToLatenessSessionZeroLateness": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), late: true}
			run3(t, s, func(t *testing.T, c *windowCase) {
				lateSessionsStart(c)
				c.el("key2", 1, 10000)
				c.expectLate(rec("key2", 1, 10000))
				c.el("key2", 1, 14500)
				c.wm(20000)
				c.expect(rec3("key2-1", 14500, 17500, 17499), optest.WM(20000))
				c.wm(100000)
				c.expect(optest.WM(100000))
				c.check()
			}, reducedSessionFn)
		},
		"testDropDueToLatenessSessionWithLatenessPurgingTrigger": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), trigger: window.Purging(window.EventTimeTrigger{}), lateness: 10 * time.Millisecond, late: true}
			run3(t, s, func(t *testing.T, c *windowCase) {
				lateSessionsStart(c)
				c.el("key2", 1, 10000)
				c.expect(rec3("key2-1", 10000, 14600, 14599))
				c.el("key2", 1, 14500)
				c.wm(20000)
				c.expect(rec3("key2-1", 10000, 17500, 17499), optest.WM(20000))
				c.wm(100000)
				c.expect(optest.WM(100000))
				c.check()
			}, reducedSessionFn)
		},
		"testNotSideOutputDueToLatenessSessionWithLateness": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), lateness: 10 * time.Millisecond, late: true}
			run3(t, s, func(t *testing.T, c *windowCase) {
				lateSessionsStart(c)
				// merged into (11600-14600) thanks to the lateness and the
				// accumulating trigger: not late
				c.el("key2", 1, 10000)
				c.el("key2", 1, 14500)
				// the merged session ends before the watermark: it fires
				c.expect(rec3("key2-2", 10000, 14600, 14599))
				c.check()
				c.wm(20000)
				c.expect(rec3("key2-3", 10000, 17500, 17499), optest.WM(20000))
				c.wm(100000)
				c.expect(optest.WM(100000))
				c.check()
			}, reducedSessionFn)
		},
		"testNotSideOutputDueToLatenessSessionWithHugeLatenessPurgingTrigger": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), trigger: window.Purging(window.EventTimeTrigger{}), lateness: 10 * time.Second, late: true}
			run3(t, s, func(t *testing.T, c *windowCase) {
				lateSessionsStart(c)
				c.el("key2", 1, 10000)
				c.expect(rec3("key2-1", 1000, 14600, 14599))
				c.check()
				c.el("key2", 1, 14500)
				c.wm(20000)
				c.expect(rec3("key2-1", 1000, 17500, 17499), optest.WM(20000))
				c.wm(100000)
				c.expect(optest.WM(100000))
				c.check()
			}, reducedSessionFn)
		},
		"testNotSideOutputDueToLatenessSessionWithHugeLateness": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), lateness: 10 * time.Second, late: true}
			run3(t, s, func(t *testing.T, c *windowCase) {
				lateSessionsStart(c)
				c.el("key2", 1, 10000)
				// the merged session is already late: it fires at once
				c.expect(rec3("key2-7", 1000, 14600, 14599))
				c.check()
				c.el("key2", 1, 14500)
				c.wm(20000)
				c.expect(rec3("key2-8", 1000, 17500, 17499), optest.WM(20000))
				c.wm(100000)
				c.expect(optest.WM(100000))
				c.check()
			}, reducedSessionFn)
		},
		"testCleanupTimerWithEmptyListStateForTumblingWindows2": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(2 * time.Second), trigger: eventTimeTriggerAccumGC{100}, lateness: 100 * time.Millisecond}
			backends(t, func(t *testing.T, backend string) {
				c := &windowCase{t: t, h: windowHarness(t, backend, s, func(ws *window.WindowedStream[string, tup]) *runtime.Stream[string] {
					return window.Process(ws, "window", func(ctx *window.Context[string], _ string, es []tup) error {
						parts := make([]string, len(es))
						for i, e := range es {
							parts[i] = e.String()
						}
						ctx.Collect("GOT: " + strings.Join(parts, ","))
						return nil
					}, runtime.UID("window"))
				})}
				cleanupTimer(c, 1599, 1999, 2100, 5000)
				c.expect(optest.WM(1599), optest.Rec("GOT: (key2,1)", 1999), optest.WM(1999), optest.WM(2100), optest.WM(5000))
				c.check()
			})
		},
		"testCleanupTimerWithEmptyListStateForTumblingWindows": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(2 * time.Second), lateness: time.Millisecond}
			run(t, s, func(t *testing.T, c *windowCase) {
				cleanupTimer(c, 1599, 1999, 2000, 5000)
				c.expect(optest.WM(1599), rec("key2", 1, 1999), optest.WM(1999), optest.WM(2000), optest.WM(5000))
				c.check()
			}, passThroughFn)
		},
		"testCleanupTimerWithEmptyReduceStateForTumblingWindows": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(2 * time.Second), lateness: time.Millisecond}
			run(t, s, func(t *testing.T, c *windowCase) {
				cleanupTimer(c, 1599, 1999, 2000, 5000)
				c.expect(optest.WM(1599), rec("key2", 1, 1999), optest.WM(1999), optest.WM(2000), optest.WM(5000))
				c.check()
			}, reduceFn)
		},
		"testCleanupTimerWithEmptyListStateForSessionWindows": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), lateness: 10 * time.Millisecond}
			run(t, s, func(t *testing.T, c *windowCase) {
				cleanupTimer(c, 4998)
				c.expect(rec("key2", 1, 3999), optest.WM(4998))
				c.wm(14600)
				c.expect(optest.WM(14600))
				c.check()
			}, passThroughFn)
		},
		"testCleanupTimerWithEmptyReduceStateForSessionWindows": func(t *testing.T) {
			s := spec{assigner: window.EventTimeSession(3 * time.Second), lateness: 10 * time.Millisecond}
			run3(t, s, func(t *testing.T, c *windowCase) {
				cleanupTimer(c, 4998)
				c.expect(rec3("key2-1", 1000, 4000, 3999), optest.WM(4998))
				c.wm(14600)
				c.expect(optest.WM(14600))
				c.check()
			}, reducedSessionFn)
		},
		"testCleanupTimerWithEmptyStateNoResultForTumblingWindows": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(2 * time.Second), trigger: fireEverytime{}, lateness: time.Millisecond}
			run(t, s, func(t *testing.T, c *windowCase) {
				w := window.Window{Start: 0, End: 2000}
				contents := func(want ...tup) {
					t.Helper()
					if got := windowContents(t, c.h, "test_key", w); !slices.Equal(got, want) {
						t.Fatalf("window contents %v, want %v", got, want)
					}
				}
				c.el("test_key", 1, 1000)
				contents(tup{"test_key", 1})
				for _, wm := range []int64{1599, 1699, 1799, 1999} {
					c.wm(wm)
					contents(tup{"test_key", 1})
				}
				c.wm(2000) // the cleanup timer
				contents()
				c.wm(5000)
				contents()
				c.expect(optest.WM(1599), optest.WM(1699), optest.WM(1799), optest.WM(1999), optest.WM(2000), optest.WM(5000))
				c.check()
			}, func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup] {
				// EmptyReturnFunction: emits nothing
				return window.Process(ws, "window", func(*window.Context[tup], string, []tup) error {
					return nil
				}, runtime.UID("window"))
			})
		},
	})
}

// gapOf is the session gap extractor of the dynamic session tests.
func gapOf(e tup) time.Duration {
	switch {
	case e.K == "key1":
		return 3 * time.Second
	case e.K == "key2" && e.V == 10:
		return time.Second
	case e.K == "key2":
		return 2 * time.Second
	}
	return 0
}
