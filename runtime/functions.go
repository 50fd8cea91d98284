package runtime

import (
	"fmt"
	"reflect"

	"streamdbg/state"
)

// RuntimeContext is what rich and checkpointed functions get: who they are
// and where their state lives. Declare state with a descriptor's Bind:
//
//	f.count, err = state.Value("count", state.Int64).Bind(ctx)
type RuntimeContext interface {
	OperatorName() string
	OperatorUID() string
	SubtaskIndex() int
	NumSubtasks() int
	MaxParallelism() int
	state.Registry
}

// RichFunction is a function with a life cycle.
type RichFunction interface {
	Open(ctx RuntimeContext) error
	Close() error
}

// CheckpointedFunction keeps its own state in operator state, as a source
// keeps its offsets: InitializeState declares (and, after a restore, reads)
// it; SnapshotState writes it before each snapshot.
type CheckpointedFunction interface {
	InitializeState(ctx RuntimeContext) error
	SnapshotState(ctx RuntimeContext) error
}

// MapFunction turns each record into one record.
type MapFunction[T, U any] interface {
	Map(in T) (U, error)
}

// Collector receives the records a function emits.
type Collector[T any] interface {
	Collect(T)
}

// FlatMapFunction turns each record into zero or more records.
type FlatMapFunction[T, U any] interface {
	FlatMap(in T, out Collector[U]) error
}

// FilterFunction keeps the records it returns true for.
type FilterFunction[T any] interface {
	Filter(in T) (bool, error)
}

// ProcessFunction sees each record with its context: timestamp, watermark,
// timers (on keyed streams) and side outputs.
type ProcessFunction[T, U any] interface {
	ProcessElement(ctx *ProcessContext[U], in T) error
}

// OnTimerFunction is a ProcessFunction with timers.
type OnTimerFunction[U any] interface {
	OnTimer(ctx *ProcessContext[U], timestamp int64, domain TimeDomain) error
}

// SinkFunction consumes records at the end of a job.
type SinkFunction[T any] interface {
	Invoke(in T) error
}

// ProcessContext is the context of one ProcessElement or OnTimer call.
type ProcessContext[U any] struct {
	op    *OperatorContext
	arena slotArena[U]
}

// Collect emits a record with the current timestamp.
func (c *ProcessContext[U]) Collect(v U) { emitTyped(c.op, &c.arena, v) }

// CollectAt emits a record with the given timestamp.
func (c *ProcessContext[U]) CollectAt(v U, ts int64) {
	if c.op.inst.slotOut {
		c.op.EmitAt(c.arena.put(v, c.op.exec.slotGen), ts)
		return
	}
	c.op.EmitAt(v, ts)
}

// Output emits v to the side output tag.
func (c *ProcessContext[U]) Output(tag string, v any) { c.op.EmitSide(tag, v) }

// Timestamp is the current record's (or firing timer's) timestamp.
func (c *ProcessContext[U]) Timestamp() (int64, bool) { return c.op.Timestamp() }

// CurrentWatermark is the operator's event-time clock.
func (c *ProcessContext[U]) CurrentWatermark() int64 { return c.op.Watermark() }

// CurrentProcessingTime is the virtual processing clock.
func (c *ProcessContext[U]) CurrentProcessingTime() int64 { return c.op.ProcessingTime() }

// CurrentKey is the current key on a keyed stream (nil otherwise).
func (c *ProcessContext[U]) CurrentKey() any { return c.op.CurrentKey() }

// RegisterEventTimeTimer sets a timer for the current key at ts.
func (c *ProcessContext[U]) RegisterEventTimeTimer(ts int64) error {
	return c.op.RegisterTimer(EventTime, ts, nil)
}

// DeleteEventTimeTimer removes a timer of the current key.
func (c *ProcessContext[U]) DeleteEventTimeTimer(ts int64) error {
	return c.op.DeleteTimer(EventTime, ts, nil)
}

// RegisterProcessingTimeTimer sets a processing-time timer for the current key.
func (c *ProcessContext[U]) RegisterProcessingTimeTimer(ts int64) error {
	return c.op.RegisterTimer(ProcessingTime, ts, nil)
}

// DeleteProcessingTimeTimer removes a processing-time timer of the current key.
func (c *ProcessContext[U]) DeleteProcessingTimeTimer(ts int64) error {
	return c.op.DeleteTimer(ProcessingTime, ts, nil)
}

// Runtime gives the function its runtime context (state, subtask).
func (c *ProcessContext[U]) Runtime() RuntimeContext { return c.op }

// userOp runs a typed user function as an Operator, calling its life-cycle
// methods when it has them.
type userOp struct {
	fn      any
	process func(ctx *OperatorContext, r Record) error
	// typed is the typedFn of a typed operator (typedUserOp), which
	// process calls too; nil for the others.
	typed any
	// in is the slot a direct producer puts the record in for a typed
	// operator that keeps no hold of a record's slot after its call (a
	// *slot[T]; nil for a filter, which may pass it on): one slot for all
	// its records (emitTyped).
	in any
	// drain runs the typed operator at the head of its subtask on
	// records of its input queue (drainHead); nil for the others.
	drain   func(e *Executor, st *subtask, el *inElem) error
	onTimer func(ctx *OperatorContext, ts int64, domain TimeDomain) error
}

