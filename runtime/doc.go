// Package runtime is streamdbg's local stream runtime, modelled on Apache
// Flink: a typed job API (Job, Stream, KeyedStream), a plan that chains
// operators into tasks, subtasks with keyed and operator state, key groups,
// event time and timers, and a single-threaded deterministic scheduler that
// can run a job to the end or step it one element at a time.
//
// It must never import query, runtime/session or tui: the debugger is built
// on this package, not the other way round. The standard library's runtime
// package is imported as goruntime here.
//
// Invariants:
//   - Determinism: the same job, input, options and commands give the same
//     states, outputs and snapshot bytes. Nothing here reads the wall clock
//     or iterates a map where order can be observed.
//   - A step is one element (record, watermark or timer) handled by one
//     operator in one subtask. Chained operators see elements depth first,
//     in emission order, as Flink's direct calls would.
//   - A record crossing a non-chained edge waits in the target subtask's
//     input queue; queues are drained upstream task first, subtask 0 first.
//   - User code runs only inside Executor.step, which recovers its panics
//     and turns them into a *Failure naming task, operator, record and key.
package runtime
