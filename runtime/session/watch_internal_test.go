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

// History: going back undoes the revisions after the target, by the log
// or (beyond it) by visiting every entry, and an entry is listed once.
func TestHistoryTruncate(t *testing.T) {
	var h history
	a, b := EntryID{Key: "a"}, EntryID{Key: "b"}
	for pos := int64(1); pos <= 6; pos++ {
		h.add(a, Revision{Position: pos, New: pos})
		if pos%2 == 0 {
			h.add(b, Revision{Position: pos, New: pos})
		}
	}
	h.truncate(3)
	if n := len(h.revisions(a)); n != 3 || h.revisions(a)[2].Position != 3 {
		t.Fatalf("a after truncate(3): %+v", h.revisions(a))
	}
	if n := len(h.revisions(b)); n != 1 {
		t.Fatalf("b after truncate(3): %+v", h.revisions(b))
	}
	h.truncate(0)
	h.add(b, Revision{Position: 1})
	if len(h.order) != 1 || h.order[0].id != b || len(h.revisions(a)) != 0 || len(h.revisions(b)) != 1 {
		t.Fatalf("after truncate(0) and a write of b: order %v, a %v, b %v", h.order, h.revisions(a), h.revisions(b))
	}
	// Beyond the log: every entry is visited.
	h.log = h.log[len(h.log)-1:]
	h.log[0].pos = 5
	h.add(a, Revision{Position: 9})
	h.truncate(2)
	if len(h.revisions(a)) != 0 || len(h.revisions(b)) != 1 {
		t.Fatalf("full truncate: a %v b %v", h.revisions(a), h.revisions(b))
	}
}