func (u *userOp) Open(ctx *OperatorContext) error {
	if r, ok := u.fn.(RichFunction); ok {
		return r.Open(ctx)
	}
	return nil
}

func (u *userOp) ProcessElement(ctx *OperatorContext, r Record) error { return u.process(ctx, r) }

func (u *userOp) Close() error {
	if r, ok := u.fn.(RichFunction); ok {
		return r.Close()
	}
	return nil
}

func (u *userOp) InitializeState(ctx *OperatorContext) error {
	if c, ok := u.fn.(CheckpointedFunction); ok {
		return c.InitializeState(ctx)
	}
	return nil
}

func (u *userOp) SnapshotState(ctx *OperatorContext) error {
	if c, ok := u.fn.(CheckpointedFunction); ok {
		return c.SnapshotState(ctx)
	}
	return nil
}

func (u *userOp) OnTimer(ctx *OperatorContext, t state.Timer, domain TimeDomain) error {
	if u.onTimer == nil {
		return fmt.Errorf("operator %q has a timer but no OnTimer", ctx.OperatorName())
	}
	return u.onTimer(ctx, t.Timestamp, domain)
}

type collector[U any] struct {
	op    *OperatorContext
	arena slotArena[U]
}

func (c *collector[U]) Collect(v U) { emitTyped(c.op, &c.arena, v) }

// typedUserOp runs f, the typed handling of a record, as the userOp of the
// function value fn: process reads the record's value with readValue, a
// direct producer calls f itself (emitSlot). Not inlined, so that its
// closure keeps its name in stacks (trimStack ends a stack there).
//
//go:noinline
func typedUserOp[T any](fn any, f typedFn[T]) *userOp {
	return &userOp{fn: fn, typed: f, in: &slot[T]{}, process: func(ctx *OperatorContext, r Record) error {
		return f(ctx, readValue[T](r.Value), r.Value)
	}, drain: func(e *Executor, st *subtask, el *inElem) error {
		return drainHead(e, st, el, f)
	}}
}

// typedOp adds an operator that reads its input with readValue.
func typedOp[T, U any](in Input[T], name string, newOp func() Operator, opts []Option) *Stream[U] {
	s := AddOperator[T, U](in, name, newOp, opts...)
	s.refs[0].node.typedIn = true
	return s
}

// The constructors come in two forms. Map, FlatMap, Filter, Process and
// Sink take a plain Go function and infer their types from it:
//
//	words := runtime.FlatMap(lines, "split", func(l string, out runtime.Collector[string]) error { ... })
//
// A plain function must keep no state of its own: a variable it captures
// is not snapshotted, so back, restore and recovery would lose it (back
// reports a function whose replay differs). RichMap, RichFlatMap,
// RichFilter, RichProcess and RichSink take a function value, usually a
// pointer to a struct, that may also have a life cycle (RichFunction:
// state is declared in Open), checkpoint its own operator state
// (CheckpointedFunction) or handle timers (OnTimerFunction); each subtask
// gets its own copy (CloneFunc).

// Map applies f to every record.
func Map[T, U any](in Input[T], name string, f func(T) (U, error), opts ...Option) *Stream[U] {
	return RichMap[T, U](in, name, mapFunc[T, U](f), opts...)
}

// FlatMap applies f to every record; f emits any number of records.
func FlatMap[T, U any](in Input[T], name string, f func(T, Collector[U]) error, opts ...Option) *Stream[U] {
	return RichFlatMap[T, U](in, name, flatMapFunc[T, U](f), opts...)
}

// Filter keeps the records f accepts.
func Filter[T any](in Input[T], name string, f func(T) (bool, error), opts ...Option) *Stream[T] {
	return RichFilter[T](in, name, filterFunc[T](f), opts...)
}

// Process runs f on every record with its context (timestamp, watermark,
// side outputs; keyed state through ctx.Runtime()). A function with timers
// is a RichProcess function (it needs OnTimer).
func Process[T, U any](in Input[T], name string, f func(ctx *ProcessContext[U], v T) error, opts ...Option) *Stream[U] {
	return RichProcess[T, U](in, name, processFunc[T, U](f), opts...)
}

// Sink consumes every record with f; sinks end a job.
func Sink[T any](in Input[T], name string, f func(T) error, opts ...Option) {
	RichSink[T](in, name, sinkFunc[T](f), opts...)
}

type mapFunc[T, U any] func(T) (U, error)

func (f mapFunc[T, U]) Map(in T) (U, error) { return f(in) }

type flatMapFunc[T, U any] func(T, Collector[U]) error

func (f flatMapFunc[T, U]) FlatMap(in T, out Collector[U]) error { return f(in, out) }

type filterFunc[T any] func(T) (bool, error)

