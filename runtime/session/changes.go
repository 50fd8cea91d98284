package session

import (
	"slices"

	"streamdbg/query"
	"streamdbg/runtime"
)

// EntryID names one entry of keyed state: the operator and subtask that
// hold it, the state, and the entry's key, namespace and user key printed
// as query.FormatValue prints them (nil prints as NULL). Views look rows
// up by it to mark what a stop changed and to show an entry's history.
type EntryID struct {
	Operator  string
	Subtask   int
	State     string
	Key       string
	Namespace string
	UserKey   string
}

// Entry returns the EntryID of a row of keyed state.
func Entry(operator string, subtask int, stateName string, key, namespace, userKey any) EntryID {
	return EntryID{Operator: operator, Subtask: subtask, State: stateName,
		Key: query.FormatValue(key), Namespace: query.FormatValue(namespace), UserKey: query.FormatValue(userKey)}
}

// Change is what one command did to one entry: its value before the
// command's first write (HadOld false: the entry was new) and after the
// last one.
type Change struct {
	Old, New any
	HadOld   bool
	Cleared  bool // the last write cleared the entry
	Writes   int
	// Where the entry is, so that a view can read the changed entries
	// alone: its key group and its key, namespace and user key (dynamic
	// values).
	KeyGroup                int
	Key, Namespace, UserKey any
}

// MaxChanges bounds the entries a stop lists as changed; a stop that
// changed more says how many writes to the others it left out
// (Stop.ChangesDropped: writes, not entries).
const MaxChanges = 20000

// maxChanges is the bound the collector applies (a variable for tests).
var maxChanges = MaxChanges

// Revision is one write to an entry in this session: at which source
// record, the value before and after.
type Revision struct {
	Position int64
	Old, New any
	HadOld   bool
	Cleared  bool
}

// History bounds: the revisions kept per entry (the latest ones) and the
// entries with a history (the most recently first-written ones). Older
// ones are forgotten, and History says so.
const (
	HistoryPerEntry = 64
	HistoryEntries  = 50000
)

// historyBound and historyPerEntry are the bounds the history applies
// (variables for tests).
var (
	historyBound    = HistoryEntries
	historyPerEntry = HistoryPerEntry
)

// history is the revisions of the entries written in this session.
//
// Entries by first write: each history an entry starts (its first write,
// or its first write after it was forgotten) gets the next number, ins;
// order holds the last historyBound of them, numbered ins-len(order)+1 to
// ins in order. An entry whose number is front() or less has been
// forgotten (gone): that needs no visit to the entry when it is dropped,
// which lets a light run's writes be folded in later (light.go's fold),
// most of them without touching their entries at all.
type history struct {
	// byID finds an entry's history. A forgotten entry stays in it (gone,
	// without revisions) until gone ones outnumber the rest thrice, so
	// that a later write takes it back without a lookup (light runs keep
	// it by pointer) and forgetting costs no map deletion.
	byID entryIndex
	// goneIn counts the gone entries in byID.
	goneIn int
	// byIDSize is the size byID was made for (grow).
	byIDSize int
	order    []*histEntry // entries by first write, for forgetting the oldest
	// orderBuf is order's array (order starts later in it once the
	// oldest entries are forgotten).
	orderBuf []*histEntry
	// ins is the number of the newest history (order's last entry's).
	ins int64
	// chGen is the command (collector.gen) whose change indexes the
	// entries hold (histEntry.chGen; 0: none): while it is set, an entry
	// of byID without one has no change in the command, and compact
	// keeps the entries that have one in byID, so that an entry's change
	// is found without a lookup by its EntryID.
	chGen uint64
	// log is the recent writes in order, so that going back undoes the
	// writes after the target without visiting every entry.
	log []logged
	// spare is the revision records of forgotten histories, for the next
	// ones (histEntry.rec).
	spare []*histRevs
	// forgot counts the histories historyBound made it forget (since the
	// session started or was restored).
	forgot int64
	// unsettled decodes the entries of the lazy histories (histEntry.lazy)
	// a light run kept at its end: they get their EntryIDs and go into
	// byID at the first use of byID after the run (settle), not at its
	// stop. A long run's stop over a large state shows without making
	// tens of thousands of EntryIDs, which only a lookup by EntryID
	// (an entry's details, the next command's writes) needs.
	// INVARIANT: byID is only used through index() while it is set.
	unsettled *runtime.LightEntries
	// unsettledCompact: settle ends with compact, as the fold that left
	// the histories unsettled would have.
	unsettledCompact bool
}

