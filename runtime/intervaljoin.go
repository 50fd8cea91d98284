package runtime

import (
	"fmt"
	"time"

	"streamdbg/state"
)

// Names of the interval join's keyed states and timer namespaces, as
// Flink's IntervalJoinOperator names them.
const (
	LeftBufferState   = "LEFT_BUFFER"
	RightBufferState  = "RIGHT_BUFFER"
	CleanupLeftTimer  = "CLEANUP_LEFT"
	CleanupRightTimer = "CLEANUP_RIGHT"
)

// BufferEntry is one element buffered by an interval join: the element
// and whether it joined with an element of the other input yet (Flink's
// IntervalJoinOperator.BufferEntry). The buffers map a timestamp to the
// entries of that timestamp.
type BufferEntry[T any] struct {
	Element       T    `json:"element"`
	HasBeenJoined bool `json:"hasBeenJoined"`
}

// IntervalJoinStreams are two keyed streams to join by time (Flink's
// KeyedStream.IntervalJoin); Between gives the interval.
type IntervalJoinStreams[K, T1, T2 any] struct {
	left  *KeyedStream[K, T1]
	right *KeyedStream[K, T2]
}

// IntervalJoin joins two keyed streams of the same key type: a left
// element with timestamp l joins every right element of the same key whose
// timestamp r is in [l + lower, l + upper] (see Between).
func IntervalJoin[K, T1, T2 any](left *KeyedStream[K, T1], right *KeyedStream[K, T2]) *IntervalJoinStreams[K, T1, T2] {
	return &IntervalJoinStreams[K, T1, T2]{left: left, right: right}
}

// IntervalJoined is an interval join with its bounds, waiting for its
// ProcessJoinFunction (ProcessJoin).
type IntervalJoined[K, T1, T2 any] struct {
	streams        *IntervalJoinStreams[K, T1, T2]
	lower, upper   int64
	lowerInclusive bool
	upperInclusive bool
	leftLate       string
	rightLate      string
}

// Between sets the interval, both bounds inclusive until
// LowerBoundExclusive or UpperBoundExclusive say otherwise. lower must not
// be above upper. Bounds count in milliseconds.
func (s *IntervalJoinStreams[K, T1, T2]) Between(lower, upper time.Duration) *IntervalJoined[K, T1, T2] {
	j := &IntervalJoined[K, T1, T2]{streams: s, lower: lower.Milliseconds(), upper: upper.Milliseconds(), lowerInclusive: true, upperInclusive: true}
	if j.lower > j.upper {
		s.left.Job().fail(fmt.Errorf("runtime: interval join: lower bound %s is above upper bound %s (lowerBound <= upperBound must be fulfilled)", lower, upper))
	}
	return j
}

// LowerBoundExclusive excludes the lower bound from the interval.
func (j *IntervalJoined[K, T1, T2]) LowerBoundExclusive() *IntervalJoined[K, T1, T2] {
	j.lowerInclusive = false
	return j
}

// UpperBoundExclusive excludes the upper bound from the interval.
func (j *IntervalJoined[K, T1, T2]) UpperBoundExclusive() *IntervalJoined[K, T1, T2] {
	j.upperInclusive = false
	return j
}

// SideOutputLeftLateData sends left elements too late to join (their
// timestamp is below the operator's watermark) to the side output tag
// instead of dropping them.
func (j *IntervalJoined[K, T1, T2]) SideOutputLeftLateData(tag OutputTag[T1]) *IntervalJoined[K, T1, T2] {
	j.leftLate = tag.ID
	return j
}

// SideOutputRightLateData does the same for the right input.
func (j *IntervalJoined[K, T1, T2]) SideOutputRightLateData(tag OutputTag[T2]) *IntervalJoined[K, T1, T2] {
	j.rightLate = tag.ID
	return j
}

// ProcessJoinFunction sees every joined pair with its context.
type ProcessJoinFunction[T1, T2, U any] interface {
	ProcessElement(ctx *JoinContext[U], left T1, right T2) error
}

type processJoinFunc[T1, T2, U any] func(ctx *JoinContext[U], left T1, right T2) error

func (f processJoinFunc[T1, T2, U]) ProcessElement(ctx *JoinContext[U], left T1, right T2) error {
	return f(ctx, left, right)
}

// JoinContext is the context of one joined pair: Timestamp (and the
// timestamp of what Collect emits) is the later of the two elements'.
type JoinContext[U any] struct {
	outContext[U]
	left, right int64
}

// LeftTimestamp is the left element's timestamp.
func (c *JoinContext[U]) LeftTimestamp() int64 { return c.left }

// RightTimestamp is the right element's timestamp.
func (c *JoinContext[U]) RightTimestamp() int64 { return c.right }

