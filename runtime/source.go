package runtime

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"streamdbg/state"
)

// EventKind says what a source produced.
type EventKind uint8

const (
	// EventRecord is a data record.
	EventRecord EventKind = iota
	// EventWatermark is an explicit watermark (a control record).
	EventWatermark
	// EventAdvanceProcessingTime moves the virtual processing clock.
	EventAdvanceProcessingTime
	// EventIdle marks the source subtask idle (a control record, or a
	// source that knows it has nothing to send for now): downstream
	// subtasks stop waiting for its watermark until its next record or
	// watermark makes it active again.
	EventIdle
)

// SourceEvent is one thing a source read: a record or a control record.
type SourceEvent[T any] struct {
	Kind  EventKind
	Value T
	// Timestamp is the record's event time when the source assigns it
	// itself (HasTimestamp; Flink's collectWithTimestamp). A
	// WatermarkStrategy's Timestamp function, when set, wins.
	Timestamp    int64
	HasTimestamp bool
	// Watermark is the explicit watermark of an EventWatermark (epoch ms).
	Watermark int64
	// Advance is how far an EventAdvanceProcessingTime moves the clock.
	Advance time.Duration
	// Where names the record's origin for messages ("orders.jsonl:12").
	Where Where
}

// Where is a position in an input: a file and a line.
type Where struct {
	File string
	Line int
}

func (w Where) String() string {
	if w.File == "" {
		return ""
	}
	return w.File + ":" + strconv.Itoa(w.Line)
}

// Source reads the input of one source subtask. A source that implements
// RichFunction learns its subtask in Open; one that implements
// CheckpointedFunction keeps its positions in operator state, so a restored
// job resumes after the last record of the snapshot; one that implements
// InputDescriber says what it reads in views and why.
type Source[T any] interface {
	// Next returns the next event, or ok=false at the end of the input.
	Next() (ev SourceEvent[T], ok bool, err error)
}

// EventReader is a Source that reads its next event into an event the
// executor keeps, instead of returning it: an event is then not copied
// on its way from the source to the executor. ReadEvent is Next: ev is
// zero when it is called, and is the event read when ok.
type EventReader[T any] interface {
	ReadEvent(ev *SourceEvent[T]) (ok bool, err error)
}

// Peeker is a Source that can tell its next event without consuming it:
// Next returns that event afterwards. With several sources, the executor
// reads them in event-time order of their next records when every source
// assigns timestamps and can peek (see Executor.Next).
type Peeker[T any] interface {
	Peek() (ev SourceEvent[T], ok bool, err error)
}

// InputDescriber is a Source that says what its subtask reads
// ("partitions 1, 5"), for views and why.
type InputDescriber interface {
	DescribeInput() string
}

// WatermarkStrategy says how a source assigns timestamps and generates
// watermarks. The zero value assigns no timestamps and emits no watermarks
// (but the end of input still emits MaxWatermark).
type WatermarkStrategy[T any] struct {
	// Timestamp extracts a record's event time (epoch ms).
	Timestamp func(T) (int64, error)
	// OutOfOrderness > 0: bounded out-of-orderness, watermark = max ts seen
	// - bound - 1 ms, emitted after every record. Monotonous: bound 0.
	OutOfOrderness time.Duration
	// Generate turns the generator on (Monotonous and BoundedOutOfOrderness
	// set it).
	Generate bool
	// Idleness > 0 marks the source subtask idle once that much processing
	// time passed without a record (Flink's withIdleness): downstream
	// subtasks then stop waiting for its watermark. Its next record makes
	// it active again.
	Idleness time.Duration
}

// BoundedOutOfOrderness is Flink's WatermarkStrategy.forBoundedOutOfOrderness.
func BoundedOutOfOrderness[T any](bound time.Duration, ts func(T) (int64, error)) WatermarkStrategy[T] {
	return WatermarkStrategy[T]{Timestamp: ts, OutOfOrderness: bound, Generate: true}
}

// Monotonous is Flink's WatermarkStrategy.forMonotonousTimestamps.
func Monotonous[T any](ts func(T) (int64, error)) WatermarkStrategy[T] {
	return WatermarkStrategy[T]{Timestamp: ts, Generate: true}
}

