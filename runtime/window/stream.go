package window

import (
	"errors"
	"fmt"
	"time"

	"streamdbg/runtime"
	"streamdbg/state"
)

// WindowedStream is a keyed stream cut into windows, waiting for its
// window function (Reduce, Aggregate, Process and their *Process forms).
type WindowedStream[K, T any] struct {
	in       *runtime.KeyedStream[K, T]
	cfg      config
	codec    state.Codec[T]
	lateness time.Duration
	errs     []error
}

// Of windows a keyed stream with an assigner. The trigger defaults to the
// assigner's; the elements are encoded as JSON unless ElementCodec says
// otherwise.
func Of[K, T any](ks *runtime.KeyedStream[K, T], a Assigner) *WindowedStream[K, T] {
	ws := &WindowedStream[K, T]{in: ks, codec: state.JSON[T]()}
	ws.cfg.assigner = a
	if a == nil {
		ws.errs = append(ws.errs, errors.New("no window assigner"))
		return ws
	}
	if err := a.Validate(); err != nil {
		ws.errs = append(ws.errs, err)
	}
	ws.cfg.trigger = a.DefaultTrigger()
	ws.cfg.merging, _ = a.(MergingAssigner)
	return ws
}

// Trigger replaces the assigner's default trigger.
func (ws *WindowedStream[K, T]) Trigger(t Trigger) *WindowedStream[K, T] {
	ws.cfg.trigger = t
	return ws
}

// Evictor removes elements before or after the window function; the
// window then keeps every element (window-contents is a list).
func (ws *WindowedStream[K, T]) Evictor(e Evictor) *WindowedStream[K, T] {
	ws.cfg.evictor = e
	return ws
}

// AllowedLateness keeps event-time windows for d after the watermark
// passed their end: elements within it fire the window again.
func (ws *WindowedStream[K, T]) AllowedLateness(d time.Duration) *WindowedStream[K, T] {
	ws.lateness = d
	if d < 0 {
		ws.errs = append(ws.errs, fmt.Errorf("allowed lateness %s must not be negative", d))
	} else {
		ws.cfg.lateness = d.Milliseconds()
	}
	return ws
}

// SideOutputLateData sends elements too late for all their windows to the
// side output tag instead of dropping them.
func (ws *WindowedStream[K, T]) SideOutputLateData(tag runtime.OutputTag[T]) *WindowedStream[K, T] {
	if tag.ID == "" {
		ws.errs = append(ws.errs, errors.New("the late data output tag has no name"))
	}
	ws.cfg.lateTag, ws.cfg.hasLate = tag.ID, true
	return ws
}

// ElementCodec sets how elements are stored when the window keeps them
// (Process, evictors, Reduce).
func (ws *WindowedStream[K, T]) ElementCodec(c state.Codec[T]) *WindowedStream[K, T] {
	ws.codec = c
	return ws
}

// Context is what a window function sees besides the key and elements.
type Context[OUT any] struct {
	op *runtime.OperatorContext
	w  Window
}

// WindowState declares keyed state of the current key for this window only
// (Flink's ProcessWindowFunction.Context.windowState): bind descriptors to
// it, e.g. state.Value("fires", state.Int64).Bind(ctx.WindowState()). Drop
// it in Clear (WindowClearer) when the window is cleaned up.
func (c *Context[OUT]) WindowState() state.Registry {
	return windowRegistry{oc: c.op, ns: encode(c.w)}
}

// GlobalState declares keyed state of the current key shared by all its
// windows (Flink's Context.globalState).
func (c *Context[OUT]) GlobalState() state.Registry { return c.op }

// WindowClearer is a ProcessWindowFunction with per-window state: Clear is
// called when a window is cleaned up (Flink's ProcessWindowFunction.clear).
type WindowClearer[OUT any] interface {
	Clear(ctx *Context[OUT]) error
}

// Window is the window that fired.
func (c *Context[OUT]) Window() Window { return c.w }

// Collect emits a record with the window's max timestamp.
func (c *Context[OUT]) Collect(v OUT) { c.op.EmitAt(v, c.w.MaxTimestamp()) }

