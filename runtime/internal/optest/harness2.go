package optest

import (
	"fmt"
	"iter"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/state"
)

// Config2 shapes the job around a two-input operator.
type Config2 struct {
	// Backend is "heap" (default) or "pebble".
	Backend string
	// MaxParallelism sets the number of key groups (default 128).
	MaxParallelism int
	// Parallelism is the parallelism of the operator under test (default
	// 1).
	Parallelism int
	// Channels is the number of channels of each input (default 1): that
	// many router subtasks per input.
	Channels int
	// Trace turns the executor's trace on.
	Trace bool
}

// Harness2 drives a job built around a two-input operator, as Flink's
// TwoInputStreamOperatorTestHarness (and its keyed variant) drives one:
// elements pushed on input 1 or 2 go through a router subtask of that
// input, a network edge (keyed or not, as build connects them) and the
// operator's subtask input queue and valves.
type Harness2[IN1, IN2 any] struct {
	t     testing.TB
	cfg   Config2
	build func(h *Harness2[IN1, IN2], in1 *runtime.Stream[IN1], in2 *runtime.Stream[IN2])
	exec  *runtime.Executor
	queue *[]envelope2[IN1, IN2]
	outs  map[string]*[]SubtaskElement
	cpID  int64
}

// SubtaskElement is an emitted element with the subtask that emitted it.
type SubtaskElement struct {
	Element
	Subtask int
}

type envelope2[IN1, IN2 any] struct {
	input int // 1 or 2
	ch    int // the channel of that input
	kind  Kind
	v1    IN1
	v2    IN2
	ts    int64
	hasTS bool
	wm    int64
	idle  bool
}