// ProcessJoin runs f on every pair the interval join finds (Flink's
// IntervalJoinOperator). Each input's elements wait in keyed map state
// (LEFT_BUFFER, RIGHT_BUFFER: timestamp -> entries) until an event-time
// timer (namespace CLEANUP_LEFT or CLEANUP_RIGHT) removes them when no
// element of the other input can join them any more. An element whose
// timestamp is below the operator's watermark is late: dropped, or sent to
// the late side output. Elements need timestamps.
func ProcessJoin[K, T1, T2, U any](j *IntervalJoined[K, T1, T2], name string, f func(ctx *JoinContext[U], left T1, right T2) error, opts ...Option) *Stream[U] {
	return RichProcessJoin[K, T1, T2, U](j, name, processJoinFunc[T1, T2, U](f), opts...)
}

// RichProcessJoin is ProcessJoin with a function value (a
// ProcessJoinFunction that may also be a RichFunction), copied for each
// subtask.
func RichProcessJoin[K, T1, T2, U any](j *IntervalJoined[K, T1, T2], name string, f ProcessJoinFunction[T1, T2, U], opts ...Option) *Stream[U] {
	c := Connect[T1, T2](j.streams.left, j.streams.right)
	lower, upper := j.lower, j.upper
	if !j.lowerInclusive {
		lower++
	}
	if !j.upperInclusive {
		upper--
	}
	two := &twoInput{broadcast: -1, keyed: c.bothKeyed(name)}
	leftLate, rightLate := j.leftLate, j.rightLate
	out := addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		return &intervalJoinOp[T1, T2, U]{lower: lower, upper: upper, leftLate: leftLate, rightLate: rightLate, f: CloneFunc(f)}
	}, opts)
	SetTimerNamespace(out, state.Erase(state.String))
	return out
}

var (
	cleanupLeftNS  = state.String.Append(nil, CleanupLeftTimer)
	cleanupRightNS = state.String.Append(nil, CleanupRightTimer)
)

// intervalJoinOp is Flink's IntervalJoinOperator for one subtask. Bounds
// are inclusive here: exclusive ones were moved by one millisecond.
type intervalJoinOp[T1, T2, U any] struct {
	lower, upper        int64
	leftLate, rightLate string
	f                   ProcessJoinFunction[T1, T2, U]

	op          *OperatorContext
	left, right state.Table
	ctx         JoinContext[U]
	kbuf        []byte
	// matches is scratch for the buckets of the other buffer that join.
	leftHits  []bucket[T1]
	rightHits []bucket[T2]
}

type bucket[T any] struct {
	ts      int64
	entries []BufferEntry[T]
}

func (o *intervalJoinOp[T1, T2, U]) Open(ctx *OperatorContext) error {
	o.op = ctx
	var err error
	if o.left, err = ctx.KeyedTable(state.Map(LeftBufferState, state.Int64, state.JSON[[]BufferEntry[T1]]()).Desc()); err != nil {
		return err
	}
	if o.right, err = ctx.KeyedTable(state.Map(RightBufferState, state.Int64, state.JSON[[]BufferEntry[T2]]()).Desc()); err != nil {
		return err
	}
	o.ctx.op = ctx
	if r, ok := o.f.(RichFunction); ok {
		return r.Open(ctx)
	}
	return nil
}

func (o *intervalJoinOp[T1, T2, U]) Close() error {
	if r, ok := o.f.(RichFunction); ok {
		return r.Close()
	}
	return nil
}

func (o *intervalJoinOp[T1, T2, U]) tsKey(ts int64) []byte {
	o.kbuf = state.Int64.Append(o.kbuf[:0], ts)
	return o.kbuf
}

// late is Flink's isLate: below the watermark, once there is one.
func (o *intervalJoinOp[T1, T2, U]) late(ctx *OperatorContext, r Record, side, tag string) bool {
	wm := ctx.Watermark()
	if wm == MinWatermark || r.Timestamp >= wm {
		return false
	}
	to := "dropped"
	if tag != "" {
		to = "side output " + tag
		ctx.EmitSide(tag, r.Value)
	}
	if ctx.Tracing() {
		ctx.Trace("late record", "input", side, "timestamp", state.MillisValue(r.Timestamp), "watermark", state.MillisValue(wm), "to", to)
	}
	return true
}

func needTimestamp(ctx *OperatorContext, r Record, side string) error {
	if !r.HasTimestamp {
		return fmt.Errorf("interval join %q: a record of the %s input has no timestamp: elements of interval joins need meaningful timestamps (give the source a watermark strategy that assigns them)", ctx.OperatorName(), side)
	}
	return nil
}

func (o *intervalJoinOp[T1, T2, U]) ProcessElement(ctx *OperatorContext, r Record) error {
	if err := needTimestamp(ctx, r, "left"); err != nil {
		return err
	}
	if o.late(ctx, r, "left", o.leftLate) {
		return nil
	}
	v := r.Value.(T1)
	ts := r.Timestamp
	if err := addToBuffer(o, o.left, ts, v); err != nil {
		return err
	}
	var err error
	o.rightHits, err = joinable(o, o.right, ts+o.lower, ts+o.upper, o.rightHits[:0])
	if err != nil {
		return err
	}
	for _, b := range o.rightHits {
		for _, e := range b.entries {
			if err := o.collect(v, e.Element, ts, b.ts); err != nil {
				return err
			}
		}
		if err := markJoined(o, o.right, b); err != nil {
			return err
		}
	}
	cleanup := ts
	if o.upper > 0 {
		cleanup = ts + o.upper
	}
	return ctx.RegisterTimer(EventTime, cleanup, cleanupLeftNS)
}

