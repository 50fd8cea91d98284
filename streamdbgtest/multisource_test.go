package streamdbgtest_test

import (
	"slices"
	"testing"
	"time"

	rt "streamdbg/runtime"
	"streamdbg/streamdbgtest"
)

// Tagged is a word with the source it came from.
type Tagged struct{ Src, Word string }

// threeSources: sources a, b and c (c reads its own slice) unioned, keyed
// by word, counted; the sink gets Count{"src:word", n}.
func threeSources() *rt.Job {
	job := rt.NewJob("three")
	wm := rt.BoundedOutOfOrderness(0, func(t Tagged) (int64, error) { return int64(len(t.Word)), nil })
	a := rt.FromSlice(job, "a", []Tagged(nil), wm, rt.UID("a"))
	b := rt.FromSlice(job, "b", []Tagged(nil), wm, rt.UID("b"))
	c := rt.FromSlice(job, "c", []Tagged{{"c", "x"}, {"c", "yy"}, {"c", "x"}}, wm, rt.UID("c"))
	keyed := rt.KeyBy(rt.Union(a, b, c), "word", func(t Tagged) string { return t.Word })
	counted := rt.RichMap(rt.KeyBy(rt.Map(keyed, "word", func(t Tagged) (string, error) { return t.Src + ":" + t.Word, nil }, rt.UID("word")),
		"w", func(s string) string { return s[2:] }), "count", &counter{}, rt.UID("count"))
	rt.JSONSink(counted, "out", rt.UID("out"), rt.Parallelism(1))
	return job
}

// TestSeveralSources: two sources of one job pushed from the test in any
// interleaving are read exactly in that order; a third, not taken over,
// reads its own input only when the test runs it; a replay of the whole
// run (the session restarting traced) gives the same state and hands no
// record to the readers twice.
func TestSeveralSources(t *testing.T) {
	d := streamdbgtest.New(t, threeSources(), streamdbgtest.Parallelism(2))
	a := streamdbgtest.Input[Tagged](d, "a")
	b := streamdbgtest.Input[Tagged](d, "b")
	out := streamdbgtest.Output[Count](d, "out")

	b.Push(Tagged{"b", "x"})
	a.Push(Tagged{"a", "x"})
	b.Push(Tagged{"b", "x"})
	out.ExpectInOrder(Count{"b:x", 1}, Count{"a:x", 2}, Count{"b:x", 3})
	if n := d.Run(); n != 3 {
		t.Fatalf("Run read %d events of c, want its 3 items", n)
	}
	out.ExpectInOrder(Count{"c:x", 4}, Count{"c:yy", 1}, Count{"c:x", 5})
	if n := d.Run(); n != 0 {
		t.Fatalf("a second Run read %d events", n)
	}
	a.Watermark(time.UnixMilli(50))
	a.Push(Tagged{"a", "yy"})
	out.ExpectInOrder(Count{"a:yy", 2})

	before := d.Query(`SELECT subtask, key, value FROM "count"."count" ORDER BY key`)
	if err := d.Session().SetTrace(true); err != nil {
		t.Fatal(err)
	}
	after := d.Query(`SELECT subtask, key, value FROM "count"."count" ORDER BY key`)
	if len(before) != 2 || !slices.EqualFunc(before, after, func(x, y map[string]any) bool {
		return x["subtask"] == y["subtask"] && x["key"] == y["key"] && x["value"] == y["value"]
	}) {
		t.Fatalf("state after the replay %v, before %v", after, before)
	}
	if out.Len() != 0 {
		t.Fatalf("the replay handed %d records to the reader again", out.Len())
	}
	b.Push(Tagged{"b", "x"})
	out.ExpectInOrder(Count{"b:x", 6})
	if evs := d.Session().Last().Events; len(evs) == 0 {
		t.Fatal("no trace after SetTrace(true)")
	}
	a.Close()
	b.Close()
	if !d.Session().Finished() {
		t.Fatal("not finished with every source closed or at its end")
	}
}

// TestParallelSourceTakenOver: a taken-over source of parallelism 3 reads
// what the test pushes in its subtask 0; the others are idle, so they hold
// no watermark back: the test's watermark fires event-time timers
// downstream, and Close ends every subtask's input.
func TestParallelSourceTakenOver(t *testing.T) {
	job := rt.NewJob("parallel source")
	src := rt.FromSource(job, "in", func() rt.Source[Reading] { return emptySource[Reading]{} },
		rt.WatermarkStrategy[Reading]{Timestamp: func(r Reading) (int64, error) { return r.TS, nil }}, rt.UID("in"), rt.Parallelism(3))
	out := rt.RichProcess(rt.KeyBy(src, "sensor", func(r Reading) string { return r.Sensor }), "alarm", &alarm{}, rt.UID("alarm"), rt.Parallelism(2))
	rt.JSONSink(out, "out", rt.UID("out"), rt.Parallelism(1))
	d := streamdbgtest.New(t, job)
	in := streamdbgtest.Input[Reading](d, "in")
	alarms := streamdbgtest.Output[string](d, "out")
	in.Push(Reading{"s1", 4, 100})
	in.Push(Reading{"s2", 9, 101})
	in.Watermark(time.UnixMilli(110))
	alarms.ExpectInOrder("max s1 4 @110")
	in.Close()
	alarms.ExpectAnyOrder("max s2 9 @111")
	if !d.Session().Finished() {
		t.Fatal("not finished after Close")
	}
}

type emptySource[T any] struct{}

func (emptySource[T]) Next() (rt.SourceEvent[T], bool, error) { return rt.SourceEvent[T]{}, false, nil }
