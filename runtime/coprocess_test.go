package runtime_test

import (
	"fmt"
	"strconv"
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/state"
)

// coHarness runs one two-input operator over inputs of ints and strings,
// collecting its main output.
func coHarness(t *testing.T, backend string, build func(in1 *runtime.Stream[int], in2 *runtime.Stream[string]) *runtime.Stream[string]) *optest.Harness2[int, string] {
	return optest.New2(t, optest.Config2{Backend: backend}, func(h *optest.Harness2[int, string], in1 *runtime.Stream[int], in2 *runtime.Stream[string]) {
		optest.Collect2(h, "", build(in1, in2))
	})
}

// keyedCo connects the inputs keyed as Flink's KeyedCoProcessOperatorTest
// does: the ints by their decimal string, the strings by themselves.
func keyedCo(in1 *runtime.Stream[int], in2 *runtime.Stream[string]) *runtime.ConnectedStreams[int, string] {
	return runtime.Connect(
		runtime.KeyBy(in1, "string(value)", func(v int) string { return strconv.Itoa(v) }),
		runtime.KeyBy(in2, "value", func(v string) string { return v }))
}

// coWatermarkQuerying is WatermarkQueryingProcessFunction of both tests.
type coWatermarkQuerying struct{}

func (coWatermarkQuerying) ProcessElement1(ctx *runtime.ProcessContext[string], v int) error {
	ctx.Collect(fmt.Sprintf("%dWM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

func (coWatermarkQuerying) ProcessElement2(ctx *runtime.ProcessContext[string], v string) error {
	ctx.Collect(fmt.Sprintf("%sWM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

// coProcessingTimeQuerying is ProcessingTimeQueryingProcessFunction.
type coProcessingTimeQuerying struct{}

func (coProcessingTimeQuerying) ProcessElement1(ctx *runtime.ProcessContext[string], v int) error {
	ctx.Collect(fmt.Sprintf("%dPT:%d TS:%s", v, ctx.CurrentProcessingTime(), tsString(ctx)))
	return nil
}

func (coProcessingTimeQuerying) ProcessElement2(ctx *runtime.ProcessContext[string], v string) error {
	ctx.Collect(fmt.Sprintf("%sPT:%d TS:%s", v, ctx.CurrentProcessingTime(), tsString(ctx)))
	return nil
}

func coTimestampAndWatermarkQuerying(t *testing.T, h *optest.Harness2[int, string]) {
	h.ProcessWatermark1(17)
	h.ProcessWatermark2(17)
	h.ProcessElement1(5, 12)
	h.ProcessWatermark1(42)
	h.ProcessWatermark2(42)
	h.ProcessElement2("6", 13)
	expectOutput(t, h.Output(""), []optest.Element{
		optest.WM(17), optest.Rec("5WM:17 TS:12", 12), optest.WM(42), optest.Rec("6WM:42 TS:13", 13)})
}

func coTimestampAndProcessingTimeQuerying(t *testing.T, h *optest.Harness2[int, string]) {
	h.SetProcessingTime(17)
	h.ProcessElement1NoTS(5)
	h.SetProcessingTime(42)
	h.ProcessElement2NoTS("6")
	expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("5PT:17 TS:null"), optest.RecNoTS("6PT:42 TS:null")})
}

// TestCoProcessOperatorTest ports Flink's CoProcessOperatorTest: a
// CoProcessFunction on two inputs that are not keyed.
func TestCoProcessOperatorTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testTimestampAndWatermarkQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := coHarness(t, backend, func(in1 *runtime.Stream[int], in2 *runtime.Stream[string]) *runtime.Stream[string] {
					return runtime.CoProcess(runtime.Connect(in1, in2), "co-process", runtime.CoProcessFunction[int, string, string](coWatermarkQuerying{}), runtime.UID("co"))
				})
				coTimestampAndWatermarkQuerying(t, h)
			})
		},
		"testTimestampAndProcessingTimeQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := coHarness(t, backend, func(in1 *runtime.Stream[int], in2 *runtime.Stream[string]) *runtime.Stream[string] {
					return runtime.CoProcess(runtime.Connect(in1, in2), "co-process", runtime.CoProcessFunction[int, string, string](coProcessingTimeQuerying{}), runtime.UID("co"))
				})
				coTimestampAndProcessingTimeQuerying(t, h)
			})
		},
	})
}

