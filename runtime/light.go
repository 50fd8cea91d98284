package runtime

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync/atomic"
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
	// Data is the light trace's reader's own: the session keeps its
	// record of the entry here (or makes the entry inside its record:
	// StartLight's newEntry).
	Data any
}

// LightWrite is one write to keyed state, as a TraceStateWrite event
// records it.
type LightWrite struct {
	Entry    *LightEntry
	Old, New any
	// Position is the source position the write happened at
	// (Executor.Position then).
	Position int64
	// tab and idx name Entry until TakeLight fills it in: a write found
	// by its tag does not read tab.entries (a cache miss with a large
	// state, in the middle of the record's work); TakeLight reads them
	// all in one short loop.
	tab             *lightTable
	idx             int32
	HadOld, Cleared bool // (after idx: the write is 64 bytes)
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
	cur, spare LightTrace
	steps      int64 // Executor.steps at the last take
	// saved is the executor's full trace, put back by StopLight.
	saved *Trace
	// outputs counts the sinks' records; rings keep the last keep of
	// each sink subtask's, typed (no boxing per record).
	outputs int64
	keep    int
	rings   []outputRing
	// newEntry makes a LightEntry (StartLight).
	newEntry func() *LightEntry
	// batch keeps the writes in cur.Writes across takes, for
	// TakeLightWrites.
	batch bool
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
		if newEntry == nil {
			newEntry = func() *LightEntry { return new(LightEntry) }
		}
		e.light = &light{saved: e.trace, steps: e.steps, keep: max(keepOutputs, 0), newEntry: newEntry}
		e.trace = nil
	}
}

// StopLight ends light mode; what TakeLight did not take is dropped.
func (e *Executor) StopLight() {
	if e.light != nil {
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
	l.cur.Events += e.steps - l.steps
	l.steps = e.steps
	if l.batch {
		l.spare = LightTrace{Events: l.cur.Events, Outputs: l.cur.Outputs, NewEntries: l.cur.NewEntries}
		l.cur.Events, l.cur.Outputs, l.cur.NewEntries = 0, 0, 0
		return &l.spare
	}
	out := l.cur
	resolveEntries(out.Writes)
	clear(l.spare.Writes)
	l.cur = LightTrace{Writes: l.spare.Writes[:0]}
	l.spare = out
	return &l.spare
}

// resolveEntries fills in the Entry of writes that name it by table and
// index, in one short loop (the loads of the entries overlap).
func resolveEntries(ws []LightWrite) {
	for i := range ws {
		if w := &ws[i]; w.Entry == nil {
			w.Entry = w.tab.entries[w.idx]
		}
	}
}

// BatchLightWrites makes a light run keep its writes until
// TakeLightWrites takes them, instead of handing them out with every
// TakeLight (whose Writes are then empty): a reader that takes them in
// large batches reads each entry in one short loop and copies no write.
// size is the batch the reader means to take next: room is made for it
// (when no write is pending, in a new array rather than by growing the
// old one write by write); called again, it makes room for a larger one.
func (e *Executor) BatchLightWrites(size int) {
	l := e.light
	if l == nil {
		return
	}
	l.batch = true
	if cap(l.cur.Writes) < size && len(l.cur.Writes) == 0 {
		l.cur.Writes = make([]LightWrite, 0, size)
	}
}

// LightWritesPending is the number of writes TakeLightWrites would return.
func (e *Executor) LightWritesPending() int {
	if e.light == nil {
		return 0
	}
	return len(e.light.cur.Writes)
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
	ws := l.cur.Writes
	resolveEntries(ws)
	l.cur.Writes = ws[:0]
	return ws
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
	l        *light
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
	if r == nil || r.l != l {
		r = &outRing[T]{l: l, operator: ctx.inst.info.Name, subtask: ctx.st.index}
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
	r.next = (r.next + 1) % len(r.vals)
}

func (r *outRing[T]) appendKept(dst []LightOutput, after int64) []LightOutput {
	for i := range r.vals {
		if r.seqs[i] > after {
			dst = append(dst, LightOutput{Seq: r.seqs[i], Operator: r.operator, Subtask: r.subtask, Value: r.vals[i], Position: r.pos[i]})
		}
	}
	return dst
}

// lightTable is a traced table's LightEntries: entries[i] is tagged
// gen<<32 | i in a table that keeps tags (state.EntryTagger), and found by
// its bytes (key, namespace, user key) in index. gen is unique in the
// process, so a tag another table or an earlier generation left in an
// entry is never taken for one of these.
type lightTable struct {
	gen     uint64
	entries []*LightEntry
	index   map[string]int32
}

// maxLightEntries bounds the entries a traced table keeps for light runs:
// beyond it they start over (a new generation; a write of an entry makes
// it again), so that a run over more keys than that keeps no record per
// key (a variable for tests).
var maxLightEntries = 1 << 18

var lightGens atomic.Uint64

// lightWrite records a state write in light mode, as recordDyn would trace
// it (old and nw are dynamic values).
func (t *tracedTable) lightWrite(l *light, ns, uk []byte, old any, hadOld bool, nw any, cleared bool) {
	l.cur.Events++
	lt := &t.light
	var tag *uint64
	if uk == nil && t.tagger != nil {
		tag = t.tagger.EntryTag(ns)
		if tag != nil && *tag>>32 == lt.gen && lt.gen != 0 {
			if i := uint32(*tag); int(i) < len(lt.entries) {
				l.cur.Writes = append(l.cur.Writes, LightWrite{tab: lt, idx: int32(i), Old: old, HadOld: hadOld, New: nw, Cleared: cleared, Position: t.exec.position})
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
		if lt.gen == 0 || len(lt.entries) >= maxLightEntries {
			// The writes not yet taken name their entries in the
			// generation that ends here.
			for j := range l.cur.Writes {
				if w := &l.cur.Writes[j]; w.Entry == nil && w.tab == lt {
					w.Entry = lt.entries[w.idx]
				}
			}
			*lt = lightTable{index: map[string]int32{}}
			for lt.gen == 0 {
				lt.gen = lightGens.Add(1) & (1<<32 - 1)
			}
		}
		ent := l.newEntry()
		l.cur.NewEntries++
		ent.State, ent.KeyGroup = t.Table.Desc().Meta.StateName, kg
		if t.inst.ctx != nil {
			ent.Operator, ent.Subtask = t.inst.info.Name, t.inst.ctx.st.index
		}
		ent.Key, ent.Namespace, ent.UserKey = t.display(key, ns, uk)
		i = int32(len(lt.entries))
		lt.entries = append(lt.entries, ent)
		if tag == nil {
			lt.index[string(b)] = i
		}
	}
	if tag != nil {
		*tag = lt.gen<<32 | uint64(i)
	}
	l.cur.Writes = append(l.cur.Writes, LightWrite{Entry: lt.entries[i], Old: old, HadOld: hadOld, New: nw, Cleared: cleared, Position: t.exec.position})
}
