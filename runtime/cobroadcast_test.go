package runtime_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/state"
)

// broadcastState is STATE_DESCRIPTOR of both Flink tests.
var broadcastState = state.Map("broadcast-state", state.String, state.Int64)

// broadcastStateA is CoBroadcastWithNonKeyedOperatorTest's STATE_DESCRIPTOR_A.
var broadcastStateA = state.Map("broadcast-state-A", state.Int64, state.String)

var (
	brTag    = runtime.NewOutputTag[string]("br-out")
	nonBrTag = runtime.NewOutputTag[string]("non-br-out")
)

// keysToRegister is the keysToRegister set of the tests.
var keysToRegister = []string{"test1", "test2", "test3"}

// keyedBroadcastHarness connects input 1 keyed by key to input 2 broadcast
// with the broadcast states, as Flink's KeyedTwoInputStreamOperatorTestHarness
// around a CoBroadcastWithKeyedOperator; it collects the main output and
// both side outputs.
func keyedBroadcastHarness[IN1, IN2 any](t *testing.T, cfg optest.Config2, key func(IN1) string, f runtime.KeyedBroadcastProcessFunction[string, IN1, IN2, string], states ...runtime.StateDescriber) *optest.Harness2[IN1, IN2] {
	return optest.New2(t, cfg, func(h *optest.Harness2[IN1, IN2], in1 *runtime.Stream[IN1], in2 *runtime.Stream[IN2]) {
		out := runtime.KeyedBroadcastProcess(runtime.Connect(runtime.KeyBy(in1, "key", key), runtime.Broadcast(in2, states...)),
			"co-broadcast", f, runtime.UID("co-broadcast"))
		optest.Collect2(h, "", out)
		optest.Collect2(h, brTag.ID, runtime.SideOutput(out, brTag))
		optest.Collect2(h, nonBrTag.ID, runtime.SideOutput(out, nonBrTag))
	})
}

func broadcastHarness[IN1, IN2 any](t *testing.T, cfg optest.Config2, f runtime.BroadcastProcessFunction[IN1, IN2, string], states ...runtime.StateDescriber) *optest.Harness2[IN1, IN2] {
	return optest.New2(t, cfg, func(h *optest.Harness2[IN1, IN2], in1 *runtime.Stream[IN1], in2 *runtime.Stream[IN2]) {
		out := runtime.BroadcastProcess(runtime.Connect(in1, runtime.Broadcast(in2, states...)), "co-broadcast", f, runtime.UID("co-broadcast"))
		optest.Collect2(h, "", out)
		optest.Collect2(h, brTag.ID, runtime.SideOutput(out, brTag))
		optest.Collect2(h, nonBrTag.ID, runtime.SideOutput(out, nonBrTag))
	})
}

func identityKey(s string) string { return s }

// keyValue is Tuple2<Integer, String> of testKeyQuerying.
type keyValue struct {
	F0 int64
	F1 string
}

type keyQuerying struct{}

func (keyQuerying) ProcessElement(ctx *runtime.KeyedReadOnlyBroadcastContext[int64, string], v keyValue) error {
	if k := ctx.CurrentKey(); k != v.F0 {
		return fmt.Errorf("current key %d, want %d", k, v.F0)
	}
	// the output shows the check above ran
	ctx.Collect(v.F1)
	return nil
}

func (keyQuerying) ProcessBroadcastElement(*runtime.KeyedBroadcastContext[int64, string], string) error {
	return nil
}

// statefulKeyedStateOnBroadcast is StatefulFunctionWithKeyedStateAccessedOnBroadcast.
type statefulKeyedStateOnBroadcast struct {
	expected map[string][]string
	list     *state.ListState[string]
	applied  *[]string
}

var listStateTest = state.List("listStateTest", state.String)

func (f *statefulKeyedStateOnBroadcast) Open(ctx runtime.RuntimeContext) error {
	var err error
	f.list, err = listStateTest.Bind(ctx)
	return err
}

