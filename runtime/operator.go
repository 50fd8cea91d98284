package runtime

import (
	"math"

	"streamdbg/state"
)

// Time bounds: a watermark of MinWatermark means "no event time yet";
// MaxWatermark is the end of time, emitted when a bounded input ends.
const (
	MinWatermark = math.MinInt64
	MaxWatermark = math.MaxInt64
)

// Record is an element of a stream with its event timestamp.
type Record struct {
	Value        any
	Timestamp    int64
	HasTimestamp bool
}

// TimeDomain says which clock a timer follows.
type TimeDomain uint8

const (
	EventTime TimeDomain = iota
	ProcessingTime
)

func (d TimeDomain) String() string {
	if d == ProcessingTime {
		return "processing"
	}
	return "event"
}

// Operator is a stream operator with its types erased: what the executor
// runs. The functions of this package (Map, FlatMap, Process, ...) wrap typed
// user functions in Operators; packages that add operators (windows)
// implement it directly.
type Operator interface {
	// Open is called once per subtask after state is initialised.
	Open(ctx *OperatorContext) error
	// ProcessElement handles one record; it emits through ctx.
	ProcessElement(ctx *OperatorContext, r Record) error
	// Close is called once when the subtask ends.
	Close() error
}

// TimerOperator is an Operator with timers: OnTimer is called with the
// timer's key set as the current key.
type TimerOperator interface {
	Operator
	OnTimer(ctx *OperatorContext, t state.Timer, domain TimeDomain) error
}

// WatermarkOperator is told of every watermark advance after its due
// event-time timers fired and before the watermark is forwarded.
type WatermarkOperator interface {
	Operator
	ProcessWatermark(ctx *OperatorContext, wm int64) error
}

// StatefulOperator is an Operator whose functions are checkpointed (Flink's
// CheckpointedFunction): InitializeState runs before Open, after restore;
// SnapshotState runs before every snapshot.
type StatefulOperator interface {
	Operator
	InitializeState(ctx *OperatorContext) error
	SnapshotState(ctx *OperatorContext) error
}

// WatermarkStatusOperator is told when the watermark status of its input
// changes (idle: every input channel is idle; active: one is active again),
// before the change is announced downstream.
type WatermarkStatusOperator interface {
	Operator
	ProcessWatermarkStatus(ctx *OperatorContext, idle bool) error
}

// WatermarkOwner is an Operator that generates its own watermarks (as
// Flink's TimestampsAndWatermarksOperator): its event-time timers still
// fire as its input's watermark advances, but that watermark is not
// forwarded; the operator emits its own with OperatorContext.EmitWatermark.
type WatermarkOwner interface {
	Operator
	OwnsWatermarks() bool
}

func ownsWatermarks(op Operator) bool {
	o, ok := op.(WatermarkOwner)
	return ok && o.OwnsWatermarks()
}
