package heapstate

import (
	"fmt"
	"iter"
	"slices"

	"streamdbg/state"
)

// The heap backend's incremental checkpoints are an undo log, as Flink's
// changelog state backend keeps a log of state changes beside the
// materialised state. Once a mark exists, every write first records what
// the logical key it touches (one value, one list, one map entry, one timer)
// was before; a mark is a position in that log. Rolling back undoes the
// records after the mark, newest first; reading a mark's state rolls back,
// reads and redoes. Why an undo log and not copy-on-write tables: Go maps
// cannot share structure between versions, so a copy-on-write snapshot would
// still copy a map per key group per checkpoint (O(state)); the undo log
// costs one append per write and nothing per checkpoint, and the runtime's
// checkpoints are only ever read back by rolling the live state back (Back,
// recovery), which costs what changed since the mark: the distance walked.
//
// Within a segment (between two marks) only the first write of each logical
// key is recorded: cells carry the segment that last recorded them. Across
// segments, memory is bounded by compaction: when a mark is released, the log segment
// after it merges into the one before, keeping only the oldest record of
// each logical key (the older mark needs no more). With the session's marks
// (its first checkpoint and the last few) the log holds at most one record
// per logical key changed since the first mark, plus the last intervals.

type changeKind uint8

const (
	chValue    changeKind = iota // t.index[key] (a located key) was c (nil: absent) holding v
	chList                       // t.lists[kg][key] was lc (nil: absent) holding vs
	chMapOuter                   // t.maps[kg][key] was mc (nil: absent)
	chMapEntry                   // mc.m[uk] was c (nil: absent) holding v
	chTimer                      // q.byKG[kg][key] was ti (nil: absent)
	chTable                      // table t (or queue q) was registered (present) or not
)

// change restores one logical key to a state it had: the state before a
// write in the log, the state before an undo in a redo list.
type change struct {
	kind    changeKind
	present bool // chTable
	kg      int32
	t       *table
	q       *timerQueue
	mc      *mapCell
	key     string // composite, timer id, or user key (chMapEntry)
	c       *cell
	v       any
	lc      *listCell
	vs      []any
	ti      *timerItem
	r       *restoredState // chTable: the restored entries the table consumed
}

// logicalKey identifies what a change restores, for compaction.
type logicalKey struct {
	kind changeKind
	kg   int32
	t    *table
	q    *timerQueue
	mc   *mapCell
	key  string
}

func (c *change) id() logicalKey {
	k := logicalKey{kind: c.kind, kg: c.kg, t: c.t, q: c.q, key: c.key}
	if c.kind == chMapEntry {
		k.mc = c.mc // for chMapOuter, mc is the value, not the identity
	}
	return k
}

// markPos is one live mark: where its segment of the log starts, and, once
// a later segment was merged into it, the logical keys it holds.
type markPos struct {
	id   state.Mark
	pos  int
	seen map[logicalKey]struct{}
}

// newSegment starts a log segment: every cell, list, map and timer is
// recorded again on its first change. A cell stamped with the current
// segment (seg) already has a record in it.
func (b *Backend) newSegment() {
	b.segGen++
	b.seg = b.segGen
}

// logging reports whether writes must be recorded.
func (b *Backend) logging() bool { return len(b.marks) > 0 && !b.replaying }

func (b *Backend) record(c change) {
	if len(b.log) == cap(b.log) {
		b.moveLog()
	}
	b.log = append(b.log, c)
}

// moveLog makes room at the end of a full log: it moves to the front of
// its array when dropLog left a quarter of its length's room or more
// there (so each record is moved at most four times per record dropped),
// or to a larger array, as append grows one.
func (b *Backend) moveLog() {
	n := len(b.log)
	if b.logOff > 0 && b.logOff >= n/4 {
		copy(b.logBuf, b.log)
		clear(b.logBuf[n : b.logOff+n])
		b.log, b.logOff = b.logBuf[:n], 0
		return
	}
	grown := append(b.log, change{})[:n]
	b.logBuf, b.log, b.logOff = grown[:cap(grown)], grown, 0
}

// Mark records the state as it is now; it costs nothing per entry.
func (b *Backend) Mark() (state.Mark, error) {
	b.nextMark++
	b.newSegment()
	b.marks = append(b.marks, markPos{id: state.Mark(b.nextMark), pos: len(b.log)})
	return state.Mark(b.nextMark), nil
}

