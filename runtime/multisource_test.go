package runtime_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"streamdbg/runtime"
)

type stamped struct {
	Src string
	TS  int64
}

func (s stamped) String() string { return fmt.Sprintf("%s@%d", s.Src, s.TS) }

// readOrder runs a job of two slice sources unioned into a sink, one Next
// per record, and returns the records in the order the sink got them.
func readOrder(t *testing.T, a, b []stamped, timestamps bool) []string {
	t.Helper()
	job := runtime.NewJob("order")
	wm := runtime.WatermarkStrategy[stamped]{}
	if timestamps {
		wm = runtime.BoundedOutOfOrderness(0, func(s stamped) (int64, error) { return s.TS, nil })
	}
	s1 := runtime.FromSlice(job, "Source: a", a, wm, runtime.UID("a"))
	s2 := runtime.FromSlice(job, "Source: b", b, wm, runtime.UID("b"))
	var got []string
	runtime.Sink(runtime.Union(s1, s2), "sink", func(s stamped) error {
		got = append(got, s.String())
		return nil
	}, runtime.UID("sink"), runtime.Parallelism(1))
	e, err := runtime.NewExecutor(job, runtime.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for {
		err := e.Next()
		if errors.Is(err, runtime.ErrFinished) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiSourceOrder: several sources that all assign timestamps are
// read in the event-time order of their next record, ties going to the
// source declared first; otherwise round-robin by record.
func TestMultiSourceOrder(t *testing.T) {
	a := []stamped{{"a", 1}, {"a", 5}, {"a", 9}, {"a", 3}}
	b := []stamped{{"b", 2}, {"b", 5}, {"b", 6}}
	got := readOrder(t, a, b, true)
	// a@3 after a@9: a source's records stay in its own order
	want := []string{"a@1", "b@2", "a@5", "b@5", "b@6", "a@9", "a@3"}
	if !slices.Equal(got, want) {
		t.Fatalf("event-time order %v, want %v", got, want)
	}
	got = readOrder(t, a, b, false)
	want = []string{"a@1", "b@2", "a@5", "b@5", "a@9", "b@6", "a@3"}
	if !slices.Equal(got, want) {
		t.Fatalf("round-robin order %v, want %v", got, want)
	}
}
