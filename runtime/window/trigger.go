package window

import (
	"fmt"
	"time"

	"streamdbg/state"
)

// TriggerResult says what a window does after a trigger call.
type TriggerResult uint8

const (
	Continue TriggerResult = iota
	Fire
	Purge
	FireAndPurge
)

// IsFire reports whether the window function runs.
func (r TriggerResult) IsFire() bool { return r == Fire || r == FireAndPurge }

// IsPurge reports whether the window contents are cleared.
func (r TriggerResult) IsPurge() bool { return r == Purge || r == FireAndPurge }

func (r TriggerResult) String() string {
	return [...]string{"CONTINUE", "FIRE", "PURGE", "FIRE_AND_PURGE"}[r]
}

// Trigger decides when a window fires (Flink's Trigger). Its timers and
// state are scoped to the current key and window; the window operator
// calls Clear when the window is cleaned up or merged away.
type Trigger interface {
	OnElement(ctx TriggerContext, element any, ts int64, w Window) (TriggerResult, error)
	OnEventTime(ctx TriggerContext, time int64, w Window) (TriggerResult, error)
	OnProcessingTime(ctx TriggerContext, time int64, w Window) (TriggerResult, error)
	// CanMerge reports whether OnMerge is supported: a merging assigner
	// refuses a trigger that cannot merge.
	CanMerge() bool
	// OnMerge is called with the window that merged windows became; w's
	// timers must be set up again, state is merged with ctx.MergeState.
	OnMerge(ctx MergeContext, w Window) error
	// Clear removes the trigger's timers and state of w.
	Clear(ctx TriggerContext, w Window) error
	String() string
}

// TriggerContext is what a trigger can do for the current key and window.
type TriggerContext interface {
	CurrentWatermark() int64
	CurrentProcessingTime() int64
	RegisterEventTimeTimer(ts int64) error
	DeleteEventTimeTimer(ts int64) error
	RegisterProcessingTimeTimer(ts int64) error
	DeleteProcessingTimeTimer(ts int64) error
	// State declares (once per operator) a keyed state for the trigger and
	// returns its table; access it under Namespace(), the current window.
	State(d state.StateDesc) (state.Table, error)
	Namespace() []byte
}

// MergeContext is the context of OnMerge.
type MergeContext interface {
	TriggerContext
	// MergeState folds the state d of the merged windows into the current
	// window.
	MergeState(d state.StateDesc) error
}

// EventTimeTrigger fires when the watermark passes the window's end, and
// at once for an element of a window the watermark already passed (a late
// element within the allowed lateness): Flink's EventTimeTrigger.
type EventTimeTrigger struct{}

func (EventTimeTrigger) OnElement(ctx TriggerContext, _ any, _ int64, w Window) (TriggerResult, error) {
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return Fire, nil
	}
	return Continue, ctx.RegisterEventTimeTimer(w.MaxTimestamp())
}

func (EventTimeTrigger) OnEventTime(_ TriggerContext, time int64, w Window) (TriggerResult, error) {
	if time == w.MaxTimestamp() {
		return Fire, nil
	}
	return Continue, nil
}

func (EventTimeTrigger) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}

func (EventTimeTrigger) CanMerge() bool { return true }

func (EventTimeTrigger) OnMerge(ctx MergeContext, w Window) error {
	// Only register a timer if the watermark is not yet past the end of
	// the merged window, as Flink: otherwise the element fires it.
	if w.MaxTimestamp() > ctx.CurrentWatermark() {
		return ctx.RegisterEventTimeTimer(w.MaxTimestamp())
	}
	return nil
}

func (EventTimeTrigger) Clear(ctx TriggerContext, w Window) error {
	return ctx.DeleteEventTimeTimer(w.MaxTimestamp())
}

func (EventTimeTrigger) String() string { return "EventTimeTrigger()" }

// ProcessingTimeTrigger fires when processing time passes the window's end.
type ProcessingTimeTrigger struct{}

func (ProcessingTimeTrigger) OnElement(ctx TriggerContext, _ any, _ int64, w Window) (TriggerResult, error) {
	return Continue, ctx.RegisterProcessingTimeTimer(w.MaxTimestamp())
}

func (ProcessingTimeTrigger) OnEventTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}

func (ProcessingTimeTrigger) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Fire, nil
}

func (ProcessingTimeTrigger) CanMerge() bool { return true }

func (ProcessingTimeTrigger) OnMerge(ctx MergeContext, w Window) error {
	if w.MaxTimestamp() > ctx.CurrentProcessingTime() {
		return ctx.RegisterProcessingTimeTimer(w.MaxTimestamp())
	}
	return nil
}