func (f *statefulKeyedStateOnBroadcast) Close() error { return nil }

func (f *statefulKeyedStateOnBroadcast) ProcessElement(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], v string) error {
	return f.list.Add(v)
}

func (f *statefulKeyedStateOnBroadcast) ProcessBroadcastElement(ctx *runtime.KeyedBroadcastContext[string, string], v int64) error {
	return ctx.ApplyToKeyedState(listStateTest, func(key string) error {
		got, err := f.list.Get()
		if err != nil {
			return err
		}
		if !slices.Equal(got, f.expected[key]) {
			return fmt.Errorf("key %s: list state %v, want %v", key, got, f.expected[key])
		}
		*f.applied = append(*f.applied, key)
		return nil
	})
}

// functionWithTimerOnKeyed is FunctionWithTimerOnKeyed.
type functionWithTimerOnKeyed struct {
	timerTS     int64
	expectedKey string
}

func (f functionWithTimerOnKeyed) ProcessBroadcastElement(ctx *runtime.KeyedBroadcastContext[string, string], v int64) error {
	ctx.Collect(fmt.Sprintf("BR:%d WM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

func (f functionWithTimerOnKeyed) ProcessElement(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], v string) error {
	if err := ctx.RegisterEventTimeTimer(f.timerTS); err != nil {
		return err
	}
	ctx.Collect(fmt.Sprintf("NON-BR:%s WM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

func (f functionWithTimerOnKeyed) OnTimer(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], ts int64, _ runtime.TimeDomain) error {
	if k := ctx.CurrentKey(); k != f.expectedKey {
		return fmt.Errorf("timer key %q, want %q", k, f.expectedKey)
	}
	ctx.Collect(fmt.Sprintf("TIMER:%d", ts))
	return nil
}

// keyedFunctionWithSideOutput is the keyed FunctionWithSideOutput.
type keyedFunctionWithSideOutput struct{}

func (keyedFunctionWithSideOutput) ProcessBroadcastElement(ctx *runtime.KeyedBroadcastContext[string, string], v int64) error {
	ctx.Output(brTag.ID, fmt.Sprintf("BR:%d WM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

func (keyedFunctionWithSideOutput) ProcessElement(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], v string) error {
	ctx.Output(nonBrTag.ID, fmt.Sprintf("NON-BR:%s WM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

// mapToString is the tests' mapToString: entries sorted by key, then value.
func mapToString(entries map[string]int64) string {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, entries[k])
	}
	return b.String()
}

func broadcastEntries(s state.ReadOnlyBroadcastState[string, int64]) (map[string]int64, error) {
	m := map[string]int64{}
	err := s.Range(func(k string, v int64) bool { m[k] = v; return true })
	return m, err
}

// functionWithBroadcastState is FunctionWithBroadcastState.
type functionWithBroadcastState struct {
	keyPostfix  string
	expected    map[string]int64
	timerTS     int64
	expectedKey string
}

func (f functionWithBroadcastState) ProcessBroadcastElement(ctx *runtime.KeyedBroadcastContext[string, string], v int64) error {
	s, err := runtime.BroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	s.Put(fmt.Sprintf("%d.%s", v, f.keyPostfix), v)
	return nil
}

func (f functionWithBroadcastState) ProcessElement(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], v string) error {
	s, err := runtime.ReadOnlyBroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	got, err := broadcastEntries(s)
	if err != nil {
		return err
	}
	if len(got) != len(f.expected) {
		return fmt.Errorf("broadcast state has %d entries, want %d", len(got), len(f.expected))
	}
	for k, v := range got {
		if w, ok := f.expected[k]; !ok || w != v {
			return fmt.Errorf("broadcast state entry %s=%d not expected", k, v)
		}
	}
	return ctx.RegisterEventTimeTimer(f.timerTS)
}

func (f functionWithBroadcastState) OnTimer(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], ts int64, _ runtime.TimeDomain) error {
	s, err := runtime.ReadOnlyBroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	got, err := broadcastEntries(s)
	if err != nil {
		return err
	}
	if k := ctx.CurrentKey(); k != f.expectedKey {
		return fmt.Errorf("timer key %q, want %q", k, f.expectedKey)
	}
	ctx.Collect(fmt.Sprintf("TS:%d %s", ts, mapToString(got)))
	return nil
}

// putAll puts value under every key to register, as TestFunctionWithOutput
// and TestFunction do on the broadcast side.
func putAll(ctx runtime.BroadcastStateWriter, v int64) error {
	s, err := runtime.BroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	for _, k := range keysToRegister {
		s.Put(k, v)
	}
	return nil
}

// collectEntries emits every entry as Java's Map.Entry.toString ("k=v").
func collectEntries(ctx runtime.BroadcastStateReader, collect func(string)) error {
	s, err := runtime.ReadOnlyBroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	return s.Range(func(k string, v int64) bool {
		collect(fmt.Sprintf("%s=%d", k, v))
		return true
	})
}

// keyedTestFunctionWithOutput is the keyed TestFunctionWithOutput.
type keyedTestFunctionWithOutput struct{}

func (keyedTestFunctionWithOutput) ProcessBroadcastElement(ctx *runtime.KeyedBroadcastContext[string, string], v int64) error {
	return putAll(ctx, v)
}

func (keyedTestFunctionWithOutput) ProcessElement(ctx *runtime.KeyedReadOnlyBroadcastContext[string, string], v string) error {
	return collectEntries(ctx, ctx.Collect)
}

// keyedNoKeyedStateOnBroadcastSide is testNoKeyedStateOnBroadcastSide's
// function: keyed state used on the broadcast side fails for want of a key.
type keyedNoKeyedStateOnBroadcastSide struct{ checked *bool }

func (f keyedNoKeyedStateOnBroadcastSide) ProcessBroadcastElement(ctx *runtime.KeyedBroadcastContext[string, string], v int64) error {
	vs, err := state.Value("any", state.String).Bind(ctx.Runtime())
	if err != nil {
		return err
	}
	_, _, err = vs.Value()
	var nk *runtime.NoKeyError
	if !errors.As(err, &nk) {
		return fmt.Errorf("keyed state on the broadcast side: got error %v, want a NoKeyError", err)
	}
	if !strings.Contains(err.Error(), "no key is set") {
		return fmt.Errorf("error %q does not say that no key is set", err)
	}
	*f.checked = true
	return nil
}

func (keyedNoKeyedStateOnBroadcastSide) ProcessElement(*runtime.KeyedReadOnlyBroadcastContext[string, string], string) error {
	return nil
}

// validTriggerKey is findValidTriggerKey: the first decimal number whose
// string maps to the subtask.
func validTriggerKey(subtask, maxParallelism, parallelism int) string {
	for i := 0; ; i++ {
		k := fmt.Sprint(i)
		if state.SubtaskFor(maxParallelism, parallelism, state.KeyGroupFor(state.String.Append(nil, k), maxParallelism)) == subtask {
			return k
		}
	}
}

func expectEntrySet(t *testing.T, what string, got []optest.Element) {
	t.Helper()
	want := map[string]bool{"test1=3": true, "test2=3": true, "test3=3": true}
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs %v, want %d", what, len(got), got, len(want))
	}
	for _, e := range got {
		if !want[e.Value.(string)] {
			t.Fatalf("%s: output %v not in test1=3, test2=3, test3=3", what, e)
		}
	}
}

// keyedRescale is testScaleUp and testScaleDown: every subtask at from
// puts 3 under the keys to register, and after restoring at to every
// subtask sees all three.
func keyedRescale(t *testing.T, backend string, from, to int) {
	cfg := optest.Config2{Backend: backend, MaxParallelism: 10, Parallelism: from}
	h := keyedBroadcastHarness(t, cfg, identityKey, runtime.KeyedBroadcastProcessFunction[string, string, int64, string](keyedTestFunctionWithOutput{}), broadcastState)
	// the broadcast element reaches every subtask: all have the same state
	h.ProcessElement2NoTS(3)
	h.Restore(h.Snapshot(), to)
	for i := range to {
		h.ProcessElement1NoTS(validTriggerKey(i, 10, to))
	}
	for i := range to {
		expectEntrySet(t, fmt.Sprintf("subtask %d of %d", i, to), h.SubtaskOutput("", i))
	}
}

// TestCoBroadcastWithKeyedOperatorTest ports Flink's
// CoBroadcastWithKeyedOperatorTest: a keyed stream connected to a broadcast
// stream.
func TestCoBroadcastWithKeyedOperatorTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testKeyQuerying": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := optest.New2(t, optest.Config2{Backend: backend}, func(h *optest.Harness2[keyValue, string], in1 *runtime.Stream[keyValue], in2 *runtime.Stream[string]) {
					keyed := runtime.KeyBy(in1, "f0", func(v keyValue) int64 { return v.F0 })
					out := runtime.KeyedBroadcastProcess(runtime.Connect(keyed, runtime.Broadcast(in2)), "co-broadcast",
						runtime.KeyedBroadcastProcessFunction[int64, keyValue, string, string](keyQuerying{}), runtime.UID("co-broadcast"))
					optest.Collect2(h, "", out)
				})
				h.ProcessElement1(keyValue{5, "5"}, 12)
				h.ProcessElement1(keyValue{42, "42"}, 13)
				expectOutput(t, h.Output(""), []optest.Element{optest.Rec("5", 12), optest.Rec("42", 13)})
			})
		},
		// the iteration over the keyed state on the broadcast side
		"testAccessToKeyedStateIt": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				var applied []string
				f := &statefulKeyedStateOnBroadcast{applied: &applied, expected: map[string][]string{
					"test1": {"test1", "test1"},
					"test2": {"test2", "test2", "test2", "test2"},
					"test3": {"test3", "test3", "test3"},
				}}
				h := keyedBroadcastHarness(t, optest.Config2{Backend: backend}, identityKey, runtime.KeyedBroadcastProcessFunction[string, string, int64, string](f), broadcastState)
				for _, e := range []struct {
					v  string
					ts int64
				}{{"test1", 12}, {"test1", 12}, {"test2", 13}, {"test2", 13}, {"test2", 13}, {"test3", 14}, {"test3", 14}, {"test3", 14}, {"test2", 13}} {
					h.ProcessElement1(e.v, e.ts)
				}
				// the broadcast element that checks the keyed state
				h.ProcessElement2(1, 13)
				slices.Sort(applied)
				if !slices.Equal(applied, []string{"test1", "test2", "test3"}) {
					t.Fatalf("ApplyToKeyedState visited %v, want test1, test2, test3", applied)
				}
			})
		},
		"testFunctionWithTimer": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedBroadcastHarness(t, optest.Config2{Backend: backend}, identityKey,
					runtime.KeyedBroadcastProcessFunction[string, string, int64, string](functionWithTimerOnKeyed{timerTS: 41, expectedKey: "6"}), broadcastState)
				h.ProcessWatermark1(10)
				h.ProcessWatermark2(10)
				h.ProcessElement2(5, 12)
				h.ProcessWatermark1(40)
				h.ProcessWatermark2(40)
				h.ProcessElement1("6", 13)
				h.ProcessElement1("6", 15)
				h.ProcessWatermark1(50)
				h.ProcessWatermark2(50)
				expectOutput(t, h.Output(""), []optest.Element{
					optest.WM(10), optest.Rec("BR:5 WM:10 TS:12", 12), optest.WM(40),
					optest.Rec("NON-BR:6 WM:40 TS:13", 13), optest.Rec("NON-BR:6 WM:40 TS:15", 15),
					optest.Rec("TIMER:41", 41), optest.WM(50)})
			})
		},
		"testSideOutput": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := keyedBroadcastHarness(t, optest.Config2{Backend: backend}, identityKey,
					runtime.KeyedBroadcastProcessFunction[string, string, int64, string](keyedFunctionWithSideOutput{}), broadcastState)
				sideOutputInputs(h)
				expectSideOutputs(t, h)
			})
		},
		"testFunctionWithBroadcastState": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				expected := map[string]int64{"5.key": 5, "34.key": 34, "53.key": 53, "12.key": 12, "98.key": 98}
				h := keyedBroadcastHarness(t, optest.Config2{Backend: backend}, identityKey,
					runtime.KeyedBroadcastProcessFunction[string, string, int64, string](functionWithBroadcastState{keyPostfix: "key", expected: expected, timerTS: 41, expectedKey: "trigger"}), broadcastState)
				h.ProcessWatermark1(10)
				h.ProcessWatermark2(10)
				h.ProcessElement2(5, 10)
				h.ProcessElement2(34, 12)
				h.ProcessElement2(53, 15)
				h.ProcessElement2(12, 16)
				h.ProcessElement2(98, 19)
				h.ProcessElement1("trigger", 13)
				h.ProcessElement2(51, 21)
				h.ProcessWatermark1(50)
				h.ProcessWatermark2(50)
				all := map[string]int64{"51.key": 51}
				for k, v := range expected {
					all[k] = v
				}
				expectOutput(t, h.Output(""), []optest.Element{optest.WM(10), optest.Rec("TS:41 "+mapToString(all), 41), optest.WM(50)})
			})
		},
		"testScaleUp": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) { keyedRescale(t, backend, 2, 3) })
		},
		"testScaleDown": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) { keyedRescale(t, backend, 3, 2) })
		},
		"testNoKeyedStateOnBroadcastSide": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				var checked bool
				h := keyedBroadcastHarness(t, optest.Config2{Backend: backend}, identityKey,
					runtime.KeyedBroadcastProcessFunction[string, string, int64, string](keyedNoKeyedStateOnBroadcastSide{checked: &checked}), broadcastState)
				h.ProcessWatermark1(10)
				h.ProcessWatermark2(10)
				h.ProcessElement2(5, 12)
				if !checked {
					t.Fatal("the broadcast side did not run")
				}
			})
		},
	})
}

