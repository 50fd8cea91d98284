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
	// add reports whether the window had contents before.
	add(t state.Table, ns []byte, r runtime.Record) (bool, error)
	// fire runs the window function on the contents under ns; it reports
	// false when there are none.
	fire(o *operator, w Window, t state.Table, ns []byte) (bool, error)
	open(ctx *runtime.OperatorContext) error
	close() error
}

// operator is Flink's WindowOperator (and EvictingWindowOperator when an
// evictor is set) for one subtask.
type operator struct {
	cfg config
	fn  windowFunc

	oc       *runtime.OperatorContext
	contents state.Table
	set      state.Table // merging assigners only
	tctx     triggerCtx
	nsBuf    []byte
}

var _ runtime.TimerOperator = (*operator)(nil)

func (o *operator) Open(ctx *runtime.OperatorContext) error {
	o.oc = ctx
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

func (o *operator) ns(w Window) []byte {
	o.nsBuf = state.WindowCodec.Append(o.nsBuf[:0], w)
	return o.nsBuf
}

func encode(w Window) []byte { return state.WindowCodec.Append(make([]byte, 0, 16), w) }

func (o *operator) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	eventTime := o.cfg.assigner.EventTime()
	if eventTime && !r.HasTimestamp {
		return fmt.Errorf("window operator %q: record without a timestamp: event-time windows need a watermark strategy that assigns timestamps", ctx.OperatorName())
	}
	windows := o.cfg.assigner.AssignWindows(r.Timestamp, ctx.ProcessingTime())
	skipped := true
	if o.cfg.merging != nil {
		set, err := o.loadSet()
		if err != nil {
			return err
		}
		for _, w := range windows {
			actual, err := o.addWindow(set, w)
			if err != nil {
				return err
			}
			if o.isWindowLate(actual) {
				delete(set.m, actual)
				continue
			}
			skipped = false
			if err := o.onElement(actual, set.m[actual], r); err != nil {
				return err
			}
		}
		if err := o.persist(set); err != nil {
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
		if o.cfg.hasLate {
			if ctx.Tracing() {
				ctx.Trace("late record", "timestamp", state.MillisValue(r.Timestamp), "watermark", state.MillisValue(ctx.Watermark()), "to", "side output "+o.cfg.lateTag)
			}
			ctx.EmitSide(o.cfg.lateTag, r.Value)
		} else {
			if ctx.Tracing() {
				ctx.Trace("late record", "timestamp", state.MillisValue(r.Timestamp), "watermark", state.MillisValue(ctx.Watermark()), "to", "dropped")
			}
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
	ns := o.ns(stateWindow)
	had, err := o.fn.add(o.contents, ns, r)
	if err != nil {
		return err
	}
	res, err := o.cfg.trigger.OnElement(o.tctx.at(w), r.Value, r.Timestamp, w)
	if err != nil {
		return err
	}
	if err := o.act(res, w, stateWindow); err != nil {
		return err
	}
	// INVARIANT: without merging, a window with contents has its cleanup
	// timer (set with its first element; only its firing or a merge
	// removes it), so registering it again would only be deduplicated.
	if had && o.cfg.merging == nil {
		return nil
	}
	return o.registerCleanupTimer(w)
}

// act fires and purges as the trigger said.
func (o *operator) act(res TriggerResult, w, stateWindow Window) error {
	if res.IsFire() {
		if _, err := o.fn.fire(o, w, o.contents, o.ns(stateWindow)); err != nil {
			return err
		}
	}
	if res.IsPurge() {
		if o.oc.Tracing() {
			o.oc.Trace("window purged", "window", w, "by", "trigger")
		}
		return o.contents.Clear(o.ns(stateWindow))
	}
	return nil
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
	var set *mergingSet
	if o.cfg.merging != nil {
		if set, err = o.loadSet(); err != nil {
			return err
		}
		sw, ok := set.m[w]
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
	if err := o.act(res, w, stateWindow); err != nil {
		return err
	}
	eventTimer := d == runtime.EventTime
	if eventTimer == o.cfg.assigner.EventTime() && t.Timestamp == o.cleanupTime(w) {
		if err := o.clearAll(w, stateWindow, set); err != nil {
			return err
		}
	}
	if set != nil {
		return o.persist(set)
	}
	return nil
}

// clearAll drops a window at its cleanup time: contents, trigger state and
// its place in the merging set.
func (o *operator) clearAll(w, stateWindow Window, set *mergingSet) error {
	if o.oc.Tracing() {
		o.oc.Trace("window purged", "window", w, "by", "cleanup")
	}
	if err := o.contents.Clear(o.ns(stateWindow)); err != nil {
		return err
	}
	if err := o.cfg.trigger.Clear(o.tctx.at(w), w); err != nil {
		return err
	}
	if set != nil {
		delete(set.m, w)
	}
	return nil
}

// cleanupTime is when a window's state goes: the end of its allowed
// lateness in event time (MaxInt64 on overflow: never), its end in
// processing time. The global window is never cleaned up.
func (o *operator) cleanupTime(w Window) int64 {
	if w == GlobalWindow {
		return math.MaxInt64
	}
	if o.cfg.assigner.EventTime() {
		c := w.MaxTimestamp() + o.cfg.lateness
		if c < w.MaxTimestamp() {
			return math.MaxInt64
		}
		return c
	}
	return w.MaxTimestamp()
}

func (o *operator) cleanupDomain() runtime.TimeDomain {
	if o.cfg.assigner.EventTime() {
		return runtime.EventTime
	}
	return runtime.ProcessingTime
}

func (o *operator) registerCleanupTimer(w Window) error {
	c := o.cleanupTime(w)
	if c == math.MaxInt64 {
		return nil
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
	return o.cfg.assigner.EventTime() && o.cleanupTime(w) <= o.oc.Watermark()
}

func (o *operator) isElementLate(r runtime.Record) bool {
	if !o.cfg.assigner.EventTime() {
		return false
	}
	t := r.Timestamp + o.cfg.lateness
	if t < r.Timestamp {
		return false
	}
	return t <= o.oc.Watermark()
}

// mergingSet is Flink's MergingWindowSet for the current key: each window
// maps to the window whose namespace holds its contents, so merging moves
// no state until namespaces merge.
type mergingSet struct {
	m       map[Window]Window
	initial map[Window]Window
}

func (o *operator) loadSet() (*mergingSet, error) {
	s := &mergingSet{m: map[Window]Window{}, initial: map[Window]Window{}}
	var derr error
	err := o.set.MapRange(nil, func(uk []byte, v any) bool {
		w, err := state.WindowCodec.Decode(uk)
		if err != nil {
			derr = err
			return false
		}
		s.m[w], s.initial[w] = v.(Window), v.(Window)
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, fmt.Errorf("window operator %q: state %s: %w", o.oc.OperatorName(), MergingSetState, err)
	}
	return s, nil
}

func sortedWindows(m map[Window]Window) []Window {
	ws := make([]Window, 0, len(m))
	for w := range m {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b Window) int {
		if a.Start != b.Start {
			return cmpInt(a.Start, b.Start)
		}
		return cmpInt(a.End, b.End)
	})
	return ws
}

// persist writes what changed in the set since it was loaded.
func (o *operator) persist(s *mergingSet) error {
	for _, w := range sortedWindows(s.initial) {
		if _, ok := s.m[w]; !ok {
			if err := o.set.MapDelete(nil, encode(w)); err != nil {
				return err
			}
		}
	}
	for _, w := range sortedWindows(s.m) {
		if old, ok := s.initial[w]; !ok || old != s.m[w] {
			if err := o.set.MapPut(nil, encode(w), s.m[w]); err != nil {
				return err
			}
		}
	}
	return nil
}

// addWindow is MergingWindowSet.addWindow: the new window merges with
// every window it intersects; the result takes the state window of one of
// them and the others' state merges into it. It returns the window the
// element belongs to.
func (o *operator) addWindow(s *mergingSet, nw Window) (Window, error) {
	ws := append(sortedWindows(s.m), nw)
	merges := o.cfg.merging.MergeWindows(ws)
	result, mergedNew := nw, false
	for _, mg := range merges {
		merged := slices.Clone(mg.Merged)
		if i := slices.Index(merged, nw); i >= 0 {
			merged = slices.Delete(merged, i, i+1)
			mergedNew, result = true, mg.Result
		}
		if len(merged) == 0 {
			continue
		}
		target := s.m[merged[0]]
		var mergedState []Window
		for _, m := range merged {
			if sw, ok := s.m[m]; ok {
				delete(s.m, m)
				mergedState = append(mergedState, sw)
			}
		}
		s.m[mg.Result] = target
		if i := slices.Index(mergedState, target); i >= 0 {
			mergedState = slices.Delete(mergedState, i, i+1)
		}
		// A new window inside one existing window merges nothing.
		if len(merged) == 1 && merged[0] == mg.Result {
			continue
		}
		if err := o.mergeWindows(mg.Result, merged, target, mergedState); err != nil {
			return Window{}, err
		}
	}
	if len(merges) == 0 || (result == nw && !mergedNew) {
		s.m[result] = result
	}
	return result, nil
}

// mergeWindows is the WindowOperator's merge function: the trigger moves
// its timers and state to the result, the merged windows' cleanup timers
// go, and their contents merge into the result's state window.
func (o *operator) mergeWindows(result Window, merged []Window, target Window, mergedState []Window) error {
	if o.cfg.assigner.EventTime() && o.cleanupTime(result) <= o.oc.Watermark() {
		return fmt.Errorf("window operator %q: merging into %s would make a window end before the watermark %s",
			o.oc.OperatorName(), result, state.FormatMillis(o.oc.Watermark()))
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
	return o.contents.MergeNamespaces(encode(target), sources)
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
