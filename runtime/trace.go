package runtime

import (
	"fmt"

	"streamdbg/state"
)

// TraceKind says what a trace event records.
type TraceKind uint8

const (
	// TraceStep: one operator handled one element (Step describes it).
	TraceStep TraceKind = iota
	// TraceEmitted: an operator emitted a record (Tag names a side output).
	TraceEmitted
	// TraceOutput: a sink received a record.
	TraceOutput
	// TraceStateWrite: a keyed state entry changed (Old → New, or Cleared).
	TraceStateWrite
	TraceTimerSet
	TraceTimerDeleted
	TraceTimerFired
	// TraceWatermark: an operator's event time moved (From → To).
	TraceWatermark
	// TraceProcessingTime: the virtual processing clock moved to To.
	TraceProcessingTime
	// TraceNote: an operator's own report (What, Attrs), e.g. "window fired".
	TraceNote
	// TraceWatermarkStatus: an operator announced its outputs idle (Idle)
	// or active again.
	TraceWatermarkStatus
)

var traceKindNames = [...]string{"step", "emitted", "output", "state", "timer set", "timer deleted", "timer fired", "watermark", "processing time", "note", "watermark status"}

func (k TraceKind) String() string { return traceKindNames[k] }

// TraceEvent is one thing that happened during a step. Values are dynamic
// (see state.ToDynamic) so views and queries can show them.
type TraceEvent struct {
	Kind     TraceKind
	Step     int // the index of the step within the trace
	Task     string
	Subtask  int
	Operator string

	Info StepInfo // for TraceStep

	Tag   string // side output tag
	Value any    // emitted or output record

	State     string // state name (state writes)
	KeyGroup  int
	Key       any
	Namespace any
	UserKey   any
	Old, New  any
	HadOld    bool
	Cleared   bool

	Domain    TimeDomain
	Timestamp int64 // timers

	From, To int64 // watermarks, processing time
	Idle     bool  // watermark status

	What  string // notes
	Attrs []any
}

// Trace collects what steps did, for the debugger. Take returns and resets it.
type Trace struct {
	events []TraceEvent
	// spare is the array Take returned the time before last: recording
	// goes on in it, so a long traced run does not grow a new one per Take.
	spare []TraceEvent
	steps int
	st    *subtask
	inst  *opInstance
	// open is the index of the running step's event, filled in at its end.
	open int
	// dropped counts the events past MaxTraceEvents since the last Take.
	dropped int
}

// MaxTraceEvents bounds the events a trace holds between two takes: a
// step that does more (a watermark firing a million windows) keeps the
// first MaxTraceEvents and counts the rest (Executor.TraceDropped).
const MaxTraceEvents = 1 << 20

// Take returns the events recorded since the last Take. They are valid
// until the Take after next (the two arrays alternate).
func (t *Trace) Take() []TraceEvent {
	ev := t.events
	clear(t.spare)
	t.events, t.spare = t.spare[:0], ev
	t.steps = 0
	t.dropped = 0
	return ev
}

func (t *Trace) add(ev TraceEvent) {
	if len(t.events) >= MaxTraceEvents {
		t.dropped++
		return
	}
	ev.Step = t.steps
	if t.inst != nil && ev.Operator == "" {
		ev.Task, ev.Subtask, ev.Operator = t.st.task.Name, t.st.index, t.inst.info.Name
	}
	t.events = append(t.events, ev)
}

// begin opens a step: its event comes before the events the step causes.
func (t *Trace) begin(st *subtask, inst *opInstance) {
	t.st, t.inst = st, inst
	t.open = len(t.events)
	t.add(TraceEvent{Kind: TraceStep})
}

func (t *Trace) end(info StepInfo) {
	if t.open < len(t.events) && t.events[t.open].Kind == TraceStep {
		t.events[t.open].Info = info
	}
	t.steps++
	t.st, t.inst = nil, nil
}

func (t *Trace) emitted(ctx *OperatorContext, tag string, v any) {
	t.add(TraceEvent{Kind: TraceEmitted, Task: ctx.st.task.Name, Subtask: ctx.st.index, Operator: ctx.inst.info.Name, Tag: tag, Value: v})
}

func (t *Trace) output(ctx *OperatorContext, v any) {
	t.add(TraceEvent{Kind: TraceOutput, Task: ctx.st.task.Name, Subtask: ctx.st.index, Operator: ctx.inst.info.Name, Value: v})
}