// Output emits v to the side output tag with the window's max timestamp,
// as Collect (Flink's WindowOperator.WindowContext.output).
func (c *Context[OUT]) Output(tag string, v any) { c.op.EmitSideAt(tag, v, c.w.MaxTimestamp()) }

// CurrentWatermark is the operator's event time.
func (c *Context[OUT]) CurrentWatermark() int64 { return c.op.Watermark() }

// CurrentProcessingTime is the virtual processing clock.
func (c *Context[OUT]) CurrentProcessingTime() int64 { return c.op.ProcessingTime() }

// Runtime gives the function its runtime context.
func (c *Context[OUT]) Runtime() runtime.RuntimeContext { return c.op }

// ProcessWindowFunction computes a window's output from its key and its
// elements (for Reduce and Aggregate: the one reduced or aggregated value).
// A function that implements runtime.RichFunction is opened per subtask.
type ProcessWindowFunction[K, IN, OUT any] interface {
	Process(ctx *Context[OUT], key K, elements []IN) error
}

// The constructors come in two forms, as runtime's: Process,
// ReduceProcess and AggregateProcess take a plain function and infer its
// types; RichProcess, RichReduceProcess and RichAggregateProcess take a
// function value (a ProcessWindowFunction that may also be a
// runtime.RichFunction, a WindowClearer), copied for each subtask.

type processFunc[K, IN, OUT any] func(ctx *Context[OUT], key K, elements []IN) error

func (f processFunc[K, IN, OUT]) Process(ctx *Context[OUT], key K, elements []IN) error {
	return f(ctx, key, elements)
}

func passThrough[K, V any]() ProcessWindowFunction[K, V, V] {
	return processFunc[K, V, V](func(ctx *Context[V], _ K, vs []V) error {
		for _, v := range vs {
			ctx.Collect(v)
		}
		return nil
	})
}

// Reduce folds each window's elements with reduce and emits the result.
func Reduce[K, T any](ws *WindowedStream[K, T], name string, reduce func(a, b T) T, opts ...runtime.Option) *runtime.Stream[T] {
	return RichReduceProcess(ws, name, reduce, passThrough[K, T](), opts...)
}

// ReduceProcess folds each window's elements with reduce and hands the
// result to f with the window.
func ReduceProcess[K, T, OUT any](ws *WindowedStream[K, T], name string, reduce func(a, b T) T, f func(ctx *Context[OUT], key K, reduced []T) error, opts ...runtime.Option) *runtime.Stream[OUT] {
	return RichReduceProcess[K, T, OUT](ws, name, reduce, processFunc[K, T, OUT](f), opts...)
}

// RichReduceProcess is ReduceProcess with a function value.
func RichReduceProcess[K, T, OUT any](ws *WindowedStream[K, T], name string, reduce func(a, b T) T, pf ProcessWindowFunction[K, T, OUT], opts ...runtime.Option) *runtime.Stream[OUT] {
	c := contents[T, T]{
		desc: state.Reducing(ContentsState, ws.codec, reduce).Desc(),
		add: func(t state.Table, ns []byte, v T) error {
			old, ok, err := t.Get(ns)
			if err != nil {
				return err
			}
			if ok {
				v = reduce(old.(T), v)
			}
			return t.Put(ns, v)
		},
		get: func(t state.Table, ns []byte) ([]T, bool, error) {
			v, ok, err := t.Get(ns)
			if !ok || err != nil {
				return nil, false, err
			}
			return []T{v.(T)}, true, nil
		},
		fold: func(es []T) []T {
			if len(es) == 0 {
				return nil
			}
			acc := es[0]
			for _, e := range es[1:] {
				acc = reduce(acc, e)
			}
			return []T{acc}
		},
	}
	return build(ws, name, c, pf, opts)
}

// Aggregate adds each window's elements to an accumulator of f (encoded
// with acc) and emits f's result.
func Aggregate[K, T, ACC, V any](ws *WindowedStream[K, T], name string, f state.AggregateFunction[T, ACC, V], acc state.Codec[ACC], opts ...runtime.Option) *runtime.Stream[V] {
	return RichAggregateProcess(ws, name, f, acc, passThrough[K, V](), opts...)
}

