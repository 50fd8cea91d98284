package window_test

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"streamdbg/runtime"
	"streamdbg/runtime/window"
	"streamdbg/state"
)

// elem is the element of the transcript jobs: a key, a value and an event
// time.
type elem struct {
	Key string `json:"key"`
	Val string `json:"val"`
	TS  int64  `json:"ts"`
}

// sliceSource replays parsed events and keeps its position in operator
// state, so a transcript can checkpoint and restore.
type sliceSource struct {
	evs []runtime.SourceEvent[elem]
	pos int64
	st  *state.OperatorListState[int64]
}

func (s *sliceSource) InitializeState(ctx runtime.RuntimeContext) error {
	var err error
	if s.st, err = state.UnionList(ctx.Operator(), "position", state.Int64); err != nil {
		return err
	}
	if v := s.st.Get(); len(v) > 0 {
		s.pos = v[0]
	}
	return nil
}

func (s *sliceSource) SnapshotState(runtime.RuntimeContext) error {
	s.st.Update([]int64{s.pos})
	return nil
}

func (s *sliceSource) Next() (runtime.SourceEvent[elem], bool, error) {
	if s.pos >= int64(len(s.evs)) {
		return runtime.SourceEvent[elem]{}, false, nil
	}
	s.pos++
	return s.evs[s.pos-1], true, nil
}

// ms parses "12s", "1.5s", "-3s", "250ms" as milliseconds since the epoch.
func ms(t *testing.T, s string) int64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("bad time %q: %v", s, err)
	}
	return d.Milliseconds()
}

// fmtMS prints epoch milliseconds as the transcripts write them.
func fmtMS(v int64) string {
	switch v {
	case math.MinInt64:
		return "-inf"
	case math.MaxInt64:
		return "+inf"
	}
	return (time.Duration(v) * time.Millisecond).String()
}

func fmtWindow(w window.Window) string {
	if w == window.GlobalWindow {
		return "global"
	}
	return "[" + fmtMS(w.Start) + "," + fmtMS(w.End) + ")"
}