func (ProcessingTimeTrigger) Clear(ctx TriggerContext, w Window) error {
	return ctx.DeleteProcessingTimeTimer(w.MaxTimestamp())
}

func (ProcessingTimeTrigger) String() string { return "ProcessingTimeTrigger()" }

// CountTrigger fires every N elements of a window; it keeps the count in
// reducing state "count" (Flink's CountTrigger).
type CountTrigger struct{ N int64 }

// Count is Flink's CountTrigger.of(n).
func Count(n int64) CountTrigger { return CountTrigger{N: n} }

var countDesc = state.Reducing("count", state.Int64, func(a, b int64) int64 { return a + b }).Desc()

func (t CountTrigger) count(ctx TriggerContext) (*state.ReducingState[int64], error) {
	tab, err := ctx.State(countDesc)
	if err != nil {
		return nil, err
	}
	s := state.NewReducingState(tab, func(a, b int64) int64 { return a + b })
	s.SetNamespace(ctx.Namespace())
	return s, nil
}

func (t CountTrigger) OnElement(ctx TriggerContext, _ any, _ int64, _ Window) (TriggerResult, error) {
	s, err := t.count(ctx)
	if err != nil {
		return Continue, err
	}
	if err := s.Add(1); err != nil {
		return Continue, err
	}
	if n, _, err := s.Get(); err != nil || n < t.N {
		return Continue, err
	}
	return Fire, s.Clear()
}

func (CountTrigger) OnEventTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}

func (CountTrigger) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}

func (CountTrigger) CanMerge() bool { return true }

func (CountTrigger) OnMerge(ctx MergeContext, _ Window) error { return ctx.MergeState(countDesc) }

func (t CountTrigger) Clear(ctx TriggerContext, _ Window) error {
	s, err := t.count(ctx)
	if err != nil {
		return err
	}
	return s.Clear()
}

func (t CountTrigger) String() string { return fmt.Sprintf("CountTrigger(%d)", t.N) }

// PurgingTrigger turns every FIRE of its trigger into FIRE_AND_PURGE.
type PurgingTrigger struct{ Trigger Trigger }

// Purging is Flink's PurgingTrigger.of(t).
func Purging(t Trigger) PurgingTrigger { return PurgingTrigger{Trigger: t} }

func purge(r TriggerResult, err error) (TriggerResult, error) {
	if r.IsFire() {
		return FireAndPurge, err
	}
	return r, err
}

func (p PurgingTrigger) OnElement(ctx TriggerContext, e any, ts int64, w Window) (TriggerResult, error) {
	return purge(p.Trigger.OnElement(ctx, e, ts, w))
}

func (p PurgingTrigger) OnEventTime(ctx TriggerContext, time int64, w Window) (TriggerResult, error) {
	return purge(p.Trigger.OnEventTime(ctx, time, w))
}

func (p PurgingTrigger) OnProcessingTime(ctx TriggerContext, time int64, w Window) (TriggerResult, error) {
	return purge(p.Trigger.OnProcessingTime(ctx, time, w))
}

func (p PurgingTrigger) CanMerge() bool                           { return p.Trigger.CanMerge() }
func (p PurgingTrigger) OnMerge(ctx MergeContext, w Window) error { return p.Trigger.OnMerge(ctx, w) }
func (p PurgingTrigger) Clear(ctx TriggerContext, w Window) error { return p.Trigger.Clear(ctx, w) }
func (p PurgingTrigger) String() string                           { return "PurgingTrigger(" + p.Trigger.String() + ")" }

// Never is the trigger that never fires (the global window's default).
type Never struct{}

func (Never) OnElement(TriggerContext, any, int64, Window) (TriggerResult, error) {
	return Continue, nil
}
func (Never) OnEventTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}
func (Never) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}
func (Never) CanMerge() bool                     { return true }
func (Never) OnMerge(MergeContext, Window) error { return nil }
func (Never) Clear(TriggerContext, Window) error { return nil }
func (Never) String() string                     { return "NeverTrigger()" }

// ContinuousEventTimeTrigger fires a window every Interval of event time
// (at multiples of Interval since the epoch) and once more at its end; it
// keeps the next firing time in reducing state "fire-time" (merged as the
// minimum), as Flink's ContinuousEventTimeTrigger.
type ContinuousEventTimeTrigger struct{ Interval time.Duration }

