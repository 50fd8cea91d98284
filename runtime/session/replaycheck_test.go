package session_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/runtime/window"
	"streamdbg/state"
)

// fieldCounter keeps a count in a field instead of in state.
type fieldCounter struct {
	seen  *state.ValueState[int64]
	total int
}

func (f *fieldCounter) Open(ctx runtime.RuntimeContext) (err error) {
	f.seen, err = state.Value("seen", state.Int64).Bind(ctx)
	return err
}
func (f *fieldCounter) Close() error { return nil }
func (f *fieldCounter) Map(s string) (int, error) {
	f.total++
	return f.total, f.seen.Update(int64(f.total))
}

// firedCounter counts the windows it fired in a field.
type firedCounter struct{ n int }

func (f *firedCounter) Process(ctx *window.Context[int], _ string, es []int64) error {
	f.n++
	ctx.Collect(f.n)
	return nil
}

func lostStateJob(closure bool) *runtime.Job {
	job := runtime.NewJob("lost")
	src := runtime.FromSlice(job, "in", []string{"a", "b", "c", "d"}, runtime.WatermarkStrategy[string]{}, runtime.UID("in"))
	var out *runtime.Stream[int]
	if closure {
		n := 0
		out = runtime.Map(src, "number", func(string) (int, error) { n++; return n, nil }, runtime.UID("number"))
	} else {
		out = runtime.RichMap(runtime.KeyBy(src, "s", func(s string) string { return s }), "number", &fieldCounter{}, runtime.UID("number"))
	}
	runtime.JSONSink(out, "out", runtime.UID("out"))
	return job
}

// TestBackRefusesLostState: back finds a function that keeps state
// outside its declared state, and names it: a struct's field that changed
// after Open before anything is replayed, a captured variable by the
// replay's records differing from the first run's.
func TestBackRefusesLostState(t *testing.T) {
	for _, c := range []struct {
		closure bool
		want    []string
	}{
		{false, []string{`operator "number"`, "field total of its function *session_test.fieldCounter changed after Open (0 -> 3)"}},
		{true, []string{`replaying record 1, operator "number" (subtask 0) emitted other records`, "a variable a plain function captures"}},
	} {
		s, err := session.New(lostStateJob(c.closure), session.Options{Options: runtime.Options{Trace: true}})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		_, err = s.Back()
		s.Close()
		if err == nil {
			t.Fatalf("closure %v: back succeeded", c.closure)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("closure %v: %q does not say %q", c.closure, err, w)
			}
		}
		var fe *runtime.FunctionStateError
		var re *session.ReplayError
		if c.closure && !errors.As(err, &re) || !c.closure && !errors.As(err, &fe) {
			t.Errorf("closure %v: error %T", c.closure, err)
		}
	}
	// A window function's fields are checked too.
	job := runtime.NewJob("lost window")
	src := runtime.FromSlice(job, "in", []int64{1, 2, 3, 4}, runtime.Monotonous(func(v int64) (int64, error) { return v, nil }), runtime.UID("in"))
	ws := window.Of(runtime.KeyBy(src, "all", func(int64) string { return "all" }), window.TumblingEventTime(time.Millisecond))
	runtime.JSONSink(window.RichProcess(ws, "fired", &firedCounter{}, runtime.UID("fired")), "out", runtime.UID("out"))
	ws2, err := session.New(job, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := ws2.Next(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = ws2.Back()
	ws2.Close()
	if err == nil || !strings.Contains(err.Error(), `operator "fired"`) || !strings.Contains(err.Error(), "field n of its function *session_test.firedCounter") {
		t.Fatalf("back over a window function with a field: %v", err)
	}

	// Savepoints refuse the field too.
	s, err := session.New(lostStateJob(false), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if err := s.Savepoint(nil, "unused"); err == nil || !strings.Contains(err.Error(), "field total") {
		t.Fatalf("savepoint of a job with lost state: %v", err)
	}
}
