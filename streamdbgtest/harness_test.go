package streamdbgtest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rt "streamdbg/runtime"
	"streamdbg/runtime/window"
	"streamdbg/state"
	"streamdbg/streamdbgtest"
)

// Reading is a sensor reading.
type Reading struct {
	Sensor string
	Value  int64
	TS     int64
}

// alarm keeps the highest value per sensor; a reading sets an event-time
// timer 10 ms after it and a processing-time timer 100 ms after now.
// At the event-time timer it emits "max <sensor> <value> @<ts>", at the
// processing-time one "tick <sensor> @<ts>" and clears the state.
type alarm struct {
	max *state.ValueState[int64]
}

func (a *alarm) Open(ctx rt.RuntimeContext) (err error) {
	a.max, err = state.Value("max", state.Int64).Bind(ctx)
	return err
}

func (a *alarm) Close() error { return nil }

func (a *alarm) ProcessElement(ctx *rt.ProcessContext[string], r Reading) error {
	m, ok, err := a.max.Value()
	if err != nil {
		return err
	}
	if !ok || r.Value > m {
		if err := a.max.Update(r.Value); err != nil {
			return err
		}
	}
	ts, _ := ctx.Timestamp()
	if err := ctx.RegisterEventTimeTimer(ts + 10); err != nil {
		return err
	}
	return ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + 100)
}

func (a *alarm) OnTimer(ctx *rt.ProcessContext[string], ts int64, d rt.TimeDomain) error {
	if d == rt.ProcessingTime {
		ctx.Collect(fmt.Sprintf("tick %v @%d", ctx.CurrentKey(), ts))
		return a.max.Clear()
	}
	m, _, err := a.max.Value()
	if err != nil {
		return err
	}
	ctx.Collect(fmt.Sprintf("max %v %d @%d", ctx.CurrentKey(), m, ts))
	return nil
}

func alarmHarness(t *testing.T, opts ...streamdbgtest.Option) *streamdbgtest.Harness[string, Reading, string] {
	return streamdbgtest.Keyed(t, func(in *rt.KeyedStream[string, Reading]) *rt.Stream[string] {
		return rt.RichProcess(in, "alarm", &alarm{}, rt.UID("alarm"))
	}, func(r Reading) string { return r.Sensor }, opts...)
}

// TestKeyedHarnessTimers: one keyed function without a job: records with
// timestamps, its timers listed, event-time timers fired by a watermark,
// processing-time ones by the clock, state read back; and the same after a
// snapshot restored at another parallelism.
func TestKeyedHarnessTimers(t *testing.T) {
	h := alarmHarness(t)
	h.PushAt(Reading{"s1", 5, 100}, 100)
	h.PushAt(Reading{"s2", 7, 103}, 103)
	h.PushAt(Reading{"s1", 3, 104}, 104)
	if got := h.ReadAll(); len(got) != 0 {
		t.Fatalf("output before any timer: %v", got)
	}
	want := []streamdbgtest.Timer{
		{Key: "s1", Domain: rt.EventTime, Timestamp: 110},
		{Key: "s2", Domain: rt.EventTime, Timestamp: 113},
		{Key: "s1", Domain: rt.EventTime, Timestamp: 114},
		{Key: "s1", Domain: rt.ProcessingTime, Timestamp: 100},
		{Key: "s2", Domain: rt.ProcessingTime, Timestamp: 100},
	}
	if got := h.Timers(); !slices.Equal(got, want) {
		t.Fatalf("timers %v, want %v", got, want)
	}
	if m, ok := streamdbgtest.ValueState[int64](h.Driver, h.Operator, "max").Get("s1"); !ok || m != 5 {
		t.Fatalf("max of s1: %d %v", m, ok)
	}

	h.Watermark(112)
	if got, want := h.ReadRecords(), []streamdbgtest.Record[string]{streamdbgtest.At("max s1 5 @110", 110)}; !slices.Equal(got, want) {
		t.Fatalf("after watermark 112: %+v, want %+v", got, want)
	}
	snap := h.Snapshot()

	h.AdvanceProcessingTime(100 * time.Millisecond)
	if got, want := h.ReadRecords(), []streamdbgtest.Record[string]{{Value: "tick s1 @100"}, {Value: "tick s2 @100"}}; !slices.Equal(got, want) {
		t.Fatalf("after processing time 100: %+v, want %+v", got, want)
	}
	if _, ok := streamdbgtest.ValueState[int64](h.Driver, h.Operator, "max").Get("s1"); ok {
		t.Fatal("the processing-time timer did not clear max")
	}

	// From the snapshot, at parallelism 3: the timers and state came along
	// and fire as they would have.
	r := h.Restore(snap, 3)
	if got := r.Timers(); len(got) != 4 || got[0].Timestamp != 113 {
		t.Fatalf("restored timers %v, want 4 from event time 113", got)
	}
	if m, ok := streamdbgtest.ValueState[int64](r.Driver, r.Operator, "max").Get("s2"); !ok || m != 7 {
		t.Fatalf("restored max of s2: %d %v", m, ok)
	}
	r.Watermark(200)
	r.AdvanceProcessingTime(100 * time.Millisecond)
	r.Out.ExpectAnyOrder("max s2 7 @113", "max s1 5 @114", "tick s1 @100", "tick s2 @100")
	if got := r.Timers(); len(got) != 0 {
		t.Fatalf("timers left: %v", got)
	}
}

