package window

import (
	"fmt"
	"time"

	"streamdbg/runtime"
	"streamdbg/state"
)

// TaggedUnion is an element of either input of a window join or coGroup,
// as the window keeps it (Flink's CoGroupedStreams.TaggedUnion): One for
// the first input, Two for the second.
type TaggedUnion[T1, T2 any] struct {
	One *T1 `json:"one,omitempty"`
	Two *T2 `json:"two,omitempty"`
}

// CoGroupedStreams are two streams grouped by key into common windows
// (Flink's CoGroupedStreams and JoinedStreams): Window assigns the
// windows; CoGroupApply, JoinApply or FlatJoinApply give the function.
type CoGroupedStreams[K, T1, T2 any] struct {
	first   *runtime.Stream[T1]
	second  *runtime.Stream[T2]
	keyName string
	key1    func(T1) K
	key2    func(T2) K
	codec   state.Codec[K]
}

// CoGroup groups first and second by key: key1 of a first element equal to
// key2 of a second one (Flink's where/equalTo), encoded with
// runtime.KeyCodec[K] (KeyCodec sets another).
func CoGroup[K, T1, T2 any](first *runtime.Stream[T1], second *runtime.Stream[T2], keyName string, key1 func(T1) K, key2 func(T2) K) *CoGroupedStreams[K, T1, T2] {
	return &CoGroupedStreams[K, T1, T2]{first: first, second: second, keyName: keyName, key1: key1, key2: key2, codec: runtime.KeyCodec[K]()}
}

// KeyCodec sets how the key is encoded (its key group, its bytes in
// savepoints).
func (c *CoGroupedStreams[K, T1, T2]) KeyCodec(codec state.Codec[K]) *CoGroupedStreams[K, T1, T2] {
	c.codec = codec
	return c
}

// Join is CoGroup for a join (Flink's JoinedStreams delegates to
// CoGroupedStreams the same way): finish it with JoinApply or
// FlatJoinApply.
func Join[K, T1, T2 any](first *runtime.Stream[T1], second *runtime.Stream[T2], keyName string, key1 func(T1) K, key2 func(T2) K) *CoGroupedStreams[K, T1, T2] {
	return CoGroup(first, second, keyName, key1, key2)
}

// WindowedCoGroup is a coGroup or join with its windows.
type WindowedCoGroup[K, T1, T2 any] struct {
	streams  *CoGroupedStreams[K, T1, T2]
	assigner Assigner
	trigger  Trigger
	evictor  Evictor
	lateness time.Duration
	codec    state.Codec[TaggedUnion[T1, T2]]
}

// Window assigns the windows: any assigner (tumbling, sliding, session,
// global, event or processing time).
func (c *CoGroupedStreams[K, T1, T2]) Window(a Assigner) *WindowedCoGroup[K, T1, T2] {
	return &WindowedCoGroup[K, T1, T2]{streams: c, assigner: a, codec: state.JSON[TaggedUnion[T1, T2]]()}
}

// Trigger replaces the assigner's default trigger.
func (w *WindowedCoGroup[K, T1, T2]) Trigger(t Trigger) *WindowedCoGroup[K, T1, T2] {
	w.trigger = t
	return w
}

// Evictor removes elements before or after the function runs.
func (w *WindowedCoGroup[K, T1, T2]) Evictor(e Evictor) *WindowedCoGroup[K, T1, T2] {
	w.evictor = e
	return w
}

// AllowedLateness keeps event-time windows for d after their end.
func (w *WindowedCoGroup[K, T1, T2]) AllowedLateness(d time.Duration) *WindowedCoGroup[K, T1, T2] {
	w.lateness = d
	return w
}

// AllowedLatenessDuration is the allowed lateness set (0 by default).
func (w *WindowedCoGroup[K, T1, T2]) AllowedLatenessDuration() time.Duration { return w.lateness }

// ElementCodec sets how the window keeps the tagged elements (JSON by
// default).
func (w *WindowedCoGroup[K, T1, T2]) ElementCodec(c state.Codec[TaggedUnion[T1, T2]]) *WindowedCoGroup[K, T1, T2] {
	w.codec = c
	return w
}

