package runtime

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync/atomic"

	"streamdbg/state"
)

// The light trace. A traced executor records every step, emission, output,
// state write, timer and watermark as a TraceEvent with dynamic values: a
// long run spends most of its time building events nobody reads. In light
// mode (SetLight) the executor runs as an untraced one (drainBatch), keeps
// only what a debugger needs of every record — the state writes (old and
// new values, for the entries' history and the changes of a command) and
// the records sinks received — and counts the events a full trace would
// have recorded. A debugger that stops after a light run replays the last
// records from a checkpoint, traced, for the events of the stop (the
// session does: the replay is deterministic, so they are the events the
// full trace would have kept).
//
// State writes name their entry with a LightEntry, made once per entry
// (its key, namespace and user key decoded for display then): a write
// costs an entry lookup by its bytes, or by the tag the table keeps in the
// entry, not a decoding.

// LightEntry is one keyed state entry written during a light run. The
// executor makes one per entry and operator subtask, and gives the same
// pointer for every later write of the entry, until it is replaced
// (Restart, or a new generation beyond maxLightEntries) or, in a table
// that keeps tags (state.EntryTagger), until the entry is cleared: a later
// write gets a new LightEntry. Two LightEntries may then name the same
// entry, so a reader keeps its record of an entry by what the LightEntry
// names, not by the pointer alone.
type LightEntry struct {
	Operator string
	Subtask  int
	State    string
	KeyGroup int
	// Key, Namespace and UserKey are display values (as TraceEvent's).
	Key, Namespace, UserKey any
	// Data is the light trace's reader's own: it may keep its record of
	// the entry here (or make the entry inside its record: StartLight's
	// newEntry). A reader of LightRecs can keep it in an array by the
	// index LightRec.Entry gives instead.
	Data any
}

// LightWrite is one write to keyed state, as a TraceStateWrite event
// records it.
type LightWrite struct {
	Entry    *LightEntry
	Old, New any
	// Position is the source position the write happened at
	// (Executor.Position then).
	Position        int64
	HadOld, Cleared bool
}

// LightRec is one write to keyed state as a light run keeps it (the
// writes TakeLightRecs returns): a LightWrite without pointers, 32 bytes.
// It names its entry by the generation of the entry's table and the
// entry's index in it (Entry; Executor.LightEntryOf gives the
// LightEntry), and holds an int64 state's values themselves (LightRecs.Old
// and New box them): a reader that keeps its own record of each entry
// in an array by that index reaches it without following a pointer, the
// batch is half as large, and the garbage collector has nothing in it to
// scan.
type LightRec struct {
	// Position is the source position the write happened at
	// (Executor.Position then).
	Position int64
	// old and new are the values of an int64 state, or (recBoxed) the
	// indexes of the values in LightRecs.Values (-1: nil).
	old, new int64
	gen      uint32
	// idx is the entry's index in gen, and the rec* flags.
	idx uint32
}

const (
	recHadOld  = 1 << 29
	recCleared = 1 << 30
	recBoxed   = 1 << 31
	recIndex   = recHadOld - 1
)

// Entry is the generation and index that name the write's entry: the same
// pair for every write of one LightEntry. A generation is unique in the
// process (no two tables, executors or light runs share one), its
// indexes count from 0.
func (r *LightRec) Entry() (gen uint32, idx int) { return r.gen, int(r.idx & recIndex) }

// HadOld and Cleared are LightWrite's.
func (r *LightRec) HadOld() bool  { return r.idx&recHadOld != 0 }
func (r *LightRec) Cleared() bool { return r.idx&recCleared != 0 }

// LightRecs is the writes a light run recorded since the last take, oldest
// first, and the dynamic values of the writes to states that are not
// int64s.
type LightRecs struct {
	Recs   []LightRec
	Values []any
}

// Old and New are the write's values as LightWrite holds them (the int64s
// boxed by state.BoxInt64, as a traced write boxes them; Old is nil
// without HadOld).
func (b *LightRecs) Old(r *LightRec) any {
	if r.idx&recBoxed != 0 {
		return b.value(r.old)
	}
	if r.idx&recHadOld == 0 {
		return nil
	}
	return state.BoxInt64(r.old)
}

