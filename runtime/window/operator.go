package window

import (
	"fmt"
	"math"
	"slices"

	"streamdbg/runtime"
	"streamdbg/state"
)

// Names of the operator's keyed states.
const (
	// ContentsState holds each window's contents under the window as
	// namespace, as Flink names it.
	ContentsState = "window-contents"
	// MergingSetState maps, per key, each window of a merging assigner to
	// the window whose namespace holds its contents (Flink's
	// MergingWindowSet, kept in "merging-window-set").
	MergingSetState = "merging-window-set"
)

var windowNS = state.Erase(state.WindowCodec)

// config is what a WindowedStream collected before its window function.
type config struct {
	assigner Assigner
	merging  MergingAssigner // nil unless the assigner merges
	trigger  Trigger
	evictor  Evictor
	lateness int64
	lateTag  string
	hasLate  bool
}

// windowFunc is the typed part of a window operator: how contents are
// kept and how the window function sees them.
type windowFunc interface {
	desc() state.StateDesc
	add(t state.Table, ns []byte, r runtime.Record) error
	// fire runs the window function on the contents under ns; it reports
	// false when there are none.
	fire(o *operator, w Window, t state.Table, ns []byte) (bool, error)
	// clear lets the window function drop its per-window state of w.
	clear(o *operator, w Window) error
	open(ctx *runtime.OperatorContext) error
	close() error
}

// operator is Flink's WindowOperator (and EvictingWindowOperator when an
// evictor is set) for one subtask.
type operator struct {
	cfg      config
	fn       windowFunc
	assigner Assigner // this subtask's (stagger offsets are per subtask)

	oc       *runtime.OperatorContext
	contents state.Table
	set      state.Table // merging assigners only
	tctx     triggerCtx
	nsBuf    []byte
}

var _ runtime.TimerOperator = (*operator)(nil)

// UserFunction is the window function value the operator runs
// (runtime.FunctionHolder: its fields are checked before back and
// savepoints).
func (o *operator) UserFunction() any {
	if u, ok := o.fn.(interface{ userFunction() any }); ok {
		return u.userFunction()
	}
	return nil
}

func (o *operator) Open(ctx *runtime.OperatorContext) error {
	o.oc = ctx
	o.assigner = o.cfg.assigner
	if fs, ok := o.assigner.(forSubtask); ok {
		o.assigner = fs.forSubtask(subtaskSeed(ctx.OperatorUID(), ctx.SubtaskIndex()))
	}
	o.tctx = triggerCtx{o: o, tables: map[string]state.Table{}}
	d := o.fn.desc()
	d.Namespace = windowNS
	var err error
	if o.contents, err = ctx.KeyedTable(d); err != nil {
		return err
	}
	if o.cfg.merging != nil {
		sd := state.Map(MergingSetState, state.WindowCodec, state.WindowCodec).Desc()
		if o.set, err = ctx.KeyedTable(sd); err != nil {
			return err
		}
	}
	return o.fn.open(ctx)
}

func (o *operator) Close() error { return o.fn.close() }

// CurrentProcessingTime makes the operator the assigner's context.
func (o *operator) CurrentProcessingTime() int64 { return o.oc.ProcessingTime() }

func (o *operator) ns(w Window) []byte {
	o.nsBuf = state.WindowCodec.Append(o.nsBuf[:0], w)
	return o.nsBuf
}

func encode(w Window) []byte { return state.WindowCodec.Append(make([]byte, 0, 16), w) }

func (o *operator) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	eventTime := o.assigner.EventTime()
	if eventTime && !r.HasTimestamp {
		return fmt.Errorf("window operator %q: record without a timestamp: event-time windows need a watermark strategy that assigns timestamps", ctx.OperatorName())
	}
	windows, err := o.assigner.AssignWindows(r.Value, r.Timestamp, o)
	if err != nil {
		return fmt.Errorf("window operator %q: %s: %w", ctx.OperatorName(), o.assigner, err)
	}
	skipped := true
	if o.cfg.merging != nil {
		set, err := NewMergingWindowSet(o.cfg.merging, o.set)
		if err != nil {
			return fmt.Errorf("window operator %q: %w", ctx.OperatorName(), err)
		}
		for _, w := range windows {
			// Adding the window may merge it: the element then belongs to
			// the merged window.
			actual, err := set.AddWindow(w, o.merge)
			if err != nil {
				return err
			}
			if o.isWindowLate(actual) {
				if err := set.RetireWindow(actual); err != nil {
					return err
				}
				continue
			}
			skipped = false
			sw, ok := set.StateWindow(actual)
			if !ok {
				return fmt.Errorf("window operator %q: window %s is not in flight", ctx.OperatorName(), actual)
			}
			if err := o.onElement(actual, sw, r); err != nil {
				return err
			}
		}
		if err := set.Persist(); err != nil {
			return err
		}
	} else {
		for _, w := range windows {
			if o.isWindowLate(w) {
				continue
			}
			skipped = false
			if err := o.onElement(w, w, r); err != nil {
				return err
			}
		}
	}
	if skipped && o.isElementLate(r) {
		to := "dropped"
		if o.cfg.hasLate {
			to = "side output " + o.cfg.lateTag
		}
		if ctx.Tracing() {
			ctx.Trace("late record", "timestamp", state.MillisValue(r.Timestamp), "watermark", state.MillisValue(ctx.Watermark()), "to", to)
		}
		if o.cfg.hasLate {
			ctx.EmitSide(o.cfg.lateTag, r.Value)
		}
	}
	return nil
}