// CoGroupFunction gets, per key and window, the elements of both inputs
// (either list may be empty).
type CoGroupFunction[T1, T2, U any] interface {
	CoGroup(first []T1, second []T2, out runtime.Collector[U]) error
}

type coGroupFunc[T1, T2, U any] func(first []T1, second []T2, out runtime.Collector[U]) error

func (f coGroupFunc[T1, T2, U]) CoGroup(first []T1, second []T2, out runtime.Collector[U]) error {
	return f(first, second, out)
}

// JoinFunction joins one element of each input of the same key and window.
type JoinFunction[T1, T2, U any] interface {
	Join(first T1, second T2) (U, error)
}

type joinFunc[T1, T2, U any] func(first T1, second T2) (U, error)

func (f joinFunc[T1, T2, U]) Join(first T1, second T2) (U, error) { return f(first, second) }

// FlatJoinFunction joins one element of each input into any number of
// records.
type FlatJoinFunction[T1, T2, U any] interface {
	Join(first T1, second T2, out runtime.Collector[U]) error
}

type flatJoinFunc[T1, T2, U any] func(first T1, second T2, out runtime.Collector[U]) error

func (f flatJoinFunc[T1, T2, U]) Join(first T1, second T2, out runtime.Collector[U]) error {
	return f(first, second, out)
}

// CoGroupApply, JoinApply and FlatJoinApply take plain functions whose
// types they infer; RichCoGroupApply, RichJoinApply and RichFlatJoinApply
// take function values (runtime.RichFunction too), copied per subtask.

// CoGroupApply is RichCoGroupApply with a plain function.
func CoGroupApply[K, T1, T2, U any](w *WindowedCoGroup[K, T1, T2], name string, f func(first []T1, second []T2, out runtime.Collector[U]) error, opts ...runtime.Option) *runtime.Stream[U] {
	return RichCoGroupApply[K, T1, T2, U](w, name, coGroupFunc[T1, T2, U](f), opts...)
}

// RichCoGroupApply runs f for every key and window that fires, as Flink's
// coGroup: both inputs are tagged (TaggedUnion), unioned, keyed and
// windowed by one window operator called name, whose window contents hold
// the tagged elements of both inputs; its output records carry the
// window's max timestamp.
func RichCoGroupApply[K, T1, T2, U any](w *WindowedCoGroup[K, T1, T2], name string, f CoGroupFunction[T1, T2, U], opts ...runtime.Option) *runtime.Stream[U] {
	c := w.streams
	one := runtime.Map(c.first, name+": input 1", func(v T1) (TaggedUnion[T1, T2], error) {
		return TaggedUnion[T1, T2]{One: &v}, nil
	}, runtime.UID(name+"-input-1"), runtime.InputParallelism())
	two := runtime.Map(c.second, name+": input 2", func(v T2) (TaggedUnion[T1, T2], error) {
		return TaggedUnion[T1, T2]{Two: &v}, nil
	}, runtime.UID(name+"-input-2"), runtime.InputParallelism())
	key1, key2 := c.key1, c.key2
	keyed := runtime.KeyByCodec(runtime.Union(one, two), c.keyName, func(u TaggedUnion[T1, T2]) K {
		if u.One != nil {
			return key1(*u.One)
		}
		return key2(*u.Two)
	}, c.codec)
	ws := Of(keyed, w.assigner).ElementCodec(w.codec)
	if w.trigger != nil {
		ws = ws.Trigger(w.trigger)
	}
	if w.evictor != nil {
		ws = ws.Evictor(w.evictor)
	}
	if w.lateness != 0 {
		ws = ws.AllowedLateness(w.lateness)
	}
	return RichProcess[K, TaggedUnion[T1, T2], U](ws, name, &coGroupWindowFunc[K, T1, T2, U]{name: name, f: f}, opts...)
}

// coGroupWindowFunc is Flink's CoGroupWindowFunction: it splits a window's
// tagged elements into the two inputs' lists, in arrival order. Each
// subtask gets its own copy of f (at Open), opened when f is rich.
type coGroupWindowFunc[K, T1, T2, U any] struct {
	name string
	f    CoGroupFunction[T1, T2, U]
}

