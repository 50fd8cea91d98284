package runtime

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"

	"streamdbg/state"
)

// OperatorContext is one operator in one subtask as the operator sees it:
// its state, its timers, its output and the clocks. The executor reuses it
// for every element the operator handles.
type OperatorContext struct {
	exec *Executor
	st   *subtask
	inst *opInstance

	// element being handled
	rec   Record
	where Where
	// procTimer is the time of the processing-time timer whose OnTimer
	// runs (inProcTimer): what the timer emits to the main output has no
	// timestamp, but Timestamp and side outputs give the timer's, as
	// Flink's OnTimerContext does.
	procTimer   int64
	inProcTimer bool
	// err is a misuse found while the operator ran (a side output without
	// a tag); the step fails with it when the operator returns.
	err error
}

// OperatorName is the operator's name.
func (c *OperatorContext) OperatorName() string { return c.inst.info.Name }

// OperatorUID is the operator's uid.
func (c *OperatorContext) OperatorUID() string { return c.inst.info.UID }

// SubtaskIndex is the index of the subtask, from 0.
func (c *OperatorContext) SubtaskIndex() int { return c.st.index }

// NumSubtasks is the operator's parallelism.
func (c *OperatorContext) NumSubtasks() int { return c.st.task.Parallelism }

// MaxParallelism is the job's number of key groups.
func (c *OperatorContext) MaxParallelism() int { return c.exec.plan.MaxParallelism }

// Logger logs with the operator and subtask attached.
func (c *OperatorContext) Logger() *slog.Logger {
	return c.exec.log.With("operator", c.inst.info.Name, "subtask", c.st.index)
}

// KeyedTable declares a keyed state. On an operator whose input is not a
// keyed stream it fails with Flink's classic puzzle, made readable.
func (c *OperatorContext) KeyedTable(d state.StateDesc) (state.Table, error) {
	if c.inst.keyed == nil {
		return nil, &KeyedStateError{Operator: c.inst.info.Name, Task: c.st.task.Name, Subtask: c.st.index, State: d.Meta.StateName}
	}
	d.Meta.OperatorID, d.Meta.OperatorName = c.inst.info.ID, c.inst.info.Name
	d.Meta.KeyType = c.inst.info.KeyType
	if d.Meta.NamespaceType == "" {
		if d.Namespace != nil {
			d.Meta.NamespaceType = d.Namespace.TypeName()
		} else {
			d.Meta.NamespaceType = state.VoidCodec.TypeName()
		}
	}
	t, err := c.inst.keyed.Register(d)
	if err != nil {
		return nil, fmt.Errorf("operator %q: state %q: %w", c.inst.info.Name, d.Meta.StateName, err)
	}
	if c.inst.tables == nil {
		c.inst.tables = map[string]state.Table{}
	}
	c.inst.tables[d.Meta.StateName] = t
	if c.exec.opts.Trace {
		tt := &tracedTable{Table: t, inst: c.inst, exec: c.exec}
		tt.tagger, _ = t.(state.EntryTagger)
		if i64, ok := t.(state.Int64Table); ok {
			t = &tracedInt64Table{tracedTable: tt, i64: i64}
		} else {
			t = tt
		}
	}
	if two := c.inst.info.node.two; two != nil && two.broadcast >= 0 {
		t = &keyGuard{Table: t, inst: c.inst}
	}
	return t, nil
}

// Operator returns the operator state of this subtask.
func (c *OperatorContext) Operator() *state.OperatorStore { return c.inst.opStore }

// KeyedStateError is the error of asking for keyed state on an operator
// whose input is not keyed.
type KeyedStateError struct {
	Operator, Task, State string
	Subtask               int
}

func (e *KeyedStateError) Error() string {
	return fmt.Sprintf("operator %q (task %q, subtask %d) asks for keyed state %q, but its input is not a keyed stream: keyed state needs a keyed stream. Remedy: key the stream with KeyBy before %q, or use operator state",
		e.Operator, e.Task, e.Subtask, e.State, e.Operator)
}

// Emit sends a record with the current element's timestamp to the main output.
func (c *OperatorContext) Emit(v any) {
	c.exec.emit(c, "", Record{Value: v, Timestamp: c.rec.Timestamp, HasTimestamp: c.rec.HasTimestamp})
}

// EmitAt sends a record with the given timestamp.
func (c *OperatorContext) EmitAt(v any, ts int64) {
	c.exec.emit(c, "", Record{Value: v, Timestamp: ts, HasTimestamp: true})
}

// EmitSide sends a record with the context's Timestamp to a side output.
// The empty tag names no side output: the step fails (Flink refuses a null
// OutputTag).
func (c *OperatorContext) EmitSide(tag string, v any) {
	ts, ok := c.Timestamp()
	c.emitSide(tag, Record{Value: v, Timestamp: ts, HasTimestamp: ok})
}

// EmitSideAt sends a record with the given timestamp to a side output (a
// window function's side outputs carry the window's max timestamp).
func (c *OperatorContext) EmitSideAt(tag string, v any, ts int64) {
	c.emitSide(tag, Record{Value: v, Timestamp: ts, HasTimestamp: true})
}

