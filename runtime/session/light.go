package session

import (
	"errors"
	"unsafe"

	"streamdbg/runtime"
)

// Light runs. A traced command that runs many records (c, next N) without
// breakpoints spends most of its time building trace events, of which its
// stop keeps the last MaxEvents. Once the command has passed a checkpoint
// of its own, it runs the executor in light mode (runtime.LightTrace): no
// events, but every state write (for the history and the stop's changes)
// and every sink record (for the outputs) as before, and a count of the
// events a full trace would have made. At the stop it goes back to a
// checkpoint taken during the light run, the anchor, and replays from
// there to where it stopped, traced: the replay is deterministic, so its
// events are the events the full trace would have ended with, and the
// checkpoints (same positions and ids) and failure after the replay are
// those of a fully traced command; the history and the outputs are the
// light run's own (the replay leaves them). The anchor is the most
// recent checkpoint with at least MaxEvents events after it, so the replay
// gives every event the stop keeps; while no checkpoint qualifies, the
// first one is the anchor and the events traced before it make up the
// rest. The anchor is pinned: trimming the checkpoints keeps it.
//
// A command that passes no checkpoint (a short one, or checkpoints off)
// is traced throughout, as before.

// lightRun is the light part of one command.
type lightRun struct {
	// startPos is where the light run started: at the first anchor.
	startPos int64
	first    *runtime.Checkpoint
	// prefix and prefixTrunc are the events traced before the light run
	// (and how many of them were dropped).
	prefix      []runtime.TraceEvent
	prefixTrunc int
	// events counts the light run's events.
	events int64
	// outSeq is the session's outSeq when the light run started.
	outSeq int64
	anchor anchorCP
	// cands are the checkpoints taken since the anchor, oldest first.
	cands []anchorCP
	// newEntries counts the LightEntries the writes not yet folded in
	// made; slots is fold's array.
	newEntries int
	slots      []foldSlot
	// hists finds the history of a write's entry (nil before its first
	// write was folded in) by what the write names (LightRec.Entry).
	hists entryHists
	// slab is where the next histories begun with the light run go (one
	// allocation for many).
	slab []histEntry
	// begun is fold's ring of the indexes of the writes that began the
	// batch's last historyBound histories.
	begun []int32
	// pending is the writes folded in whose revisions wait (see fold),
	// oldest first.
	pending []pendingRev
	// foldAt is the number of writes the next fold waits for.
	foldAt int
	// touched is what touchEntries read (kept, never used).
	touched int64
	// lazies counts the lazy histories (histEntry.lazy) the light run
	// made and did not materialize; lazyIdx finds them by their entries'
	// hashes, made when first needed (lazyOf).
	lazies  int
	lazyIdx map[uint64][]*histEntry
}

// anchorCP is a checkpoint of a light run and the light run's event count
// when it was taken.
type anchorCP struct {
	cp     *runtime.Checkpoint
	events int64
}

// entryHists is a light run's histories of its LightEntries, in one
// array per generation of LightEntries indexed as LightRec.Entry names
// them: a write reaches its history through a short array, not a record
// of its own per entry (of a large state, all over memory).
type entryHists struct {
	gens []genHists
	last int // the generation of the last write (gens' index)
}

type genHists struct {
	gen   uint32
	hists []*histEntry
}

// of returns where the history of the entry r names is kept.
func (x *entryHists) of(r *runtime.LightRec) **histEntry {
	gen, idx := r.Entry()
	if x.last < len(x.gens) {
		if g := &x.gens[x.last]; g.gen == gen && idx < len(g.hists) {
			return &g.hists[idx]
		}
	}
	return x.ofSlow(gen, idx)
}

// ofSlow is of for another generation than the last write's, or an index
// beyond its array (grown).
func (x *entryHists) ofSlow(gen uint32, idx int) **histEntry {
	if x.last >= len(x.gens) || x.gens[x.last].gen != gen {
		x.find(gen)
	}
	g := &x.gens[x.last]
	if idx >= len(g.hists) {
		// Doubled (append grows a large array by a quarter at a time).
		hs := make([]*histEntry, max(2*len(g.hists), idx+1, 1024))
		copy(hs, g.hists)
		g.hists = hs
	}
	return &g.hists[idx]
}

// find makes gen the last generation (a new one when unknown).
func (x *entryHists) find(gen uint32) {
	for i := range x.gens {
		if x.gens[i].gen == gen {
			x.last = i
			return
		}
	}
	x.gens = append(x.gens, genHists{gen: gen})
	x.last = len(x.gens) - 1
}

