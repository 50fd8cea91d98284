package streamdbgtest

import (
	"testing"
	"time"

	"streamdbg/runtime"
)

// Harness runs one keyed function without a job of the test's own, as
// Flink's KeyedOneInputStreamOperatorTestHarness: records pushed with
// their timestamps, watermarks and processing time set by the test, the
// function's output, state and timers read back. It is a Driver over a
// job of three operators: the source "input", the function's operators,
// and the sink "output".
type Harness[K, T, U any] struct {
	*Driver
	In  *In[T]
	Out *Out[U]
	// Operator is the name of the first operator the function added: the
	// one whose state and timers the harness's readers look at.
	Operator string
}

// Keyed builds a harness around fn, which applies the function under
// test to the keyed stream of the pushed records (keyed by keyOf), e.g.
//
//	h := streamdbgtest.Keyed(t, func(in *runtime.KeyedStream[string, string]) *runtime.Stream[string] {
//		return runtime.RichFlatMap(in, "greet", &StatefulFlatMap{})
//	}, func(string) string { return "1" })
//
// The input assigns no timestamps of its own (PushAt gives them) and
// emits no watermarks (Watermark does), as the harness does in Flink.
// Options apply as for New (Parallelism: the function's; the input and
// output run as one subtask).
func Keyed[K, T, U any](t testing.TB, fn func(in *runtime.KeyedStream[K, T]) *runtime.Stream[U], keyOf func(T) K, opts ...Option) *Harness[K, T, U] {
	t.Helper()
	job := keyedJob(fn, keyOf)
	return harness[K, T, U](New(t, job, opts...), job)
}

func keyedJob[K, T, U any](fn func(in *runtime.KeyedStream[K, T]) *runtime.Stream[U], keyOf func(T) K) *runtime.Job {
	job := runtime.NewJob("harness")
	src := runtime.FromSource(job, "input", func() runtime.Source[T] { return noInput[T]{} }, runtime.WatermarkStrategy[T]{},
		runtime.UID("input"), runtime.Parallelism(1))
	out := fn(runtime.KeyBy(src, "key", keyOf))
	runtime.Sink(out, "output", func(U) error { return nil }, runtime.UID("output"), runtime.Parallelism(1))
	return job
}

func harness[K, T, U any](d *Driver, job *runtime.Job) *Harness[K, T, U] {
	d.t.Helper()
	h := &Harness[K, T, U]{Driver: d, In: Input[T](d, "input"), Out: Output[U](d, "output")}
	if ops := job.Operators(); len(ops) > 2 {
		h.Operator = ops[1]
	}
	return h
}

// noInput is the harness's source before the driver takes it over.
type noInput[T any] struct{}

func (noInput[T]) Next() (runtime.SourceEvent[T], bool, error) {
	return runtime.SourceEvent[T]{}, false, nil
}

// Push processes v without a timestamp.
func (h *Harness[K, T, U]) Push(v T) { h.t.Helper(); h.In.Push(v) }

// PushAt processes v with timestamp ts in epoch milliseconds (Flink's
// processElement(value, timestamp)).
func (h *Harness[K, T, U]) PushAt(v T, ts int64) { h.t.Helper(); h.In.PushAt(v, time.UnixMilli(ts)) }

// Watermark processes the watermark ts in epoch milliseconds (Flink's
// processWatermark): due event-time timers fire.
func (h *Harness[K, T, U]) Watermark(ts int64) { h.t.Helper(); h.In.Watermark(time.UnixMilli(ts)) }

// ReadAll returns the function's records since the last read.
func (h *Harness[K, T, U]) ReadAll() []U { h.t.Helper(); return h.Out.ReadAll() }

// ReadRecords returns them with their timestamps (Flink's
// extractOutputStreamRecords).
func (h *Harness[K, T, U]) ReadRecords() []Record[U] { h.t.Helper(); return h.Out.ReadRecords() }

// Timers lists the timers of the function's operator.
func (h *Harness[K, T, U]) Timers() []Timer { h.t.Helper(); return Timers(h.Driver, h.Operator) }

// Restore starts a new harness, around the same function, from snap at
// the given parallelism.
func (h *Harness[K, T, U]) Restore(snap Snapshot, parallelism int, opts ...Option) *Harness[K, T, U] {
	h.t.Helper()
	return harness[K, T, U](Restore(h.t, h.job, snap, parallelism, opts...), h.job)
}
