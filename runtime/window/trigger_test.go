package window_test

import (
	"strings"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/window"
	"streamdbg/state"
)

// bangTrigger is a custom trigger: it fires and purges on an element whose
// value is "!", and keeps how many elements it saw in its own state.
type bangTrigger struct{ merges bool }

var seenDesc = state.Reducing("seen", state.Int64, func(a, b int64) int64 { return a + b }).Desc()

func (t bangTrigger) OnElement(ctx window.TriggerContext, e any, _ int64, _ window.Window) (window.TriggerResult, error) {
	tab, err := ctx.State(seenDesc)
	if err != nil {
		return window.Continue, err
	}
	s := state.NewReducingState(tab, func(a, b int64) int64 { return a + b })
	s.SetNamespace(ctx.Namespace())
	if err := s.Add(1); err != nil {
		return window.Continue, err
	}
	if e.(elem).Val == "!" {
		return window.FireAndPurge, nil
	}
	return window.Continue, nil
}

func (bangTrigger) OnEventTime(window.TriggerContext, int64, window.Window) (window.TriggerResult, error) {
	return window.Continue, nil
}

func (bangTrigger) OnProcessingTime(window.TriggerContext, int64, window.Window) (window.TriggerResult, error) {
	return window.Continue, nil
}

func (t bangTrigger) CanMerge() bool { return t.merges }

func (bangTrigger) OnMerge(ctx window.MergeContext, _ window.Window) error {
	return ctx.MergeState(seenDesc)
}

func (bangTrigger) Clear(window.TriggerContext, window.Window) error { return nil }
func (bangTrigger) String() string                                   { return "bang" }

func runElems(t *testing.T, a window.Assigner, trig window.Trigger, ts bool, es ...elem) ([]string, error) {
	t.Helper()
	job := runtime.NewJob("custom")
	var evs []runtime.SourceEvent[elem]
	for _, e := range es {
		evs = append(evs, runtime.SourceEvent[elem]{Value: e})
	}
	var wms runtime.WatermarkStrategy[elem]
	if ts {
		wms.Timestamp = func(e elem) (int64, error) { return e.TS, nil }
	}
	src := runtime.FromSource(job, "source", func() runtime.Source[elem] { return &sliceSource{evs: evs} }, wms)
	keyed := runtime.KeyBy(src, "key", func(e elem) string { return e.Key })
	ws := window.Of(keyed, a)
	if trig != nil {
		ws.Trigger(trig)
	}
	var got []string
	out := window.Process(ws, "window", func(ctx *window.Context[string], k string, es []elem) error {
		var vs []string
		for _, e := range es {
			vs = append(vs, e.Val)
		}
		ctx.Collect(k + ":" + strings.Join(vs, ""))
		return nil
	})
	runtime.Sink(out, "out", func(s string) error { got = append(got, s); return nil })
	if err := job.Err(); err != nil {
		return nil, err
	}
	e, err := runtime.NewExecutor(job, runtime.Options{}, nil)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	for !e.Finished() {
		if err := e.Next(); err != nil && err != runtime.ErrFinished {
			return got, err
		}
	}
	return got, nil
}

func TestCustomTrigger(t *testing.T) {
	got, err := runElems(t, window.TumblingEventTime(10*time.Second), bangTrigger{}, true,
		elem{"a", "x", 1000}, elem{"a", "!", 2000}, elem{"a", "y", 3000}, elem{"b", "!", 4000}, elem{"a", "!", 11000})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a:x!", "b:!", "a:!"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestCustomTriggerMergesState(t *testing.T) {
	got, err := runElems(t, window.EventTimeSession(10*time.Second), bangTrigger{merges: true}, true,
		elem{"a", "x", 0}, elem{"a", "y", 30000}, elem{"a", "z", 15000}, elem{"a", "!", 20000})
	if err != nil {
		t.Fatal(err)
	}
	// x [0s,10s) stays alone (and never fires: the trigger sets no
	// timers); ! at 20s joins z [15s,25s) and y [30s,40s), whose contents
	// follow z's, the state window of the first merged window.
	if len(got) != 1 || got[0] != "a:zy!" {
		t.Fatalf("got %q, want [a:zy!]", got)
	}
}

func TestNonMergingTriggerRefusedForSessions(t *testing.T) {
	_, err := runElems(t, window.EventTimeSession(time.Second), bangTrigger{merges: false}, true)
	if err == nil || !strings.Contains(err.Error(), `window operator "window"`) || !strings.Contains(err.Error(), "cannot merge") {
		t.Fatalf("err = %v, want a build error naming the operator", err)
	}
}

func TestEventTimeWindowsNeedTimestamps(t *testing.T) {
	_, err := runElems(t, window.TumblingEventTime(time.Second), nil, false, elem{"a", "x", 0})
	if err == nil || !strings.Contains(err.Error(), "without a timestamp") {
		t.Fatalf("err = %v, want an error about the missing timestamp", err)
	}
}

func TestAssigners(t *testing.T) {
	for _, tc := range []struct {
		a    window.Assigner
		ts   int64
		want []window.Window
	}{
		{window.TumblingEventTime(10 * time.Second), 9999, []window.Window{{Start: 0, End: 10000}}},
		{window.TumblingEventTime(10 * time.Second), -1, []window.Window{{Start: -10000, End: 0}}},
		{window.Tumbling{Size: 10 * time.Second, Offset: 3 * time.Second}, 2999, []window.Window{{Start: -7000, End: 3000}}},
		{window.SlidingEventTime(10*time.Second, 5*time.Second), 5000, []window.Window{{Start: 5000, End: 15000}, {Start: 0, End: 10000}}},
		{window.EventTimeSession(30 * time.Second), 7, []window.Window{{Start: 7, End: 30007}}},
		{window.Global{}, 7, []window.Window{window.GlobalWindow}},
	} {
		got, err := tc.a.AssignWindows(nil, tc.ts, procTime(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s at %d: %v, want %v", tc.a, tc.ts, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s at %d: %v, want %v", tc.a, tc.ts, got, tc.want)
			}
		}
	}
}

func TestMergeTimeWindows(t *testing.T) {
	w := func(s, e int64) window.Window { return window.Window{Start: s, End: e} }
	got := window.MergeTimeWindows([]window.Window{w(31, 61), w(0, 30), w(100, 130), w(29, 59), w(130, 140)})
	if len(got) != 2 || got[0].Result != w(0, 61) || len(got[0].Merged) != 3 || got[1].Result != w(100, 140) {
		t.Fatalf("got %+v", got)
	}
}

// procTime is an assigner context at a fixed processing time.
type procTime int64

func (p procTime) CurrentProcessingTime() int64 { return int64(p) }
