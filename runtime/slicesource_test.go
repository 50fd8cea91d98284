package runtime

import (
	"bytes"
	"strings"
	"testing"
)

func TestFromSliceResumesFromCheckpoint(t *testing.T) {
	build := func() *Job {
		j := NewJob("slice")
		src := FromSlice(j, "Source: items", []string{"a", "b", "a", "c", "a"}, WatermarkStrategy[string]{}, UID("items"))
		k := KeyBy(src, "self", func(s string) string { return s })
		JSONSink(Map(k, "upper", func(s string) (string, error) { return strings.ToUpper(s), nil }, UID("upper")), "out", UID("out"))
		return j
	}
	var out bytes.Buffer
	e, err := NewExecutor(build(), Options{Output: &out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.Next(); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := e.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	var rest bytes.Buffer
	r, err := NewExecutor(build(), Options{Output: &rest, Parallelism: 2}, cp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for !r.Finished() {
		if err := r.Next(); err != nil && err != ErrFinished {
			t.Fatal(err)
		}
	}
	r.Flush()
	e.Flush()
	if got, want := out.String()+rest.String(), "\"A\"\n\"B\"\n\"A\"\n\"C\"\n\"A\"\n"; got != want {
		t.Fatalf("outputs %q, want %q", got, want)
	}
	if r.Position() != 5 {
		t.Fatalf("position %d, want 5", r.Position())
	}
}