// TestHarnessWrongStateType: the harness's readers check types
// as the driver's do.
func TestHarnessWrongStateType(t *testing.T) {
	msg := fatal(t, func(ft testing.TB) {
		h := streamdbgtest.Keyed(ft, func(in *rt.KeyedStream[string, Reading]) *rt.Stream[string] {
			return rt.RichProcess(in, "alarm", &alarm{}, rt.UID("alarm"))
		}, func(r Reading) string { return r.Sensor })
		h.Push(Reading{Sensor: "s"})
		streamdbgtest.ValueState[float64](h.Driver, h.Operator, "max").Get("s")
	})
	if want := `state "max" of "alarm" holds int64, not float64`; !strings.Contains(msg, want) {
		t.Fatalf("%q does not say %q", msg, want)
	}
}

// TestWindowStateIn: a window's state is read in its window with In;
// read without one, the reader fails naming the namespace instead of
// finding nothing (before: Get said the key had no state, while the window
// held its readings).
func TestWindowStateIn(t *testing.T) {
	h := streamdbgtest.Keyed(t, func(in *rt.KeyedStream[string, Reading]) *rt.Stream[Reading] {
		return window.Reduce(window.Of(in, window.TumblingEventTime(10*time.Millisecond)), "max",
			func(a, b Reading) Reading {
				if b.Value > a.Value {
					return b
				}
				return a
			}, rt.UID("max"))
	}, func(r Reading) string { return r.Sensor })
	h.PushAt(Reading{"s1", 5, 1}, 1)
	h.PushAt(Reading{"s1", 9, 4}, 4)
	h.PushAt(Reading{"s1", 2, 12}, 12)
	if got, want := h.Timers()[0].String(), "event timer of s1 in "+(state.Window{Start: 0, End: 10}).String()+" at 9"; got != want {
		t.Errorf("timer %q, want %q (with its window)", got, want)
	}
	contents := streamdbgtest.ValueState[Reading](h.Driver, h.Operator, window.ContentsState)
	if got, ok := contents.In(state.Window{Start: 0, End: 10}).Get("s1"); !ok || got != (Reading{"s1", 9, 4}) {
		t.Fatalf("window [0, 10) of s1: %v %v, want the reading of 9", got, ok)
	}
	if got, ok := contents.In(state.Window{Start: 10, End: 20}).Get("s1"); !ok || got != (Reading{"s1", 2, 12}) {
		t.Fatalf("window [10, 20) of s1: %v %v", got, ok)
	}
	if _, ok := contents.In(state.Window{Start: 20, End: 30}).Get("s1"); ok {
		t.Fatal("window [20, 30) of s1 has state")
	}
	h.Watermark(9)
	if _, ok := contents.In(state.Window{Start: 0, End: 10}).Get("s1"); ok {
		t.Fatal("window [0, 10) kept its state after it fired")
	}

	for _, c := range []struct {
		name string
		body func(h *streamdbgtest.Harness[string, Reading, Reading])
		want string
	}{
		{"no In", func(h *streamdbgtest.Harness[string, Reading, Reading]) {
			streamdbgtest.ValueState[Reading](h.Driver, h.Operator, window.ContentsState).Get("s1")
		}, `state "window-contents" of "max" is kept per namespace (window): name one with In, e.g. .In(state.Window{Start: …, End: …})`},
		{"wrong namespace type", func(h *streamdbgtest.Harness[string, Reading, Reading]) {
			streamdbgtest.ValueState[Reading](h.Driver, h.Operator, window.ContentsState).In(int64(0)).Get("s1")
		}, `the namespace is a int64; state "window-contents" of "max" is kept per state.Window`},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := fatal(t, func(ft testing.TB) {
				h := streamdbgtest.Keyed(ft, func(in *rt.KeyedStream[string, Reading]) *rt.Stream[Reading] {
					return window.Reduce(window.Of(in, window.TumblingEventTime(10*time.Millisecond)), "max",
						func(a, b Reading) Reading { return a }, rt.UID("max"))
				}, func(r Reading) string { return r.Sensor })
				h.PushAt(Reading{"s1", 5, 1}, 1)
				c.body(h)
			})
			if !strings.Contains(msg, c.want) {
				t.Fatalf("%q does not say %q", msg, c.want)
			}
		})
	}
	msg := fatal(t, func(ft testing.TB) {
		h := streamdbgtest.Keyed(ft, func(in *rt.KeyedStream[string, Reading]) *rt.Stream[string] {
			return rt.RichProcess(in, "alarm", &alarm{}, rt.UID("alarm"))
		}, func(r Reading) string { return r.Sensor })
		h.PushAt(Reading{"s1", 5, 1}, 1)
		streamdbgtest.ValueState[int64](h.Driver, h.Operator, "max").In(state.Window{}).Get("s1")
	})
	if want := `state "max" of "alarm" has no namespaces; read it without In`; !strings.Contains(msg, want) {
		t.Fatalf("%q does not say %q", msg, want)
	}
}