// spare is where the next history begun with the light run goes: the next
// of a slab of them, taken (used) when lookup made it there.
func (l *lightRun) spare() *histEntry {
	if len(l.slab) == 0 {
		l.slab = make([]histEntry, histSlab)
	}
	return &l.slab[0]
}

func (l *lightRun) used() { l.slab = l.slab[1:] }

// histSlab is how many histories a slab holds: as many as the largest
// small allocation (32 KiB) takes, not 256 of them in a large one (34 KiB
// of 136-byte histories rounded up to 40 KiB of pages).
const histSlab = 32 << 10 / int(unsafe.Sizeof(histEntry{}))

// mayGoLight reports whether a command of the given kind may switch to a
// light run.
func (s *Session) mayGoLight(checkEach bool) bool {
	return s.opts.Trace && !s.fullTrace && !checkEach
}

// afterRecord is the light-run bookkeeping of a command after each record
// (the collector took its trace and the session its checkpoint): it starts
// the light run at the command's first checkpoint and keeps the anchor.
func (c *collector) afterRecord(before *runtime.Checkpoint, may bool) {
	s := c.s
	taken := s.LatestCheckpoint()
	if taken == before {
		taken = nil
	}
	l := c.light
	if l == nil {
		if !may || taken == nil || !s.exec.Idle() || s.exec.Failure() != nil {
			return
		}
		c.light = &lightRun{startPos: taken.Info().Position, first: taken, prefix: c.events, prefixTrunc: c.trunc,
			anchor: anchorCP{cp: taken}}
		c.events, c.trunc = nil, 0
		s.pin(taken)
		c.light.outSeq = s.outSeq
		s.exec.StartLight(2*s.opts.OutputLimit, nil) // as many outputs as the buffer holds
		s.exec.HoldLightEntries()                    // lazy histories name theirs until the end
		c.light.foldAt = min(lightFoldAt, 1<<14)
		s.exec.BatchLightWrites(c.light.foldAt + foldSlack)
		return
	}
	if taken != nil {
		l.cands = append(l.cands, anchorCP{cp: taken, events: l.events})
	}
	for len(l.cands) > 0 && l.events-l.cands[0].events >= MaxEvents {
		a := l.cands[0]
		l.cands = l.cands[1:]
		if s.kept(a.cp) {
			s.pin(a.cp)
			l.anchor = a
		}
	}
}

// takeLight takes what the light run recorded for the last record: its
// writes wait in the executor (runtime.BatchLightWrites) until the next
// fold.
func (c *collector) takeLight() {
	s := c.s
	lt := s.exec.TakeLight()
	if lt == nil {
		return
	}
	l := c.light
	l.events += lt.Events
	// The records themselves stay in the executor's rings until the stop
	// (lightOutputs): only the last OutputLimit are shown.
	s.outSeq += lt.Outputs
	l.newEntries += lt.NewEntries
	if s.exec.LightWritesPending() >= l.foldAt {
		c.fold()
		// Batches grow fourfold up to lightFoldAt: a short light run
		// holds small arrays, a long one makes few.
		if l.foldAt < lightFoldAt {
			l.foldAt = min(4*l.foldAt, lightFoldAt)
			s.exec.BatchLightWrites(l.foldAt + foldSlack)
		}
	}
}

// foldSlot is what fold's first pass found for a write: the entry's
// history it goes to, that history's number, and whether the write
// started it.
type foldSlot struct {
	he     *histEntry
	num    int64
	starts bool
}

// pendingRev is a write fold numbered whose revision waits: to a history
// still kept when it was folded in (num above the history's front then),
// as its revision will be made if the history is still kept when the
// revisions are made (makeRevisions).
type pendingRev struct {
	he              *histEntry
	num, pos        int64
	old, new        any
	starts          bool // the write began the history (restart it first)
	hadOld, cleared bool
}

// lightPendingMax bounds the writes a light run keeps pending before it
// makes their revisions (a variable for tests): a run over few keys,
// whose histories are never forgotten, keeps no more than that.
var lightPendingMax = 1 << 18

// foldBlock is how many writes fold's first pass reads ahead
// (touchEntries).
const foldBlock = 128

