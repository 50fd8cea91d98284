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
	revs  map[EntryID][]Revision
	order []EntryID // entries by first write, for forgetting the oldest
	// trimmed counts entries whose oldest revisions were forgotten.
	trimmed map[EntryID]int
	// log is the recent writes in order, so that going back undoes the
	// writes after the target without visiting every entry.
	log []logged
}

type logged struct {
	pos int64
	id  EntryID
}

// historyLog bounds the writes the log keeps; going back further than
// it reaches visits every entry instead.
const historyLog = 4 * HistoryEntries

func (h *history) add(id EntryID, r Revision) {
	if h.revs == nil {
		h.revs, h.trimmed = map[EntryID][]Revision{}, map[EntryID]int{}
	}
	revs, ok := h.revs[id]
	if !ok {
		h.order = append(h.order, id)
		if len(h.order) > HistoryEntries {
			old := h.order[0]
			h.order = h.order[1:]
			delete(h.revs, old)
			delete(h.trimmed, old)
		}
	}
	if len(revs) >= HistoryPerEntry {
		revs = append(revs[:0:0], revs[1:]...)
		h.trimmed[id]++
	}
	h.revs[id] = append(revs, r)
	if len(h.log) >= 2*historyLog {
		h.log = append(h.log[:0:0], h.log[len(h.log)-historyLog:]...)
	}
	h.log = append(h.log, logged{pos: r.Position, id: id})
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
			id := h.log[len(h.log)-1].id
			h.log = h.log[:len(h.log)-1]
			revs := h.revs[id]
			if n := len(revs); n > 0 && revs[n-1].Position > pos {
				// An entry left without revisions keeps its place in the
				// order (an empty slice), so it is never listed twice.
				h.revs[id] = revs[:n-1]
			}
		}
		return
	}
	h.log = nil
	kept := h.order[:0]
	for _, id := range h.order {
		revs := h.revs[id]
		n := len(revs)
		for n > 0 && revs[n-1].Position > pos {
			n--
		}
		if n == 0 {
			delete(h.revs, id)
			delete(h.trimmed, id)
			continue
		}
		h.revs[id] = revs[:n]
		kept = append(kept, id)
	}
	h.order = kept
}

func (h *history) reset() { *h = history{} }

// History returns the revisions of an entry in this session, oldest first,
// and how many older ones were forgotten (HistoryPerEntry).
func (s *Session) History(id EntryID) (revs []Revision, forgotten int) {
	if len(s.hist.revs[id]) == 0 {
		return nil, 0
	}
	r := s.hist.revs[id]
	return append([]Revision(nil), r...), s.hist.trimmed[id]
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
