package runtime_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/state"
)

// processHarness keys int64 records by themselves and runs f on them, as
// Flink's KeyedOneInputStreamOperatorTestHarness with an identity key
// selector.
func processHarness[OUT any](t *testing.T, backend string, f runtime.ProcessFunction[int64, OUT], sides ...string) *optest.Harness[int64] {
	return optest.New(t, optest.Config{Backend: backend}, func(h *optest.Harness[int64], in *runtime.Stream[int64]) {
		keyed := runtime.KeyBy(in, "value", func(v int64) int64 { return v })
		out := runtime.RichProcess(keyed, "process", f, runtime.UID("process"))
		optest.Collect(h, "", out)
		for _, tag := range sides {
			optest.Collect(h, tag, runtime.SideOutput(out, runtime.NewOutputTag[any](tag)))
		}
	})
}

// procFunc makes a plain function a ProcessFunction, for processHarness.
type procFunc[U any] func(*runtime.ProcessContext[U], int64) error

func (f procFunc[U]) ProcessElement(ctx *runtime.ProcessContext[U], v int64) error { return f(ctx, v) }

func tsString(ctx interface{ Timestamp() (int64, bool) }) string {
	if ts, ok := ctx.Timestamp(); ok {
		return fmt.Sprint(ts)
	}
	return "null"
}

// querying emits "<value>TIME:<watermark or processing time> TS:<timestamp>".
type querying struct{ domain runtime.TimeDomain }

func (q querying) ProcessElement(ctx *runtime.ProcessContext[string], v int64) error {
	now := ctx.CurrentWatermark()
	if q.domain == runtime.ProcessingTime {
		now = ctx.CurrentProcessingTime()
	}
	ctx.Collect(fmt.Sprintf("%dTIME:%d TS:%s", v, now, tsString(ctx)))
	return nil
}

func (querying) OnTimer(*runtime.ProcessContext[string], int64, runtime.TimeDomain) error { return nil }

// triggering emits the value and sets a timer 5 ms after the current time;
// the timer emits 1777 after checking its key and domain.
type triggering struct {
	domain runtime.TimeDomain
	key    int64
}

func (f triggering) ProcessElement(ctx *runtime.ProcessContext[int64], v int64) error {
	ctx.Collect(v)
	if f.domain == runtime.EventTime {
		return ctx.RegisterEventTimeTimer(ctx.CurrentWatermark() + 5)
	}
	return ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + 5)
}

func (f triggering) OnTimer(ctx *runtime.ProcessContext[int64], _ int64, d runtime.TimeDomain) error {
	if k := ctx.CurrentKey(); k != f.key {
		return fmt.Errorf("timer of key %v, want %d", k, f.key)
	}
	if d != f.domain {
		return fmt.Errorf("timer in domain %s, want %s", d, f.domain)
	}
	ctx.Collect(1777)
	return nil
}

// stateful keeps the first value per key and sets a timer; the second
// value of a key clears the state and deletes the timer set for the first.
type stateful struct {
	domain runtime.TimeDomain
	seen   *state.ValueState[int64]
}

func (f *stateful) Open(ctx runtime.RuntimeContext) error {
	var err error
	f.seen, err = state.Value("seen-element", state.Int64).Bind(ctx)
	return err
}
func (*stateful) Close() error { return nil }

func (f *stateful) ProcessElement(ctx *runtime.ProcessContext[string], v int64) error {
	_, ok, err := f.seen.Value()
	if err != nil {
		return err
	}
	if !ok {
		ctx.Collect(fmt.Sprintf("INPUT:%d", v))
		if err := f.seen.Update(v); err != nil {
			return err
		}
		if f.domain == runtime.EventTime {
			return ctx.RegisterEventTimeTimer(ctx.CurrentWatermark() + 5)
		}
		return ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + 5)
	}
	if err := f.seen.Clear(); err != nil {
		return err
	}
	if f.domain == runtime.EventTime {
		return ctx.DeleteEventTimeTimer(ctx.CurrentWatermark() + 4)
	}
	return ctx.DeleteProcessingTimeTimer(ctx.CurrentProcessingTime() + 4)
}

func (f *stateful) OnTimer(ctx *runtime.ProcessContext[string], _ int64, d runtime.TimeDomain) error {
	if d != f.domain {
		return fmt.Errorf("timer in domain %s, want %s", d, f.domain)
	}
	v, _, err := f.seen.Value()
	ctx.Collect(fmt.Sprintf("STATE:%d", v))
	return err
}

// bothTriggering sets and deletes timers in both domains.
type bothTriggering struct{ key int64 }