// AggregateProcess aggregates each window's elements with f and hands the
// result to process with the window.
func AggregateProcess[K, T, ACC, V, OUT any](ws *WindowedStream[K, T], name string, f state.AggregateFunction[T, ACC, V], acc state.Codec[ACC], process func(ctx *Context[OUT], key K, results []V) error, opts ...runtime.Option) *runtime.Stream[OUT] {
	return RichAggregateProcess[K, T, ACC, V, OUT](ws, name, f, acc, processFunc[K, V, OUT](process), opts...)
}

// RichAggregateProcess is AggregateProcess with a function value.
func RichAggregateProcess[K, T, ACC, V, OUT any](ws *WindowedStream[K, T], name string, f state.AggregateFunction[T, ACC, V], acc state.Codec[ACC], pf ProcessWindowFunction[K, V, OUT], opts ...runtime.Option) *runtime.Stream[OUT] {
	c := contents[T, V]{
		desc: state.Aggregating(ContentsState, acc, f).Desc(),
		add: func(t state.Table, ns []byte, v T) error {
			old, ok, err := t.Get(ns)
			if err != nil {
				return err
			}
			a := f.CreateAccumulator()
			if ok {
				a = old.(ACC)
			}
			return t.Put(ns, f.Add(v, a))
		},
		get: func(t state.Table, ns []byte) ([]V, bool, error) {
			v, ok, err := t.Get(ns)
			if !ok || err != nil {
				return nil, false, err
			}
			return []V{f.Result(v.(ACC))}, true, nil
		},
		fold: func(es []T) []V {
			a := f.CreateAccumulator()
			for _, e := range es {
				a = f.Add(e, a)
			}
			return []V{f.Result(a)}
		},
	}
	return build(ws, name, c, pf, opts)
}

// Process hands all elements of a window to f when it fires; the window
// keeps them in list state.
func Process[K, T, OUT any](ws *WindowedStream[K, T], name string, f func(ctx *Context[OUT], key K, elements []T) error, opts ...runtime.Option) *runtime.Stream[OUT] {
	return RichProcess[K, T, OUT](ws, name, processFunc[K, T, OUT](f), opts...)
}

// RichProcess is Process with a function value.
func RichProcess[K, T, OUT any](ws *WindowedStream[K, T], name string, pf ProcessWindowFunction[K, T, OUT], opts ...runtime.Option) *runtime.Stream[OUT] {
	c := contents[T, T]{
		desc: state.List(ContentsState, ws.codec).Desc(),
		add:  func(t state.Table, ns []byte, v T) error { return t.ListAppend(ns, v) },
		get: func(t state.Table, ns []byte) ([]T, bool, error) {
			vs, err := t.ListGet(ns)
			if len(vs) == 0 || err != nil {
				return nil, false, err
			}
			out := make([]T, len(vs))
			for i, v := range vs {
				out[i] = v.(T)
			}
			return out, true, nil
		},
		fold: func(es []T) []T { return es },
	}
	return build(ws, name, c, pf, opts)
}

// contents is how a window function keeps elements of type T and what it
// passes on (V): without an evictor desc/add/get, with one a list of
// timestamped elements folded at firing time.
type contents[T, V any] struct {
	desc state.StateDesc
	add  func(t state.Table, ns []byte, v T) error
	get  func(t state.Table, ns []byte) ([]V, bool, error)
	fold func(es []T) []V
}

func build[K, T, V, OUT any](ws *WindowedStream[K, T], name string, c contents[T, V], pf ProcessWindowFunction[K, V, OUT], opts []runtime.Option) *runtime.Stream[OUT] {
	job := ws.in.Job()
	errs := ws.errs
	if ws.cfg.trigger == nil && ws.cfg.assigner != nil {
		errs = append(errs, errors.New("no trigger"))
	}
	if ws.cfg.merging != nil && ws.cfg.trigger != nil && !ws.cfg.trigger.CanMerge() {
		errs = append(errs, fmt.Errorf("trigger %s cannot merge, but %s merges windows", ws.cfg.trigger, ws.cfg.assigner))
	}
	if err := errors.Join(errs...); err != nil {
		job.Fail(fmt.Errorf("window operator %q: %w", name, err))
	}
	cfg := ws.cfg
	codec := ws.codec
	out := runtime.AddOperator[T, OUT](ws.in, name, func() runtime.Operator {
		f := &typedFunc[K, T, V, OUT]{c: c, pf: runtime.CloneFunc(pf), evicting: cfg.evictor != nil, evictor: cfg.evictor, codec: codec}
		return &operator{cfg: cfg, fn: f}
	}, opts...)
	runtime.SetTimerNamespace(out, windowNS)
	return out
}