// touchEntries reads the histories of the writes' entries, each
// independent of the others, so that their cache misses overlap (the
// first pass, which works on them one after another, then finds them in
// cache): the histories of a large state are all over memory. Its result
// is kept (lightRun.touched) so that the reads are not left out.
func (x *entryHists) touch(rs []runtime.LightRec) int64 {
	var hes [foldBlock]*histEntry
	var hists []*histEntry
	cur := uint32(0)
	// Two short loops: the arrays' slots, then the histories they point
	// to (each loop's reads independent of one another, so that more of
	// them are under way at once).
	for i := range rs {
		gen, idx := rs[i].Entry()
		if gen != cur || hists == nil {
			// The generation changes seldom.
			x.find(gen)
			hists, cur = x.gens[x.last].hists, gen
		}
		if idx < len(hists) {
			hes[i] = hists[idx]
		}
	}
	var sum int64
	for _, he := range hes[:len(rs)] {
		if he != nil {
			sum += he.num + int64(he.chGen)
		}
	}
	return sum
}

// touchRevs is touch for makeRevisions: it reads the revision records of
// the pending writes' histories, then the revision each write will take
// the place of or follow, in two short loops of independent reads (a
// write's history, its record and its revisions are three misses in a
// row otherwise, when a state of few keys keeps every write). Its result
// is kept (lightRun.touched) so that the reads are not left out.
func touchRevs(ps []pendingRev) int64 {
	var recs [foldBlock]*histRevs
	for i := range ps {
		recs[i] = ps[i].he.rec
	}
	var sum int64
	for _, r := range recs[:len(ps)] {
		if r == nil {
			continue
		}
		switch n := len(r.revs); {
		case n >= historyPerEntry:
			sum += r.revs[r.head].Position
		case n > 0:
			sum += r.revs[n-1].Position
		}
	}
	return sum
}

// lightFoldAt is how many writes a light run keeps pending before it
// folds them in, at most (a variable for tests); foldSlack is the room
// for the writes of the record that reaches it.
var lightFoldAt = 1 << 18

const foldSlack = 256

// fold puts the pending writes of the light run into the history and the
// command's changes, as absorbing them one by one would have left them.
// The history forgets the oldest entries by the order their histories
// began (history.ins), so which histories survive the batch is known once
// every write's entry is numbered: a first pass numbers them (visiting
// each write's entry, and doing the changes), and only the writes to
// histories still kept at the end become revisions; the others would be
// forgotten before anything could read them. A batch several times as
// long as historyBound leaves most writes of a large state out of the
// second pass.
//
// The revisions wait longer still: the writes to histories kept at the
// end of a batch are kept (pending), and each fold drops those of the
// histories it forgot; the revisions of the rest are made once, at the
// end of the light run (finishLight, abandonLight: final), or when
// lightPendingMax writes are pending. Nothing reads the history during a
// light run, and the revisions come in the order of the writes, as they
// would one by one (a history forgotten and begun again in between has
// a new number: the writes of its old one are dropped).
func (c *collector) fold() { c.foldIn(false) }