// histEntry is one entry's history. A write names it by pointer (a light
// trace's entry keeps it), so that it needs no EntryID lookup; a
// forgotten one (historyBound; see live) starts its history again with
// its next write, in this histEntry when it is still in byID (indexed).
type histEntry struct {
	// num is the number of the entry's history (history.ins when it
	// began; 0: none).
	num     int64
	indexed bool // byID[id] is this entry
	// ch is the index of the entry's change in the command chGen (see
	// history.chGen).
	ch    int32
	chGen uint64
	// lazy, when not 0, names the LightEntry of a light run's write that
	// began this history (gen<<32 | index) and says that it has no id
	// yet and is not in byID (see collector.materialize).
	lazy uint64
	// rec holds the revisions (nil: none). Only a kept history has one:
	// forgetting it gives its record to the next history (history.spare),
	// so that the many forgotten entries of a large state hold no
	// revisions, and no pointers for the garbage collector to follow.
	rec *histRevs
	id  EntryID
	// next is the next history in byID's chain of this one's hash.
	next *histEntry
}

// histRevs is the revisions of a history.
type histRevs struct {
	revs []Revision
	// head is where the oldest of revs is once they are historyPerEntry
	// (a ring: a revision beyond that takes the place of the oldest, not
	// a shift of the others by one, which made a long run over few keys
	// copy 63 revisions a write); 0 otherwise. inOrder puts them in order.
	head    int
	trimmed int // revisions forgotten (historyPerEntry)
	// first is the array of revs until it grows (most histories hold a
	// revision or two: no allocation, and no other memory to reach).
	first [2]Revision
}

// lazyEntry is the LightEntry a lazy history names (histEntry.lazy).
func (he *histEntry) lazyEntry() (gen uint32, idx int) {
	return uint32(he.lazy >> 32), int(uint32(he.lazy))
}

// forgotten is how many revisions he forgot (historyPerEntry).
func (he *histEntry) forgotten() int {
	if he.rec == nil {
		return 0
	}
	return he.rec.trimmed
}

// revs is the revisions of he, oldest first (nil for none).
func (he *histEntry) revs() []Revision {
	if he.rec == nil {
		return nil
	}
	he.rec.inOrder()
	return he.rec.revs
}

// inOrder makes r.revs start at the oldest revision (head 0): rotated in
// place, when a reader asks, not at every write.
func (r *histRevs) inOrder() {
	if r.head == 0 {
		return
	}
	slices.Reverse(r.revs[:r.head])
	slices.Reverse(r.revs[r.head:])
	slices.Reverse(r.revs)
	r.head = 0
}

type logged struct {
	pos int64
	e   *histEntry
}

// historyGoneMax bounds the gone entries byID keeps (a variable for
// tests).
var historyGoneMax = 3 * HistoryEntries

// historyLog bounds the writes the log keeps; going back further than it
// reaches visits every entry instead (a variable for tests).
var historyLog = 4 * HistoryEntries

// front is the number of the newest history forgotten: order's entries
// are numbered after it.
func (h *history) front() int64 { return h.ins - int64(len(h.order)) }

// index is byID, the histories a light run left unsettled settled first.
func (h *history) index() *entryIndex {
	h.settle()
	return &h.byID
}

// settle gives the lazy histories the last light run kept their EntryIDs
// and puts them in byID, as the run's end would have (see unsettled), and
// counts the forgotten ones byID holds again (goneIn counted the lazy ones
// too, which byID never held).
func (h *history) settle() {
	src := h.unsettled
	if src == nil {
		return
	}
	h.unsettled = nil
	live := 0
	for _, he := range h.order {
		if he.lazy != 0 {
			h.materializeAs(he, src.EntryIn(he.lazyEntry()))
		}
		if he.indexed {
			live++
		}
	}
	h.goneIn = h.byID.n - live
	if h.unsettledCompact {
		h.unsettledCompact = false
		h.compact()
	}
}