// ContinuousEventTime is Flink's ContinuousEventTimeTrigger.of(interval).
func ContinuousEventTime(interval time.Duration) ContinuousEventTimeTrigger {
	return ContinuousEventTimeTrigger{Interval: interval}
}

var fireTimeDesc = state.Reducing("fire-time", state.Int64, func(a, b int64) int64 { return min(a, b) }).Desc()

func fireTime(ctx TriggerContext) (*state.ReducingState[int64], error) {
	tab, err := ctx.State(fireTimeDesc)
	if err != nil {
		return nil, err
	}
	s := state.NewReducingState(tab, func(a, b int64) int64 { return min(a, b) })
	s.SetNamespace(ctx.Namespace())
	return s, nil
}

func (t ContinuousEventTimeTrigger) OnElement(ctx TriggerContext, _ any, ts int64, w Window) (TriggerResult, error) {
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return Fire, nil // the watermark is past the window: fire at once
	}
	if err := ctx.RegisterEventTimeTimer(w.MaxTimestamp()); err != nil {
		return Continue, err
	}
	ft, err := fireTime(ctx)
	if err != nil {
		return Continue, err
	}
	if _, ok, err := ft.Get(); err != nil || ok {
		return Continue, err
	}
	interval := t.Interval.Milliseconds()
	return Continue, t.next(ctx, ft, ts-ts%interval, w)
}

// next sets the firing after time: one interval later, at most the
// window's end.
func (t ContinuousEventTimeTrigger) next(ctx TriggerContext, ft *state.ReducingState[int64], after int64, w Window) error {
	at := min(after+t.Interval.Milliseconds(), w.MaxTimestamp())
	if err := ft.Add(at); err != nil {
		return err
	}
	return ctx.RegisterEventTimeTimer(at)
}

func (t ContinuousEventTimeTrigger) OnEventTime(ctx TriggerContext, ts int64, w Window) (TriggerResult, error) {
	if ts == w.MaxTimestamp() {
		return Fire, nil
	}
	ft, err := fireTime(ctx)
	if err != nil {
		return Continue, err
	}
	at, ok, err := ft.Get()
	if err != nil || !ok || at != ts {
		return Continue, err
	}
	if err := ft.Clear(); err != nil {
		return Continue, err
	}
	return Fire, t.next(ctx, ft, ts, w)
}

func (ContinuousEventTimeTrigger) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}

func (ContinuousEventTimeTrigger) CanMerge() bool { return true }

func (ContinuousEventTimeTrigger) OnMerge(ctx MergeContext, _ Window) error {
	if err := ctx.MergeState(fireTimeDesc); err != nil {
		return err
	}
	ft, err := fireTime(ctx)
	if err != nil {
		return err
	}
	at, ok, err := ft.Get()
	if err != nil || !ok {
		return err
	}
	return ctx.RegisterEventTimeTimer(at)
}

func (ContinuousEventTimeTrigger) Clear(ctx TriggerContext, _ Window) error {
	ft, err := fireTime(ctx)
	if err != nil {
		return err
	}
	at, ok, err := ft.Get()
	if err != nil || !ok {
		return err
	}
	if err := ctx.DeleteEventTimeTimer(at); err != nil {
		return err
	}
	return ft.Clear()
}

func (t ContinuousEventTimeTrigger) String() string {
	return fmt.Sprintf("ContinuousEventTimeTrigger(%d)", t.Interval.Milliseconds())
}

// EndOfStreamTrigger fires a window once, when the input ends (the final
// watermark reaches its max timestamp): the default trigger of
// GlobalWithEndOfStream (Flink's GlobalWindows.EndOfStreamTrigger).
type EndOfStreamTrigger struct{}

func (EndOfStreamTrigger) OnElement(ctx TriggerContext, _ any, _ int64, w Window) (TriggerResult, error) {
	return Continue, ctx.RegisterEventTimeTimer(w.MaxTimestamp())
}

func (EndOfStreamTrigger) OnEventTime(_ TriggerContext, time int64, w Window) (TriggerResult, error) {
	if time == w.MaxTimestamp() {
		return Fire, nil
	}
	return Continue, nil
}

func (EndOfStreamTrigger) OnProcessingTime(TriggerContext, int64, Window) (TriggerResult, error) {
	return Continue, nil
}
func (EndOfStreamTrigger) CanMerge() bool                     { return true }
func (EndOfStreamTrigger) OnMerge(MergeContext, Window) error { return nil }
func (EndOfStreamTrigger) Clear(TriggerContext, Window) error { return nil }
func (EndOfStreamTrigger) String() string                     { return "EndOfStreamTrigger()" }