func (b *LightRecs) New(r *LightRec) any {
	if r.idx&recBoxed != 0 {
		return b.value(r.new)
	}
	return state.BoxInt64(r.new)
}

func (b *LightRecs) value(i int64) any {
	if i < 0 {
		return nil
	}
	return b.Values[i]
}

// LightOutput is one record a sink received, as a TraceOutput event
// records it: the Seq-th record of the light run (from 1), received while
// source position Position ran.
type LightOutput struct {
	Seq      int64
	Operator string
	Subtask  int
	Value    any
	Position int64
}

// LightTrace is what a light run recorded since the last TakeLight.
type LightTrace struct {
	// Events is the number of TraceEvents a full trace would have
	// recorded (steps included).
	Events int64
	Writes []LightWrite
	// Outputs is the number of records the sinks received; the last of
	// them are kept (LightOutputs).
	Outputs int64
	// NewEntries is the number of the Writes' entries made since the last
	// take (written for the first time in this light run, or in a new
	// LightEntry).
	NewEntries int
}

// light is the executor's light recorder.
type light struct {
	run        uint64 // unique in the process (lightRuns)
	cur, spare LightTrace
	steps      int64 // Executor.steps at the last take
	// saved is the executor's full trace, put back by StopLight.
	saved *Trace
	// outputs counts the sinks' records; rings keep the last keep of
	// each sink subtask's, typed (no boxing per record).
	outputs int64
	keep    int
	rings   []outputRing
	// newEntry makes a LightEntry (StartLight); nil: the next of slab.
	newEntry func() *LightEntry
	slab     []LightEntry
	// recs are the writes not yet taken (cur.Writes and TakeLightWrites
	// give them as LightWrites, in conv).
	recs LightRecs
	conv []LightWrite
	// gens are the entries of the generations recs may name: a table's
	// current one, and those that ended before the last take but one
	// (ended: the takes made before then; -1 while current).
	gens  map[uint32]*lightGen
	takes int64
	// batch keeps the writes across takes, for TakeLightWrites.
	batch bool
	// hold keeps every generation until StopLight (HoldLightEntries).
	hold bool
	// made is the entries made since the last flushWritten, with their
	// hashes for Options.Written (added in one batch, whose cache misses
	// overlap: each is a random slot of a large table).
	made []madeEntry
	// touched is what flushWritten read ahead (kept, never used).
	touched uint64
}

// madeEntry is an entry a light run made (made).
type madeEntry struct {
	g   *lightGen
	idx int
	h   uint64
}

// flushWritten adds the entries made since the last call to
// Options.Written, in the order they were made, and marks those it had
// not seen fresh (LightEntryFresh). Every way out of light mode and every
// take of writes calls it first.
func (e *Executor) flushWritten() {
	l, w := e.light, e.opts.Written
	if l == nil || len(l.made) == 0 {
		return
	}
	const ahead = 8
	for i := range l.made {
		if j := i + ahead; j < len(l.made) {
			l.touched += w.touch(l.made[j].h)
		}
		m := &l.made[i]
		if !w.add(m.h) {
			m.g.markFresh(l, m.idx)
		}
	}
	clear(l.made)
	l.made = l.made[:0]
}

// lightGen is a generation of a traced table's LightEntries: the
// operator, subtask and state they share, and each entry's key group and
// display values (disp); the LightEntries themselves are made when asked
// for (LightEntryOf, LightWrites), or at once when the reader makes them
// (StartLight's newEntry). A reader of LightRecs (LightEntryAt) needs
// none: a large state costs 56 bytes an entry here, not a LightEntry of
// 112 and a pointer to it.
type lightGen struct {
	ended int64
	genEntries
	entries []*LightEntry // by index, nil: not made (yet)
	// fresh marks (a bit an index) the entries light run freshOf made
	// that no executor of Options.Written had written before
	// (LightEntryFresh); bits set in another light run mean nothing.
	fresh   []uint64
	freshOf uint64 // light.run
}

// genEntries is what a lightGen knows of its entries: whose they are
// and their bytes. disp and raw are only ever appended to (add), so a
// copy of a genEntries (LightEntries') reads the entries it had.
type genEntries struct {
	operator string
	subtask  int
	state    string
	// t decodes the entries' display values (tracedTable.display) from
	// their bytes, kept in raw: a large state's entries hold no pointer
	// and no decoded value each (most are never asked for), and the
	// garbage collector has nothing in disp or raw to scan.
	t    *tracedTable
	disp []lightDisp
	raw  []byte
}