// materializeAs gives the lazy history he its EntryID, that of its entry
// e, and puts it in byID. When byID holds another history of that EntryID
// (another entry whose key, namespace and user key print the same as this
// one's), a forgotten one makes room for it; a kept one stays, and this
// one stays out of byID (not indexed): the history then lists two entries
// by one EntryID, as the two entries of state print alike.
func (h *history) materializeAs(he *histEntry, e runtime.LightEntry) {
	h.settle() // an earlier run's first (its lazy histories are older)
	he.id = Entry(e.Operator, e.Subtask, e.State, e.Key, e.Namespace, e.UserKey)
	he.lazy = 0
	other := h.byID.put(he)
	if other == nil {
		return
	}
	if h.live(other) {
		he.indexed = false
		return
	}
	h.byID.del(other)
	other.indexed = false
	h.goneIn--
	h.byID.link(he)
}

// live reports whether he has a history (it is in order): not forgotten.
func (h *history) live(he *histEntry) bool { return he.num > h.front() }

// entry returns the history of id, making it (and forgetting the oldest
// entry beyond historyBound) when there is none.
func (h *history) entry(id EntryID) *histEntry { return h.entryIn(id, nil) }

// entryIn is entry, making a new history in spare when it is not nil.
func (h *history) entryIn(id EntryID, spare *histEntry) *histEntry {
	he, made := h.lookup(id, spare)
	if made {
		h.appendOrder(he)
	} else if !h.live(he) {
		h.revive(he)
	}
	return he
}

// lookup returns byID[id], or makes it (in spare when not nil) without
// a history yet (made).
func (h *history) lookup(id EntryID, spare *histEntry) (he *histEntry, made bool) {
	return h.index().lookup(id, spare)
}

// grow makes room in byID for n more entries at once, up to what it can
// hold (historyBound live and historyGoneMax gone ones), instead of
// letting it grow (and rehash) step by step while a fold adds them.
func (h *history) grow(n int) {
	h.settle()
	want := min(h.byID.n+n, historyBound+historyGoneMax)
	if want <= 2*max(h.byIDSize, h.byID.n, 1024) {
		return
	}
	m := make(map[uint64]*histEntry, want)
	for k, he := range h.byID.m {
		m[k] = he
	}
	h.byID.m, h.byIDSize = m, want
}

// use returns the history to add a write of he's entry to: he itself,
// taken back if it was forgotten, or (he no longer indexed) the entry's
// history in byID.
func (h *history) use(he *histEntry) *histEntry {
	if h.live(he) {
		return he
	}
	if he.indexed {
		h.revive(he)
		return he
	}
	return h.entry(he.id)
}

// restart clears what an entry kept of its history, for the history it
// starts now (a forgotten one kept nothing: forget).
func (h *history) restart(he *histEntry) {
	h.forget(he)
}

// revive starts the history of a gone entry of byID again: it is the
// newest entry.
func (h *history) revive(he *histEntry) {
	h.restart(he)
	h.goneIn--
	h.appendOrder(he)
}

// appendOrder makes he the newest entry, forgetting the oldest beyond
// historyBound.
func (h *history) appendOrder(he *histEntry) {
	h.ins++
	he.num = h.ins
	h.pushOrder(he)
	if len(h.order) <= historyBound {
		return
	}
	old := h.order[0]
	h.order[0] = nil
	h.order = h.order[1:]
	h.forget(old)
	h.goneIn++
	h.forgot++
	h.compact()
}

// pushOrder appends he to order (numbered already).
func (h *history) pushOrder(he *histEntry) {
	if len(h.order) == cap(h.order) {
		// Move the entries to the front of their array instead of letting
		// append grow a new one each time the forgotten ones' room ran out.
		buf := h.orderBuf[:cap(h.orderBuf)]
		if len(buf) < 2*len(h.order)+1 {
			buf = make([]*histEntry, max(16, 2*len(h.order)+1))
		}
		n := copy(buf, h.order)
		clear(buf[n:])
		h.orderBuf, h.order = buf, buf[:n]
	}
	h.order = append(h.order, he)
}