// WithIdleness is Flink's WatermarkStrategy.withIdleness: the source
// subtask goes idle after timeout of processing time without a record.
func (w WatermarkStrategy[T]) WithIdleness(timeout time.Duration) WatermarkStrategy[T] {
	w.Idleness = timeout
	return w
}

// FromSource adds a source. newSource makes the source of one subtask.
func FromSource[T any](j *Job, name string, newSource func() Source[T], wm WatermarkStrategy[T], opts ...Option) *Stream[T] {
	n := j.addNode(name, opts, nil, nil, forward, KeySelector{}, "")
	if wm.Idleness < 0 {
		j.fail(fmt.Errorf("runtime: source %q: idleness %s must not be negative", name, wm.Idleness))
	}
	n.source = func() sourceRunner { return newSourceOp(newSource(), wm, false) }
	n.recordType = reflect.TypeFor[T]()
	n.replaceSource = func(f any) (sourceFactory, bool) {
		nf, ok := f.(func() Source[T])
		if !ok {
			return nil, false
		}
		return func() sourceRunner { return newSourceOp(nf(), wm, true) }, true
	}
	return &Stream[T]{job: j, refs: []streamRef{{node: n}}}
}

type sourceFactory func() sourceRunner

// sourceRunner is a source operator with its types erased.
type sourceRunner interface {
	Operator
	// pull reads one event and emits what it causes; done at end of input.
	pull(ctx *OperatorContext) (done bool, err error)
	// idleDue reports whether the idle timeout passed at processing time now.
	idleDue(now int64) bool
	// idleTimeout marks the source idle if its timeout passed.
	idleTimeout(ctx *OperatorContext)
	// commandWatermark emits wm on the debugger's command.
	commandWatermark(ctx *OperatorContext, wm int64)
	view() SourceView
	// orderable reports whether the source assigns timestamps and can
	// peek: it can take part in the event-time order of several sources.
	orderable() bool
	// due is the event time of the next event: its record's timestamp;
	// MinWatermark for a control record, the end of the input, or a next
	// record that cannot be read (the read reports why).
	due() int64
	// saveClock and loadClock keep what resuming a checkpoint exactly
	// (back) needs beyond operator state.
	saveClock() sourceClock
	loadClock(sourceClock)
}

// boundedOutOfOrderness is Flink's BoundedOutOfOrdernessWatermarks: the
// watermark trails the highest timestamp seen by the bound and 1 ms. Before
// any record it is MinWatermark.
type boundedOutOfOrderness struct {
	bound, maxTS int64
}

func newBoundedOutOfOrderness(bound int64) boundedOutOfOrderness {
	return boundedOutOfOrderness{bound: bound, maxTS: MinWatermark + bound + 1}
}

func (g *boundedOutOfOrderness) onEvent(ts int64) { g.maxTS = max(g.maxTS, ts) }

func (g *boundedOutOfOrderness) watermark() int64 { return g.maxTS - g.bound - 1 }

// sourceClock is a source's event-time progress: Flink does not checkpoint
// it (a restored source starts a fresh generator), back keeps it.
type sourceClock struct {
	gen          boundedOutOfOrderness
	emitted      int64
	idle         bool
	lastActivity int64
	lastWhere    Where
	recordWhere  Where
	lastTS       int64
	hasTS        bool
}

// sourceOp runs a Source: assigns timestamps, generates watermarks and
// tracks its watermark status.
type sourceOp[T any] struct {
	src Source[T]
	// reader is src when it is an EventReader, which reads into ev.
	reader EventReader[T]
	ev     SourceEvent[T]
	wm     WatermarkStrategy[T]
	arena  slotArena[T]
	sourceClock
	// peeked caches due until the next pull.
	peeked    bool
	peekedDue int64
	// replaced: the source is a replacement (Options.Sources), whose own
	// timestamps must agree with the strategy's.
	replaced bool
}