// coKeyedAdapter runs a CoProcessFunction-shaped test function as a
// KeyedCoProcessFunction.
type coKeyedAdapter struct {
	f runtime.CoProcessFunction[int, string, string]
}

func (a coKeyedAdapter) ProcessElement1(ctx *runtime.KeyedProcessContext[string, string], v int) error {
	return a.f.ProcessElement1(&ctx.ProcessContext, v)
}

func (a coKeyedAdapter) ProcessElement2(ctx *runtime.KeyedProcessContext[string, string], v string) error {
	return a.f.ProcessElement2(&ctx.ProcessContext, v)
}

// coEventTimeTriggering is EventTimeTriggeringProcessFunction.
type coEventTimeTriggering struct{}

func (coEventTimeTriggering) ProcessElement1(ctx *runtime.KeyedProcessContext[string, string], v int) error {
	ctx.Collect(fmt.Sprintf("INPUT1:%d", v))
	return ctx.RegisterEventTimeTimer(5)
}

func (coEventTimeTriggering) ProcessElement2(ctx *runtime.KeyedProcessContext[string, string], v string) error {
	ctx.Collect("INPUT2:" + v)
	return ctx.RegisterEventTimeTimer(6)
}

func (coEventTimeTriggering) OnTimer(ctx *runtime.KeyedProcessContext[string, string], ts int64, d runtime.TimeDomain) error {
	if d != runtime.EventTime {
		return fmt.Errorf("timer domain %s, want event", d)
	}
	ctx.Collect(ctx.CurrentKey() + ":1777")
	return nil
}

// coProcessingTimeTriggering is ProcessingTimeTriggeringProcessFunction.
type coProcessingTimeTriggering struct{}

func (coProcessingTimeTriggering) ProcessElement1(ctx *runtime.KeyedProcessContext[string, string], v int) error {
	ctx.Collect(fmt.Sprintf("INPUT1:%d", v))
	return ctx.RegisterProcessingTimeTimer(5)
}

func (coProcessingTimeTriggering) ProcessElement2(ctx *runtime.KeyedProcessContext[string, string], v string) error {
	ctx.Collect("INPUT2:" + v)
	return ctx.RegisterProcessingTimeTimer(6)
}

func (coProcessingTimeTriggering) OnTimer(ctx *runtime.KeyedProcessContext[string, string], ts int64, d runtime.TimeDomain) error {
	if d != runtime.ProcessingTime {
		return fmt.Errorf("timer domain %s, want processing", d)
	}
	ctx.Collect("1777")
	return nil
}

// coTimerTriggeringStateful is (Event|Processing)TimeTriggeringStatefulProcessFunction.
type coTimerTriggeringStateful struct {
	domain runtime.TimeDomain
	seen   *state.ValueState[string]
}

func (f *coTimerTriggeringStateful) Open(ctx runtime.RuntimeContext) error {
	var err error
	f.seen, err = state.Value("seen-element", state.String).Bind(ctx)
	return err
}

func (f *coTimerTriggeringStateful) Close() error { return nil }

func (f *coTimerTriggeringStateful) handle(ctx *runtime.KeyedProcessContext[string, string], value string, channel int) error {
	_, ok, err := f.seen.Value()
	if err != nil {
		return err
	}
	now := ctx.CurrentWatermark()
	register, remove := ctx.RegisterEventTimeTimer, ctx.DeleteEventTimeTimer
	if f.domain == runtime.ProcessingTime {
		now = ctx.CurrentProcessingTime()
		register, remove = ctx.RegisterProcessingTimeTimer, ctx.DeleteProcessingTimeTimer
	}
	if !ok {
		ctx.Collect(fmt.Sprintf("INPUT%d:%s", channel, value))
		if err := f.seen.Update(value); err != nil {
			return err
		}
		return register(now + 5)
	}
	if err := f.seen.Clear(); err != nil {
		return err
	}
	return remove(now + 4)
}

