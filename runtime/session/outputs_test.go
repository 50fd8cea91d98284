package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// TestOutputsBounded: Outputs keeps the last OutputLimit sink records, in
// order, and a slice returned earlier does not change under its holder.
func TestOutputsBounded(t *testing.T) {
	const limit = 7
	var out bytes.Buffer
	s := openSession(t, buildJob(t, "wordcount"), session.Options{Options: runtime.Options{Trace: true, Output: &out}, OutputLimit: limit})
	defer s.Close()
	var early []session.Output
	var earlyCopy []session.Output
	for i := range 40 {
		if _, err := s.NextN(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			early = s.Outputs()
			earlyCopy = append(earlyCopy, early...)
		}
	}
	got := s.Outputs()
	if err := s.Close(); err != nil { // flushes the sink
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	if len(lines) < 3*limit || len(got) != limit {
		t.Fatalf("%d outputs kept of %d, want %d", len(got), len(lines), limit)
	}
	for i, o := range got {
		if want := int64(len(lines) - limit + i + 1); o.Seq != want {
			t.Errorf("output %d has seq %d, want %d", i, o.Seq, want)
		}
		b, err := json.Marshal(o.Value)
		if err != nil {
			t.Fatal(err)
		}
		if want := lines[len(lines)-limit+i]; !bytes.Equal(b, want) {
			t.Errorf("output %d is %s, want %s", i, b, want)
		}
	}
	for i := range early {
		if early[i] != earlyCopy[i] {
			t.Errorf("an earlier Outputs slice changed at %d: %+v, was %+v", i, early[i], earlyCopy[i])
		}
	}
}

// TestRunTraceBounded: a headless Run with tracing on leaves no trace
// behind in the executor (it grew with the run before) and its sink
// records reach Outputs, bounded, with their total.
func TestRunTraceBounded(t *testing.T) {
	const limit = 5
	s := openSession(t, buildJob(t, "wordcount"), session.Options{Options: runtime.Options{Trace: true}, OutputLimit: limit})
	defer s.Close()
	res, err := s.Run(context.Background(), session.RunOptions{Steps: 30})
	if err != nil {
		t.Fatal(err)
	}
	if res.Position != 30 {
		t.Fatalf("ran to record %d, want 30", res.Position)
	}
	if left := s.Executor().TakeTrace(); len(left) != 0 {
		t.Fatalf("the executor still holds %d trace events after Run", len(left))
	}
	if s.OutputTotal() < 3*limit || len(s.Outputs()) != limit {
		t.Fatalf("Run gave %d outputs, %d kept; want more than %d, %d kept", s.OutputTotal(), len(s.Outputs()), 3*limit, limit)
	}
}