// typedFunc is the windowFunc of one typed window function.
type typedFunc[K, T, V, OUT any] struct {
	c        contents[T, V]
	pf       ProcessWindowFunction[K, V, OUT]
	evicting bool
	evictor  Evictor
	codec    state.Codec[T]
	ctx      Context[OUT]
}

func (f *typedFunc[K, T, V, OUT]) userFunction() any { return f.pf }

func (f *typedFunc[K, T, V, OUT]) desc() state.StateDesc {
	if f.evicting {
		return state.List(ContentsState, state.Codec[Timestamped[T]](timestampedCodec[T]{f.codec})).Desc()
	}
	return f.c.desc
}

func (f *typedFunc[K, T, V, OUT]) add(t state.Table, ns []byte, r runtime.Record) error {
	v, ok := r.Value.(T)
	if !ok {
		return fmt.Errorf("window input: got %T", r.Value)
	}
	if f.evicting {
		return t.ListAppend(ns, Timestamped[T]{Value: v, Timestamp: r.Timestamp, HasTS: r.HasTimestamp})
	}
	return f.c.add(t, ns, v)
}

func (f *typedFunc[K, T, V, OUT]) clear(o *operator, w Window) error {
	c, ok := f.pf.(WindowClearer[OUT])
	if !ok {
		return nil
	}
	f.ctx = Context[OUT]{op: o.oc, w: w}
	return c.Clear(&f.ctx)
}

func (f *typedFunc[K, T, V, OUT]) fire(o *operator, w Window, t state.Table, ns []byte) (bool, error) {
	var vals []V
	var kept []Element
	n := 0
	if f.evicting {
		list, err := t.ListGet(ns)
		if err != nil || len(list) == 0 {
			return false, err
		}
		elems := make([]Element, len(list))
		for i, x := range list {
			e := x.(Timestamped[T])
			elems[i] = Element{Value: e.Value, Timestamp: e.Timestamp, HasTimestamp: e.HasTS}
		}
		kept = f.evictor.EvictBefore(elems, w)
		ts := make([]T, len(kept))
		for i, e := range kept {
			ts[i] = e.Value.(T)
		}
		n = len(ts)
		vals = f.c.fold(ts)
	} else {
		var ok bool
		var err error
		if vals, ok, err = f.c.get(t, ns); !ok || err != nil {
			return false, err
		}
		n = len(vals)
	}
	key, ok := o.oc.CurrentKey().(K)
	if !ok {
		return false, fmt.Errorf("window operator %q: current key %v is not a %T", o.oc.OperatorName(), o.oc.CurrentKey(), key)
	}
	o.traceFired(w, n)
	f.ctx = Context[OUT]{op: o.oc, w: w}
	if err := f.pf.Process(&f.ctx, key, vals); err != nil {
		return true, err
	}
	if !f.evicting {
		return true, nil
	}
	kept = f.evictor.EvictAfter(kept, w)
	rest := make([]any, len(kept))
	for i, e := range kept {
		rest[i] = Timestamped[T]{Value: e.Value.(T), Timestamp: e.Timestamp, HasTS: e.HasTimestamp}
	}
	// Lists only append: rewrite the survivors (Flink's FLINK-4369 fix).
	if len(rest) == 0 {
		return true, t.Clear(ns)
	}
	return true, t.ListPut(ns, rest)
}

func (f *typedFunc[K, T, V, OUT]) open(ctx *runtime.OperatorContext) error {
	if r, ok := f.pf.(runtime.RichFunction); ok {
		return r.Open(ctx)
	}
	return nil
}

func (f *typedFunc[K, T, V, OUT]) close() error {
	if r, ok := f.pf.(runtime.RichFunction); ok {
		return r.Close()
	}
	return nil
}