func (bothTriggering) ProcessElement(ctx *runtime.ProcessContext[string], _ int64) error {
	for _, err := range []error{
		ctx.RegisterProcessingTimeTimer(3), ctx.RegisterEventTimeTimer(4),
		ctx.RegisterProcessingTimeTimer(5), ctx.RegisterEventTimeTimer(6),
		ctx.DeleteProcessingTimeTimer(3), ctx.DeleteEventTimeTimer(4),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (f bothTriggering) OnTimer(ctx *runtime.ProcessContext[string], _ int64, d runtime.TimeDomain) error {
	if k := ctx.CurrentKey(); k != f.key {
		return fmt.Errorf("timer of key %v, want %d", k, f.key)
	}
	if d == runtime.EventTime {
		ctx.Collect("EVENT:1777")
	} else {
		ctx.Collect("PROC:1777")
	}
	return nil
}

// TestKeyedProcessOperatorTest ports Flink's KeyedProcessOperatorTest.
func TestKeyedProcessOperatorTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testKeyQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				type pair struct {
					K int64
					V string
				}
				h := optest.New(t, optest.Config{Backend: backend}, func(h *optest.Harness[pair], in *runtime.Stream[pair]) {
					keyed := runtime.KeyBy(in, "k", func(p pair) int64 { return p.K })
					optest.Collect(h, "", runtime.Process(keyed, "process", func(ctx *runtime.ProcessContext[string], p pair) error {
						if k := ctx.CurrentKey(); k != p.K {
							return fmt.Errorf("current key %v, want %d", k, p.K)
						}
						ctx.Collect(p.V)
						return nil
					}, runtime.UID("process")))
				})
				h.ProcessElement(pair{5, "5"}, 12)
				h.ProcessElement(pair{42, "42"}, 13)
				expectOutput(t, h.Output(""), []optest.Element{optest.Rec("5", 12), optest.Rec("42", 13)})
			})
		},
		"testTimestampAndWatermarkQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, querying{runtime.EventTime})
				h.ProcessWatermark(17)
				h.ProcessElement(5, 12)
				h.ProcessWatermark(42)
				h.ProcessElement(6, 13)
				expectOutput(t, h.Output(""), []optest.Element{optest.WM(17), optest.Rec("5TIME:17 TS:12", 12), optest.WM(42), optest.Rec("6TIME:42 TS:13", 13)})
			})
		},
		"testTimestampAndProcessingTimeQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, querying{runtime.ProcessingTime})
				h.SetProcessingTime(17)
				h.ProcessElementNoTS(5)
				h.SetProcessingTime(42)
				h.ProcessElementNoTS(6)
				expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("5TIME:17 TS:null"), optest.RecNoTS("6TIME:42 TS:null")})
			})
		},
		"testEventTimeTimers": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[int64](t, backend, triggering{runtime.EventTime, 17})
				h.ProcessWatermark(0)
				h.ProcessElement(17, 42)
				h.ProcessWatermark(5)
				expectOutput(t, h.Output(""), []optest.Element{optest.WM(0), optest.Rec(int64(17), 42), optest.Rec(int64(1777), 5), optest.WM(5)})
			})
		},
		"testProcessingTimeTimers": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[int64](t, backend, triggering{runtime.ProcessingTime, 17})
				h.ProcessElementNoTS(17)
				h.SetProcessingTime(5)
				expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS(int64(17)), optest.RecNoTS(int64(1777))})
			})
		},
		"testEventTimeTimerWithState": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, &stateful{domain: runtime.EventTime})
				h.ProcessWatermark(1)
				h.ProcessElement(17, 0) // timer for 6
				h.ProcessElement(13, 0) // timer for 6
				h.ProcessWatermark(2)
				h.ProcessElement(42, 1) // timer for 7
				h.ProcessElement(13, 1) // deletes its timer (2 + 4 = 6)
				h.ProcessWatermark(6)
				h.ProcessWatermark(7)
				expectOutput(t, h.Output(""), []optest.Element{optest.WM(1), optest.Rec("INPUT:17", 0), optest.Rec("INPUT:13", 0),
					optest.WM(2), optest.Rec("INPUT:42", 1), optest.Rec("STATE:17", 6), optest.WM(6), optest.Rec("STATE:42", 7), optest.WM(7)})
			})
		},
		"testProcessingTimeTimerWithState": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, &stateful{domain: runtime.ProcessingTime})
				h.SetProcessingTime(1)
				h.ProcessElementNoTS(17) // timer for 6
				h.ProcessElementNoTS(13) // timer for 6
				h.SetProcessingTime(2)
				h.ProcessElementNoTS(13) // deletes its timer (2 + 4 = 6)
				h.ProcessElementNoTS(42) // timer for 7
				h.SetProcessingTime(6)
				h.SetProcessingTime(7)
				expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("INPUT:17"), optest.RecNoTS("INPUT:13"), optest.RecNoTS("INPUT:42"),
					optest.RecNoTS("STATE:17"), optest.RecNoTS("STATE:42")})
			})
		},
		"testSnapshotAndRestore": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, bothTriggering{5})
				h.ProcessElement(5, 12)
				h.Restore(h.Snapshot())
				h.SetProcessingTime(5)
				h.ProcessWatermark(6)
				expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("PROC:1777"), optest.Rec("EVENT:1777", 6), optest.WM(6)})
			})
		},
		"testNullOutputTagRefusal": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, procFunc[string](func(ctx *runtime.ProcessContext[string], v int64) error {
					ctx.Output("", v)
					return nil
				}))
				h.SetProcessingTime(17)
				err := h.TryProcessElement(0, 5, 0, false)
				if err == nil || !strings.Contains(err.Error(), "side output without a tag") {
					t.Fatalf("emitting to the empty tag: error %v, want one about the missing tag", err)
				}
				expectOutput(t, h.Output(""), nil)
			})
		},
		"testSideOutput": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, procFunc[string](func(ctx *runtime.ProcessContext[string], v int64) error {
					ctx.Collect(fmt.Sprintf("IN:%d", v))
					ctx.Output("int-out", v)
					ctx.Output("long-out", float64(v))
					return nil
				}), "int-out", "long-out")
				h.ProcessElement(42, 17)
				expectOutput(t, h.Output(""), []optest.Element{optest.Rec("IN:42", 17)})
				expectOutput(t, h.Output("int-out"), []optest.Element{optest.Rec(int64(42), 17)})
				expectOutput(t, h.Output("long-out"), []optest.Element{optest.Rec(float64(42), 17)})
			})
		},
	})
}