func sideOutputInputs(h *optest.Harness2[string, int64]) {
	h.ProcessWatermark1(10)
	h.ProcessWatermark2(10)
	h.ProcessElement2(5, 12)
	h.ProcessWatermark1(40)
	h.ProcessWatermark2(40)
	h.ProcessElement1("6", 13)
	h.ProcessElement1("6", 15)
	h.ProcessWatermark1(50)
	h.ProcessWatermark2(50)
}

func expectSideOutputs(t *testing.T, h *optest.Harness2[string, int64]) {
	t.Helper()
	records := func(es []optest.Element) []optest.Element {
		var out []optest.Element
		for _, e := range es {
			if e.Kind == optest.Record {
				out = append(out, e)
			}
		}
		return out
	}
	expectOutput(t, records(h.Output(brTag.ID)), []optest.Element{optest.Rec("BR:5 WM:10 TS:12", 12)})
	expectOutput(t, records(h.Output(nonBrTag.ID)), []optest.Element{optest.Rec("NON-BR:6 WM:40 TS:13", 13), optest.Rec("NON-BR:6 WM:40 TS:15", 15)})
}

// functionWithMultipleStates is FunctionWithMultipleStates.
type functionWithMultipleStates struct{}

func (functionWithMultipleStates) ProcessBroadcastElement(ctx *runtime.BroadcastContext[string], v int64) error {
	s, err := runtime.BroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	s.Put(fmt.Sprintf("key.%d", v), v)
	a, err := runtime.BroadcastState(ctx, broadcastStateA)
	if err != nil {
		return err
	}
	a.Put(v, fmt.Sprintf("value.%d", v))
	return nil
}