// onElement adds r to window w whose contents live under stateWindow and
// asks the trigger what to do.
func (o *operator) onElement(w, stateWindow Window, r runtime.Record) error {
	if o.oc.Tracing() {
		o.oc.Trace("window assigned", "window", w)
	}
	if err := o.fn.add(o.contents, o.ns(stateWindow), r); err != nil {
		return err
	}
	res, err := o.cfg.trigger.OnElement(o.tctx.at(w), r.Value, r.Timestamp, w)
	if err != nil {
		return err
	}
	if res.IsFire() {
		fired, err := o.fn.fire(o, w, o.contents, o.ns(stateWindow))
		if err != nil || !fired {
			// No contents to fire (Flink moves on to the next window).
			return err
		}
	}
	if res.IsPurge() {
		if err := o.purge(w, stateWindow, "trigger"); err != nil {
			return err
		}
	}
	return o.registerCleanupTimer(w)
}

func (o *operator) purge(w, stateWindow Window, by string) error {
	if o.oc.Tracing() {
		o.oc.Trace("window purged", "window", w, "by", by)
	}
	return o.contents.Clear(o.ns(stateWindow))
}

// traceFired is called by window functions just before they run.
// n is the number of values the function gets: elements for Process, one
// for Reduce and Aggregate.
func (o *operator) traceFired(w Window, n int) {
	if o.oc.Tracing() {
		o.oc.Trace("window fired", "window", w, "values", n)
	}
}

func (o *operator) OnTimer(ctx *runtime.OperatorContext, t state.Timer, d runtime.TimeDomain) error {
	w, err := state.WindowCodec.Decode(t.Namespace)
	if err != nil {
		return fmt.Errorf("window operator %q: timer namespace: %w", ctx.OperatorName(), err)
	}
	stateWindow := w
	var set *MergingWindowSet
	if o.cfg.merging != nil {
		if set, err = NewMergingWindowSet(o.cfg.merging, o.set); err != nil {
			return fmt.Errorf("window operator %q: %w", ctx.OperatorName(), err)
		}
		sw, ok := set.StateWindow(w)
		if !ok {
			// A timer of a window merged away whose trigger did not delete
			// it: its state is already gone (as Flink).
			return nil
		}
		stateWindow = sw
	}
	tc := o.tctx.at(w)
	var res TriggerResult
	if d == runtime.EventTime {
		res, err = o.cfg.trigger.OnEventTime(tc, t.Timestamp, w)
	} else {
		res, err = o.cfg.trigger.OnProcessingTime(tc, t.Timestamp, w)
	}
	if err != nil {
		return err
	}
	if res.IsFire() {
		if _, err := o.fn.fire(o, w, o.contents, o.ns(stateWindow)); err != nil {
			return err
		}
	}
	if res.IsPurge() {
		if err := o.purge(w, stateWindow, "trigger"); err != nil {
			return err
		}
	}
	eventTimer := d == runtime.EventTime
	if eventTimer == o.assigner.EventTime() && t.Timestamp == o.cleanupTime(w) {
		if err := o.clearAll(w, stateWindow, set); err != nil {
			return err
		}
	}
	if set != nil {
		return set.Persist()
	}
	return nil
}

// clearAll drops a window at its cleanup time: contents, trigger state,
// the window function's per-window state and its place in the merging set.
func (o *operator) clearAll(w, stateWindow Window, set *MergingWindowSet) error {
	if err := o.purge(w, stateWindow, "cleanup"); err != nil {
		return err
	}
	if err := o.cfg.trigger.Clear(o.tctx.at(w), w); err != nil {
		return err
	}
	if err := o.fn.clear(o, w); err != nil {
		return err
	}
	if set != nil {
		return set.RetireWindow(w)
	}
	return nil
}

// cleanupTime is when a window's state goes: the end of its allowed
// lateness in event time (MaxInt64 on overflow: never), its max timestamp
// in processing time (MaxInt64 for the global window: never).
func (o *operator) cleanupTime(w Window) int64 {
	if o.assigner.EventTime() {
		c := w.MaxTimestamp() + o.cfg.lateness
		if c < w.MaxTimestamp() {
			return math.MaxInt64
		}
		return c
	}
	return w.MaxTimestamp()
}

func (o *operator) cleanupDomain() runtime.TimeDomain {
	if o.assigner.EventTime() {
		return runtime.EventTime
	}
	return runtime.ProcessingTime
}