func (b *Backend) markIndex(m state.Mark) int {
	for i, mp := range b.marks {
		if mp.id == m {
			return i
		}
	}
	return -1
}

// RollBack undoes every change after m; later marks are released.
func (b *Backend) RollBack(m state.Mark) error {
	i := b.markIndex(m)
	if i < 0 {
		return fmt.Errorf("heapstate: roll back to mark %d: %w", m, state.ErrUnknownMark)
	}
	pos := b.marks[i].pos
	b.undo(pos, nil)
	clear(b.log[pos:])
	b.log = b.log[:pos]
	b.marks = b.marks[:i+1]
	b.marks[i].seen = nil // its segment is empty again
	// Stamps of the undone records must not pass for records of the
	// segment that starts now.
	b.newSegment()
	return nil
}

// undo applies the log from its end down to pos; with redo set it returns
// the changes that bring the state back.
func (b *Backend) undo(pos int, redo []change) []change {
	b.replaying = true
	for i := len(b.log) - 1; i >= pos; i-- {
		if redo != nil {
			redo = append(redo, b.current(&b.log[i]))
		}
		b.apply(&b.log[i])
	}
	b.replaying = false
	for _, t := range b.tables {
		t.hit = nil
	}
	return redo
}

// Release forgets m. Its segment of the log merges into the one before
// (the oldest record of each logical key wins); the segment before the
// first mark is dropped.
func (b *Backend) Release(m state.Mark) {
	i := b.markIndex(m)
	if i < 0 {
		return
	}
	if i == 0 {
		cut := len(b.log)
		if len(b.marks) > 1 {
			cut = b.marks[1].pos
		}
		b.marks = b.marks[1:]
		b.dropLog(cut)
		if len(b.marks) == 0 {
			b.log, b.logBuf, b.logOff = nil, nil, 0
		}
		return
	}
	prev := &b.marks[i-1]
	start, end := b.marks[i].pos, len(b.log)
	if i+1 < len(b.marks) {
		end = b.marks[i+1].pos
	}
	if prev.seen == nil {
		prev.seen = make(map[logicalKey]struct{}, start-prev.pos)
		for j := prev.pos; j < start; j++ {
			prev.seen[b.log[j].id()] = struct{}{}
		}
	}
	w := start
	for j := start; j < end; j++ {
		id := b.log[j].id()
		if _, ok := prev.seen[id]; ok {
			continue
		}
		prev.seen[id] = struct{}{}
		b.log[w] = b.log[j]
		w++
	}
	removed := end - w
	if removed > 0 {
		n := copy(b.log[w:], b.log[end:])
		clear(b.log[w+n:])
		b.log = b.log[:w+n]
		for k := i + 1; k < len(b.marks); k++ {
			b.marks[k].pos -= removed
		}
	}
	b.marks = slices.Delete(b.marks, i, i+1)
}

// dropLog forgets the first n records.
func (b *Backend) dropLog(n int) {
	if n == 0 {
		return
	}
	rest := len(b.log) - n
	// The log starts later in its array, instead of moving what is left
	// of it to the front at every release: the session releases its
	// oldest checkpoint while it keeps others, whose records are most of
	// the log, and copying them each time cost more than the writes that
	// made them (record moves them when the array is full: moveLog).
	clear(b.log[:n])
	b.log = b.log[n:]
	b.logOff += n
	for k := range b.marks {
		b.marks[k].pos -= n
	}
	// Give back the array when it is mostly empty.
	if len(b.logBuf) > 1024 && rest < len(b.logBuf)/4 {
		b.logBuf = append(make([]change, 0, 2*rest), b.log...)
		b.log, b.logOff = b.logBuf, 0
		b.logBuf = b.logBuf[:cap(b.logBuf)]
	}
}

// Changes is the number of changes kept for the live marks.
func (b *Backend) Changes() int { return len(b.log) }