func (t *Trace) timer(kind TraceKind, ctx *OperatorContext, d TimeDomain, tm state.Timer) {
	t.add(TraceEvent{Kind: kind, Task: ctx.st.task.Name, Subtask: ctx.st.index, Operator: ctx.inst.info.Name,
		Domain: d, Timestamp: tm.Timestamp, KeyGroup: tm.KeyGroup, Key: displayKey(ctx.inst, tm.Key),
		Namespace: displayNamespace(ctx.inst.info.node.timerNamespace, tm.Namespace)})
}

func (t *Trace) watermark(st *subtask, inst *opInstance, from, to int64) {
	t.add(TraceEvent{Kind: TraceWatermark, Task: st.task.Name, Subtask: st.index, Operator: inst.info.Name, From: from, To: to})
}

func (t *Trace) status(st *subtask, inst *opInstance, idle bool) {
	t.add(TraceEvent{Kind: TraceWatermarkStatus, Task: st.task.Name, Subtask: st.index, Operator: inst.info.Name, Idle: idle})
}

func (t *Trace) processingTime(to int64) {
	t.add(TraceEvent{Kind: TraceProcessingTime, To: to})
}

func (t *Trace) note(ctx *OperatorContext, what string, attrs ...any) {
	t.add(TraceEvent{Kind: TraceNote, Task: ctx.st.task.Name, Subtask: ctx.st.index, Operator: ctx.inst.info.Name, What: what, Attrs: attrs})
}

func displayKey(inst *opInstance, key []byte) any {
	if inst.keyCodec == nil || key == nil {
		return nil
	}
	v, err := inst.keyCodec.Display(key)
	if err != nil {
		return state.Hex(key)
	}
	return v
}

func displayNamespace(c state.AnyCodec, ns []byte) any {
	if c == nil || len(ns) == 0 {
		return nil
	}
	v, err := c.Display(ns)
	if err != nil {
		return state.Hex(ns)
	}
	return v
}

// tracedTable records every write to a keyed state with its old value.
type tracedTable struct {
	state.Table
	inst *opInstance
	exec *Executor
	// light, tagger and scratch serve the light trace (light.go); tagger
	// is Table when it keeps tags.
	light   lightTable
	tagger  state.EntryTagger
	scratch []byte
	// idHash is the hash of the table's operator, subtask and state
	// (entryHash; 0 until first used).
	idHash uint64
}

func (t *tracedTable) record(ns, uk []byte, old any, hadOld bool, nw any, cleared bool) {
	t.recordDyn(ns, uk, dyn(old), hadOld, dyn(nw), cleared)
}

// recordDyn is record for values that are dynamic already (dyn would
// return them as they are).
func (t *tracedTable) recordDyn(ns, uk []byte, old any, hadOld bool, nw any, cleared bool) {
	tr := t.exec.trace
	if tr == nil {
		if l := t.exec.light; l != nil {
			t.lightWrite(l, ns, uk, old, hadOld, nw, cleared)
		}
		return
	}
	key, kg := t.inst.keyed.CurrentKey()
	t.wrote(key, ns, uk)
	ev := TraceEvent{Kind: TraceStateWrite, State: t.Table.Desc().Meta.StateName, KeyGroup: kg}
	ev.Key, ev.Namespace, ev.UserKey = t.display(key, ns, uk)
	if t.inst.ctx != nil {
		ev.Task, ev.Subtask, ev.Operator = t.inst.ctx.st.task.Name, t.inst.ctx.st.index, t.inst.info.Name
	}
	ev.Old, ev.HadOld, ev.New, ev.Cleared = old, hadOld, nw, cleared
	tr.add(ev)
}

// display is the key, namespace and user key of the entry of key,
// namespace ns and user key uk as a state write event shows them.
func (t *tracedTable) display(key, ns, uk []byte) (k, n, u any) {
	d := t.Table.Desc()
	k, n = displayKey(t.inst, key), displayNamespace(d.Namespace, ns)
	if uk != nil && d.UserKey != nil {
		if v, err := d.UserKey.Display(uk); err == nil {
			u = v
		} else {
			u = state.Hex(uk)
		}
	}
	return k, n, u
}

func dyn(v any) any {
	if v == nil {
		return nil
	}
	return state.ToDynamic(v)
}

func (t *tracedTable) Put(ns []byte, v any) error {
	old, ok, err := t.Table.Get(ns)
	if err != nil {
		return err
	}
	if err := t.Table.Put(ns, v); err != nil {
		return err
	}
	t.record(ns, nil, old, ok, v, false)
	return nil
}

// tracedInt64Table is a tracedTable over a table that keeps int64 values
// unboxed (state.Int64Table): ValueState[int64] reads and writes through it
// without boxing, as it does untraced, and its writes are recorded as Put
// records them (the same values: BoxInt64 is how the table boxes them).
type tracedInt64Table struct {
	*tracedTable
	i64 state.Int64Table
}