func (o *operator) registerCleanupTimer(w Window) error {
	c := o.cleanupTime(w)
	if c == math.MaxInt64 {
		return nil // no timer for the end of time
	}
	return o.oc.RegisterTimer(o.cleanupDomain(), c, o.ns(w))
}

func (o *operator) deleteCleanupTimer(w Window) error {
	c := o.cleanupTime(w)
	if c == math.MaxInt64 {
		return nil
	}
	return o.oc.DeleteTimer(o.cleanupDomain(), c, o.ns(w))
}

// isWindowLate is Flink's: an event-time window whose cleanup time the
// watermark reached takes no more elements.
func (o *operator) isWindowLate(w Window) bool {
	return o.assigner.EventTime() && o.cleanupTime(w) <= o.oc.Watermark()
}

// isElementLate is Flink's, except that a timestamp + lateness beyond
// MaxInt64 is never late (Flink's sum wraps around).
func (o *operator) isElementLate(r runtime.Record) bool {
	if !o.assigner.EventTime() {
		return false
	}
	t := r.Timestamp + o.cfg.lateness
	if t < r.Timestamp {
		return false
	}
	return t <= o.oc.Watermark()
}

// merge is the WindowOperator's merge function: a merge may not end a
// window before event or processing time already passed it; the trigger
// moves its timers and state to the result, the merged windows' trigger
// state and cleanup timers go, and their contents fold into the result's
// state window.
func (o *operator) merge(result Window, merged []Window, stateWindow Window, mergedState []Window) error {
	if o.assigner.EventTime() && o.cleanupTime(result) <= o.oc.Watermark() {
		return fmt.Errorf("window operator %q: merging into %s would make a window end before the watermark %s (the end timestamp of an event-time window cannot become earlier than the watermark by merging)",
			o.oc.OperatorName(), result, state.FormatMillis(o.oc.Watermark()))
	}
	if !o.assigner.EventTime() && result.MaxTimestamp() <= o.oc.ProcessingTime() {
		return fmt.Errorf("window operator %q: merging into %s would make a window end before the processing time %s",
			o.oc.OperatorName(), result, state.FormatMillis(o.oc.ProcessingTime()))
	}
	if o.oc.Tracing() {
		o.oc.Trace("windows merged", "into", result, "merged", slices.Clone(merged))
	}
	tc := o.tctx.at(result)
	tc.merged = merged
	err := o.cfg.trigger.OnMerge(tc, result)
	tc.merged = nil
	if err != nil {
		return err
	}
	for _, m := range merged {
		if err := o.cfg.trigger.Clear(o.tctx.at(m), m); err != nil {
			return err
		}
		if err := o.deleteCleanupTimer(m); err != nil {
			return err
		}
	}
	if len(mergedState) == 0 {
		return nil
	}
	sources := make([][]byte, len(mergedState))
	for i, m := range mergedState {
		sources[i] = encode(m)
	}
	return o.contents.MergeNamespaces(encode(stateWindow), sources)
}

// triggerCtx is the TriggerContext and MergeContext of the current key
// and one window.
type triggerCtx struct {
	o      *operator
	w      Window
	ns     []byte
	merged []Window
	tables map[string]state.Table
}

func (t *triggerCtx) at(w Window) *triggerCtx {
	t.w = w
	t.ns = state.WindowCodec.Append(t.ns[:0], w)
	return t
}

func (t *triggerCtx) CurrentWatermark() int64      { return t.o.oc.Watermark() }
func (t *triggerCtx) CurrentProcessingTime() int64 { return t.o.oc.ProcessingTime() }
func (t *triggerCtx) Namespace() []byte            { return t.ns }

func (t *triggerCtx) RegisterEventTimeTimer(ts int64) error {
	return t.o.oc.RegisterTimer(runtime.EventTime, ts, t.ns)
}

func (t *triggerCtx) DeleteEventTimeTimer(ts int64) error {
	return t.o.oc.DeleteTimer(runtime.EventTime, ts, t.ns)
}

func (t *triggerCtx) RegisterProcessingTimeTimer(ts int64) error {
	return t.o.oc.RegisterTimer(runtime.ProcessingTime, ts, t.ns)
}

func (t *triggerCtx) DeleteProcessingTimeTimer(ts int64) error {
	return t.o.oc.DeleteTimer(runtime.ProcessingTime, ts, t.ns)
}

func (t *triggerCtx) State(d state.StateDesc) (state.Table, error) {
	if tab, ok := t.tables[d.Meta.StateName]; ok {
		return tab, nil
	}
	d.Namespace = windowNS
	tab, err := t.o.oc.KeyedTable(d)
	if err != nil {
		return nil, err
	}
	t.tables[d.Meta.StateName] = tab
	return tab, nil
}

func (t *triggerCtx) MergeState(d state.StateDesc) error {
	if len(t.merged) == 0 {
		return nil
	}
	tab, err := t.State(d)
	if err != nil {
		return err
	}
	sources := make([][]byte, len(t.merged))
	for i, m := range t.merged {
		sources[i] = encode(m)
	}
	return tab.MergeNamespaces(t.ns, sources)
}
