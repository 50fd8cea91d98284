package window_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
)

// tup is Flink's Tuple2<String, Integer> of the operator tests.
type tup struct {
	K string `json:"f0"`
	V int    `json:"f1"`
}

func (t tup) String() string { return fmt.Sprintf("(%s,%d)", t.K, t.V) }

// tup3 is Flink's Tuple3<String, Long, Long> of the session tests.
type tup3 struct {
	S          string
	Start, End int64
}

func sum(a, b tup) tup { return tup{K: b.K, V: a.V + b.V} }

var lateTag = runtime.NewOutputTag[tup]("late-output")

// spec is one window operator of the ported tests: Flink's
// WindowOperatorFactory arguments in streamdbg's terms.
type spec struct {
	assigner window.Assigner
	trigger  window.Trigger
	evictor  window.Evictor
	lateness time.Duration
	late     bool // side-output late data to lateTag
}

func (s spec) windowed(in *runtime.Stream[tup]) *window.WindowedStream[string, tup] {
	keyed := runtime.KeyBy(in, "f0", func(e tup) string { return e.K })
	ws := window.Of(keyed, s.assigner)
	if s.trigger != nil {
		ws.Trigger(s.trigger)
	}
	if s.evictor != nil {
		ws.Evictor(s.evictor)
	}
	if s.lateness != 0 {
		ws.AllowedLateness(s.lateness)
	}
	if s.late {
		ws.SideOutputLateData(lateTag)
	}
	return ws
}

// windowHarness runs the operator fn builds from s; its main output is
// collected as "", late data as "late".
func windowHarness[OUT any](t *testing.T, backend string, s spec, fn func(ws *window.WindowedStream[string, tup]) *runtime.Stream[OUT]) *optest.Harness[tup] {
	t.Helper()
	return optest.New(t, optest.Config{Backend: backend}, func(h *optest.Harness[tup], in *runtime.Stream[tup]) {
		out := fn(s.windowed(in))
		optest.Collect(h, "", out)
		if s.late {
			optest.Collect(h, "late", runtime.SideOutput(out, lateTag))
		}
	})
}

// expectSorted is Flink's TestHarnessUtil.assertOutputEqualsSorted: as
// many elements, watermarks (and statuses) at the same places, records
// equal once sorted.
func expectSorted(t *testing.T, got, want []optest.Element) {
	t.Helper()
	fail := func(why string) { t.Helper(); t.Fatalf("%s:\n got %v\nwant %v", why, got, want) }
	if len(got) != len(want) {
		fail("output differs in length")
	}
	var g, w []optest.Element
	for i := range want {
		if want[i].Kind != optest.Record {
			if got[i] != want[i] {
				fail(fmt.Sprintf("element %d differs", i))
			}
			continue
		}
		w = append(w, want[i])
	}
	for _, e := range got {
		if e.Kind == optest.Record {
			g = append(g, e)
		}
	}
	order := func(a, b optest.Element) int {
		if c := cmp.Compare(a.Timestamp, b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(fmt.Sprint(a.Value), fmt.Sprint(b.Value))
	}
	slices.SortFunc(g, order)
	slices.SortFunc(w, order)
	if !slices.Equal(g, w) {
		fail("records differ")
	}
}

// windowCase drives one ported test: elements and watermarks in, the
// expected output kept alongside.
type windowCase struct {
	t    *testing.T
	h    *optest.Harness[tup]
	want []optest.Element
	late []optest.Element
}

func (c *windowCase) el(k string, v int, ts int64) { c.t.Helper(); c.h.ProcessElement(tup{k, v}, ts) }
func (c *windowCase) wm(w int64)                   { c.t.Helper(); c.h.ProcessWatermark(w) }
func (c *windowCase) pt(now int64)                 { c.t.Helper(); c.h.SetProcessingTime(now) }
func (c *windowCase) expect(es ...optest.Element)  { c.want = append(c.want, es...) }
func (c *windowCase) expectLate(es ...optest.Element) {
	c.late = append(c.late, es...)
}

func (c *windowCase) check() {
	c.t.Helper()
	expectSorted(c.t, c.h.Output(""), c.want)
	expectSorted(c.t, records(c.h.Output("late")), c.late)
}

// records drops watermarks and statuses: a side output, as Flink's harness
// collects it, holds records only.
func records(es []optest.Element) []optest.Element {
	var out []optest.Element
	for _, e := range es {
		if e.Kind == optest.Record {
			out = append(out, e)
		}
	}
	return out
}

// restore snapshots, closes and restores the harness; the new one's output
// starts empty, and so does what is expected of it.
func (c *windowCase) restore() {
	c.t.Helper()
	c.h.Restore(c.h.Snapshot())
	c.want, c.late = nil, nil
}

func rec(k string, v int, ts int64) optest.Element { return optest.Rec(tup{k, v}, ts) }
func rec3(s string, start, end, ts int64) optest.Element {
	return optest.Rec(tup3{s, start, end}, ts)
}

// backends runs f on both keyed state backends.
func backends(t *testing.T, f func(t *testing.T, backend string)) {
	t.Helper()
	for _, b := range runtime.Backends {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}

// ctxAt is an assigner context at a processing time, as Flink's mocked
// WindowAssignerContext.
type ctxAt struct{ now int64 }

func (c *ctxAt) CurrentProcessingTime() int64 { return c.now }