// fmtVal prints trace values: windows and times compactly.
func fmtVal(v any) string {
	switch x := v.(type) {
	case window.Window:
		return fmtWindow(x)
	case []window.Window:
		s := make([]string, len(x))
		for i, w := range x {
			s[i] = fmtWindow(w)
		}
		return strings.Join(s, " ")
	case time.Time:
		return fmtMS(x.UnixMilli())
	case map[string]any:
		if s, ok := x["start"]; ok {
			if e, ok := x["end"]; ok && len(x) == 2 {
				return "[" + fmtVal(s) + "," + fmtVal(e) + ")"
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + fmtVal(x[k])
		}
		return "{" + strings.Join(parts, " ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmtVal(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case elem:
		return fmt.Sprintf("%s/%s@%s", x.Key, x.Val, fmtMS(x.TS))
	case string:
		return x
	case int64:
		if x == math.MinInt64 || x == math.MaxInt64 {
			return fmtMS(x)
		}
	case nil:
		return "nil"
	}
	return fmt.Sprint(v)
}

type harness struct {
	t     *testing.T
	build func() *runtime.Job
	opts  runtime.Options
	e     *runtime.Executor
}

func parseEvents(t *testing.T, input string) []runtime.SourceEvent[elem] {
	var evs []runtime.SourceEvent[elem]
	for i, line := range strings.Split(strings.TrimSpace(input), "\n") {
		where := runtime.Where{File: line, Line: i + 1}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "wm":
			evs = append(evs, runtime.SourceEvent[elem]{Kind: runtime.EventWatermark, Watermark: ms(t, f[1]), Where: where})
		case "pt":
			evs = append(evs, runtime.SourceEvent[elem]{Kind: runtime.EventAdvanceProcessingTime, Advance: time.Duration(ms(t, f[1])) * time.Millisecond, Where: where})
		default:
			e := elem{Key: f[0], TS: ms(t, f[1])}
			if len(f) > 2 {
				e.Val = f[2]
			}
			evs = append(evs, runtime.SourceEvent[elem]{Value: e, Where: where})
		}
	}
	return evs
}

// newJob builds the transcript job from the job command's arguments.
func newJob(t *testing.T, d *datadriven.TestData, evs []runtime.SourceEvent[elem]) *runtime.Job {
	arg := func(k, def string) string {
		if d.HasArg(k) {
			var v string
			d.ScanArgs(t, k, &v)
			return v
		}
		return def
	}
	dur := func(k string) time.Duration {
		v, err := time.ParseDuration(arg(k, "0s"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	job := runtime.NewJob("transcript")
	wms := runtime.WatermarkStrategy[elem]{Timestamp: func(e elem) (int64, error) { return e.TS, nil }}
	if d.HasArg("ooo") {
		wms = runtime.BoundedOutOfOrderness(dur("ooo"), wms.Timestamp)
	}
	src := runtime.FromSource(job, "source", func() runtime.Source[elem] { return &sliceSource{evs: evs} }, wms, runtime.UID("source"), runtime.Parallelism(1))
	keyed := runtime.KeyBy(src, "key", func(e elem) string { return e.Key })
	var a window.Assigner
	switch arg("assigner", "tumbling") {
	case "tumbling":
		a = window.TumblingEventTime(dur("size"))
	case "pt-tumbling":
		a = window.TumblingProcessingTime(dur("size"))
	case "sliding":
		a = window.SlidingEventTime(dur("size"), dur("slide"))
	case "session":
		a = window.EventTimeSession(dur("gap"))
	case "pt-session":
		a = window.ProcessingTimeSession(dur("gap"))
	case "global":
		a = window.Global{}
	default:
		t.Fatalf("unknown assigner %s", arg("assigner", ""))
	}
	ws := window.Of(keyed, a)
	if d.HasArg("lateness") {
		ws.AllowedLateness(dur("lateness"))
	}
	late := runtime.NewOutputTag[elem]("late")
	if d.HasArg("late") {
		ws.SideOutputLateData(late)
	}
	if tr := arg("trigger", ""); tr != "" {
		var trig window.Trigger
		name, n, _ := strings.Cut(tr, ":")
		switch name {
		case "count":
			c, _ := strconv.ParseInt(n, 10, 64)
			trig = window.Count(c)
		case "event":
			trig = window.EventTimeTrigger{}
		case "processing":
			trig = window.ProcessingTimeTrigger{}
		case "never":
			trig = window.Never{}
		default:
			t.Fatalf("unknown trigger %s", tr)
		}
		if d.HasArg("purging") {
			trig = window.Purging(trig)
		}
		ws.Trigger(trig)
	}
	if ev := arg("evictor", ""); ev != "" {
		name, n, _ := strings.Cut(ev, ":")
		switch name {
		case "count":
			c, _ := strconv.Atoi(n)
			ws.Evictor(window.KeepLast(c))
		case "count-after":
			c, _ := strconv.Atoi(n)
			ws.Evictor(window.CountEvictor{Max: c, After: true})
		case "time":
			d, _ := time.ParseDuration(n)
			ws.Evictor(window.KeepWithin(d))
		default:
			t.Fatalf("unknown evictor %s", ev)
		}
	}
	var out *runtime.Stream[string]
	switch arg("fn", "count") {
	case "count":
		out = window.AggregateProcess(ws, "window", counter{}, state.Int64,
			func(ctx *window.Context[string], k string, n []int64) error {
				ctx.Collect(fmt.Sprintf("%s %s count=%d", k, fmtWindow(ctx.Window()), n[0]))
				return nil
			}, runtime.UID("window"))
	case "list":
		out = window.Process(ws, "window",
			func(ctx *window.Context[string], k string, es []elem) error {
				vs := make([]string, len(es))
				for i, e := range es {
					vs[i] = e.Val + "@" + fmtMS(e.TS)
				}
				ctx.Collect(fmt.Sprintf("%s %s [%s]", k, fmtWindow(ctx.Window()), strings.Join(vs, " ")))
				return nil
			}, runtime.UID("window"))
	case "reduce":
		r := window.Reduce(ws, "window", func(a, b elem) elem { return elem{Key: a.Key, Val: a.Val + b.Val, TS: max(a.TS, b.TS)} }, runtime.UID("window"))
		out = runtime.Map(r, "show", func(e elem) (string, error) { return fmtVal(e), nil }, runtime.UID("show"))
	}
	runtime.Sink(out, "out", func(string) error { return nil }, runtime.UID("out"))
	if d.HasArg("late") {
		runtime.Sink(runtime.SideOutput(out, late), "late", func(elem) error { return nil }, runtime.UID("late"))
	}
	return job
}

type counter struct{}

func (counter) CreateAccumulator() int64    { return 0 }
func (counter) Add(_ elem, acc int64) int64 { return acc + 1 }
func (counter) Result(acc int64) int64      { return acc }
func (counter) Merge(a, b int64) int64      { return a + b }

// render prints what the window operator and the sinks did.
func render(evs []runtime.TraceEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case runtime.TraceStep:
			switch ev.Info.Kind {
			case "source":
				// Where is "line:number"; the transcript shows the line.
				fmt.Fprintf(&b, "%s\n", ev.Info.Where[:strings.LastIndexByte(ev.Info.Where, ':')])
			case "end of input":
				b.WriteString("end of input\n")
			}
			continue
		}
		if ev.Kind == runtime.TraceProcessingTime {
			fmt.Fprintf(&b, "  processing time -> %s\n", fmtMS(ev.To))
			continue
		}
		if ev.Operator == "source" || ev.Operator == "show" {
			continue
		}
		switch ev.Kind {
		case runtime.TraceNote:
			fmt.Fprintf(&b, "  %s: %s", ev.Operator, ev.What)
			for i := 0; i+1 < len(ev.Attrs); i += 2 {
				fmt.Fprintf(&b, " %v=%s", ev.Attrs[i], fmtVal(ev.Attrs[i+1]))
			}
			b.WriteString("\n")
		case runtime.TraceTimerSet, runtime.TraceTimerDeleted, runtime.TraceTimerFired:
			fmt.Fprintf(&b, "  %s: %s %s %s key=%v window=%s\n", ev.Operator, ev.Kind, ev.Domain, fmtMS(ev.Timestamp), ev.Key, fmtVal(ev.Namespace))
		case runtime.TraceWatermark:
			if ev.Operator == "window" {
				fmt.Fprintf(&b, "  %s: watermark %s -> %s\n", ev.Operator, fmtMS(ev.From), fmtMS(ev.To))
			}
		case runtime.TraceStateWrite:
			if ev.Cleared && ev.State == window.MergingSetState {
				fmt.Fprintf(&b, "  %s: state %s key=%v %s removed\n", ev.Operator, ev.State, ev.Key, fmtVal(ev.UserKey))
			} else if ev.Cleared {
				fmt.Fprintf(&b, "  %s: state %s key=%v ns=%s cleared\n", ev.Operator, ev.State, ev.Key, fmtVal(ev.Namespace))
			} else if ev.State == window.MergingSetState {
				fmt.Fprintf(&b, "  %s: state %s key=%v %s -> %s\n", ev.Operator, ev.State, ev.Key, fmtVal(ev.UserKey), fmtVal(ev.New))
			} else {
				fmt.Fprintf(&b, "  %s: state %s key=%v ns=%s = %s\n", ev.Operator, ev.State, ev.Key, fmtVal(ev.Namespace), fmtVal(ev.New))
			}
		case runtime.TraceOutput:
			fmt.Fprintf(&b, "  %s <- %s\n", ev.Operator, fmtVal(ev.Value))
		}
	}
	return b.String()
}

func TestTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{t: t}
		defer func() {
			if h.e != nil {
				h.e.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			h.t = t
			return h.run(d)
		})
	})
}