func (f *coTimerTriggeringStateful) ProcessElement1(ctx *runtime.KeyedProcessContext[string, string], v int) error {
	return f.handle(ctx, strconv.Itoa(v), 1)
}

func (f *coTimerTriggeringStateful) ProcessElement2(ctx *runtime.KeyedProcessContext[string, string], v string) error {
	return f.handle(ctx, v, 2)
}

func (f *coTimerTriggeringStateful) OnTimer(ctx *runtime.KeyedProcessContext[string, string], ts int64, d runtime.TimeDomain) error {
	if d != f.domain {
		return fmt.Errorf("timer domain %s, want %s", d, f.domain)
	}
	v, _, err := f.seen.Value()
	if err != nil {
		return err
	}
	ctx.Collect("STATE:" + v)
	return nil
}

// coBothTriggering is BothTriggeringProcessFunction.
type coBothTriggering struct{}

func (coBothTriggering) ProcessElement1(ctx *runtime.KeyedProcessContext[string, string], v int) error {
	if err := ctx.RegisterProcessingTimeTimer(3); err != nil {
		return err
	}
	if err := ctx.RegisterEventTimeTimer(6); err != nil {
		return err
	}
	return ctx.DeleteProcessingTimeTimer(3)
}

func (coBothTriggering) ProcessElement2(ctx *runtime.KeyedProcessContext[string, string], v string) error {
	if err := ctx.RegisterEventTimeTimer(4); err != nil {
		return err
	}
	if err := ctx.RegisterProcessingTimeTimer(5); err != nil {
		return err
	}
	return ctx.DeleteEventTimeTimer(4)
}

func (coBothTriggering) OnTimer(ctx *runtime.KeyedProcessContext[string, string], ts int64, d runtime.TimeDomain) error {
	if d == runtime.EventTime {
		ctx.Collect("EVENT:1777")
	} else {
		ctx.Collect("PROC:1777")
	}
	return nil
}

// coAppendCurrentKey is AppendCurrentKeyProcessFunction.
type coAppendCurrentKey struct{}

func (coAppendCurrentKey) ProcessElement1(ctx *runtime.KeyedProcessContext[string, string], v int) error {
	ctx.Collect(fmt.Sprintf("%d,%s", v, ctx.CurrentKey()))
	return nil
}

func (coAppendCurrentKey) ProcessElement2(ctx *runtime.KeyedProcessContext[string, string], v string) error {
	ctx.Collect(v + "," + ctx.CurrentKey())
	return nil
}

func keyedCoHarness(t *testing.T, backend string, f runtime.KeyedCoProcessFunction[string, int, string, string]) *optest.Harness2[int, string] {
	return coHarness(t, backend, func(in1 *runtime.Stream[int], in2 *runtime.Stream[string]) *runtime.Stream[string] {
		return runtime.KeyedCoProcess(keyedCo(in1, in2), "keyed-co-process", f, runtime.UID("co"))
	})
}