// lightDisp is an entry of a lightGen: its key group, and where its key,
// namespace and user key bytes are in the generation's raw bytes (one
// after the other from off; kLen, ukLen -1: nil).
type lightDisp struct {
	off         uint64
	kLen, ukLen int32
	nsLen       uint32
	kg          int32
}

// add appends an entry of key group kg and the given bytes to g.
func (g *genEntries) add(kg int, key, ns, uk []byte) {
	d := lightDisp{off: uint64(len(g.raw)), kLen: -1, nsLen: uint32(len(ns)), ukLen: -1, kg: int32(kg)}
	if key != nil {
		d.kLen = int32(len(key))
	}
	g.raw = append(append(g.raw, key...), ns...)
	if uk != nil {
		d.ukLen = int32(len(uk))
		g.raw = append(g.raw, uk...)
	}
	if len(g.disp) == cap(g.disp) {
		// Doubled (append grows a large array by a quarter at a time).
		g.disp = append(make([]lightDisp, 0, max(2*len(g.disp), 16)), g.disp...)
	}
	g.disp = append(g.disp, d)
}

// at is entry idx of g as a LightEntry value, its display values decoded
// now (as the write that made it would have decoded them).
func (g *genEntries) at(idx int) LightEntry {
	key, ns, uk := g.parts(idx)
	k, n, u := g.t.display(key, ns, uk)
	return LightEntry{Operator: g.operator, Subtask: g.subtask, State: g.state, KeyGroup: int(g.disp[idx].kg), Key: k, Namespace: n, UserKey: u}
}

// parts is the key, namespace and user key bytes of entry idx of g (nil:
// none). Full slice expressions: a decoder that keeps its bytes cannot
// see the next entry's appended to them.
func (g *genEntries) parts(idx int) (key, ns, uk []byte) {
	d := &g.disp[idx]
	b := g.raw[d.off:]
	kl := uint32(max(d.kLen, 0))
	if d.kLen >= 0 {
		key = b[:kl:kl]
	}
	ns = b[kl : kl+d.nsLen : kl+d.nsLen]
	if d.ukLen >= 0 {
		e := kl + d.nsLen + uint32(d.ukLen)
		uk = b[kl+d.nsLen : e : e]
	}
	return key, ns, uk
}

// markFresh marks entry idx of g fresh in light run l.
func (g *lightGen) markFresh(l *light, idx int) {
	if g.freshOf != l.run {
		g.freshOf = l.run
		clear(g.fresh)
	}
	if w := idx / 64; w >= len(g.fresh) {
		g.fresh = append(g.fresh, make([]uint64, max(w+1-len(g.fresh), len(g.fresh)))...)
	}
	g.fresh[idx/64] |= 1 << (idx % 64)
}

func (g *lightGen) isFresh(l *light, idx int) bool {
	return g.freshOf == l.run && idx/64 < len(g.fresh) && g.fresh[idx/64]&(1<<(idx%64)) != 0
}

// entry is the LightEntry of idx in g, made (by l) when it was not.
func (g *lightGen) entry(l *light, idx int) *LightEntry {
	if idx >= len(g.entries) {
		es := make([]*LightEntry, max(2*len(g.entries), idx+1, 16))
		copy(es, g.entries)
		g.entries = es
	}
	if e := g.entries[idx]; e != nil {
		return e
	}
	e := l.entry()
	data := e.Data
	*e = g.at(idx)
	e.Data = data
	g.entries[idx] = e
	return e
}

// StartLight puts a traced executor (Options.Trace) in light mode (see
// LightTrace), keeping the last keepOutputs records of every sink subtask
// for LightOutputs. It is meant for the time between source events: take
// the trace first (TakeTrace), since light mode records no TraceEvents.
// newEntry, when not nil, makes the zero LightEntry of an entry written
// for the first time (a reader can keep its own record of the entry in
// the same allocation); its fields are filled in after.
func (e *Executor) StartLight(keepOutputs int, newEntry func() *LightEntry) {
	if e.light == nil {
		e.light = &light{run: lightRuns.Add(1), saved: e.trace, steps: e.steps, keep: max(keepOutputs, 0), newEntry: newEntry, gens: map[uint32]*lightGen{}}
		e.trace = nil
	}
}

