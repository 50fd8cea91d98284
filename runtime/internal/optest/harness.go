package optest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"streamdbg/runtime"
)

// Kind says what an emitted element is.
type Kind uint8

const (
	Record Kind = iota
	Watermark
	Status
)

// Element is one thing an operator emitted.
type Element struct {
	Kind         Kind
	Value        any
	Timestamp    int64
	HasTimestamp bool
	Watermark    int64
	Idle         bool
}

func (e Element) String() string {
	switch e.Kind {
	case Watermark:
		return fmt.Sprintf("Watermark(%d)", e.Watermark)
	case Status:
		if e.Idle {
			return "IDLE"
		}
		return "ACTIVE"
	}
	if e.HasTimestamp {
		return fmt.Sprintf("Record(%v @ %d)", e.Value, e.Timestamp)
	}
	return fmt.Sprintf("Record(%v)", e.Value)
}

// Rec is the element of a record with a timestamp.
func Rec(v any, ts int64) Element {
	return Element{Kind: Record, Value: v, Timestamp: ts, HasTimestamp: true}
}

// RecNoTS is the element of a record without a timestamp.
func RecNoTS(v any) Element { return Element{Kind: Record, Value: v} }

// WM is the element of a watermark.
func WM(wm int64) Element { return Element{Kind: Watermark, Watermark: wm} }

// Idle and Active are the elements of watermark status changes.
var (
	Idle   = Element{Kind: Status, Idle: true}
	Active = Element{Kind: Status}
)

// Config shapes the job around the operator.
type Config struct {
	// Channels is the number of input channels of the operator's subtask
	// (default 1).
	Channels int
	// Inputs splits the channels into several inputs (unioned), with that
	// many channels each; channels are numbered over all inputs in order.
	// It overrides Channels.
	Inputs []int
	// Backend is "heap" (default) or "pebble".
	Backend string
	// MaxParallelism sets the number of key groups (default 128).
	MaxParallelism int
	// Trace turns the executor's trace on.
	Trace bool
}

// Harness drives one job built around an operator under test. Elements it
// pushes go through a source and a router subtask per channel, so the
// operator's subtask receives them on the channel asked for, through its
// input queue and watermark valve.
type Harness[IN any] struct {
	t     testing.TB
	cfg   Config
	build func(h *Harness[IN], in *runtime.Stream[IN])
	exec  *runtime.Executor
	queue *[]envelope[IN]
	outs  map[string]*[]Element
	cpID  int64
}

type envelope[IN any] struct {
	ch    int
	kind  Kind
	v     IN
	ts    int64
	hasTS bool
	wm    int64
	idle  bool
}