func (h *harness) start(from runtime.Restore) string {
	job := h.build()
	if err := job.Err(); err != nil {
		return "error: " + err.Error() + "\n"
	}
	e, err := runtime.NewExecutor(job, h.opts, from)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	h.e = e
	return ""
}

func (h *harness) run(d *datadriven.TestData) string {
	t := h.t
	if h.e == nil && d.Cmd != "job" {
		return "no job\n"
	}
	switch d.Cmd {
	case "job":
		if h.e != nil {
			h.e.Close()
			h.e = nil
		}
		evs := parseEvents(t, d.Input)
		dc := *d // d is reused by later directives
		h.build = func() *runtime.Job { return newJob(t, &dc, evs) }
		h.opts = runtime.Options{Trace: true, Parallelism: 1}
		if d.HasArg("parallelism") {
			d.ScanArgs(t, "parallelism", &h.opts.Parallelism)
		}
		if out := h.start(nil); out != "" {
			return out
		}
		return "ok\n"
	case "next":
		n := 1
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &n)
		}
		var out strings.Builder
		for range n {
			err := h.e.Next()
			out.WriteString(render(h.e.TakeTrace()))
			if err == runtime.ErrFinished {
				out.WriteString("end of input\n")
				break
			}
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
				break
			}
		}
		return out.String()
	case "run":
		var out strings.Builder
		for !h.e.Finished() {
			err := h.e.Next()
			out.WriteString(render(h.e.TakeTrace()))
			if err != nil && err != runtime.ErrFinished {
				fmt.Fprintf(&out, "error: %v\n", err)
				break
			}
		}
		return out.String()
	case "advance-processing-time":
		err := h.e.AdvanceProcessingTime(time.Duration(ms(t, d.CmdArgs[0].Key)) * time.Millisecond)
		out := render(h.e.TakeTrace())
		if err != nil {
			out += "error: " + err.Error() + "\n"
		}
		return out
	case "restore":
		cp, err := h.e.Checkpoint(1)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.e.Close()
		h.e = nil
		if d.HasArg("parallelism") {
			d.ScanArgs(t, "parallelism", &h.opts.Parallelism)
		}
		if out := h.start(cp); out != "" {
			return out
		}
		h.e.TakeTrace()
		return fmt.Sprintf("restored at parallelism %d\n", h.opts.Parallelism)
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}
