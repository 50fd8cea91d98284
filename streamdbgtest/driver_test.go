package streamdbgtest_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rt "streamdbg/runtime"
	"streamdbg/state"
	"streamdbg/streamdbgtest"
)

// Count is what the test jobs' count operator emits.
type Count struct {
	Word string
	N    int64
}

// counter counts records per key in ValueState "count" and keeps the words
// of each key in ListState "seen" and per-letter counts in MapState
// "letters".
type counter struct {
	count   *state.ValueState[int64]
	seen    *state.ListState[string]
	letters *state.MapState[string, int64]
}

func (c *counter) Open(ctx rt.RuntimeContext) (err error) {
	if c.count, err = state.Value("count", state.Int64).Bind(ctx); err != nil {
		return err
	}
	if c.seen, err = state.List("seen", state.String).Bind(ctx); err != nil {
		return err
	}
	c.letters, err = state.Map("letters", state.String, state.Int64).Bind(ctx)
	return err
}

func (c *counter) Close() error { return nil }

func (c *counter) Map(w string) (Count, error) {
	n, _, err := c.count.Value()
	if err != nil {
		return Count{}, err
	}
	n++
	if err := c.count.Update(n); err != nil {
		return Count{}, err
	}
	if err := c.seen.Add(w); err != nil {
		return Count{}, err
	}
	first := w[:1]
	l, _, err := c.letters.Get(first)
	if err != nil {
		return Count{}, err
	}
	return Count{w, n}, c.letters.Put(first, l+1)
}

// wordJob: lines -> split -> KeyBy(word) -> count -> out, with a side
// output "long" of split for words longer than 5 letters.
func wordJob() *rt.Job {
	job := rt.NewJob("words")
	job.Parallelism = 2
	lines := rt.FromSlice(job, "lines", []string{"from the slice"}, rt.WatermarkStrategy[string]{}, rt.UID("lines"))
	words := rt.Process(lines, "split", func(ctx *rt.ProcessContext[string], l string) error {
		for _, w := range strings.Fields(l) {
			if len(w) > 5 {
				ctx.Output("long", w)
			}
			ctx.Collect(w)
		}
		return nil
	}, rt.UID("split"), rt.Parallelism(1))
	counts := rt.RichMap(rt.KeyBy(words, "word", func(w string) string { return w }), "count", &counter{}, rt.UID("count"))
	rt.JSONSink(counts, "out", rt.UID("out"))
	return job
}

// TestPushBetweenAssertions: a taken-over source reads only what the test
// pushes; each push has run through the job when it returns; outputs are
// read since the last read; state is read typed; the source stays open
// until Close.
func TestPushBetweenAssertions(t *testing.T) {
	d := streamdbgtest.New(t, wordJob())
	lines := streamdbgtest.Input[string](d, "lines")
	out := streamdbgtest.Output[Count](d, "out")
	long := streamdbgtest.SideOutput[string](d, "split", "long")
	count := streamdbgtest.ValueState[int64](d, "count", "count")

	lines.Push("a b a")
	out.ExpectAnyOrder(Count{"a", 1}, Count{"b", 1}, Count{"a", 2})
	if n, ok := count.Get("a"); !ok || n != 2 {
		t.Fatalf("count of a after one line: %d, %v; want 2", n, ok)
	}
	if _, ok := count.Get("slice"); ok {
		t.Fatal("the slice source's own items were read: the test took it over")
	}
	if out.Len() != 0 {
		t.Fatalf("%d records left after ExpectAnyOrder", out.Len())
	}

	lines.Push("b streams")
	if got := out.ReadAll(); len(got) != 2 || !slices.Contains(got, Count{"b", 2}) || !slices.Contains(got, Count{"streams", 1}) {
		t.Fatalf("second line: %v, want b:2 and streams:1 only", got)
	}
	if got := long.ReadAll(); !slices.Equal(got, []string{"streams"}) {
		t.Fatalf("side output long: %v", got)
	}
	if got, ok := streamdbgtest.ListState[string](d, "count", "seen").Get("b"); !ok || !slices.Equal(got, []string{"b", "b"}) {
		t.Fatalf("seen of b: %v %v", got, ok)
	}
	letters := streamdbgtest.MapState[string, int64](d, "count", "letters")
	if n, ok := letters.Get("streams", "s"); !ok || n != 1 {
		t.Fatalf("letters of streams: %d %v", n, ok)
	}
	if m := letters.All("a"); len(m) != 1 || m["a"] != 2 {
		t.Fatalf("letters of a: %v", m)
	}
	if _, ok := out.Next(); ok {
		t.Fatal("Next found a record after ReadAll")
	}
	// The source is open: the job is not finished and waits for the test.
	if d.Session().Finished() {
		t.Fatal("the job finished while its source is open")
	}
	lines.Push("a")
	if r, ok := out.Next(); !ok || r != (Count{"a", 3}) {
		t.Fatalf("third push: %v %v", r, ok)
	}
	lines.Close()
	if !d.Session().Finished() {
		t.Fatal("the job is not finished after its only source closed")
	}
	// The same state through the debugger's query language.
	rows := d.Query(`SELECT key, value FROM "count"."count" WHERE key = 'a'`)
	if len(rows) != 1 || rows[0]["value"] != int64(3) {
		t.Fatalf("query: %v", rows)
	}
}