// StopLight ends light mode; what TakeLight did not take is dropped.
func (e *Executor) StopLight() {
	if e.light != nil {
		e.flushWritten()
		e.trace = e.light.saved
		e.light = nil
	}
}

// Light reports whether the executor is in light mode.
func (e *Executor) Light() bool { return e.light != nil }

// TakeLight returns what the light run recorded since the last call (nil
// outside light mode). It is valid until the next call.
func (e *Executor) TakeLight() *LightTrace {
	l := e.light
	if l == nil {
		return nil
	}
	e.flushWritten()
	l.cur.Events += e.steps - l.steps
	l.steps = e.steps
	if l.batch {
		l.spare = LightTrace{Events: l.cur.Events, Outputs: l.cur.Outputs, NewEntries: l.cur.NewEntries}
		l.cur.Events, l.cur.Outputs, l.cur.NewEntries = 0, 0, 0
		return &l.spare
	}
	// The writes alternate between two arrays (valid until the next call).
	spare := l.spare.Writes
	l.spare = l.cur
	l.spare.Writes = l.convert(l.cur.Writes[:0])
	clear(spare)
	l.cur = LightTrace{Writes: spare[:0]}
	return &l.spare
}

// convert appends the pending writes to ws as LightWrites, and takes them.
func (l *light) convert(ws []LightWrite) []LightWrite {
	b := l.take()
	for i := range b.Recs {
		r := &b.Recs[i]
		ws = append(ws, LightWrite{Entry: l.entryOf(r), Old: b.Old(r), New: b.New(r), Position: r.Position, HadOld: r.HadOld(), Cleared: r.Cleared()})
	}
	return ws
}

// take takes the pending writes: they stay valid until the next take
// (the one after it reuses their arrays), and so do the generations they
// name.
func (l *light) take() LightRecs {
	b := l.recs
	// The next writes go into the same arrays (the Values beyond them
	// are dropped by the writes that reach them, or StopLight).
	l.recs = LightRecs{Recs: b.Recs[:0], Values: b.Values[:0]}
	l.takes++
	for g, lg := range l.gens {
		if lg.ended >= 0 && lg.ended < l.takes-1 && !l.hold {
			delete(l.gens, g)
		}
	}
	return b
}

// entryOf is the LightEntry r names (its generation is kept: take).
func (l *light) entryOf(r *LightRec) *LightEntry {
	gen, idx := r.Entry()
	return l.gens[gen].entry(l, idx)
}

// LightEntryAt returns the entry a write TakeLightRecs returned names, as
// LightEntryOf's fields (Data aside): it makes no LightEntry. Valid
// until the take after next (the zero LightEntry outside light mode).
func (e *Executor) LightEntryAt(r *LightRec) LightEntry {
	if e.light == nil {
		return LightEntry{}
	}
	gen, idx := r.Entry()
	return e.light.gens[gen].at(idx)
}

// HoldLightEntries makes the entries of the writes TakeLightRecs returns
// valid (LightEntryAt, LightEntryIn, LightEntryHash) until StopLight, not
// only until the take after next: a reader may ask for an entry long after
// its writes, at the cost of keeping the bytes of every entry the light
// run wrote.
func (e *Executor) HoldLightEntries() {
	if e.light != nil {
		e.light.hold = true
	}
}

// LightEntryIn is LightEntryAt for the entry a write names (LightRec.Entry).
func (e *Executor) LightEntryIn(gen uint32, idx int) LightEntry {
	g := e.lightGen(gen, idx)
	if g == nil {
		return LightEntry{}
	}
	return g.at(idx)
}

// lightGen is the generation gen of the light run when it has entry idx
// (nil otherwise: not in light mode, or a generation no write names).
func (e *Executor) lightGen(gen uint32, idx int) *lightGen {
	if e.light == nil {
		return nil
	}
	if g := e.light.gens[gen]; g != nil && idx >= 0 && idx < len(g.disp) {
		return g
	}
	return nil
}