func (c *collector) foldIn(final bool) {
	l := c.light
	exec := c.s.exec
	b := exec.TakeLightRecs()
	ws := b.Recs
	if len(ws) == 0 {
		if final {
			c.makeRevisions()
			c.leaveKept(false)
		}
		return
	}
	if cap(l.slots) < len(ws) {
		l.slots = make([]foldSlot, len(ws), max(len(ws), l.foldAt+foldSlack))
	}
	slots := l.slots[:len(ws)]
	h := &c.s.hist
	h.grow(l.newEntries)
	l.newEntries = 0
	front0 := h.front()
	front, n, ins := front0, int64(len(h.order)), h.ins
	ins0 := ins
	bound := int64(historyBound)
	if len(l.begun) < historyBound {
		l.begun = make([]int32, historyBound)
	}
	begun, r := l.begun[:historyBound], 0
	for i := range ws {
		if i%foldBlock == 0 {
			l.touched += l.hists.touch(ws[i:min(i+foldBlock, len(ws))])
		}
		w := &ws[i]
		at := l.hists.of(w)
		he := *at
		made := false
		if he == nil {
			he, made = c.historyOf(w)
			*at = he
		} else if he.num <= front && !he.indexed {
			he, made = h.lookup(he.id, nil)
			*at = he
		}
		starts := false
		if he.num <= front { // a new history: the entry's first write, or the first since it was forgotten
			if !made {
				h.goneIn--
			}
			ins++
			he.num = ins
			starts = true
			begun[r] = int32(i)
			if r++; r == len(begun) {
				r = 0
			}
			if n < bound {
				n++
			} else {
				front++
			}
		}
		slots[i] = foldSlot{he: he, num: he.num, starts: starts}
		c.changeLight(he, &b, w)
	}
	// The writes to the histories kept (num > front) are all at from or
	// after it: when every history kept began in the batch, the first of
	// them began at from (begun's oldest), and the writes before it were to
	// other histories (slots hold the number of the history written then).
	from := 0
	if front >= ins0 {
		from = int(begun[int((front-ins0)%bound)])
	}
	// The order: what is left of it, then the histories the batch began
	// that are kept.
	drop := min(front-front0, int64(len(h.order)))
	for i := range drop {
		h.forget(h.order[i])
		h.order[i] = nil
	}
	h.order = h.order[drop:]
	h.goneIn += int(front - front0)
	h.forgot += front - front0
	for i := from; i < len(slots); i++ {
		if p := &slots[i]; p.starts && p.num > front {
			h.pushOrder(p.he)
		}
	}
	h.ins = ins
	h.logFold(ws, slots)
	// The pending writes of the histories still kept, then this batch's.
	kept := l.pending[:0]
	for _, r := range l.pending {
		if r.num > front {
			kept = append(kept, r)
		}
	}
	clear(l.pending[len(kept):])
	want := len(kept)
	for i := from; i < len(slots); i++ {
		if slots[i].num > front {
			want++
		}
	}
	if want > cap(kept) {
		// Once, to what a batch needs (appending grew it step by step).
		kept = append(make([]pendingRev, 0, want+want/4), kept...)
	}
	for i := from; i < len(ws); i++ {
		if p, w := &slots[i], &ws[i]; p.num > front {
			kept = append(kept, pendingRev{he: p.he, num: p.num, pos: w.Position, old: b.Old(w), new: b.New(w),
				starts: p.starts, hadOld: w.HadOld(), cleared: w.Cleared()})
		}
	}
	l.pending = kept
	if final || len(kept) >= lightPendingMax {
		c.makeRevisions()
	}
	if final {
		c.leaveKept(true)
	} else {
		h.compact()
	}
	// slots is left as it is (the next batch writes over it): what it
	// names the light run's hists name too, but for the histories a
	// lookup replaced, which it keeps until then.
}

// historyOf returns the history of the entry of w, a write whose
// LightEntry the light run meets for the first time, or makes it (made).
// An entry the session never wrote before (LightEntryFresh) has none: its
// new history waits for its EntryID (lazy; materialize), which most
// entries of a large state never need, since the history forgets them
// before anything reads it. Any other is looked up by its EntryID in
// byID, or among the lazy histories when it is not there (the entry may
// have had another LightEntry in this light run: written again after a
// clear, or after its table's generation ended).
func (c *collector) historyOf(w *runtime.LightRec) (_ *histEntry, made bool) {
	l, exec, h := c.light, c.s.exec, &c.s.hist
	if exec.LightEntryFresh(w) {
		he := l.spare()
		l.used()
		gen, idx := w.Entry()
		*he = histEntry{indexed: true, lazy: uint64(gen)<<32 | uint64(idx)}
		l.lazies++
		if l.lazyIdx != nil {
			k := exec.LightEntryHash(gen, idx)
			l.lazyIdx[k] = append(l.lazyIdx[k], he)
		}
		return he, true
	}
	e := exec.LightEntryAt(w)
	id := Entry(e.Operator, e.Subtask, e.State, e.Key, e.Namespace, e.UserKey)
	x := h.index()
	k := x.key(&id) // hashed once, for the search and for the insert
	if he := x.find(k, &id); he != nil {
		return he, false
	}
	if he := c.lazyOf(w, &id); he != nil {
		return he, false
	}
	he := x.makeAt(k, id, l.spare())
	l.used()
	return he, true
}

// lazyOf returns the lazy history of the light run whose entry is id,
// the entry of w (nil: none), materialized. The first call makes the
// index of the lazy histories by their entries' hashes (LightEntryHash);
// the candidates with w's hash are materialized to compare their
// EntryIDs.
func (c *collector) lazyOf(w *runtime.LightRec, id *EntryID) *histEntry {
	l, exec := c.light, c.s.exec
	if l.lazies == 0 {
		return nil
	}
	if l.lazyIdx == nil {
		l.lazyIdx = map[uint64][]*histEntry{}
		for _, g := range l.hists.gens {
			for _, he := range g.hists {
				if he != nil && he.lazy != 0 {
					k := exec.LightEntryHash(he.lazyEntry())
					l.lazyIdx[k] = append(l.lazyIdx[k], he)
				}
			}
		}
	}
	gen, idx := w.Entry()
	for _, he := range l.lazyIdx[exec.LightEntryHash(gen, idx)] {
		if he.lazy == 0 {
			continue // materialized since: in byID, where id was not
		}
		c.materialize(he)
		if he.id == *id {
			c.s.lazyFound++
			return he
		}
	}
	return nil
}

