package session

import (
	"testing"

	"streamdbg/fixtures"
)

// A watch whose query fails when it runs gives a result that still names
// the watch (the TUI crashed on a result without one).
func TestEvalWatchErrorKeepsTheWatch(t *testing.T) {
	job, err := fixtures.Build("wordcount", fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(job, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := &Watch{ID: 9, Query: `SELECT key FROM "nosuch"`}
	res := s.evalWatch(w)
	if res.Err == nil || res.WatchID != 9 || res.Query != w.Query {
		t.Fatalf("result %+v: want an error naming watch #9", res)
	}
	if last := w.Last(); last.WatchID != 9 || last.Err == nil {
		t.Fatalf("Last() = %+v: want the error result", last)
	}
}