// LightEntries is what LightEntryIn reads of a light run's entries, kept
// (KeepLightEntries): it stays valid once the light run has ended and its
// executor is gone, for a reader that decodes the entries later.
type LightEntries struct {
	gens []keptGen
	last int // gens' index of the last lookup
}

// keptGen is a generation's entries as LightEntries keeps them: a copy of
// its genEntries (appended to only, so the copy stays valid).
type keptGen struct {
	gen uint32
	genEntries
}

// KeepLightEntries returns the entries the light run's writes named so far
// (it must hold them: HoldLightEntries), as LightEntryIn reads them.
func (e *Executor) KeepLightEntries() *LightEntries {
	k := &LightEntries{}
	if e.light == nil {
		return k
	}
	for id, g := range e.light.gens {
		k.gens = append(k.gens, keptGen{gen: id, genEntries: g.genEntries})
	}
	return k
}

// EntryIn is LightEntryIn of the kept entries.
func (k *LightEntries) EntryIn(gen uint32, idx int) LightEntry {
	if k.last >= len(k.gens) || k.gens[k.last].gen != gen {
		i := slices.IndexFunc(k.gens, func(g keptGen) bool { return g.gen == gen })
		if i < 0 {
			return LightEntry{}
		}
		k.last = i
	}
	g := &k.gens[k.last]
	if idx < 0 || idx >= len(g.disp) {
		return LightEntry{}
	}
	return g.at(idx)
}

// LightEntryHash is the hash WrittenEntries keeps of the entry a write
// names (LightRec.Entry): two entries with other hashes are other entries.
func (e *Executor) LightEntryHash(gen uint32, idx int) uint64 {
	g := e.lightGen(gen, idx)
	if g == nil {
		return 0
	}
	return g.t.entryHash(g.parts(idx))
}

// LightEntryFresh reports whether the entry r names was made in this light
// run for an entry that no executor sharing Options.Written had written
// before (false without Options.Written): a reader that keeps a record of
// every entry written (a debugger's history) has none of it yet, and the
// entry has no other LightEntry in this light run.
func (e *Executor) LightEntryFresh(r *LightRec) bool {
	gen, idx := r.Entry()
	g := e.lightGen(gen, idx)
	if g == nil {
		return false
	}
	e.flushWritten()
	return g.isFresh(e.light, idx)
}

// LightEntryOf returns the entry a write TakeLightRecs returned names,
// until the take after next (nil outside light mode).
func (e *Executor) LightEntryOf(r *LightRec) *LightEntry {
	if e.light == nil {
		return nil
	}
	return e.light.entryOf(r)
}

// BatchLightWrites makes a light run keep its writes until
// TakeLightWrites or TakeLightRecs takes them, instead of handing them
// out with every TakeLight (whose Writes are then empty): a reader that
// takes them in large batches reads each entry in one short loop and
// copies no write. size is the batch the reader means to take next: room
// is made for it (when no write is pending, in a new array rather than by
// growing the old one write by write); called again, it makes room for a
// larger one.
func (e *Executor) BatchLightWrites(size int) {
	l := e.light
	if l == nil {
		return
	}
	l.batch = true
	if cap(l.recs.Recs) < size && len(l.recs.Recs) == 0 {
		l.recs.Recs = make([]LightRec, 0, size)
	}
}

// LightWritesPending is the number of writes TakeLightWrites would return.
func (e *Executor) LightWritesPending() int {
	if e.light == nil {
		return 0
	}
	return len(e.light.recs.Recs)
}

// TakeLightWrites returns the writes a light run in batch mode
// (BatchLightWrites) recorded since the last call, oldest first, their
// Entry filled in. They are valid until the executor runs again (the next
// writes go into the same array); StopLight drops what was not taken.
func (e *Executor) TakeLightWrites() []LightWrite {
	l := e.light
	if l == nil || !l.batch {
		return nil
	}
	e.flushWritten()
	clear(l.conv)
	l.conv = l.convert(l.conv[:0])
	return l.conv
}

// TakeLightRecs is TakeLightWrites giving the writes as LightRecs: valid
// until the executor runs again, and their entries (LightEntryOf) until
// the take after next.
func (e *Executor) TakeLightRecs() LightRecs {
	l := e.light
	if l == nil || !l.batch {
		return LightRecs{}
	}
	e.flushWritten()
	return l.take()
}