func (functionWithMultipleStates) ProcessElement(ctx *runtime.ReadOnlyBroadcastContext[string], v string) error {
	s, err := runtime.ReadOnlyBroadcastState(ctx, broadcastState)
	if err != nil {
		return err
	}
	if err := s.Range(func(k string, n int64) bool { ctx.Collect(fmt.Sprintf("%s:%s->%d", v, k, n)); return true }); err != nil {
		return err
	}
	a, err := runtime.ReadOnlyBroadcastState(ctx, broadcastStateA)
	if err != nil {
		return err
	}
	return a.Range(func(k int64, s string) bool { ctx.Collect(fmt.Sprintf("%s:%d->%s", v, k, s)); return true })
}

// testFunction is the non-keyed TestFunction.
type testFunction struct{}

func (testFunction) ProcessBroadcastElement(ctx *runtime.BroadcastContext[string], v int64) error {
	if err := putAll(ctx, v); err != nil {
		return err
	}
	ctx.Collect(fmt.Sprintf("%dWM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

func (testFunction) ProcessElement(ctx *runtime.ReadOnlyBroadcastContext[string], v string) error {
	var keys []string
	if err := collectEntries(ctx, func(e string) { keys = append(keys, strings.Split(e, "=")[0]) }); err != nil {
		return err
	}
	if !slices.Equal(keys, keysToRegister) {
		return fmt.Errorf("broadcast state keys %v, want %v", keys, keysToRegister)
	}
	ctx.Collect(fmt.Sprintf("%sWM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

// functionWithSideOutput is the non-keyed FunctionWithSideOutput.
type functionWithSideOutput struct{}

func (functionWithSideOutput) ProcessBroadcastElement(ctx *runtime.BroadcastContext[string], v int64) error {
	ctx.Output(brTag.ID, fmt.Sprintf("BR:%d WM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

func (functionWithSideOutput) ProcessElement(ctx *runtime.ReadOnlyBroadcastContext[string], v string) error {
	ctx.Output(nonBrTag.ID, fmt.Sprintf("NON-BR:%s WM:%d TS:%s", v, ctx.CurrentWatermark(), tsString(ctx)))
	return nil
}

// testFunctionWithOutput is the non-keyed TestFunctionWithOutput.
type testFunctionWithOutput struct{}

func (testFunctionWithOutput) ProcessBroadcastElement(ctx *runtime.BroadcastContext[string], v int64) error {
	return putAll(ctx, v)
}

func (testFunctionWithOutput) ProcessElement(ctx *runtime.ReadOnlyBroadcastContext[string], v string) error {
	return collectEntries(ctx, ctx.Collect)
}

// keyedStateUse asks for keyed state on the broadcast side (broadcast) or
// the other side, which a non-keyed broadcast operator does not have.
type keyedStateUse struct{ broadcast bool }

func (f keyedStateUse) use(ctx runtime.RuntimeContext) error {
	vs, err := state.Value("any", state.String).Bind(ctx)
	if err != nil {
		return err
	}
	_, _, err = vs.Value()
	return err
}

func (f keyedStateUse) ProcessBroadcastElement(ctx *runtime.BroadcastContext[string], v int64) error {
	if f.broadcast {
		return f.use(ctx.Runtime())
	}
	return nil
}

func (f keyedStateUse) ProcessElement(ctx *runtime.ReadOnlyBroadcastContext[string], v string) error {
	if !f.broadcast {
		return f.use(ctx.Runtime())
	}
	return nil
}

func expectKeyedStateError(t *testing.T, err error) {
	t.Helper()
	var ke *runtime.KeyedStateError
	if !errors.As(err, &ke) {
		t.Fatalf("got error %v, want a KeyedStateError (keyed state needs a keyed stream)", err)
	}
	if ke.State != "any" || !strings.Contains(err.Error(), "keyed state needs a keyed stream") {
		t.Fatalf("error %q does not name the state and the remedy", err)
	}
}

func nonKeyedRescale(t *testing.T, backend string, from, to int) {
	cfg := optest.Config2{Backend: backend, MaxParallelism: 10, Parallelism: from}
	h := broadcastHarness(t, cfg, runtime.BroadcastProcessFunction[string, int64, string](testFunctionWithOutput{}), broadcastState)
	h.ProcessElement2NoTS(3)
	h.Restore(h.Snapshot(), to)
	// rebalanced: the i-th trigger goes to subtask i
	for range to {
		h.ProcessElement1NoTS("trigger")
	}
	for i := range to {
		expectEntrySet(t, fmt.Sprintf("subtask %d of %d", i, to), h.SubtaskOutput("", i))
	}
}

// TestCoBroadcastWithNonKeyedOperatorTest ports Flink's
// CoBroadcastWithNonKeyedOperatorTest: a non-keyed stream connected to a
// broadcast stream.
func TestCoBroadcastWithNonKeyedOperatorTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testMultiStateSupport": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := broadcastHarness(t, optest.Config2{Backend: backend}, runtime.BroadcastProcessFunction[string, int64, string](functionWithMultipleStates{}), broadcastState, broadcastStateA)
				h.ProcessElement2(5, 12)
				h.ProcessElement2(6, 13)
				h.ProcessElement1("9", 15)
				// Flink lists "9:key.6->6" before "9:key.5->5": its heap
				// broadcast state is a Java HashMap. Ours iterates in key
				// byte order, the same on every run and backend.
				expectOutput(t, h.Output(""), []optest.Element{
					optest.Rec("9:key.5->5", 15), optest.Rec("9:key.6->6", 15),
					optest.Rec("9:5->value.5", 15), optest.Rec("9:6->value.6", 15)})
			})
		},
		"testBroadcastState": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := broadcastHarness(t, optest.Config2{Backend: backend}, runtime.BroadcastProcessFunction[string, int64, string](testFunction{}), broadcastState)
				h.ProcessWatermark1(10)
				h.ProcessWatermark2(10)
				h.ProcessElement2(5, 12)
				h.ProcessWatermark1(40)
				h.ProcessWatermark2(40)
				h.ProcessElement1("6", 13)
				h.ProcessElement1("6", 15)
				h.ProcessWatermark1(50)
				h.ProcessWatermark2(50)
				expectOutput(t, h.Output(""), []optest.Element{
					optest.WM(10), optest.Rec("5WM:10 TS:12", 12), optest.WM(40),
					optest.Rec("6WM:40 TS:13", 13), optest.Rec("6WM:40 TS:15", 15), optest.WM(50)})
			})
		},
		"testSideOutput": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := broadcastHarness(t, optest.Config2{Backend: backend}, runtime.BroadcastProcessFunction[string, int64, string](functionWithSideOutput{}), broadcastState)
				sideOutputInputs(h)
				expectSideOutputs(t, h)
			})
		},
		"testScaleUp": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) { nonKeyedRescale(t, backend, 2, 3) })
		},
		"testScaleDown": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) { nonKeyedRescale(t, backend, 3, 2) })
		},
		"testNoKeyedStateOnBroadcastSide": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := broadcastHarness(t, optest.Config2{Backend: backend}, runtime.BroadcastProcessFunction[string, int64, string](keyedStateUse{broadcast: true}), broadcastState)
				h.ProcessWatermark1(10)
				h.ProcessWatermark2(10)
				expectKeyedStateError(t, h.TryProcessElement2(5, 12, true))
			})
		},
		"testNoKeyedStateOnNonBroadcastSide": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := broadcastHarness(t, optest.Config2{Backend: backend}, runtime.BroadcastProcessFunction[string, int64, string](keyedStateUse{}), broadcastState)
				h.ProcessWatermark1(10)
				h.ProcessWatermark2(10)
				expectKeyedStateError(t, h.TryProcessElement1("5", 12, true))
			})
		},
	})
}