func newSourceOp[T any](src Source[T], wm WatermarkStrategy[T], replaced bool) *sourceOp[T] {
	r, _ := src.(EventReader[T])
	return &sourceOp[T]{src: src, reader: r, wm: wm, replaced: replaced}
}

func (s *sourceOp[T]) Open(ctx *OperatorContext) error {
	if r, ok := s.src.(RichFunction); ok {
		return r.Open(ctx)
	}
	return nil
}

func (s *sourceOp[T]) ProcessElement(*OperatorContext, Record) error {
	return fmt.Errorf("a source has no input")
}

func (s *sourceOp[T]) Close() error {
	if r, ok := s.src.(RichFunction); ok {
		return r.Close()
	}
	return nil
}

// InitializeState starts the watermark generator afresh, also after a
// restore: as in Flink, a restored source does not emit the watermark it
// had; event time starts over at MinWatermark everywhere.
func (s *sourceOp[T]) InitializeState(ctx *OperatorContext) error {
	s.gen = newBoundedOutOfOrderness(s.wm.OutOfOrderness.Milliseconds())
	s.emitted = MinWatermark
	s.lastActivity = ctx.ProcessingTime()
	if c, ok := s.src.(CheckpointedFunction); ok {
		return c.InitializeState(ctx)
	}
	return nil
}

func (s *sourceOp[T]) SnapshotState(ctx *OperatorContext) error {
	if c, ok := s.src.(CheckpointedFunction); ok {
		return c.SnapshotState(ctx)
	}
	return nil
}

func (s *sourceOp[T]) saveClock() sourceClock  { return s.sourceClock }
func (s *sourceOp[T]) loadClock(c sourceClock) { s.sourceClock = c }

func (s *sourceOp[T]) view() SourceView {
	v := SourceView{LastWhere: s.lastWhere.String(), LastRecordWhere: s.recordWhere.String(), LastRecordTS: s.lastTS, HasRecordTS: s.hasTS, Watermark: s.emitted, Idle: s.idle,
		IdleTimeout: s.wm.Idleness.Milliseconds()}
	if d, ok := s.src.(InputDescriber); ok {
		v.Reads = d.DescribeInput()
	}
	return v
}

func (s *sourceOp[T]) orderable() bool {
	_, ok := s.src.(Peeker[T])
	return ok && s.wm.Timestamp != nil
}

func (s *sourceOp[T]) due() int64 {
	if s.peeked {
		return s.peekedDue
	}
	d := int64(MinWatermark)
	if p, ok := s.src.(Peeker[T]); ok {
		ev, ok, err := p.Peek()
		if err == nil && ok && ev.Kind == EventRecord {
			switch {
			case s.wm.Timestamp != nil:
				if ts, err := s.wm.Timestamp(ev.Value); err == nil {
					d = ts
				}
			case ev.HasTimestamp:
				d = ev.Timestamp
			}
		}
	}
	s.peeked, s.peekedDue = true, d
	return d
}

