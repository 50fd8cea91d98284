package runtime

import "streamdbg/state"

// The typed record path. A record's Value is an interface, and putting a
// string or a struct in one allocates it on the heap: one allocation per
// record per operator. When every consumer of an operator's main output is
// a typed operator of this package (Map, FlatMap, Filter, Process, Sink,
// JSONSink: node.typedIn), the producer instead puts the value in a slot of
// a typed arena, one allocation per slotChunk records, and the record holds
// a pointer to the slot, which an interface holds without allocating. The
// consumer reads the value back typed (readValue). Everything else that
// looks at a record (traces, views, messages, key selectors, operators of
// other packages) sees the plain value (plainValue), so a slot never leaves
// the runtime.
//
// INVARIANT: a slot is written once, when it is put; records may share it
// (Filter passes it on). Nothing holds a slot once the executor is idle (no
// record in any queue or stack: the executor's slot generation moves on),
// so an arena reuses its chunk from the start in a new generation and a
// steady run allocates nothing for its records.

type slot[T any] struct{ v T }

func (s *slot[T]) plainValue() any { return s.v }

// slotChunk is how many values one arena allocation holds.
const slotChunk = 256

type slotArena[T any] struct {
	chunk []slot[T]
	gen   uint64
}

// put stores v in the arena; gen is the executor's slot generation.
func (a *slotArena[T]) put(v T, gen uint64) *slot[T] {
	if a.gen != gen {
		clear(a.chunk)
		a.chunk, a.gen = a.chunk[:0], gen
	}
	n := len(a.chunk)
	if n == cap(a.chunk) {
		a.chunk, n = make([]slot[T], 0, slotChunk), 0
	}
	// Only the length changes: no append writing the slice back.
	a.chunk = a.chunk[:n+1]
	s := &a.chunk[n]
	s.v = v
	return s
}

// readValue is a record's value as T, from a slot or boxed.
func readValue[T any](v any) T {
	if s, ok := v.(*slot[T]); ok {
		return s.v
	}
	return v.(T)
}

// plainValue is a record's value as anything outside the typed path sees
// it.
func plainValue(v any) any {
	if s, ok := v.(interface{ plainValue() any }); ok {
		return s.plainValue()
	}
	return v
}

// emitTyped emits v on the main output, in a slot when the consumers read
// slots.
func emitTyped[T any](ctx *OperatorContext, a *slotArena[T], v T) {
	inst := ctx.inst
	if in := inst.nextIn; in != nil && ctx.exec.canRunDirect() {
		// The consumer runs now and keeps no hold of its slot: v goes in
		// the consumer's own (INVARIANT: a chain has no cycle, so the
		// consumer is not in a call already).
		if f, ok := inst.next.(typedFn[T]); ok {
			s := in.(*slot[T])
			s.v = v
			runDirectTyped(ctx, f, s)
			return
		}
	}
	if inst.slotOut {
		emitSlot(ctx, a.put(v, ctx.exec.slotGen))
		return
	}
	ctx.Emit(v)
}

// typedFn is a typed operator's handling of one record: its value v and
// the record's value as queued, raw (v's slot, or v boxed), for what must
// see the record itself (sink outputs, a filter passing its slot on).
type typedFn[T any] func(ctx *OperatorContext, v T, raw any) error

// emitSlot emits the slot s on the main output (slotOut). When the one
// consumer may run at once (opInstance.direct) and is a typed operator of
// T (opInstance.next), it runs it typed: the same step runDirect would
// run, without its Operator call and the consumer's type assertion. When
// the main output is one hash edge to one subtask (opInstance.hashOut), it
// queues the record there with its key encoded typed, as emit would.
func emitSlot[T any](ctx *OperatorContext, s *slot[T]) {
	inst := ctx.inst
	if inst.next != nil {
		if f, ok := inst.next.(typedFn[T]); ok && ctx.exec.canRunDirect() {
			runDirectTyped(ctx, f, s)
			return
		}
	} else if rt := inst.hashOut; rt != nil && ctx.exec.trace == nil {
		if k, ok := rt.key.typed.(func([]byte, T) []byte); ok {
			e := ctx.exec
			if e.light != nil {
				e.light.cur.Events++
			}
			q := &rt.targets[0].inbox
			q.reset()
			start := len(q.arena)
			q.arena = k(q.arena, s.v)
			// pushArenaKey, written out: one call less per record.
			key := q.arena[start:len(q.arena):len(q.arena)]
			el := q.grow()
			el.rec.Value, el.rec.Timestamp, el.rec.HasTimestamp = s, ctx.rec.Timestamp, ctx.rec.HasTimestamp
			el.key, el.channel, el.kg = key, int32(rt.channel), int32(state.KeyGroupFor(key, e.plan.MaxParallelism))
			el.kind, el.wm, el.idle = elRecord, 0, false
			return
		}
	}
	ctx.Emit(s)
}

// runDirectTyped is emit and runDirect for an emission emitSlot runs
// typed. emit's other work does not apply: drainBatch runs without a
// trace, and the main output is not captured. It is enterDirect, the
// call and leaveDirect in one frame (the same batch step: the consumer's
// work item, the context's record and error, the failure), but for the
// record in the work item: a failure reads it from the consumer's
// context (here, and batchStep.step for a panic).
func runDirectTyped[T any](ctx *OperatorContext, f typedFn[T], s *slot[T]) {
	e := ctx.exec
	if e.light != nil {
		e.light.cur.Events++
	}
	st := ctx.st
	op := ctx.inst.outs[0].chained
	inst := st.ops[op]
	c := inst.ctx
	c.rec = Record{Value: s, Timestamp: ctx.rec.Timestamp, HasTimestamp: ctx.rec.HasTimestamp}
	b := &e.batch
	prevInst, prevW := b.inst, b.w
	b.depth++
	// INVARIANT: ws[depth] is zero but while a direct step uses it.
	w := &b.ws[b.depth]
	w.op = int32(op)
	b.inst, b.w = inst, w
	e.steps++
	if inst.keyed != nil {
		inst.keyed.SetCurrentKey(nil, 0) // as a chained record's step does
	}
	err := f(c, s.v, s)
	if c.err != nil {
		if err == nil {
			err = c.err
		}
		c.err = nil
	}
	if err != nil {
		w.rec = c.rec
		e.fail(st, inst, w, err, "")
		w.rec = Record{}
	}
	w.op = 0
	b.depth--
	b.inst, b.w = prevInst, prevW
}

// slotsOut reports whether every consumer of an operator's main output
// reads slots.
func slotsOut(n *node) bool {
	main := 0
	for _, out := range n.outputs {
		if out.tag != "" {
			continue
		}
		if !out.to.typedIn {
			return false
		}
		main++
	}
	return main > 0
}