// MarkedEntries yields the entries of key group kg as they were at m: it
// rolls the state back, reads it and redoes the changes.
func (b *Backend) MarkedEntries(m state.Mark, kg int) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		i := b.markIndex(m)
		if i < 0 {
			yield(state.Entry{}, fmt.Errorf("heapstate: entries at mark %d: %w", m, state.ErrUnknownMark))
			return
		}
		redo := b.undo(b.marks[i].pos, make([]change, 0, len(b.log)-b.marks[i].pos))
		defer func() {
			b.replaying = true
			for j := len(redo) - 1; j >= 0; j-- {
				b.apply(&redo[j])
			}
			b.replaying = false
			for _, t := range b.tables {
				t.hit = nil
			}
		}()
		for e, err := range b.Entries(kg, "") {
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// current is the state of c's logical key as it is now, as a change.
func (b *Backend) current(c *change) change {
	cur := change{kind: c.kind, kg: c.kg, t: c.t, q: c.q, mc: c.mc, key: c.key, r: c.r}
	switch c.kind {
	case chValue:
		if x := c.t.index[c.key]; x != nil {
			cur.c, cur.v = x, c.t.value(x)
		}
	case chList:
		if x := c.t.lists[c.kg][c.key]; x != nil {
			cur.lc, cur.vs = x, x.vs
		}
	case chMapOuter:
		cur.mc = c.t.maps[c.kg][c.key]
	case chMapEntry:
		if x := c.mc.m[c.key]; x != nil {
			cur.c, cur.v = x, x.v
		}
	case chTimer:
		cur.ti = c.q.byKG[c.kg][c.key]
	case chTable:
		if c.t != nil {
			_, cur.present = b.tables[c.t.name()]
		} else {
			_, cur.present = b.timers[c.q.name]
		}
	}
	return cur
}

// apply puts c's logical key into the state c describes. It does not log.
func (b *Backend) apply(c *change) {
	switch c.kind {
	case chValue:
		c.t.touch(int(c.kg))
		if c.c == nil {
			c.t.dropCell(int(c.kg), c.key)
			return
		}
		if c.t.i64 {
			// INVARIANT: an int64 state's changes hold int64s (value).
			c.c.n = c.v.(int64)
		} else {
			c.c.v = c.v
		}
		if c.t.index[c.key] != c.c {
			c.t.addCell(int(c.kg), c.c)
		}
	case chList:
		c.t.touch(int(c.kg))
		m := c.t.lists[c.kg]
		if c.lc == nil {
			delete(m, c.key)
			return
		}
		c.lc.vs = c.vs
		if m == nil {
			m = map[string]*listCell{}
			c.t.lists[c.kg] = m
		}
		if m[c.key] != c.lc {
			m[c.key] = c.lc
		}
	case chMapOuter:
		// For an outer change, mc is the inner map it held (nil: absent);
		// the logical key is (t, kg, key).
		c.t.touch(int(c.kg))
		m := c.t.maps[c.kg]
		if c.mc == nil {
			delete(m, c.key)
			return
		}
		if m == nil {
			m = map[string]*mapCell{}
			c.t.maps[c.kg] = m
		}
		if m[c.key] != c.mc {
			m[c.key] = c.mc
		}
	case chMapEntry:
		if c.c == nil {
			delete(c.mc.m, c.key)
			return
		}
		c.c.v = c.v
		if c.mc.m[c.key] != c.c {
			c.mc.m[c.key] = c.c
		}
	case chTimer:
		q := c.q
		cur := q.byKG[c.kg][c.key]
		switch {
		case c.ti == nil && cur != nil:
			delete(q.byKG[c.kg], c.key)
			q.remove(cur.idx)
		case c.ti != nil && cur == nil:
			if q.byKG[c.kg] == nil {
				q.byKG[c.kg] = map[string]*timerItem{}
			}
			q.byKG[c.kg][c.key] = c.ti
			c.ti.idx = len(q.heap)
			q.heap = append(q.heap, c.ti)
			q.up(c.ti.idx)
		}
	case chTable:
		if c.t != nil {
			name := c.t.name()
			if c.present {
				b.tables[name] = c.t
				if c.r != nil {
					delete(b.restored, name)
				}
			} else {
				delete(b.tables, name)
				if c.r != nil {
					b.restored[name] = c.r
				}
			}
			return
		}
		if c.present {
			b.timers[c.q.name] = c.q
			if c.r != nil {
				delete(b.restored, c.q.meta.StateName)
			}
		} else {
			delete(b.timers, c.q.name)
			if c.r != nil {
				b.restored[c.q.meta.StateName] = c.r
			}
		}
	}
}