// TestKeyedCoProcessOperatorTest ports Flink's KeyedCoProcessOperatorTest:
// a KeyedCoProcessFunction over ints keyed by their decimal string and
// strings keyed by themselves.
func TestKeyedCoProcessOperatorTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testTimestampAndWatermarkQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				coTimestampAndWatermarkQuerying(t, keyedCoHarness(t, backend, coKeyedAdapter{coWatermarkQuerying{}}))
			})
		},
		"testTimestampAndProcessingTimeQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				coTimestampAndProcessingTimeQuerying(t, keyedCoHarness(t, backend, coKeyedAdapter{coProcessingTimeQuerying{}}))
			})
		},
		"testEventTimeTimers": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedCoHarness(t, backend, coEventTimeTriggering{})
				h.ProcessElement1(17, 42)
				h.ProcessElement2("18", 42)
				h.ProcessWatermark1(5)
				h.ProcessWatermark2(5)
				h.ProcessWatermark1(6)
				h.ProcessWatermark2(6)
				expectOutput(t, h.Output(""), []optest.Element{
					optest.Rec("INPUT1:17", 42), optest.Rec("INPUT2:18", 42),
					optest.Rec("17:1777", 5), optest.WM(5), optest.Rec("18:1777", 6), optest.WM(6)})
			})
		},
		"testProcessingTimeTimers": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedCoHarness(t, backend, coProcessingTimeTriggering{})
				h.ProcessElement1NoTS(17)
				h.ProcessElement2NoTS("18")
				h.SetProcessingTime(5)
				h.SetProcessingTime(6)
				expectOutput(t, h.Output(""), []optest.Element{
					optest.RecNoTS("INPUT1:17"), optest.RecNoTS("INPUT2:18"), optest.RecNoTS("1777"), optest.RecNoTS("1777")})
			})
		},
		// Verifies that there is no leakage between different keys.
		"testEventTimeTimerWithState": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedCoHarness(t, backend, &coTimerTriggeringStateful{domain: runtime.EventTime})
				h.ProcessWatermark1(1)
				h.ProcessWatermark2(1)
				h.ProcessElement1(17, 0) // sets a timer for 6
				h.ProcessElement1(13, 0) // sets a timer for 6
				h.ProcessWatermark1(2)
				h.ProcessWatermark2(2)
				h.ProcessElement1(13, 1)   // deletes the timer
				h.ProcessElement2("42", 1) // sets a timer for 7
				h.ProcessWatermark1(6)
				h.ProcessWatermark2(6)
				h.ProcessWatermark1(7)
				h.ProcessWatermark2(7)
				expectOutput(t, h.Output(""), []optest.Element{
					optest.WM(1), optest.Rec("INPUT1:17", 0), optest.Rec("INPUT1:13", 0), optest.WM(2),
					optest.Rec("INPUT2:42", 1), optest.Rec("STATE:17", 6), optest.WM(6), optest.Rec("STATE:42", 7), optest.WM(7)})
			})
		},
		// Verifies that there is no leakage between different keys.
		"testProcessingTimeTimerWithState": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedCoHarness(t, backend, &coTimerTriggeringStateful{domain: runtime.ProcessingTime})
				h.SetProcessingTime(1)
				h.ProcessElement1NoTS(17) // sets a timer for 6
				h.ProcessElement1NoTS(13) // sets a timer for 6
				h.SetProcessingTime(2)
				h.ProcessElement1NoTS(13)   // deletes the timer again
				h.ProcessElement2NoTS("42") // sets a timer for 7
				h.SetProcessingTime(6)
				h.SetProcessingTime(7)
				expectOutput(t, h.Output(""), []optest.Element{
					optest.RecNoTS("INPUT1:17"), optest.RecNoTS("INPUT1:13"), optest.RecNoTS("INPUT2:42"),
					optest.RecNoTS("STATE:17"), optest.RecNoTS("STATE:42")})
			})
		},
		"testSnapshotAndRestore": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedCoHarness(t, backend, coBothTriggering{})
				h.ProcessElement1(5, 12)
				h.ProcessElement2("5", 12)
				// snapshot and restore from scratch
				h.Restore(h.Snapshot(), 0)
				h.SetProcessingTime(5)
				h.ProcessWatermark1(6)
				h.ProcessWatermark2(6)
				expectOutput(t, h.Output(""), []optest.Element{optest.RecNoTS("PROC:1777"), optest.Rec("EVENT:1777", 6), optest.WM(6)})
			})
		},
		"testGetCurrentKeyFromContext": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedCoHarness(t, backend, coAppendCurrentKey{})
				h.ProcessElement1NoTS(5)
				h.ProcessElement1NoTS(6)
				h.ProcessElement2NoTS("hello")
				h.ProcessElement2NoTS("world")
				expectOutput(t, h.Output(""), []optest.Element{
					optest.RecNoTS("5,5"), optest.RecNoTS("6,6"), optest.RecNoTS("hello,hello"), optest.RecNoTS("world,world")})
			})
		},
	})
}