// forget lets go of what a forgotten entry's history holds: its record
// goes to the next history that needs one (newRec), with its array of
// revisions when that is small (first, or one of up to 8): most entries
// of a large state are forgotten and written again, and a new array
// each time was most of what a long run allocated.
func (h *history) forget(old *histEntry) {
	if r := old.rec; r != nil {
		old.rec = nil
		if cap(r.revs) > 8 {
			r.revs = nil
		}
		h.spare = append(h.spare, r)
	}
}

// newRec returns an empty record of revisions: a forgotten history's
// (cleared) or a new one.
func (h *history) newRec() *histRevs {
	n := len(h.spare)
	if n == 0 {
		return &histRevs{}
	}
	r := h.spare[n-1]
	h.spare[n-1] = nil
	h.spare = h.spare[:n-1]
	r.trimmed, r.head = 0, 0
	if r.revs == nil {
		clear(r.first[:])
		r.revs = r.first[:0]
	} else {
		all := r.revs[:cap(r.revs)]
		clear(all)
		r.revs = all[:0]
	}
	return r
}

// compact drops the gone entries from byID once they are too many.
func (h *history) compact() {
	if h.goneIn <= historyGoneMax {
		return
	}
	h.goneIn = 0
	h.index().filter(func(e *histEntry) bool {
		if !h.live(e) {
			if h.chGen != 0 && e.chGen == h.chGen && e.ch >= 0 {
				h.goneIn++ // its change is found by it
				return true
			}
			return false
		}
		return true
	}, func(e *histEntry) { e.indexed = false })
}

func (h *history) add(id EntryID, r Revision) { h.addTo(h.entry(id), r) }

// addTo adds a revision to an entry's history (he live) and the write to
// the log.
func (h *history) addTo(he *histEntry, r Revision) {
	h.addRev(he, r)
	h.logWrite(r.Position, he)
}

// addRev adds a revision to an entry's history (he live).
func (h *history) addRev(he *histEntry, r Revision) {
	if he.rec == nil {
		he.rec = h.newRec()
	}
	rec := he.rec
	if len(rec.revs) >= historyPerEntry {
		rec.revs[rec.head] = r // over the oldest
		if rec.head++; rec.head == len(rec.revs) {
			rec.head = 0
		}
		rec.trimmed++
		return
	}
	if rec.revs == nil {
		rec.revs = rec.first[:0]
	}
	rec.revs = append(rec.revs, r)
}

// logWrite adds a write of he at pos to the log.
func (h *history) logWrite(pos int64, he *histEntry) {
	if len(h.log) >= 2*historyLog {
		// In place: nothing else holds the log, and a new array every
		// historyLog writes (grown again by append) was most of what a
		// long run allocated.
		n := copy(h.log, h.log[len(h.log)-historyLog:])
		clear(h.log[n:])
		h.log = h.log[:n]
	}
	if len(h.log) == cap(h.log) {
		// Doubled up to its bound (append grows a large array by a
		// quarter at a time, copying it each time).
		l := make([]logged, len(h.log), max(len(h.log)+1, min(2*cap(h.log), 2*historyLog), 256))
		copy(l, h.log)
		h.log = l
	}
	h.log = append(h.log, logged{pos: pos, e: he})
}

// logFold adds the writes of a fold (ws, their histories in slots) to the
// log, as logWrite would one by one: the same writes end up in it, but
// only those that stay are copied (a fold of a long light run writes
// several times what the log keeps).
func (h *history) logFold(ws []runtime.LightRec, slots []foldSlot) {
	n := len(ws)
	if n == 0 {
		return
	}
	bound := 2 * historyLog
	m := len(h.log)
	kept := m
	if m >= bound {
		kept = historyLog // logWrite's first write keeps the last historyLog
	}
	// The length logWrite leaves: it grows to bound, then each write
	// beyond drops all but the last historyLog first.
	f := kept + n
	if f > bound {
		f = historyLog + (f-bound-1)%historyLog + 1
	}
	old := max(f-n, 0) // the log's writes that stay: its last ones
	// The log starts at its array's start (logWrite moves it there).
	buf := h.log[:cap(h.log)]
	if start := m - old; start > 0 {
		copy(buf, h.log[start:])
		clear(buf[old:m])
	}
	if cap(buf) < f {
		grown := make([]logged, old, max(f, min(2*cap(buf), bound), 256))
		copy(grown, buf[:old])
		buf = grown
	}
	l := buf[:old]
	for i := n - (f - old); i < n; i++ {
		l = append(l, logged{pos: ws[i].Position, e: slots[i].he})
	}
	h.log = l
}

