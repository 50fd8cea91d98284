// Package window adds keyed windows to the runtime, with Flink's
// WindowOperator semantics: assigners (tumbling, sliding, session, global;
// event or processing time), triggers (event time, processing time, count,
// purging, custom), evictors (count, time), allowed lateness with re-firing
// and a late-data side output.
//
// Of returns a WindowedStream configured by its methods (Trigger, Evictor,
// AllowedLateness, SideOutputLateData, ElementCodec); the window functions
// Reduce, Aggregate, Process and their *Process forms (which also get the
// window) are functions, as Go methods cannot add type parameters. They
// take plain Go functions and infer their types; the Rich forms take a
// ProcessWindowFunction value (with Open/Close or Clear), copied for each
// subtask.
//
//	counts := window.AggregateProcess(
//		window.Of(byUser, window.TumblingEventTime(10*time.Second)).
//			AllowedLateness(5*time.Second).SideOutputLateData(late),
//		"count", countClicks{}, state.Int64, emitCount)
//
// State: each window's contents live in keyed state "window-contents" with
// the window (state.WindowCodec) as namespace; merging assigners keep, per
// key, "merging-window-set": a map from each window to the window whose
// namespace holds its contents (Flink's MergingWindowSet), so snapshots
// carry sessions in flight. Trigger state (CountTrigger's "count") is keyed
// by window too. Timers carry the window as namespace: a trigger timer at
// the window's max timestamp, a cleanup timer at max timestamp + allowed
// lateness (event time) or max timestamp (processing time).
//
// Invariants, as Flink:
//   - An event-time window is late when its cleanup time is <= the
//     watermark; a late window takes no elements. An element all of whose
//     windows are late goes to the late side output when there is one.
//   - A merging set never holds two windows that intersect; a merge keeps
//     the state window of one merged window and merges the others into it.
//   - Window state of a window is gone after its cleanup timer fired.
//
// The operator reports what it does with OperatorContext.Trace: "window
// assigned", "window fired", "window purged", "windows merged", "late
// record". It must never read the wall clock: processing time is the
// runtime's virtual clock.
package window