var _ state.Int64Table = (*tracedInt64Table)(nil)

func (t *tracedInt64Table) GetInt64(ns []byte) (int64, bool, error) { return t.i64.GetInt64(ns) }

func (t *tracedInt64Table) PutInt64(ns []byte, v int64) error {
	old, ok, err := t.i64.GetInt64(ns)
	if err != nil {
		return err
	}
	if err := t.i64.PutInt64(ns, v); err != nil {
		return err
	}
	if t.exec.trace == nil {
		if l := t.exec.light; l != nil {
			t.lightInt64(l, ns, old, ok, v) // unboxed
		}
		return nil
	}
	var o any
	if ok {
		o = state.BoxInt64(old)
	}
	t.recordDyn(ns, nil, o, ok, state.BoxInt64(v), false) // int64s are dynamic values
	return nil
}

func (t *tracedTable) ListAppend(ns []byte, v any) error {
	if err := t.Table.ListAppend(ns, v); err != nil {
		return err
	}
	t.record(ns, nil, nil, false, v, false)
	return nil
}

func (t *tracedTable) ListPut(ns []byte, vs []any) error {
	old, err := t.Table.ListGet(ns)
	if err != nil {
		return err
	}
	if err := t.Table.ListPut(ns, vs); err != nil {
		return err
	}
	t.record(ns, nil, old, old != nil, vs, false)
	return nil
}

func (t *tracedTable) MapPut(ns, uk []byte, v any) error {
	old, ok, err := t.Table.MapGet(ns, uk)
	if err != nil {
		return err
	}
	if err := t.Table.MapPut(ns, uk, v); err != nil {
		return err
	}
	t.record(ns, uk, old, ok, v, false)
	return nil
}

func (t *tracedTable) MapDelete(ns, uk []byte) error {
	old, ok, err := t.Table.MapGet(ns, uk)
	if err != nil {
		return err
	}
	if err := t.Table.MapDelete(ns, uk); err != nil {
		return err
	}
	if ok {
		t.record(ns, uk, old, true, nil, true)
	}
	return nil
}

// Clear records the clear of a namespace that held something, with what it
// held.
func (t *tracedTable) Clear(ns []byte) error {
	old, had, err := t.contents(ns)
	if err != nil {
		return err
	}
	if err := t.Table.Clear(ns); err != nil {
		return err
	}
	if had {
		t.record(ns, nil, old, true, nil, true)
	}
	return nil
}

// MergeNamespaces records the target's merged value (with what it held
// before) and each source namespace that held something as cleared.
func (t *tracedTable) MergeNamespaces(target []byte, sources [][]byte) error {
	old, hadOld, err := t.contents(target)
	if err != nil {
		return err
	}
	type source struct {
		ns  []byte
		old any
	}
	var held []source
	for _, ns := range sources {
		v, ok, err := t.contents(ns)
		if err != nil {
			return err
		}
		if ok {
			held = append(held, source{ns, v})
		}
	}
	if err := t.Table.MergeNamespaces(target, sources); err != nil {
		return err
	}
	nw, has, err := t.contents(target)
	if err != nil {
		return err
	}
	t.record(target, nil, old, hadOld, nw, !has)
	for _, s := range held {
		t.record(s.ns, nil, s.old, true, nil, true)
	}
	return nil
}

// contents reads everything under ns, whatever the kind of state.
func (t *tracedTable) contents(ns []byte) (any, bool, error) {
	d := t.Table.Desc()
	switch d.Meta.Kind {
	case state.KindList:
		vs, err := t.Table.ListGet(ns)
		return vs, len(vs) > 0, err
	case state.KindMap:
		m := map[string]any{}
		err := t.Table.MapRange(ns, func(uk []byte, v any) bool {
			k := state.Hex(uk).String()
			if d.UserKey != nil {
				if dv, err := d.UserKey.Display(uk); err == nil {
					k = fmt.Sprint(dv)
				}
			}
			m[k] = v
			return true
		})
		return m, len(m) > 0, err
	}
	return t.Table.Get(ns)
}

// TraceDropped is the number of events the trace dropped since the last
// TakeTrace (MaxTraceEvents).
func (e *Executor) TraceDropped() int {
	if e.trace == nil {
		return 0
	}
	return e.trace.dropped
}

// TakeTrace returns the events recorded since the last call (nil when
// Options.Trace is off). They are valid until the call after next: copy
// what is kept longer.
func (e *Executor) TakeTrace() []TraceEvent {
	if e.trace == nil {
		return nil
	}
	return e.trace.Take()
}
