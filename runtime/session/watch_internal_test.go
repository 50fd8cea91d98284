package session

import (
	"fmt"
	"math/rand/v2"
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

// An entry's revisions past historyPerEntry are a ring (the newest over
// the oldest): read at every point of its turn, they are the last
// historyPerEntry in order, the forgotten ones counted, and a back that
// pops the newest after a turn leaves the ones before it (not the
// forgotten ones: as before the ring, a back does not bring them back).
func TestHistoryRevisionsRing(t *testing.T) {
	defer func(n int) { historyPerEntry = n }(historyPerEntry)
	historyPerEntry = 4
	var h history
	a := EntryID{Key: "a"}
	for pos := int64(1); pos <= 13; pos++ {
		h.add(a, Revision{Position: pos, New: pos})
		if pos%3 != 0 {
			continue // read at head 1, 0, 3, ...: some reads find it turned
		}
		got := h.revisions(a)
		var want []int64
		for p := max(1, pos-3); p <= pos; p++ {
			want = append(want, p)
		}
		if len(got) != len(want) {
			t.Fatalf("after %d writes: %d revisions, want %v", pos, len(got), want)
		}
		for i, r := range got {
			if r.Position != want[i] || r.New != want[i] {
				t.Fatalf("after %d writes: revision %d is %+v, want position %d", pos, i, r, want[i])
			}
		}
		if f := h.byID.get(a).forgotten(); f != int(max(0, pos-4)) {
			t.Fatalf("after %d writes: %d forgotten, want %d", pos, f, max(0, pos-4))
		}
	}
	h.add(a, Revision{Position: 14, New: int64(14)}) // 13 and 14 over 9 and 10: head 2
	h.truncate(12)
	got := h.revisions(a)
	if len(got) != 2 || got[0].Position != 11 || got[1].Position != 12 {
		t.Fatalf("after truncate(12): %+v, want positions 11, 12", got)
	}
	h.add(a, Revision{Position: 13, New: int64(13)})
	h.add(a, Revision{Position: 14, New: int64(14)})
	got = h.revisions(a)
	if len(got) != 4 || got[0].Position != 11 || got[3].Position != 14 {
		t.Fatalf("after two more writes: %+v, want positions 11 to 14", got)
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

// refHistory is the history's rules written plainly: entries by first
// write, the oldest beyond HistoryEntries forgotten (a later write starts
// it again as the newest), the last HistoryPerEntry revisions of each.
type refHistory struct {
	order   []EntryID
	revs    map[EntryID][]Revision
	trimmed map[EntryID]int
	forgot  int64 // entries forgotten (history.forgot)
}

func (r *refHistory) add(id EntryID, rev Revision) {
	if r.revs == nil {
		r.revs, r.trimmed = map[EntryID][]Revision{}, map[EntryID]int{}
	}
	if _, ok := r.revs[id]; !ok {
		r.order = append(r.order, id)
		r.revs[id] = []Revision{}
		if len(r.order) > historyBound {
			delete(r.revs, r.order[0])
			delete(r.trimmed, r.order[0])
			r.order = r.order[1:]
			r.forgot++
		}
	}
	revs := r.revs[id]
	if len(revs) == historyPerEntry {
		revs = revs[1:]
		r.trimmed[id]++
	}
	r.revs[id] = append(append([]Revision(nil), revs...), rev)
}

// truncate drops the revisions after pos; entries keep their place (the
// log's way, which is what a back within the log does), or with all an
// entry's revisions dropped the entry goes too (a back beyond the log,
// which visits every entry).
func (r *refHistory) truncate(pos int64, beyondLog bool) {
	for id, revs := range r.revs {
		n := len(revs)
		for n > 0 && revs[n-1].Position > pos {
			n--
		}
		r.revs[id] = revs[:n]
	}
	if !beyondLog {
		return
	}
	kept := r.order[:0]
	for _, id := range r.order {
		if len(r.revs[id]) == 0 {
			delete(r.revs, id)
			delete(r.trimmed, id)
			continue
		}
		kept = append(kept, id)
	}
	r.order = kept
}

// TestHistoryForgetsAndTakesBack drives the history through the session's
// two ways in (by EntryID, as a traced step writes, and by a kept pointer,
// as a light run writes) over more entries than it keeps, with backs, and
// compares every entry's history and the order with refHistory.
func TestHistoryForgetsAndTakesBack(t *testing.T) {
	for _, goneMax := range []int{historyGoneMax, 1000} {
		// A log of 3000 writes: the backs (up to 5000 writes) go
		// beyond it at times.
		for _, log := range []int{historyLog, 3000} {
			t.Run(fmt.Sprintf("gone-max-%d/log-%d", goneMax, log), func(t *testing.T) {
				defer func(n, l int) { historyGoneMax, historyLog = n, l }(historyGoneMax, historyLog)
				historyGoneMax, historyLog = goneMax, log
				testHistoryForgetsAndTakesBack(t)
			})
		}
	}
}

func testHistoryForgetsAndTakesBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	var h history
	var ref refHistory
	const keys = 3 * HistoryEntries / 2
	ids := make([]EntryID, keys)
	kept := make([]*histEntry, keys) // a light run's pointers
	for i := range ids {
		ids[i] = EntryID{Operator: "count", State: "n", Key: fmt.Sprint(i)}
	}
	pos := int64(0)
	check := func(when string) {
		t.Helper()
		if len(h.order) != len(ref.order) {
			t.Fatalf("%s: %d entries, want %d", when, len(h.order), len(ref.order))
		}
		if h.forgot != ref.forgot {
			t.Fatalf("%s: the history forgot %d entries, want %d", when, h.forgot, ref.forgot)
		}
		for i, he := range h.order {
			if he.id != ref.order[i] || !h.live(he) {
				t.Fatalf("%s: entry %d is %v (gone %v), want %v", when, i, he.id, !h.live(he), ref.order[i])
			}
		}
		for _, id := range ids {
			got := h.revisions(id)
			want := ref.revs[id]
			if len(got) != len(want) {
				t.Fatalf("%s: %v has %d revisions, want %d", when, id, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: %v revision %d is %+v, want %+v", when, id, i, got[i], want[i])
				}
			}
			if he := h.byID.get(id); he != nil && h.live(he) && he.forgotten() != ref.trimmed[id] {
				t.Fatalf("%s: %v forgot %d revisions, want %d", when, id, he.forgotten(), ref.trimmed[id])
			}
		}
	}
	for round := range 4 {
		for range 40_000 {
			pos++
			// Hot keys (often rewritten, past HistoryPerEntry) and the
			// whole range (forgotten and written again).
			k := rng.IntN(keys)
			if rng.IntN(4) == 0 {
				k = rng.IntN(20)
			}
			rev := Revision{Position: pos, New: pos, HadOld: true}
			if rng.IntN(2) == 0 {
				h.add(ids[k], rev)
			} else {
				he := kept[k]
				if he == nil {
					he = h.entry(ids[k])
				} else {
					he = h.use(he)
				}
				kept[k] = he
				h.addTo(he, rev)
			}
			ref.add(ids[k], rev)
		}
		check(fmt.Sprintf("round %d", round))
		back := pos - int64(rng.IntN(5000))
		beyond := len(h.log) > 0 && h.log[0].pos > back
		h.truncate(back)
		ref.truncate(back, beyond)
		pos = back
		check(fmt.Sprintf("round %d, back to %d", round, back))
	}
}

// The write log keeps the last historyLog writes when it reaches twice
// that, in order, and going back within it still finds them.
func TestHistoryLogTrim(t *testing.T) {
	var h history
	ids := []EntryID{{Key: "a"}, {Key: "b"}, {Key: "c"}}
	n := int64(2*historyLog + 5)
	for pos := int64(1); pos <= n; pos++ {
		h.add(ids[pos%3], Revision{Position: pos})
	}
	if len(h.log) != historyLog+5 {
		t.Fatalf("log holds %d writes, want %d", len(h.log), historyLog+5)
	}
	for i, l := range h.log {
		if want := n - int64(len(h.log)-1-i); l.pos != want || l.e.id != ids[want%3] {
			t.Fatalf("log[%d] = %d %v, want %d %v", i, l.pos, l.e.id, want, ids[want%3])
		}
	}
	h.truncate(n - 10)
	for _, id := range ids {
		revs := h.revisions(id)
		if last := revs[len(revs)-1].Position; last > n-10 || last < n-12 {
			t.Fatalf("%v's last revision after going back to %d: %d", id, n-10, last)
		}
	}
}