// materialize gives a lazy history of the light run its EntryID and puts
// it in byID (history.materializeAs).
func (c *collector) materialize(he *histEntry) {
	c.materializeAs(he, c.s.exec.LightEntryIn(he.lazyEntry()))
}

// materializeAs is materialize with he's entry decoded already.
func (c *collector) materializeAs(he *histEntry, e runtime.LightEntry) {
	c.light.lazies--
	c.s.hist.materializeAs(he, e)
}

// leaveKept leaves the lazy histories the history keeps at the end of a
// light run unsettled (history.unsettled): nothing reads the history
// before its next use of byID, which settles them (views look entries up
// by EntryID), compacting it after when compact.
func (c *collector) leaveKept(compact bool) {
	h := &c.s.hist
	h.unsettled = c.s.exec.KeepLightEntries()
	h.unsettledCompact = compact
}

// makeRevisions makes the revisions of the pending writes (see fold):
// their histories are all kept.
func (c *collector) makeRevisions() {
	l, h := c.light, &c.s.hist
	for i := range l.pending {
		if i%foldBlock == 0 {
			l.touched += touchRevs(l.pending[i:min(i+foldBlock, len(l.pending))])
		}
		r := &l.pending[i]
		if r.starts {
			h.restart(r.he)
		}
		h.addRev(r.he, Revision{Position: r.pos, Old: r.old, New: r.new, HadOld: r.hadOld, Cleared: r.cleared})
	}
	clear(l.pending)
	l.pending = l.pending[:0]
}

// lightOutputs puts the records the sinks received in the light run into
// the session's outputs as absorbing them one by one would have left them
// (addOutputOf trims its buffer in batches: it holds between OutputLimit
// and twice as many records, and back can show the older ones again).
func (c *collector) lightOutputs(l *lightRun) {
	s := c.s
	k := s.outSeq - l.outSeq // the light run's records
	if k == 0 {
		return
	}
	limit := s.opts.OutputLimit
	n := len(s.output)
	for range k {
		if n >= 2*limit {
			n = limit - 1
		}
		n++
	}
	out := make([]Output, 0, max(n, 2*limit))
	if int64(n) > k {
		out = append(out, s.output[len(s.output)-(n-int(k)):]...)
	}
	for _, o := range s.exec.LightOutputs(min(n, int(k))) {
		out = append(out, Output{Seq: l.outSeq + o.Seq, Sink: o.Operator, Subtask: o.Subtask, Value: o.Value, Position: o.Position})
	}
	s.output = out
}

// changeLight is change for a light run's write to the entry whose
// history is he: he keeps the index of the entry's change in the command
// (chGen, ch; -1: none, or dropped), found by its EntryID only when the
// history's chGen says the others do not hold theirs.
func (c *collector) changeLight(he *histEntry, b *runtime.LightRecs, w *runtime.LightRec) {
	if he.chGen != c.gen {
		he.chGen, he.ch = c.gen, -1
		if c.s.hist.chGen != c.gen && he.lazy == 0 { // a lazy history has no change yet
			if i, ok := c.changeIndex(he.id); ok {
				he.ch = i
			}
		}
	}
	if he.ch < 0 {
		if len(c.changes) >= maxChanges {
			c.dropped++
			return
		}
		e := c.s.exec.LightEntryAt(w)
		if he.lazy != 0 {
			c.materializeAs(he, e)
		}
		c.addChange(he.id, Change{Old: b.Old(w), HadOld: w.HadOld(), KeyGroup: e.KeyGroup, Key: e.Key, Namespace: e.Namespace, UserKey: e.UserKey}, he)
	}
	ch := &c.changes[he.ch]
	ch.New, ch.Cleared = b.New(w), w.Cleared()
	ch.Writes++
}