// New2 builds the harness; build connects in1 and in2 (the routed inputs,
// never chained to the operator) into the operator under test and collects
// what it emits with Collect2. The job starts at once.
func New2[IN1, IN2 any](t testing.TB, cfg Config2, build func(h *Harness2[IN1, IN2], in1 *runtime.Stream[IN1], in2 *runtime.Stream[IN2])) *Harness2[IN1, IN2] {
	t.Helper()
	h := &Harness2[IN1, IN2]{t: t, cfg: cfg, build: build, queue: &[]envelope2[IN1, IN2]{}}
	if err := h.start(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func (h *Harness2[IN1, IN2]) job() (*runtime.Job, error) {
	job := runtime.NewJob("optest2")
	if h.cfg.MaxParallelism > 0 {
		job.MaxParallelism = h.cfg.MaxParallelism
	}
	q := h.queue
	src := runtime.FromSource(job, "Source: harness", func() runtime.Source[envelope2[IN1, IN2]] { return &harnessSource2[IN1, IN2]{queue: q} },
		runtime.WatermarkStrategy[envelope2[IN1, IN2]]{}, runtime.UID("harness-source"), runtime.Parallelism(1))
	channels := max(1, h.cfg.Channels)
	in1 := runtime.AddOperator[envelope2[IN1, IN2], IN1](src.Broadcast(), "router 1",
		func() runtime.Operator {
			return &router2[IN1, IN2, IN1]{input: 1, get: func(e envelope2[IN1, IN2]) IN1 { return e.v1 }}
		}, runtime.UID("harness-router-1"), runtime.Parallelism(channels))
	in2 := runtime.AddOperator[envelope2[IN1, IN2], IN2](src.Broadcast(), "router 2",
		func() runtime.Operator {
			return &router2[IN1, IN2, IN2]{input: 2, get: func(e envelope2[IN1, IN2]) IN2 { return e.v2 }}
		}, runtime.UID("harness-router-2"), runtime.Parallelism(channels))
	h.outs = map[string]*[]SubtaskElement{}
	h.build(h, in1.Rebalance(), in2.Rebalance())
	return job, job.Err()
}

func (h *Harness2[IN1, IN2]) start(from runtime.Restore) error {
	job, err := h.job()
	if err != nil {
		return err
	}
	backend := h.cfg.Backend
	if backend == "" {
		backend = "heap"
	}
	p := h.cfg.Parallelism
	if p <= 0 {
		p = 1
	}
	e, err := runtime.NewExecutor(job, runtime.Options{Parallelism: p, Backend: backend, Trace: h.cfg.Trace}, from)
	if err != nil {
		return err
	}
	h.exec = e
	return nil
}

// Collect2 records what s emits under name ("" for the operator's main
// output), with the emitting subtask; call it from build. The collector is
// chained to the operator (same parallelism).
func Collect2[T, IN1, IN2 any](h *Harness2[IN1, IN2], name string, s *runtime.Stream[T]) {
	out := &[]SubtaskElement{}
	h.outs[name] = out
	runtime.AddOperator[T, T](s, "collect "+name, func() runtime.Operator { return &collector2{out: out} },
		runtime.UID("harness-collect-"+name))
}

// Executor is the running executor.
func (h *Harness2[IN1, IN2]) Executor() *runtime.Executor { return h.exec }

func (h *Harness2[IN1, IN2]) push(env envelope2[IN1, IN2]) error {
	if env.ch < 0 || env.ch >= max(1, h.cfg.Channels) {
		return fmt.Errorf("optest: channel %d of %d", env.ch, max(1, h.cfg.Channels))
	}
	*h.queue = append(*h.queue, env)
	return h.exec.Next()
}

func (h *Harness2[IN1, IN2]) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

// ProcessElement1 sends v with timestamp ts on input 1.
func (h *Harness2[IN1, IN2]) ProcessElement1(v IN1, ts int64) {
	h.t.Helper()
	h.must(h.TryProcessElement1(v, ts, true))
}

// ProcessElement1NoTS sends v without a timestamp on input 1.
func (h *Harness2[IN1, IN2]) ProcessElement1NoTS(v IN1) {
	h.t.Helper()
	h.must(h.TryProcessElement1(v, 0, false))
}

// TryProcessElement1 sends v on input 1 and returns the step's error.
func (h *Harness2[IN1, IN2]) TryProcessElement1(v IN1, ts int64, hasTS bool) error {
	return h.push(envelope2[IN1, IN2]{input: 1, kind: Record, v1: v, ts: ts, hasTS: hasTS})
}

// ProcessElement2 sends v with timestamp ts on input 2.
func (h *Harness2[IN1, IN2]) ProcessElement2(v IN2, ts int64) {
	h.t.Helper()
	h.must(h.TryProcessElement2(v, ts, true))
}

// ProcessElement2NoTS sends v without a timestamp on input 2.
func (h *Harness2[IN1, IN2]) ProcessElement2NoTS(v IN2) {
	h.t.Helper()
	h.must(h.TryProcessElement2(v, 0, false))
}

// TryProcessElement2 sends v on input 2 and returns the step's error.
func (h *Harness2[IN1, IN2]) TryProcessElement2(v IN2, ts int64, hasTS bool) error {
	return h.push(envelope2[IN1, IN2]{input: 2, kind: Record, v2: v, ts: ts, hasTS: hasTS})
}

// ProcessWatermark1 sends watermark wm on input 1.
func (h *Harness2[IN1, IN2]) ProcessWatermark1(wm int64) {
	h.t.Helper()
	h.must(h.push(envelope2[IN1, IN2]{input: 1, kind: Watermark, wm: wm}))
}

// ProcessWatermark2 sends watermark wm on input 2.
func (h *Harness2[IN1, IN2]) ProcessWatermark2(wm int64) {
	h.t.Helper()
	h.must(h.push(envelope2[IN1, IN2]{input: 2, kind: Watermark, wm: wm}))
}

// ProcessWatermarkOn sends watermark wm on channel ch of input (1 or 2).
func (h *Harness2[IN1, IN2]) ProcessWatermarkOn(input, ch int, wm int64) {
	h.t.Helper()
	h.must(h.push(envelope2[IN1, IN2]{input: input, ch: ch, kind: Watermark, wm: wm}))
}

// ProcessStatus sends a watermark status on channel ch of input (1 or 2).
func (h *Harness2[IN1, IN2]) ProcessStatus(input, ch int, idle bool) {
	h.t.Helper()
	h.must(h.push(envelope2[IN1, IN2]{input: input, ch: ch, kind: Status, idle: idle}))
}

// TryProcessElementOn sends a record on channel ch of input: v1 on input
// 1, v2 on input 2.
func (h *Harness2[IN1, IN2]) TryProcessElementOn(input, ch int, v1 IN1, v2 IN2, ts int64) error {
	return h.push(envelope2[IN1, IN2]{input: input, ch: ch, kind: Record, v1: v1, v2: v2, ts: ts, hasTS: true})
}

// SetProcessingTime moves the virtual processing clock to t (epoch ms).
func (h *Harness2[IN1, IN2]) SetProcessingTime(t int64) {
	h.t.Helper()
	if d := t - h.exec.ProcessingTime(); d > 0 {
		h.must(h.exec.AdvanceProcessingTime(time.Duration(d) * time.Millisecond))
	}
}

// Output returns what the output called name emitted so far, all
// subtasks in emission order.
func (h *Harness2[IN1, IN2]) Output(name string) []Element {
	out, ok := h.outs[name]
	if !ok {
		return nil
	}
	es := make([]Element, len(*out))
	for i, e := range *out {
		es[i] = e.Element
	}
	return es
}

// SubtaskOutput returns what subtask i of the output called name emitted.
func (h *Harness2[IN1, IN2]) SubtaskOutput(name string, i int) []Element {
	out, ok := h.outs[name]
	if !ok {
		return nil
	}
	var es []Element
	for _, e := range *out {
		if e.Subtask == i {
			es = append(es, e.Element)
		}
	}
	return es
}

// KeyedEntries yields the keyed entries of one state of the operator
// called op, over all its subtasks.
func (h *Harness2[IN1, IN2]) KeyedEntries(op, stateName string) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		for _, sv := range h.exec.Subtasks() {
			for _, ov := range sv.Operators {
				if ov.Info.Name != op || ov.Keyed == nil {
					continue
				}
				for kg := sv.KeyGroups.Start; kg <= sv.KeyGroups.End; kg++ {
					for en, err := range ov.Keyed.Entries(kg, stateName) {
						if !yield(en, err) || err != nil {
							return
						}
					}
				}
			}
		}
	}
}

