package runtime

import (
	"fmt"
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
)

// SourceEvent is one thing a source read: a record or a control record.
type SourceEvent[T any] struct {
	Kind  EventKind
	Value T
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
// job resumes after the last record of the snapshot.
type Source[T any] interface {
	// Next returns the next event, or ok=false at the end of the input.
	Next() (ev SourceEvent[T], ok bool, err error)
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
}

// BoundedOutOfOrderness is Flink's WatermarkStrategy.forBoundedOutOfOrderness.
func BoundedOutOfOrderness[T any](bound time.Duration, ts func(T) (int64, error)) WatermarkStrategy[T] {
	return WatermarkStrategy[T]{Timestamp: ts, OutOfOrderness: bound, Generate: true}
}

// Monotonous is Flink's WatermarkStrategy.forMonotonousTimestamps.
func Monotonous[T any](ts func(T) (int64, error)) WatermarkStrategy[T] {
	return WatermarkStrategy[T]{Timestamp: ts, Generate: true}
}

// FromSource adds a source. newSource makes the source of one subtask.
func FromSource[T any](j *Job, name string, newSource func() Source[T], wm WatermarkStrategy[T], opts ...Option) *Stream[T] {
	n := j.addNode(name, opts, nil, nil, forward, KeySelector{}, "")
	n.source = func() sourceRunner { return &sourceOp[T]{src: newSource(), wm: wm} }
	return &Stream[T]{job: j, refs: []streamRef{{node: n}}}
}

type sourceFactory func() sourceRunner

// sourceRunner is a source operator with its types erased.
type sourceRunner interface {
	Operator
	// pull reads one event and emits what it causes; done at end of input.
	pull(ctx *OperatorContext) (done bool, err error)
}

// sourceOp runs a Source: assigns timestamps, generates watermarks, and
// keeps the generator's progress in operator state so a restore continues
// with the same watermarks.
type sourceOp[T any] struct {
	src      Source[T]
	wm       WatermarkStrategy[T]
	maxTS    int64
	emitted  int64 // last watermark emitted
	genState *state.OperatorListState[int64]
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

func (s *sourceOp[T]) InitializeState(ctx *OperatorContext) error {
	s.maxTS, s.emitted = MinWatermark, MinWatermark
	if s.wm.Timestamp == nil && !s.wm.Generate {
		// No event time: nothing to keep.
		if c, ok := s.src.(CheckpointedFunction); ok {
			return c.InitializeState(ctx)
		}
		return nil
	}
	var err error
	// The generator's progress is union state: after a rescale every
	// subtask restarts from the lowest watermark any subtask had.
	s.genState, err = state.UnionList(ctx.Operator(), "watermark-generator", state.Int64)
	if err != nil {
		return err
	}
	if vs := s.genState.Get(); len(vs) >= 2 {
		s.maxTS, s.emitted = vs[0], vs[1]
		for i := 2; i+1 < len(vs); i += 2 {
			s.maxTS, s.emitted = min(s.maxTS, vs[i]), min(s.emitted, vs[i+1])
		}
	}
	if c, ok := s.src.(CheckpointedFunction); ok {
		return c.InitializeState(ctx)
	}
	return nil
}

func (s *sourceOp[T]) SnapshotState(ctx *OperatorContext) error {
	if s.genState != nil {
		s.genState.Update([]int64{s.maxTS, s.emitted})
	}
	if c, ok := s.src.(CheckpointedFunction); ok {
		return c.SnapshotState(ctx)
	}
	return nil
}

func (s *sourceOp[T]) pull(ctx *OperatorContext) (bool, error) {
	ev, ok, err := s.src.Next()
	if err != nil {
		return false, err
	}
	if !ok {
		s.advance(ctx, MaxWatermark)
		return true, nil
	}
	ctx.where = ev.Where
	switch ev.Kind {
	case EventWatermark:
		if ev.Watermark <= s.emitted {
			ctx.Logger().Warn("watermark does not advance; ignored", "at", ev.Where,
				"watermark", state.FormatMillis(ev.Watermark), "current", state.FormatMillis(s.emitted))
			return false, nil
		}
		s.advance(ctx, ev.Watermark)
	case EventAdvanceProcessingTime:
		if ev.Advance < 0 {
			return false, fmt.Errorf("%s: processing time cannot go back (%s)", ev.Where, ev.Advance)
		}
		ctx.exec.advanceProcessingTime(ev.Advance.Milliseconds())
	default:
		r := Record{Value: ev.Value}
		if s.wm.Timestamp != nil {
			ts, err := s.wm.Timestamp(ev.Value)
			if err != nil {
				return false, fmt.Errorf("%s: %w", ev.Where, err)
			}
			r.Timestamp, r.HasTimestamp = ts, true
			if s.wm.Generate {
				if ts > s.maxTS {
					s.maxTS = ts
				}
			}
		}
		ctx.emitRecord(r)
		if s.wm.Generate && s.maxTS != MinWatermark {
			s.advance(ctx, s.maxTS-s.wm.OutOfOrderness.Milliseconds()-1)
		}
	}
	return false, nil
}

// advance emits a watermark if it moves the source's event time forward.
func (s *sourceOp[T]) advance(ctx *OperatorContext, wm int64) {
	if wm <= s.emitted {
		return
	}
	s.emitted = wm
	ctx.exec.emitWatermarkAfter(ctx, wm)
}