func (c *OperatorContext) emitSide(tag string, r Record) {
	if tag == "" {
		if c.err == nil {
			c.err = fmt.Errorf("operator %q emitted %s to a side output without a tag: name side outputs with runtime.NewOutputTag (the empty tag is not the main output)", c.inst.info.Name, describeValue(r.Value))
		}
		return
	}
	c.exec.emit(c, tag, r)
}

// EmitWatermark sends a watermark to the operator's outputs (operators that
// generate watermarks, see WatermarkOwner). It is dropped while the
// operator's outputs are idle, as Flink drops it.
func (c *OperatorContext) EmitWatermark(wm int64) {
	c.exec.forwardWatermark(c.st, c.inst, wm)
}

// EmitWatermarkStatus announces the operator's outputs idle or active again.
func (c *OperatorContext) EmitWatermarkStatus(idle bool) {
	c.exec.forwardStatus(c.st, c.inst, idle)
}

// emitRecord emits a whole record (sources).
func (c *OperatorContext) emitRecord(r Record) {
	c.rec = r
	c.exec.emit(c, "", r)
}

// Timestamp is the current record's timestamp, or the firing timer's (of
// either time domain).
func (c *OperatorContext) Timestamp() (int64, bool) {
	if c.inProcTimer {
		return c.procTimer, true
	}
	return c.rec.Timestamp, c.rec.HasTimestamp
}

// Watermark is the operator's current event time.
func (c *OperatorContext) Watermark() int64 { return c.inst.wm }

// ProcessingTime is the virtual processing clock (epoch ms).
func (c *OperatorContext) ProcessingTime() int64 { return c.exec.procTime }

// CurrentKeyBytes is the encoded current key (nil when not keyed).
func (c *OperatorContext) CurrentKeyBytes() []byte {
	if c.inst.keyed == nil {
		return nil
	}
	k, _ := c.inst.keyed.CurrentKey()
	return k
}

// CurrentKey is the current key decoded to its Go type (nil when not keyed).
func (c *OperatorContext) CurrentKey() any {
	k := c.CurrentKeyBytes()
	if k == nil {
		return nil
	}
	v, err := c.inst.keyCodec.DecodeAny(k)
	if err != nil {
		return state.Hex(k)
	}
	return v
}

// Keyed returns the operator's keyed backend, nil when its input is not keyed.
func (c *OperatorContext) Keyed() state.KeyedBackend { return c.inst.keyed }

// RegisterTimer sets a timer for the current key and the namespace ns.
func (c *OperatorContext) RegisterTimer(d TimeDomain, ts int64, ns []byte) error {
	q, err := c.inst.timers(d)
	if err != nil {
		return err
	}
	key, kg := c.inst.keyed.CurrentKey()
	t := state.Timer{Timestamp: ts, KeyGroup: kg, Key: bytes.Clone(key), Namespace: bytes.Clone(ns)}
	var added bool
	if d == ProcessingTime {
		added, err = c.inst.svc.addProcessing(t)
		if added && ts < c.exec.procTime && !slices.Contains(c.exec.procPending, c.st) {
			// A time already passed: the timer fires as soon as the
			// element in hand is done, as Flink schedules it with no
			// delay (a timer at the current time waits for the clock to
			// move, as Flink's waits 1 ms).
			c.exec.procPending = append(c.exec.procPending, c.st)
		}
	} else {
		added, err = q.Add(t)
	}
	if err != nil {
		return err
	}
	if added && c.exec.trace != nil {
		c.exec.trace.timer(TraceTimerSet, c, d, t)
	} else if added {
		c.exec.countEvent()
	}
	return nil
}

// DeleteTimer removes a timer of the current key and namespace ns, if it
// is set (only a real deletion is traced).
func (c *OperatorContext) DeleteTimer(d TimeDomain, ts int64, ns []byte) error {
	q, err := c.inst.timers(d)
	if err != nil {
		return err
	}
	key, kg := c.inst.keyed.CurrentKey()
	t := state.Timer{Timestamp: ts, KeyGroup: kg, Key: key, Namespace: ns}
	deleted, err := remove(q, t)
	if deleted && c.exec.trace != nil {
		c.exec.trace.timer(TraceTimerDeleted, c, d, t)
	} else if deleted {
		c.exec.countEvent()
	}
	return err
}

// Tracing reports whether steps are traced: an operator can skip building
// the attributes of Trace when nobody reads them.
// In light mode it reports true too: Trace counts the notes then.
func (c *OperatorContext) Tracing() bool { return c.exec.trace != nil || c.exec.light != nil }

// Trace notes an event of the operator's own in the step's trace (windows
// report "window fired", "late record", "merged").
func (c *OperatorContext) Trace(what string, attrs ...any) {
	if c.exec.trace != nil {
		c.exec.trace.note(c, what, attrs...)
	} else {
		c.exec.countEvent()
	}
}