// Snapshot takes a checkpoint of every operator.
func (h *Harness2[IN1, IN2]) Snapshot() *runtime.Checkpoint {
	h.t.Helper()
	h.cpID++
	cp, err := h.exec.Checkpoint(h.cpID)
	h.must(err)
	return cp
}

// Restore closes the running job and starts a new one from cp at operator
// parallelism p (0: the configured one), as new Flink harnesses
// initialized from a (repartitioned) snapshot: outputs start empty.
func (h *Harness2[IN1, IN2]) Restore(cp *runtime.Checkpoint, p int) {
	h.t.Helper()
	h.must(h.exec.Close())
	if p > 0 {
		h.cfg.Parallelism = p
	}
	h.must(h.start(cp))
}

// Close closes the running job (its operators' Close is called).
func (h *Harness2[IN1, IN2]) Close() error {
	if h.exec == nil {
		return nil
	}
	err := h.exec.Close()
	h.exec = nil
	return err
}

type harnessSource2[IN1, IN2 any] struct{ queue *[]envelope2[IN1, IN2] }

func (s *harnessSource2[IN1, IN2]) Next() (runtime.SourceEvent[envelope2[IN1, IN2]], bool, error) {
	if len(*s.queue) == 0 {
		return runtime.SourceEvent[envelope2[IN1, IN2]]{}, false, fmt.Errorf("optest: nothing queued")
	}
	env := (*s.queue)[0]
	*s.queue = (*s.queue)[1:]
	return runtime.SourceEvent[envelope2[IN1, IN2]]{Value: env}, true, nil
}

// router2 forwards what is addressed to its input.
type router2[IN1, IN2, T any] struct {
	input int
	get   func(envelope2[IN1, IN2]) T
}

func (*router2[IN1, IN2, T]) Open(*runtime.OperatorContext) error { return nil }
func (*router2[IN1, IN2, T]) Close() error                        { return nil }
func (*router2[IN1, IN2, T]) OwnsWatermarks() bool                { return true }

func (rt *router2[IN1, IN2, T]) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	env := r.Value.(envelope2[IN1, IN2])
	if env.input != rt.input || env.ch != ctx.SubtaskIndex() {
		return nil
	}
	switch env.kind {
	case Watermark:
		ctx.EmitWatermark(env.wm)
	case Status:
		ctx.EmitWatermarkStatus(env.idle)
	default:
		if env.hasTS {
			ctx.EmitAt(rt.get(env), env.ts)
		} else {
			ctx.Emit(rt.get(env))
		}
	}
	return nil
}

// collector2 records every element reaching it with its subtask.
type collector2 struct {
	out *[]SubtaskElement
}

func (*collector2) Open(*runtime.OperatorContext) error { return nil }
func (*collector2) Close() error                        { return nil }

func (c *collector2) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	*c.out = append(*c.out, SubtaskElement{Element: Element{Kind: Record, Value: r.Value, Timestamp: r.Timestamp, HasTimestamp: r.HasTimestamp}, Subtask: ctx.SubtaskIndex()})
	return nil
}

func (c *collector2) ProcessWatermark(ctx *runtime.OperatorContext, wm int64) error {
	*c.out = append(*c.out, SubtaskElement{Element: WM(wm), Subtask: ctx.SubtaskIndex()})
	return nil
}

func (c *collector2) ProcessWatermarkStatus(ctx *runtime.OperatorContext, idle bool) error {
	*c.out = append(*c.out, SubtaskElement{Element: Element{Kind: Status, Idle: idle}, Subtask: ctx.SubtaskIndex()})
	return nil
}