// revisions is the revisions of id (nil for none).
func (h *history) revisions(id EntryID) []Revision {
	if he := h.index().get(id); he != nil && h.live(he) {
		return he.revs()
	}
	return nil
}

// truncate forgets the revisions after position pos (Back, restart): it
// undoes the logged writes after pos, newest first, or visits every entry
// when the log does not reach back that far.
func (h *history) truncate(pos int64) {
	h.settle()
	h.chGen = 0 // entries may leave byID: changes are looked up by EntryID
	if len(h.log) == 0 || h.log[len(h.log)-1].pos <= pos {
		return
	}
	if h.log[0].pos <= pos {
		for len(h.log) > 0 && h.log[len(h.log)-1].pos > pos {
			he := h.log[len(h.log)-1].e
			h.log[len(h.log)-1] = logged{}
			h.log = h.log[:len(h.log)-1]
			// An entry left without revisions keeps its place in the
			// order (an empty history), so it is never listed twice.
			if r := he.rec; h.live(he) && r != nil {
				r.inOrder() // the newest last
				if n := len(r.revs); n > 0 && r.revs[n-1].Position > pos {
					r.revs[n-1] = Revision{}
					r.revs = r.revs[:n-1]
				}
			}
		}
		return
	}
	h.log = nil
	kept := h.order[:0]
	for _, he := range h.order {
		revs := he.revs()
		n := len(revs)
		for n > 0 && revs[n-1].Position > pos {
			n--
		}
		if n == 0 {
			h.byID.del(he)
			h.forget(he)
			he.num, he.indexed = 0, false
			continue
		}
		clear(revs[n:])
		he.rec.revs = revs[:n]
		kept = append(kept, he)
	}
	clear(h.order[len(kept):])
	h.order = kept
	// The kept ones are numbered again, up to ins.
	for i, he := range kept {
		he.num = h.ins - int64(len(kept)-i) + 1
	}
}

func (h *history) reset() {
	// Unsettled histories are not in byID, and go with the rest.
	h.byID.each(func(he *histEntry) { he.indexed, he.next = false, nil })
	// The numbering goes on: every old entry is forgotten in the new one.
	*h = history{ins: h.ins}
}

// HistoryForgotten is how many histories the session forgot since it
// started or was restored (HistoryEntries: it keeps those of the entries
// written first most recently; an entry forgotten, written again and
// forgotten again counts twice). While it is 0, an entry History gives no
// revisions for has not changed; after, it may have.
func (s *Session) HistoryForgotten() int64 { return s.hist.forgot }

// History returns the revisions of an entry in this session, oldest first,
// and how many older ones were forgotten (HistoryPerEntry).
func (s *Session) History(id EntryID) (revs []Revision, forgotten int) {
	he := s.hist.index().get(id)
	if he == nil || !s.hist.live(he) || len(he.revs()) == 0 {
		return nil, 0
	}
	return append([]Revision(nil), he.revs()...), he.forgotten()
}

// absorb takes the events of steps that ran at source position pos: sink
// records go to the output buffer and state writes to the history; the
// collector of a command (nil during a replay) gathers them for its stop.
func (s *Session) absorb(events []runtime.TraceEvent, pos int64, c *collector) {
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case runtime.TraceEmitted:
			s.replays.note(pos, e)
		case runtime.TraceOutput:
			s.addOutput(e, pos)
		case runtime.TraceStateWrite:
			id := Entry(e.Operator, e.Subtask, e.State, e.Key, e.Namespace, e.UserKey)
			he := s.hist.entry(id)
			s.hist.addTo(he, Revision{Position: pos, Old: e.Old, New: e.New, HadOld: e.HadOld, Cleared: e.Cleared})
			if c != nil {
				c.change(id, he, e)
			}
		}
	}
}