// LightOutputs returns the last n records the sinks received in light
// mode, oldest first (fewer when fewer were kept or received).
func (e *Executor) LightOutputs(n int) []LightOutput {
	l := e.light
	if l == nil || n <= 0 {
		return nil
	}
	var all []LightOutput
	for _, r := range l.rings {
		all = r.appendKept(all, l.outputs-int64(n))
	}
	slices.SortFunc(all, func(a, b LightOutput) int { return cmp.Compare(a.Seq, b.Seq) })
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// countEvent counts an event a full trace would have recorded.
func (e *Executor) countEvent() {
	if e.light != nil {
		e.light.cur.Events++
	}
}

// outputRing is a sink subtask's ring of its last records in light mode.
type outputRing interface {
	// appendKept appends the kept records with Seq > after.
	appendKept(dst []LightOutput, after int64) []LightOutput
}

// outRing is the outputRing of a sink of T.
type outRing[T any] struct {
	run      uint64 // the light run's (light.run): a sink keeps its ring, not the run
	operator string
	subtask  int
	vals     []T
	seqs     []int64
	pos      []int64
	next     int // the slot the next record goes to
}

// lightOutput records v, a record of T a sink received (a slot or boxed),
// in light mode: in *ring, made on first use.
func lightOutput[T any](ctx *OperatorContext, ring **outRing[T], v any) {
	l := ctx.exec.light
	l.cur.Events++
	l.cur.Outputs++
	l.outputs++
	r := *ring
	if r == nil || r.run != l.run {
		r = &outRing[T]{run: l.run, operator: ctx.inst.info.Name, subtask: ctx.st.index}
		*ring = r
		l.rings = append(l.rings, r)
	}
	if l.keep == 0 {
		return
	}
	if len(r.vals) < l.keep {
		r.vals = append(r.vals, readValue[T](v))
		r.seqs = append(r.seqs, l.outputs)
		r.pos = append(r.pos, ctx.exec.position)
		return
	}
	r.vals[r.next], r.seqs[r.next], r.pos[r.next] = readValue[T](v), l.outputs, ctx.exec.position
	if r.next++; r.next == len(r.vals) { // no division per record
		r.next = 0
	}
}

func (r *outRing[T]) appendKept(dst []LightOutput, after int64) []LightOutput {
	for i := range r.vals {
		if r.seqs[i] > after {
			dst = append(dst, LightOutput{Seq: r.seqs[i], Operator: r.operator, Subtask: r.subtask, Value: r.vals[i], Position: r.pos[i]})
		}
	}
	return dst
}

// lightTable is a traced table's LightEntries: cur.entries[i] is tagged
// gen<<32 | i in a table that keeps tags (state.EntryTagger), and found by
// its bytes (key, namespace, user key) in index. gen is unique in the
// process, so a tag another table or an earlier generation left in an
// entry is never taken for one of these. run is the light run that knows
// the generation (light.gens): the entries outlive a light run, and the
// next one learns them on its first write. A run's number, not the light
// itself, so that a table does not keep a light run's write arrays (the
// largest of them megabytes) alive until the next one.
type lightTable struct {
	gen   uint64
	cur   *lightGen
	index map[string]int32
	run   uint64
}

// maxLightEntries bounds the entries a traced table keeps for light runs:
// beyond it they start over (a new generation; a write of an entry makes
// it again), so that a run over more keys than that keeps no record per
// key (a variable for tests; at most recIndex+1).
var maxLightEntries = 1 << 18

var lightGens atomic.Uint64

// lightRuns numbers the light runs of the process (light.run), from 1.
var lightRuns atomic.Uint64

// lightWrite records a state write in light mode, as recordDyn would trace
// it (old and nw are dynamic values).
func (t *tracedTable) lightWrite(l *light, ns, uk []byte, old any, hadOld bool, nw any, cleared bool) {
	o, n := int64(-1), int64(-1)
	if old != nil {
		o = int64(len(l.recs.Values))
		l.recs.Values = append(l.recs.Values, old)
	}
	if nw != nil {
		n = int64(len(l.recs.Values))
		l.recs.Values = append(l.recs.Values, nw)
	}
	flags := uint32(recBoxed)
	if hadOld {
		flags |= recHadOld
	}
	if cleared {
		flags |= recCleared
	}
	t.lightRec(l, ns, uk, o, n, flags)
}

// lightInt64 records a write of an int64 state in light mode, as
// tracedInt64Table's PutInt64 traces it (old: none without hadOld).
func (t *tracedTable) lightInt64(l *light, ns []byte, old int64, hadOld bool, nw int64) {
	flags := uint32(0)
	if hadOld {
		flags = recHadOld
	}
	t.lightRec(l, ns, nil, old, nw, flags)
}

// lightRec records a write to the entry of ns and uk (LightRec's old, new
// and flags).
func (t *tracedTable) lightRec(l *light, ns, uk []byte, old, nw int64, flags uint32) {
	l.cur.Events++
	lt := &t.light
	if lt.run != l.run && lt.gen != 0 {
		lt.run = l.run
		l.gens[uint32(lt.gen)] = lt.cur
	}
	var tag *uint64
	if uk == nil && t.tagger != nil {
		tag = t.tagger.EntryTag(ns)
		if tag != nil && *tag>>32 == lt.gen && lt.gen != 0 {
			if i := uint32(*tag); int(i) < len(lt.cur.disp) {
				l.recs.Recs = append(l.recs.Recs, LightRec{Position: t.exec.position, old: old, new: nw, gen: uint32(lt.gen), idx: i | flags})
				return
			}
		}
	}
	key, kg := t.inst.keyed.CurrentKey()
	var b []byte
	i, ok := int32(0), false
	if tag == nil {
		// Found by its bytes. An entry with a tag (and no valid one yet:
		// new, or its tag was lost with a clear) is not looked up: it
		// gets a new LightEntry (the reader finds its own record of the
		// entry by what the LightEntry names).
		b = binary.AppendUvarint(t.scratch[:0], uint64(len(key)))
		b = append(b, key...)
		b = binary.AppendUvarint(b, uint64(len(ns)))
		b = append(b, ns...)
		if uk != nil {
			b = append(b, 1)
			b = append(b, uk...)
		}
		t.scratch = b
		i, ok = lt.index[string(b)]
	}
	if !ok || lt.gen == 0 {
		if lt.gen == 0 || len(lt.cur.disp) >= min(maxLightEntries, recIndex+1) {
			// The writes not yet taken name their entries in the
			// generation that ends here: it is kept until they are
			// done with (light.take).
			if lt.cur != nil {
				lt.cur.ended = l.takes
			}
			g := &lightGen{ended: -1, genEntries: genEntries{state: t.Table.Desc().Meta.StateName, t: t}}
			if t.inst.ctx != nil {
				g.operator, g.subtask = t.inst.info.Name, t.inst.ctx.st.index
			}
			*lt = lightTable{index: map[string]int32{}, cur: g, run: l.run}
			for lt.gen == 0 {
				lt.gen = lightGens.Add(1) & (1<<32 - 1)
			}
			l.gens[uint32(lt.gen)] = lt.cur
		}
		g := lt.cur
		l.cur.NewEntries++
		i = int32(len(g.disp))
		g.add(kg, key, ns, uk)
		if t.exec.opts.Written != nil {
			l.made = append(l.made, madeEntry{g: g, idx: int(i), h: t.entryHash(key, ns, uk)})
		}
		if l.newEntry != nil {
			g.entry(l, int(i)) // the reader's, made now
		}
		if tag == nil {
			lt.index[string(b)] = i
		}
	}
	if tag != nil {
		*tag = lt.gen<<32 | uint64(i)
	}
	l.recs.Recs = append(l.recs.Recs, LightRec{Position: t.exec.position, old: old, new: nw, gen: uint32(lt.gen), idx: uint32(i) | flags})
}

// entry makes a LightEntry: newEntry's, or the next of a slab of them (one
// allocation for many entries).
func (l *light) entry() *LightEntry {
	if l.newEntry != nil {
		return l.newEntry()
	}
	if len(l.slab) == 0 {
		l.slab = make([]LightEntry, 256)
	}
	e := &l.slab[0]
	l.slab = l.slab[1:]
	return e
}
