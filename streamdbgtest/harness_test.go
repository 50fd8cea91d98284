package streamdbgtest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rt "streamdbg/runtime"
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