// New builds the harness; build adds the operator under test to in (the
// routed input, not chained to it) and collects what it emits with Collect.
// The job starts at once.
func New[IN any](t testing.TB, cfg Config, build func(h *Harness[IN], in *runtime.Stream[IN])) *Harness[IN] {
	t.Helper()
	if len(cfg.Inputs) > 0 {
		cfg.Channels = 0
		for _, n := range cfg.Inputs {
			cfg.Channels += n
		}
	}
	if cfg.Channels <= 0 {
		cfg.Channels = 1
	}
	h := &Harness[IN]{t: t, cfg: cfg, build: build, queue: &[]envelope[IN]{}}
	if err := h.start(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func (h *Harness[IN]) job() (*runtime.Job, error) {
	job := runtime.NewJob("optest")
	if h.cfg.MaxParallelism > 0 {
		job.MaxParallelism = h.cfg.MaxParallelism
	}
	q := h.queue
	src := runtime.FromSource(job, "Source: harness", func() runtime.Source[envelope[IN]] { return &harnessSource[IN]{queue: q} },
		runtime.WatermarkStrategy[envelope[IN]]{}, runtime.UID("harness-source"), runtime.Parallelism(1))
	inputs := h.cfg.Inputs
	if len(inputs) == 0 {
		inputs = []int{h.cfg.Channels}
	}
	var routed []*runtime.Stream[IN]
	first := 0
	for i, n := range inputs {
		offset := first
		routed = append(routed, runtime.AddOperator[envelope[IN], IN](src.Broadcast(), fmt.Sprintf("router %d", i),
			func() runtime.Operator { return &router[IN]{first: offset} },
			runtime.UID(fmt.Sprintf("harness-router-%d", i)), runtime.Parallelism(n)))
		first += n
	}
	h.outs = map[string]*[]Element{}
	h.build(h, runtime.Union(routed[0], routed[1:]...).Rebalance())
	return job, job.Err()
}

func (h *Harness[IN]) start(from runtime.Restore) error {
	job, err := h.job()
	if err != nil {
		return err
	}
	backend := h.cfg.Backend
	if backend == "" {
		backend = "heap"
	}
	e, err := runtime.NewExecutor(job, runtime.Options{Parallelism: 1, Backend: backend, Trace: h.cfg.Trace}, from)
	if err != nil {
		return err
	}
	h.exec = e
	return nil
}

// Collect records what s emits under name ("" for the operator's main
// output); call it from build.
func Collect[T any, IN any](h *Harness[IN], name string, s *runtime.Stream[T]) {
	out := &[]Element{}
	h.outs[name] = out
	runtime.AddOperator[T, T](s, "collect "+name, func() runtime.Operator { return &collector{out: out} },
		runtime.UID("harness-collect-"+name))
}

// Executor is the running executor.
func (h *Harness[IN]) Executor() *runtime.Executor { return h.exec }

func (h *Harness[IN]) push(env envelope[IN]) error {
	if env.ch < 0 || env.ch >= h.cfg.Channels {
		return fmt.Errorf("optest: channel %d of %d", env.ch, h.cfg.Channels)
	}
	*h.queue = append(*h.queue, env)
	return h.exec.Next()
}

func (h *Harness[IN]) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

// ProcessElement sends v with timestamp ts on channel 0.
func (h *Harness[IN]) ProcessElement(v IN, ts int64) {
	h.t.Helper()
	h.must(h.TryProcessElement(0, v, ts, true))
}

// ProcessElementNoTS sends v without a timestamp on channel 0.
func (h *Harness[IN]) ProcessElementNoTS(v IN) {
	h.t.Helper()
	h.must(h.TryProcessElement(0, v, 0, false))
}

// TryProcessElement sends v on channel ch and returns the step's error.
func (h *Harness[IN]) TryProcessElement(ch int, v IN, ts int64, hasTS bool) error {
	return h.push(envelope[IN]{ch: ch, kind: Record, v: v, ts: ts, hasTS: hasTS})
}

// ProcessWatermark sends watermark wm on channel 0.
func (h *Harness[IN]) ProcessWatermark(wm int64) {
	h.t.Helper()
	h.ProcessWatermarkOn(0, wm)
}

// ProcessWatermarkOn sends watermark wm on channel ch.
func (h *Harness[IN]) ProcessWatermarkOn(ch int, wm int64) {
	h.t.Helper()
	h.must(h.push(envelope[IN]{ch: ch, kind: Watermark, wm: wm}))
}

// ProcessStatus sends a watermark status on channel ch.
func (h *Harness[IN]) ProcessStatus(ch int, idle bool) {
	h.t.Helper()
	h.must(h.push(envelope[IN]{ch: ch, kind: Status, idle: idle}))
}

// SetProcessingTime moves the virtual processing clock to t (epoch ms).
func (h *Harness[IN]) SetProcessingTime(t int64) {
	h.t.Helper()
	if d := t - h.exec.ProcessingTime(); d > 0 {
		h.must(h.exec.AdvanceProcessingTime(time.Duration(d) * time.Millisecond))
	}
}

// Output returns what the output called name emitted so far.
func (h *Harness[IN]) Output(name string) []Element {
	out, ok := h.outs[name]
	if !ok {
		return nil
	}
	return *out
}

// Snapshot takes a checkpoint of every operator.
func (h *Harness[IN]) Snapshot() *runtime.Checkpoint {
	h.t.Helper()
	h.cpID++
	cp, err := h.exec.Checkpoint(h.cpID)
	h.must(err)
	return cp
}

// Restore closes the running job and starts a new one from cp, as a new
// Flink harness initialized from a snapshot: outputs start empty.
func (h *Harness[IN]) Restore(cp *runtime.Checkpoint) {
	h.t.Helper()
	h.must(h.exec.Close())
	h.must(h.start(cp))
}

// Close closes the running job (its operators' Close is called).
func (h *Harness[IN]) Close() error {
	if h.exec == nil {
		return nil
	}
	err := h.exec.Close()
	h.exec = nil
	return err
}

// harnessSource hands out what the harness queued, one event per Next.
type harnessSource[IN any] struct{ queue *[]envelope[IN] }

func (s *harnessSource[IN]) Next() (runtime.SourceEvent[envelope[IN]], bool, error) {
	if len(*s.queue) == 0 {
		return runtime.SourceEvent[envelope[IN]]{}, false, errors.New("optest: nothing queued")
	}
	env := (*s.queue)[0]
	*s.queue = (*s.queue)[1:]
	return runtime.SourceEvent[envelope[IN]]{Value: env}, true, nil
}

// router forwards what is addressed to its subtask: it is that channel
// (first + its subtask index).
type router[IN any] struct{ first int }

func (*router[IN]) Open(*runtime.OperatorContext) error { return nil }
func (*router[IN]) Close() error                        { return nil }
func (*router[IN]) OwnsWatermarks() bool                { return true }

func (rt *router[IN]) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	env := r.Value.(envelope[IN])
	if env.ch != rt.first+ctx.SubtaskIndex() {
		return nil
	}
	switch env.kind {
	case Watermark:
		ctx.EmitWatermark(env.wm)
	case Status:
		ctx.EmitWatermarkStatus(env.idle)
	default:
		if env.hasTS {
			ctx.EmitAt(env.v, env.ts)
		} else {
			ctx.Emit(env.v) // the source's record has no timestamp either
		}
	}
	return nil
}

// collector records every element reaching it.
type collector struct{ out *[]Element }

func (*collector) Open(*runtime.OperatorContext) error { return nil }
func (*collector) Close() error                        { return nil }

func (c *collector) ProcessElement(_ *runtime.OperatorContext, r runtime.Record) error {
	*c.out = append(*c.out, Element{Kind: Record, Value: r.Value, Timestamp: r.Timestamp, HasTimestamp: r.HasTimestamp})
	return nil
}

func (c *collector) ProcessWatermark(_ *runtime.OperatorContext, wm int64) error {
	*c.out = append(*c.out, WM(wm))
	return nil
}

func (c *collector) ProcessWatermarkStatus(_ *runtime.OperatorContext, idle bool) error {
	*c.out = append(*c.out, Element{Kind: Status, Idle: idle})
	return nil
}