func (o *intervalJoinOp[T1, T2, U]) ProcessElement2(ctx *OperatorContext, r Record) error {
	if err := needTimestamp(ctx, r, "right"); err != nil {
		return err
	}
	if o.late(ctx, r, "right", o.rightLate) {
		return nil
	}
	v := r.Value.(T2)
	ts := r.Timestamp
	if err := addToBuffer(o, o.right, ts, v); err != nil {
		return err
	}
	var err error
	o.leftHits, err = joinable(o, o.left, ts-o.upper, ts-o.lower, o.leftHits[:0])
	if err != nil {
		return err
	}
	for _, b := range o.leftHits {
		for _, e := range b.entries {
			if err := o.collect(e.Element, v, b.ts, ts); err != nil {
				return err
			}
		}
		if err := markJoined(o, o.left, b); err != nil {
			return err
		}
	}
	cleanup := ts
	if -o.lower > 0 {
		cleanup = ts - o.lower
	}
	return ctx.RegisterTimer(EventTime, cleanup, cleanupRightNS)
}

// collect calls the join function for one pair, its output stamped with
// the later timestamp.
func (o *intervalJoinOp[T1, T2, U]) collect(left T1, right T2, lt, rt int64) error {
	rec := o.op.rec
	o.op.rec = Record{Timestamp: max(lt, rt), HasTimestamp: true}
	o.ctx.left, o.ctx.right = lt, rt
	err := o.f.ProcessElement(&o.ctx, left, right)
	o.op.rec = rec
	return err
}

// addToBuffer appends v to the bucket of ts. The bucket is copied: a
// backend may keep the old slice (the heap backend's undo log does).
func addToBuffer[T1, T2, U, V any](o *intervalJoinOp[T1, T2, U], t state.Table, ts int64, v V) error {
	k := o.tsKey(ts)
	old, ok, err := t.MapGet(nil, k)
	if err != nil {
		return err
	}
	var entries []BufferEntry[V]
	if ok {
		prev := old.([]BufferEntry[V])
		entries = make([]BufferEntry[V], len(prev), len(prev)+1)
		copy(entries, prev)
	}
	return t.MapPut(nil, k, append(entries, BufferEntry[V]{Element: v}))
}

// joinable collects the buckets of t whose timestamp is in [from, to], in
// timestamp order (the buffer's key order).
func joinable[T1, T2, U, V any](o *intervalJoinOp[T1, T2, U], t state.Table, from, to int64, dst []bucket[V]) ([]bucket[V], error) {
	var derr error
	err := t.MapRange(nil, func(uk []byte, v any) bool {
		ts, err := state.Int64.Decode(uk)
		if err != nil {
			derr = err
			return false
		}
		if ts < from || ts > to {
			return ts < to
		}
		dst = append(dst, bucket[V]{ts: ts, entries: v.([]BufferEntry[V])})
		return true
	})
	if err == nil {
		err = derr
	}
	return dst, err
}

// markJoined writes a bucket back with every entry marked as joined, when
// one was not yet (what Flink's heap backend keeps; its RocksDB backend
// drops the mark).
func markJoined[T1, T2, U, V any](o *intervalJoinOp[T1, T2, U], t state.Table, b bucket[V]) error {
	all := true
	for _, e := range b.entries {
		all = all && e.HasBeenJoined
	}
	if all {
		return nil
	}
	entries := make([]BufferEntry[V], len(b.entries))
	for i, e := range b.entries {
		entries[i] = BufferEntry[V]{Element: e.Element, HasBeenJoined: true}
	}
	return t.MapPut(nil, o.tsKey(b.ts), entries)
}

func (o *intervalJoinOp[T1, T2, U]) OnTimer(ctx *OperatorContext, t state.Timer, d TimeDomain) error {
	if d != EventTime {
		return fmt.Errorf("interval join %q: unexpected %s timer", ctx.OperatorName(), d)
	}
	ns, err := state.String.Decode(t.Namespace)
	if err != nil {
		return fmt.Errorf("interval join %q: timer namespace: %w", ctx.OperatorName(), err)
	}
	switch ns {
	case CleanupLeftTimer:
		ts := t.Timestamp
		if o.upper > 0 {
			ts -= o.upper
		}
		return o.left.MapDelete(nil, o.tsKey(ts))
	case CleanupRightTimer:
		ts := t.Timestamp
		if o.lower <= 0 {
			ts += o.lower
		}
		return o.right.MapDelete(nil, o.tsKey(ts))
	}
	return fmt.Errorf("interval join %q: timer of unknown namespace %q", ctx.OperatorName(), ns)
}