func (f filterFunc[T]) Filter(in T) (bool, error) { return f(in) }

type processFunc[T, U any] func(*ProcessContext[U], T) error

func (f processFunc[T, U]) ProcessElement(ctx *ProcessContext[U], in T) error { return f(ctx, in) }

type sinkFunc[T any] func(T) error

func (f sinkFunc[T]) Invoke(in T) error { return f(in) }

// RichMap applies the function value f to every record.
func RichMap[T, U any](in Input[T], name string, f MapFunction[T, U], opts ...Option) *Stream[U] {
	s := typedOp[T, U](in, name, func() Operator {
		f := CloneFunc(f)
		var arena slotArena[U]
		return typedUserOp(f, func(ctx *OperatorContext, v T, _ any) error {
			out, err := f.Map(v)
			if err != nil {
				return err
			}
			emitTyped(ctx, &arena, out)
			return nil
		})
	}, opts)
	s.refs[0].node.emitsLast = true
	return s
}

// RichFlatMap applies the function value f to every record; f emits any
// number of records.
func RichFlatMap[T, U any](in Input[T], name string, f FlatMapFunction[T, U], opts ...Option) *Stream[U] {
	return typedOp[T, U](in, name, func() Operator {
		f := CloneFunc(f)
		c := &collector[U]{}
		return typedUserOp(f, func(ctx *OperatorContext, v T, _ any) error {
			c.op = ctx
			return f.FlatMap(v, c)
		})
	}, opts)
}

// RichFilter keeps the records the function value f accepts.
func RichFilter[T any](in Input[T], name string, f FilterFunction[T], opts ...Option) *Stream[T] {
	s := typedOp[T, T](in, name, func() Operator {
		f := CloneFunc(f)
		var arena slotArena[T]
		op := typedUserOp(f, func(ctx *OperatorContext, v T, raw any) error {
			ok, err := f.Filter(v)
			if err != nil || !ok {
				return err
			}
			if s, isSlot := raw.(*slot[T]); isSlot && ctx.inst.slotOut {
				emitSlot(ctx, s) // the slot is never written again: share it
				return nil
			}
			emitTyped(ctx, &arena, v)
			return nil
		})
		op.in = nil // it passes its slot on
		return op
	}, opts)
	s.refs[0].node.emitsLast = true
	return s
}

// RichProcess runs the function value f on every record with its context.
// On a keyed stream f may use keyed state and timers; a function that
// implements OnTimerFunction gets its timers.
func RichProcess[T, U any](in Input[T], name string, f ProcessFunction[T, U], opts ...Option) *Stream[U] {
	return typedOp[T, U](in, name, func() Operator {
		f := CloneFunc(f)
		pc := &ProcessContext[U]{}
		op := typedUserOp(f, func(ctx *OperatorContext, v T, _ any) error {
			pc.op = ctx
			return f.ProcessElement(pc, v)
		})
		if t, ok := f.(OnTimerFunction[U]); ok {
			op.onTimer = func(ctx *OperatorContext, ts int64, d TimeDomain) error {
				pc.op = ctx
				return t.OnTimer(pc, ts, d)
			}
		}
		return op
	}, opts)
}

// RichSink consumes every record with the function value f; sinks end a
// job.
func RichSink[T any](in Input[T], name string, f SinkFunction[T], opts ...Option) {
	s := typedOp[T, T](in, name, func() Operator {
		f := CloneFunc(f)
		var ring *outRing[T]
		return typedUserOp(f, func(ctx *OperatorContext, v T, raw any) error {
			if ctx.exec.light != nil {
				lightOutput(ctx, &ring, raw)
			}
			ctx.exec.recordOutput(ctx, raw)
			return f.Invoke(v)
		})
	}, opts)
	s.refs[0].node.isSink = true
	s.refs[0].node.recordType = reflect.TypeFor[T]()
}

// JSONSink writes every record as one JSON line to the execution's output
// (stdout in run mode). A value with an AppendJSON(dst []byte) []byte method
// encodes itself; anything else goes through encoding/json.
func JSONSink[T any](in Input[T], name string, opts ...Option) {
	s := typedOp[T, T](in, name, func() Operator {
		var ring *outRing[T]
		// The record is encoded from cur, through a pointer: its
		// JSONAppender method or encoding/json's output are those of the
		// value, and neither needs an allocation. Whether it encodes
		// itself is known once.
		cur := new(T)
		app, isApp := any(cur).(JSONAppender)
		return typedUserOp(nil, func(ctx *OperatorContext, v T, raw any) error {
			e := ctx.exec
			if e.light != nil || e.observed() {
				if e.light != nil {
					lightOutput(ctx, &ring, raw)
				}
				e.recordOutput(ctx, raw)
			}
			*cur = v
			if isApp {
				return e.appendJSON(app)
			}
			return e.writeJSON(cur)
		})
	}, opts)
	s.refs[0].node.isSink = true
	s.refs[0].node.recordType = reflect.TypeFor[T]()
}
