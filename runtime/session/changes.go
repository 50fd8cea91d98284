package session

import (
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
// changed more says how many it left out (Stop.ChangesDropped).
const MaxChanges = 20000

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

// history is the revisions of the entries written in this session.
type history struct {
	// byID finds an entry's history. A forgotten entry stays in it (gone,
	// without revisions) until gone ones outnumber the rest thrice, so
	// that a later write takes it back without a lookup (light runs keep
	// it by pointer) and forgetting costs no map deletion.
	byID map[EntryID]*histEntry
	// goneIn counts the gone entries in byID.
	goneIn int
	order  []*histEntry // entries by first write, for forgetting the oldest
	// orderBuf is order's array (order starts later in it once the
	// oldest entries are forgotten).
	orderBuf []*histEntry
	// log is the recent writes in order, so that going back undoes the
	// writes after the target without visiting every entry.
	log []logged
}

// histEntry is one entry's history. A write names it by pointer (a light
// trace's entry keeps it), so that it needs no EntryID lookup; gone marks
// one forgotten (HistoryEntries): a later write of the entry starts its
// history again, in this histEntry when it is still in byID (indexed).
type histEntry struct {
	id      EntryID
	revs    []Revision
	trimmed int // revisions forgotten (HistoryPerEntry)
	gone    bool
	indexed bool // byID[id] is this entry
}

type logged struct {
	pos int64
	e   *histEntry
}

// historyGoneMax bounds the gone entries byID keeps (a variable for
// tests).
var historyGoneMax = 3 * HistoryEntries

// historyLog bounds the writes the log keeps; going back further than
// it reaches visits every entry instead.
const historyLog = 4 * HistoryEntries

// entry returns the history of id, making it (and forgetting the oldest
// entry beyond HistoryEntries) when there is none.
func (h *history) entry(id EntryID) *histEntry { return h.entryIn(id, nil) }

// entryIn is entry, making a new history in spare when it is not nil.
func (h *history) entryIn(id EntryID, spare *histEntry) *histEntry {
	if he := h.byID[id]; he != nil {
		if he.gone {
			h.revive(he)
		}
		return he
	}
	if h.byID == nil {
		h.byID = map[EntryID]*histEntry{}
	}
	he := spare
	if he == nil {
		he = &histEntry{}
	}
	*he = histEntry{id: id, indexed: true}
	h.byID[id] = he
	h.appendOrder(he)
	return he
}

// use returns the history to add a write of he's entry to: he itself,
// taken back if it was forgotten, or (he no longer indexed) the entry's
// history in byID.
func (h *history) use(he *histEntry) *histEntry {
	if !he.gone {
		return he
	}
	if he.indexed {
		h.revive(he)
		return he
	}
	return h.entry(he.id)
}

// revive starts the history of a gone entry of byID again: it is the
// newest entry.
func (h *history) revive(he *histEntry) {
	// The array kept when it was forgotten is cleared now, as it is
	// written (forgetting it did not touch it).
	r := he.revs[:cap(he.revs)]
	clear(r)
	he.gone, he.revs, he.trimmed = false, r[:0], 0
	h.goneIn--
	h.appendOrder(he)
}

// appendOrder makes he the newest entry, forgetting the oldest beyond
// HistoryEntries.
func (h *history) appendOrder(he *histEntry) {
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
	if len(h.order) <= HistoryEntries {
		return
	}
	old := h.order[0]
	h.order[0] = nil
	h.order = h.order[1:]
	// A small array of revisions stays with the entry (as it is, until
	// revive clears it), for the next write of it: most entries of a large
	// state are forgotten and written again, and a new array each time was
	// most of what a long run allocated.
	if cap(old.revs) > 8 {
		old.revs = nil
	}
	old.gone, old.trimmed = true, 0
	h.goneIn++
	if h.goneIn > historyGoneMax {
		for id, e := range h.byID {
			if e.gone {
				delete(h.byID, id)
				e.indexed = false
			}
		}
		h.goneIn = 0
	}
}

func (h *history) add(id EntryID, r Revision) { h.addTo(h.entry(id), r) }

// addTo adds a revision to an entry's history (he not gone).
func (h *history) addTo(he *histEntry, r Revision) {
	if len(he.revs) >= HistoryPerEntry {
		n := copy(he.revs, he.revs[1:])
		he.revs[n] = Revision{}
		he.revs = he.revs[:n]
		he.trimmed++
	}
	if he.revs == nil {
		he.revs = make([]Revision, 0, 4) // most entries are written a few times
	}
	he.revs = append(he.revs, r)
	if len(h.log) >= 2*historyLog {
		// In place: nothing else holds the log, and a new array every
		// historyLog writes (grown again by append) was most of what a
		// long run allocated.
		n := copy(h.log, h.log[len(h.log)-historyLog:])
		clear(h.log[n:])
		h.log = h.log[:n]
	}
	h.log = append(h.log, logged{pos: r.Position, e: he})
}

// revisions is the revisions of id (nil for none).
func (h *history) revisions(id EntryID) []Revision {
	if he := h.byID[id]; he != nil && !he.gone {
		return he.revs
	}
	return nil
}

// truncate forgets the revisions after position pos (Back, restart): it
// undoes the logged writes after pos, newest first, or visits every entry
// when the log does not reach back that far.
func (h *history) truncate(pos int64) {
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
			if n := len(he.revs); !he.gone && n > 0 && he.revs[n-1].Position > pos {
				he.revs[n-1] = Revision{}
				he.revs = he.revs[:n-1]
			}
		}
		return
	}
	h.log = nil
	kept := h.order[:0]
	for _, he := range h.order {
		n := len(he.revs)
		for n > 0 && he.revs[n-1].Position > pos {
			n--
		}
		if n == 0 {
			delete(h.byID, he.id)
			he.gone, he.indexed, he.revs, he.trimmed = true, false, nil, 0
			continue
		}
		he.revs = he.revs[:n]
		kept = append(kept, he)
	}
	clear(h.order[len(kept):])
	h.order = kept
}

func (h *history) reset() {
	for _, he := range h.byID {
		he.gone, he.indexed = true, false
	}
	*h = history{}
}

// History returns the revisions of an entry in this session, oldest first,
// and how many older ones were forgotten (HistoryPerEntry).
func (s *Session) History(id EntryID) (revs []Revision, forgotten int) {
	he := s.hist.byID[id]
	if he == nil || he.gone || len(he.revs) == 0 {
		return nil, 0
	}
	return append([]Revision(nil), he.revs...), he.trimmed
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
			s.hist.add(id, Revision{Position: pos, Old: e.Old, New: e.New, HadOld: e.HadOld, Cleared: e.Cleared})
			if c != nil {
				c.change(id, e)
			}
		}
	}
}
