// Package optest drives one operator of a streamdbg job the way Flink's
// operator test harnesses drive one Flink operator: a test pushes records
// with timestamps, watermarks, watermark statuses and processing time into
// a job built around the operator, takes snapshots and restores them, and
// reads back what the operator emitted (records with their timestamps,
// watermarks, statuses, side outputs) in order.
//
// The job is real: a source subtask per input channel, the operator's own
// task behind a network edge (so elements go through the subtask's input
// queue and watermark valve), and a collector chained after the operator.
// Nothing is mocked; what Flink's tests assert on a mock's internals is
// asserted here on the observable equivalent.
//
// It is internal: only runtime and its sub-packages test with it.
package optest