// TestRecordTimestamps: PushAt gives the record's timestamp, which output
// records carry; a strategy that assigns timestamps itself refuses another,
// naming the push's file:line once and the record (before: the file:line
// twice, no record).
func TestRecordTimestamps(t *testing.T) {
	job := rt.NewJob("ts")
	src := rt.FromSlice(job, "in", []int64(nil), rt.WatermarkStrategy[int64]{}, rt.UID("in"))
	rt.JSONSink(rt.Map(src, "double", func(v int64) (int64, error) { return 2 * v, nil }, rt.UID("double")), "out", rt.UID("out"))
	d := streamdbgtest.New(t, job)
	in := streamdbgtest.Input[int64](d, "in")
	out := streamdbgtest.Output[int64](d, "out")
	in.PushAt(1, time.UnixMilli(10))
	in.Push(2)
	got := out.ReadRecords()
	want := []streamdbgtest.Record[int64]{streamdbgtest.At[int64](2, 10), {Value: 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}

	msg := fatal(t, func(t testing.TB) {
		job := rt.NewJob("ts")
		src := rt.FromSlice(job, "in", []int64(nil), rt.Monotonous(func(v int64) (int64, error) { return v, nil }), rt.UID("in"))
		rt.JSONSink(src, "out", rt.UID("out"))
		d := streamdbgtest.New(t, job)
		in := streamdbgtest.Input[int64](d, "in")
		in.PushAt(5, time.UnixMilli(5)) // agrees: fine
		in.PushAt(7, time.UnixMilli(8))
	})
	for _, want := range []string{"the record 7 was given timestamp 1970-01-01T00:00:00.008Z", "assigns it 1970-01-01T00:00:00.007Z", "driver_test.go:"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("a timestamp the strategy overrides: %q does not say %q", msg, want)
		}
	}
	if n := strings.Count(msg, "driver_test.go:"); n != 1 {
		t.Fatalf("a timestamp the strategy overrides: %q names the push's file:line %d times, want once", msg, n)
	}
}

// fakeT records what a failing test would say: Fatal ends the goroutine
// as testing.T does.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	msgs     []string
	cleanups []func()
	failed   bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}
func (f *fakeT) Fatal(args ...any) {
	f.Errorf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Logf(string, ...any)  {}
func (f *fakeT) Cleanup(fn func())    { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Failed() bool         { return f.failed }
func (f *fakeT) Name() string         { return "fake" }
func (f *fakeT) TempDir() string      { return "" }
func (f *fakeT) Setenv(k, v string)   {}
func (f *fakeT) Skipf(string, ...any) { runtime.Goexit() }

// fatal runs body with a fake test and returns the message it failed
// with; the real test fails if body did not fail.
func fatal(t *testing.T, body func(t testing.TB)) string {
	t.Helper()
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(ft)
	}()
	<-done
	for i := len(ft.cleanups) - 1; i >= 0; i-- {
		ft.cleanups[i]()
	}
	if len(ft.msgs) == 0 {
		t.Fatal("the body did not fail")
	}
	return ft.msgs[0]
}

// TestWrongTypes: a wrong type argument (or name) fails the test with a
// message that names the source, sink or state and both types.
func TestWrongTypes(t *testing.T) {
	cases := []struct {
		name string
		body func(d *streamdbgtest.Driver)
		want []string
	}{
		{"input type", func(d *streamdbgtest.Driver) { streamdbgtest.Input[int](d, "lines") },
			[]string{`Input[int]("lines")`, `source "lines" reads string, not int`}},
		{"input name", func(d *streamdbgtest.Driver) { streamdbgtest.Input[string](d, "line") },
			[]string{`no such source`, `"lines"`}},
		{"output type", func(d *streamdbgtest.Driver) { streamdbgtest.Output[string](d, "out") },
			[]string{`sink "out" receives streamdbgtest_test.Count, not string`}},
		{"output name", func(d *streamdbgtest.Driver) { streamdbgtest.Output[Count](d, "sink") },
			[]string{`no such sink`, `"out"`}},
		{"side output type", func(d *streamdbgtest.Driver) {
			in := streamdbgtest.Input[string](d, "lines")
			side := streamdbgtest.SideOutput[int](d, "split", "long")
			in.Push("lengthy")
			side.ReadAll()
		}, []string{`side output "long" of "split"`, `emitted a string`, `not a int`}},
		{"value type", func(d *streamdbgtest.Driver) { streamdbgtest.ValueState[string](d, "count", "count").Get("a") },
			[]string{`ValueState[string]("count", "count")`, `state "count" of "count" holds int64, not string`}},
		{"state kind", func(d *streamdbgtest.Driver) { streamdbgtest.ListState[int64](d, "count", "count").Get("a") },
			[]string{`state "count" of "count" is value state`, `reads list state`}},
		{"map user key type", func(d *streamdbgtest.Driver) { streamdbgtest.MapState[int64, int64](d, "count", "letters").Get("a", 1) },
			[]string{`state "letters" of "count" is keyed by string, not int64`}},
		{"key type", func(d *streamdbgtest.Driver) { streamdbgtest.ValueState[int64](d, "count", "count").Get(42) },
			[]string{`key 42 is a int`, `operator's keys are string`}},
		{"state name", func(d *streamdbgtest.Driver) { streamdbgtest.ValueState[int64](d, "count", "cnt").Get("a") },
			[]string{`declared no keyed state "cnt"`, `"count", "letters", "seen"`}},
		{"operator name", func(d *streamdbgtest.Driver) { streamdbgtest.ValueState[int64](d, "counter", "count").Get("a") },
			[]string{`no operator "counter"`, `"count"`}},
		// Before: "declared no keyed state" alone, for state it declared.
		{"operator state", func(d *streamdbgtest.Driver) { streamdbgtest.ListState[int64](d, "lines", "offset").Get("a") },
			[]string{`"offset" is operator state (split_list): read it with Query(` + "`" + `SELECT subtask, key, value FROM "lines"."offset"` + "`" + `)`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := fatal(t, func(ft testing.TB) { c.body(streamdbgtest.New(ft, wordJob())) })
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
		})
	}
}