func (s *sourceOp[T]) pull(ctx *OperatorContext) (bool, error) {
	s.peeked = false
	ev := &s.ev
	var ok bool
	var err error
	if s.reader != nil {
		*ev = SourceEvent[T]{}
		ok, err = s.reader.ReadEvent(ev)
	} else {
		*ev, ok, err = s.src.Next()
	}
	if err != nil {
		return false, err
	}
	if !ok {
		// The end of the input ends event time, idle or not.
		s.setIdle(ctx, false)
		s.advance(ctx, MaxWatermark)
		return true, nil
	}
	ctx.where = ev.Where
	s.lastWhere = ev.Where // formatted when viewed, not per record
	switch ev.Kind {
	case EventWatermark:
		if ev.Watermark <= s.emitted {
			ctx.Logger().Warn("watermark does not advance; ignored", "at", ev.Where,
				"watermark", state.FormatMillis(ev.Watermark), "current", state.FormatMillis(s.emitted))
			return false, nil
		}
		s.setIdle(ctx, false)
		s.advance(ctx, ev.Watermark)
	case EventIdle:
		s.setIdle(ctx, true)
	case EventAdvanceProcessingTime:
		if ev.Advance < 0 {
			return false, fmt.Errorf("%s: processing time cannot go back (%s)", ev.Where, ev.Advance)
		}
		ctx.exec.advanceProcessingTime(ev.Advance.Milliseconds())
	default:
		r := Record{Timestamp: ev.Timestamp, HasTimestamp: ev.HasTimestamp}
		if s.wm.Timestamp != nil {
			ts, err := s.wm.Timestamp(ev.Value)
			if err != nil {
				return false, fmt.Errorf("%s: %w", ev.Where, err)
			}
			if s.replaced && ev.HasTimestamp && ev.Timestamp != ts {
				// A test gave a timestamp that the job's strategy would
				// silently replace. The failure names where the record
				// came from (ev.Where); this says which record it is.
				return false, fmt.Errorf("the record %s was given timestamp %s, but the source's watermark strategy assigns it %s",
					describeValue(ev.Value), state.FormatMillis(ev.Timestamp), state.FormatMillis(ts))
			}
			r.Timestamp, r.HasTimestamp = ts, true
		}
		s.lastActivity = ctx.ProcessingTime()
		s.recordWhere = s.lastWhere
		if r.HasTimestamp {
			s.lastTS, s.hasTS = r.Timestamp, true
			if s.wm.Generate {
				s.gen.onEvent(r.Timestamp)
			}
		}
		// A record makes an idle source active again before it is sent.
		s.setIdle(ctx, false)
		if !s.emitDirect(ctx, r, ev.Value) {
			if ctx.inst.slotOut {
				r.Value = s.arena.put(ev.Value, ctx.exec.slotGen)
			} else {
				r.Value = ev.Value
			}
			ctx.emitRecord(r)
		}
		if s.wm.Generate {
			s.advance(ctx, s.gen.watermark())
		}
	}
	return false, nil
}

// emitDirect runs the source's one chained consumer, a typed operator
// (opInstance.next), on the record r of value v at once (runDirectTyped),
// when drainBatch runs and nothing else is in flight in the call
// (canRunDirect): the step the stack would run next. What the source does
// after the emission cannot fail and follows the consumer's step anyway
// (its watermark goes to the chain after the record); the injected
// failure of --fail-at, which fails the source's step after the call, is
// the exception: that record goes through the stack, and the failure
// clears it unhandled. It reports false, having done nothing, otherwise.
func (s *sourceOp[T]) emitDirect(ctx *OperatorContext, r Record, v T) bool {
	e, inst := ctx.exec, ctx.inst
	if inst.next == nil || !e.canRunDirect() || e.position == e.opts.FailAt {
		return false
	}
	f, ok := inst.next.(typedFn[T])
	if !ok {
		return false
	}
	sl, ok := inst.nextIn.(*slot[T])
	if !ok {
		sl = s.arena.put(v, e.slotGen) // a consumer that may keep it
	}
	sl.v = v
	ctx.rec = r
	runDirectTyped(ctx, f, sl)
	return true
}

// setIdle announces a change of the source's watermark status downstream.
func (s *sourceOp[T]) setIdle(ctx *OperatorContext, idle bool) {
	if s.idle == idle {
		return
	}
	s.idle = idle
	ctx.exec.forwardStatus(ctx.st, ctx.inst, idle)
}

func (s *sourceOp[T]) idleDue(now int64) bool {
	return s.wm.Idleness > 0 && !s.idle && now-s.lastActivity >= s.wm.Idleness.Milliseconds()
}

func (s *sourceOp[T]) idleTimeout(ctx *OperatorContext) {
	if s.idleDue(ctx.ProcessingTime()) {
		s.setIdle(ctx, true)
	}
}

func (s *sourceOp[T]) commandWatermark(ctx *OperatorContext, wm int64) {
	s.setIdle(ctx, false)
	s.advance(ctx, wm)
}

// advance emits a watermark if it moves the source's event time forward.
func (s *sourceOp[T]) advance(ctx *OperatorContext, wm int64) {
	if wm <= s.emitted {
		return
	}
	s.emitted = wm
	ctx.exec.emitWatermarkAfter(ctx, wm)
}