// TestSideOutputWithoutName: a side output stream needs a named tag.
func TestSideOutputWithoutName(t *testing.T) {
	j := runtime.NewJob("j")
	s := runtime.FromSlice(j, "Source: s", []int64{1}, runtime.WatermarkStrategy[int64]{}, runtime.UID("s"))
	runtime.SideOutput(s, runtime.NewOutputTag[int64](""))
	if err := j.Err(); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Fatalf("job error %v, want one saying the tag has no name", err)
	}
}

// TestInternalTimerServiceImplTestClocks ports the two cases of Flink's
// InternalTimerServiceImplTest that read the timer service's clocks: here
// an operator's function reads them after the harness set them.
func TestInternalTimerServiceImplTestClocks(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testCurrentProcessingTime": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, querying{runtime.ProcessingTime})
				h.SetProcessingTime(17)
				h.ProcessElementNoTS(1)
				h.SetProcessingTime(42)
				h.ProcessElementNoTS(1)
				expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("1TIME:17 TS:null"), optest.RecNoTS("1TIME:42 TS:null")})
			})
		},
		"testCurrentEventTime": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := processHarness[string](t, backend, querying{runtime.EventTime})
				h.ProcessWatermark(17)
				h.ProcessElementNoTS(1)
				h.ProcessWatermark(42)
				h.ProcessElementNoTS(1)
				expectOutput(t, h.Output(""), []optest.Element{optest.WM(17), optest.RecNoTS("1TIME:17 TS:null"), optest.WM(42), optest.RecNoTS("1TIME:42 TS:null")})
			})
		},
	})
}

// registerAt sets a processing-time timer at each record's value.
type registerAt struct{}

func (registerAt) ProcessElement(ctx *runtime.ProcessContext[string], v int64) error {
	return ctx.RegisterProcessingTimeTimer(v)
}

func (registerAt) OnTimer(ctx *runtime.ProcessContext[string], ts int64, _ runtime.TimeDomain) error {
	ctx.Collect(fmt.Sprint("fired ", ts))
	return nil
}

// TestPhysicalProcessingTimers: through the executor, an operator keeps one
// physical processing-time timer at its earliest timer, moved earlier by an
// earlier timer, and set again after firing.
func TestPhysicalProcessingTimers(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		h := processHarness[string](t, backend, registerAt{})
		physical := func() []int64 {
			for _, st := range h.Executor().Subtasks() {
				if st.Task.Name == "process -> collect " {
					return st.PhysicalTimers
				}
			}
			t.Fatalf("no process subtask in %s", h.Executor().Plan())
			return nil
		}
		for _, ts := range []int64{20, 30, 20} {
			h.ProcessElementNoTS(ts)
		}
		if got := physical(); !slices.Equal(got, []int64{20}) {
			t.Fatalf("physical timers %v, want [20]", got)
		}
		h.ProcessElementNoTS(10)
		if got := physical(); !slices.Equal(got, []int64{10}) {
			t.Fatalf("after an earlier timer: physical timers %v, want [10]", got)
		}
		h.SetProcessingTime(25)
		if got := physical(); !slices.Equal(got, []int64{30}) {
			t.Fatalf("after firing up to 25: physical timers %v, want [30]", got)
		}
		h.SetProcessingTime(30)
		if got := physical(); len(got) != 0 {
			t.Fatalf("after firing all: physical timers %v, want none", got)
		}
		expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("fired 10"), optest.RecNoTS("fired 20"), optest.RecNoTS("fired 30")})
	})
}