// finishLight ends the light run at the stop: it replays from the anchor
// to the current position (and source reads), traced, and makes the
// command's events those a full trace would have kept. An error is the
// replay's (a *runtime.Failure when the command failed: the replay fails
// there too).
func (c *collector) finishLight() error {
	c.foldIn(true)
	s, l := c.s, c.light
	c.light = nil
	target, reads := s.exec.Position(), s.exec.Reads()
	c.lightOutputs(l)
	s.exec.StopLight()
	total := int64(l.prefixTrunc+len(l.prefix)) + l.events
	a := l.anchor.cp
	aPos, aID := a.Info().Position, a.Info().CheckpointID
	// The checkpoints after the anchor go: the replay takes them again,
	// at the same positions and with the same ids.
	// Their sink record counts are the light run's (the replay adds no
	// records, so its outSeq is the stop's): kept by id and put back.
	keep := 0
	for keep < len(s.checkpoints) && s.checkpoints[keep].Info().Position <= aPos {
		keep++
	}
	outSeq := map[int64]int64{}
	for _, cp := range s.checkpoints[keep:] {
		id := cp.Info().CheckpointID
		outSeq[id] = s.cpOutSeq[id]
	}
	s.releaseCheckpoints(keep)
	if s.pinnedOut {
		s.checkpoints = append(s.checkpoints, a)
	}
	s.pinned, s.pinnedOut = nil, false
	s.nextCPID = aID
	exec, err := s.exec.Restart(s.job, s.opts.Options, a)
	if err != nil {
		return err
	}
	s.exec = exec
	if err := exec.ResumeTime(a); err != nil {
		return err
	}
	// The light run recorded the outputs and history the replay would:
	// the replay only gives the events (and back's digests).
	s.replays.forgetAfter(aPos)
	s.replays.skip(l.startPos, aPos) // no digests there: not checked by back
	var events []runtime.TraceEvent
	trunc := 0
	take := func(pos int64) {
		trunc += exec.TraceDropped()
		ev := exec.TakeTrace()
		for i := range ev {
			if ev[i].Kind == runtime.TraceEmitted {
				s.replays.note(pos, &ev[i])
			}
		}
		events = append(events, ev...)
		if over := len(events) - MaxEvents; over > MaxEvents {
			trunc += over
			n := copy(events, events[over:])
			clear(events[n:])
			events = events[:n]
		}
	}
	pos := aPos
	var rerr error
	for {
		if err := s.replayCommands(pos); err != nil {
			rerr = err
			break
		}
		take(pos)
		if pos >= target && exec.Reads() >= reads {
			break
		}
		err := exec.Next()
		pos = exec.Position()
		take(pos)
		if err != nil {
			if !errors.Is(err, runtime.ErrFinished) && !errors.Is(err, runtime.ErrNoInput) {
				rerr = err
			}
			break
		}
		if err := s.afterNext(); err != nil {
			rerr = err
			break
		}
	}
	for _, cp := range s.checkpoints {
		if seq, ok := outSeq[cp.Info().CheckpointID]; ok {
			s.cpOutSeq[cp.Info().CheckpointID] = seq
		}
	}
	if replayed := int64(trunc + len(events)); replayed != l.events-l.anchor.events {
		// Not reached while the job is deterministic (DESIGN 3).
		s.log.Warn("light run: the replay of the last records traced another number of events than the run counted",
			"position", target, "counted", l.events-l.anchor.events, "replayed", replayed)
	}
	if l.anchor.cp == l.first {
		events = append(l.prefix, events...)
	}
	c.events, c.trunc = events, int(total)-len(events)
	s.lightRuns++
	return rerr
}

// abandonLight ends a light run without a stop (the command returned an
// error): the sink records go into the outputs, the executor is traced
// again and nothing is replayed.
func (c *collector) abandonLight() {
	c.foldIn(true)
	s, l := c.s, c.light
	c.light = nil
	c.lightOutputs(l)
	s.exec.StopLight()
	s.unpin()
	s.replays.skip(l.startPos, s.exec.Position())
}

// pin makes cp the checkpoint a light run may replay from, releasing the
// one pinned before if trimming dropped it.
func (s *Session) pin(cp *runtime.Checkpoint) {
	if s.pinned == cp {
		return
	}
	s.unpin()
	s.pinned = cp
}

func (s *Session) unpin() {
	if s.pinned != nil && s.pinnedOut {
		s.pinned.Release()
		delete(s.cpOutSeq, s.pinned.Info().CheckpointID)
	}
	s.pinned, s.pinnedOut = nil, false
}

// kept reports whether cp is one of the session's checkpoints (or the
// pinned one).
func (s *Session) kept(cp *runtime.Checkpoint) bool {
	if cp == s.pinned {
		return true
	}
	for _, k := range s.checkpoints {
		if k == cp {
			return true
		}
	}
	return false
}