func (c *coGroupWindowFunc[K, T1, T2, U]) Open(ctx runtime.RuntimeContext) error {
	c.f = runtime.CloneFunc(c.f)
	if r, ok := c.f.(runtime.RichFunction); ok {
		return r.Open(ctx)
	}
	return nil
}

func (c *coGroupWindowFunc[K, T1, T2, U]) Close() error {
	if r, ok := c.f.(runtime.RichFunction); ok {
		return r.Close()
	}
	return nil
}

func (c *coGroupWindowFunc[K, T1, T2, U]) Process(ctx *Context[U], _ K, elems []TaggedUnion[T1, T2]) error {
	var first []T1
	var second []T2
	for _, e := range elems {
		switch {
		case e.One != nil:
			first = append(first, *e.One)
		case e.Two != nil:
			second = append(second, *e.Two)
		default:
			return fmt.Errorf("window %q: a window element belongs to neither input", c.name)
		}
	}
	return c.f.CoGroup(first, second, windowCollector[U]{ctx})
}

type windowCollector[U any] struct{ ctx *Context[U] }

func (c windowCollector[U]) Collect(v U) { c.ctx.Collect(v) }

// JoinApply emits f(a, b) for every pair of elements of the two inputs in
// the same key and window (Flink's JoinedStreams: a nested loop over the
// coGroup's lists, first input outside).
func JoinApply[K, T1, T2, U any](w *WindowedCoGroup[K, T1, T2], name string, f func(first T1, second T2) (U, error), opts ...runtime.Option) *runtime.Stream[U] {
	return RichJoinApply[K, T1, T2, U](w, name, joinFunc[T1, T2, U](f), opts...)
}

// RichJoinApply is JoinApply with a function value.
func RichJoinApply[K, T1, T2, U any](w *WindowedCoGroup[K, T1, T2], name string, f JoinFunction[T1, T2, U], opts ...runtime.Option) *runtime.Stream[U] {
	return RichCoGroupApply[K, T1, T2, U](w, name, &joinCoGroup[T1, T2, U]{join: f}, opts...)
}

// FlatJoinApply is JoinApply with a function that emits any number of
// records per pair.
func FlatJoinApply[K, T1, T2, U any](w *WindowedCoGroup[K, T1, T2], name string, f func(first T1, second T2, out runtime.Collector[U]) error, opts ...runtime.Option) *runtime.Stream[U] {
	return RichFlatJoinApply[K, T1, T2, U](w, name, flatJoinFunc[T1, T2, U](f), opts...)
}

// RichFlatJoinApply is FlatJoinApply with a function value.
func RichFlatJoinApply[K, T1, T2, U any](w *WindowedCoGroup[K, T1, T2], name string, f FlatJoinFunction[T1, T2, U], opts ...runtime.Option) *runtime.Stream[U] {
	return RichCoGroupApply[K, T1, T2, U](w, name, &joinCoGroup[T1, T2, U]{flat: f}, opts...)
}

// joinCoGroup is Flink's JoinCoGroupFunction and FlatJoinCoGroupFunction.
type joinCoGroup[T1, T2, U any] struct {
	join JoinFunction[T1, T2, U]
	flat FlatJoinFunction[T1, T2, U]
}

func (j *joinCoGroup[T1, T2, U]) fn() any {
	if j.flat != nil {
		return j.flat
	}
	return j.join
}

func (j *joinCoGroup[T1, T2, U]) Open(ctx runtime.RuntimeContext) error {
	if j.join != nil {
		j.join = runtime.CloneFunc(j.join)
	} else {
		j.flat = runtime.CloneFunc(j.flat)
	}
	if r, ok := j.fn().(runtime.RichFunction); ok {
		return r.Open(ctx)
	}
	return nil
}

func (j *joinCoGroup[T1, T2, U]) Close() error {
	if r, ok := j.fn().(runtime.RichFunction); ok {
		return r.Close()
	}
	return nil
}

func (j *joinCoGroup[T1, T2, U]) CoGroup(first []T1, second []T2, out runtime.Collector[U]) error {
	for _, a := range first {
		for _, b := range second {
			if j.flat != nil {
				if err := j.flat.Join(a, b, out); err != nil {
					return err
				}
				continue
			}
			v, err := j.join.Join(a, b)
			if err != nil {
				return err
			}
			out.Collect(v)
		}
	}
	return nil
}