// TestRestoredOperatorsStartAtMinWatermark: as in Flink, a restored
// operator's event time starts at MinWatermark and no watermark is emitted
// again on restore; the next watermark it gets may be lower than the one
// it had before.
func TestRestoredOperatorsStartAtMinWatermark(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		h := processHarness[string](t, backend, querying{runtime.EventTime})
		h.ProcessWatermark(17)
		h.ProcessElement(5, 12)
		h.Restore(h.Snapshot())
		h.ProcessElement(6, 13)
		h.ProcessWatermark(10)
		h.ProcessElement(7, 14)
		expectOutput(t, h.Output(""), []optest.Element{optest.Rec(fmt.Sprintf("6TIME:%d TS:13", runtime.MinWatermark), 13), optest.WM(10), optest.Rec("7TIME:10 TS:14", 14)})
	})
}

// timerContext sets an event-time and a processing-time timer 5 ms ahead;
// each timer reports what its context says and emits to a side output.
type timerContext struct{}

func (timerContext) ProcessElement(ctx *runtime.ProcessContext[string], _ int64) error {
	if err := ctx.RegisterEventTimeTimer(ctx.CurrentWatermark() + 5); err != nil {
		return err
	}
	return ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + 5)
}

func (timerContext) OnTimer(ctx *runtime.ProcessContext[string], ts int64, d runtime.TimeDomain) error {
	ctx.Collect(fmt.Sprintf("%s timer %d key %v TS:%s", d, ts, ctx.CurrentKey(), tsString(ctx)))
	ctx.Output("side", fmt.Sprint(d))
	return nil
}

// TestOnTimerContext: in OnTimer the context's timestamp is the timer's in
// both time domains, and so is the timestamp of side outputs, while the
// main output of a processing-time timer has none: Flink's
// KeyedProcessOperator (onProcessingTime erases the collector's timestamp;
// OnTimerContextImpl.timestamp() and output() use timer.getTimestamp()).
// Before, a processing-time timer's context had no timestamp and its side
// outputs none either.
func TestOnTimerContext(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		h := processHarness[string](t, backend, timerContext{}, "side")
		h.ProcessWatermark(0)
		h.ProcessElement(17, 42)
		h.SetProcessingTime(5)
		h.ProcessWatermark(5)
		expectOutput(t, h.Output(""), []optest.Element{optest.WM(0),
			optest.RecNoTS("processing timer 5 key 17 TS:5"),
			optest.Rec("event timer 5 key 17 TS:5", 5), optest.WM(5)})
		expectOutput(t, records(h.Output("side")), []optest.Element{optest.Rec("processing", 5), optest.Rec("event", 5)})
	})
}

// TestProcessingTimeTimerInThePast: a processing-time timer for a time
// that already passed fires as soon as the element that set it is done,
// before the next element; one for the current time fires when the clock
// moves (Flink's ProcessingTimeServiceUtil.getProcessingTimeDelay: no
// delay for a past time, 1 ms for the current one). Before, a past timer
// waited for the clock to move.
func TestProcessingTimeTimerInThePast(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		h := processHarness[string](t, backend, pastTimers{})
		h.SetProcessingTime(100)
		h.ProcessElementNoTS(-10) // timer at 90
		h.ProcessElementNoTS(0)   // timer at 100
		h.ProcessElementNoTS(-20) // timer at 80
		want := []optest.Element{
			optest.RecNoTS("element -10"), optest.RecNoTS("fired 90 at 100"),
			optest.RecNoTS("element 0"),
			optest.RecNoTS("element -20"), optest.RecNoTS("fired 80 at 100"),
		}
		expectOutput(t, h.Output(""), want)
		h.SetProcessingTime(101)
		expectOutput(t, h.Output(""), append(want, optest.RecNoTS("fired 100 at 101")))
	})
}

// pastTimers sets a processing-time timer at the current time plus the
// record's value.
type pastTimers struct{}

func (pastTimers) ProcessElement(ctx *runtime.ProcessContext[string], v int64) error {
	ctx.Collect(fmt.Sprint("element ", v))
	return ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + v)
}

func (pastTimers) OnTimer(ctx *runtime.ProcessContext[string], ts int64, _ runtime.TimeDomain) error {
	ctx.Collect(fmt.Sprintf("fired %d at %d", ts, ctx.CurrentProcessingTime()))
	return nil
}

// records drops the watermarks and statuses of an output.
func records(es []optest.Element) []optest.Element {
	var out []optest.Element
	for _, e := range es {
		if e.Kind == optest.Record {
			out = append(out, e)
		}
	}
	return out
}
