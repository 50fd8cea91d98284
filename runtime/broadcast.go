package runtime

import (
	"bytes"
	"fmt"
	"slices"

	"streamdbg/state"
)

// BroadcastStream is a stream sent whole to every subtask of the operator
// it is connected to, with the broadcast states that operator keeps
// (Flink's BroadcastStream). Connect another stream to it and process the
// two with BroadcastProcess or KeyedBroadcastProcess.
type BroadcastStream[T any] struct {
	in     *Stream[T]
	states []state.StateDesc
}

// StateDescriber is a state descriptor with its types erased: the typed
// descriptors of package state (state.Map, state.Value, ...) are.
type StateDescriber interface {
	Desc() state.StateDesc
}

// Broadcast makes s a broadcast stream whose operator keeps the given
// broadcast states: map states (state.Map descriptors) held whole by every
// subtask, in operator state. Only the broadcast side may write them.
func Broadcast[T any](s *Stream[T], states ...StateDescriber) *BroadcastStream[T] {
	b := &BroadcastStream[T]{in: s}
	for _, d := range states {
		sd := d.Desc()
		if sd.Meta.Kind != state.KindMap {
			s.job.fail(fmt.Errorf("runtime: Broadcast: state %q is a %s state: broadcast state is a map (declare it with state.Map)", sd.Meta.StateName, sd.Meta.Kind))
			continue
		}
		if slices.ContainsFunc(b.states, func(o state.StateDesc) bool { return o.Meta.StateName == sd.Meta.StateName }) {
			s.job.fail(fmt.Errorf("runtime: Broadcast: state %q declared twice", sd.Meta.StateName))
			continue
		}
		b.states = append(b.states, sd)
	}
	return b
}

func (b *BroadcastStream[T]) elements(*T) {}

func (b *BroadcastStream[T]) connectInput() inputSpec {
	return inputSpec{job: b.in.job, refs: b.in.refs, part: broadcast, label: "broadcast", states: b.states, bcast: true}
}

// BroadcastProcessFunction processes a non-keyed stream connected to a
// broadcast stream (Flink's BroadcastProcessFunction): ProcessElement sees
// the broadcast state read-only, ProcessBroadcastElement may change it.
// Every subtask sees every broadcast element and must change its broadcast
// state alike: on a rescale each subtask takes the state of one old
// subtask.
type BroadcastProcessFunction[T1, T2, U any] interface {
	ProcessElement(ctx *ReadOnlyBroadcastContext[U], in T1) error
	ProcessBroadcastElement(ctx *BroadcastContext[U], in T2) error
}

// KeyedBroadcastProcessFunction processes a keyed stream connected to a
// broadcast stream (Flink's KeyedBroadcastProcessFunction). ProcessElement
// runs under the record's key with keyed state and timers and reads the
// broadcast state; ProcessBroadcastElement runs with no key: it may change
// the broadcast state and reach keyed state only through
// KeyedBroadcastContext.ApplyToKeyedState. One that implements
// KeyedBroadcastOnTimerFunction gets its timers.
type KeyedBroadcastProcessFunction[K, T1, T2, U any] interface {
	ProcessElement(ctx *KeyedReadOnlyBroadcastContext[K, U], in T1) error
	ProcessBroadcastElement(ctx *KeyedBroadcastContext[K, U], in T2) error
}

// KeyedBroadcastOnTimerFunction is a KeyedBroadcastProcessFunction with
// timers; its context reads the broadcast state (Flink's OnTimerContext).
type KeyedBroadcastOnTimerFunction[K, U any] interface {
	OnTimer(ctx *KeyedReadOnlyBroadcastContext[K, U], timestamp int64, domain TimeDomain) error
}

// outContext is what every context of a two-input function has: output,
// the element's timestamp and the clocks.
type outContext[U any] struct {
	op *OperatorContext
}

// Collect emits a record with the current timestamp.
func (c *outContext[U]) Collect(v U) { c.op.Emit(v) }

// CollectAt emits a record with the given timestamp.
func (c *outContext[U]) CollectAt(v U, ts int64) { c.op.EmitAt(v, ts) }

// Output emits v to the side output tag.
func (c *outContext[U]) Output(tag string, v any) { c.op.EmitSide(tag, v) }

// Timestamp is the current record's (or firing timer's) timestamp.
func (c *outContext[U]) Timestamp() (int64, bool) { return c.op.Timestamp() }

// CurrentWatermark is the operator's event-time clock.
func (c *outContext[U]) CurrentWatermark() int64 { return c.op.Watermark() }

// CurrentProcessingTime is the virtual processing clock.
func (c *outContext[U]) CurrentProcessingTime() int64 { return c.op.ProcessingTime() }

// Runtime gives the function its runtime context (state, subtask).
func (c *outContext[U]) Runtime() RuntimeContext { return c.op }

// BroadcastStateReader is a context that can read broadcast state: both
// sides of a broadcast process function.
type BroadcastStateReader interface {
	broadcastStore(name string) (*state.OperatorStore, error)
}

// BroadcastStateWriter is a context that may change broadcast state: only
// the broadcast side.
type BroadcastStateWriter interface {
	BroadcastStateReader
	writesBroadcast()
}

// ReadOnlyBroadcastState returns the broadcast state d, read-only (Flink's
// ReadOnlyContext.getBroadcastState). d must be one of the states passed to
// Broadcast.
func ReadOnlyBroadcastState[K, V any](ctx BroadcastStateReader, d state.MapDescriptor[K, V]) (state.ReadOnlyBroadcastState[K, V], error) {
	b, err := BroadcastState(writable{ctx}, d)
	if err != nil {
		return state.ReadOnlyBroadcastState[K, V]{}, err
	}
	return b.ReadOnly(), nil
}

// writable lets ReadOnlyBroadcastState share BroadcastState's lookup; it
// never leaves this file.
type writable struct{ BroadcastStateReader }

func (writable) writesBroadcast() {}

// BroadcastState returns the broadcast state d for reading and writing
// (Flink's Context.getBroadcastState on the broadcast side). d must be one
// of the states passed to Broadcast.
func BroadcastState[K, V any](ctx BroadcastStateWriter, d state.MapDescriptor[K, V]) (*state.BroadcastState[K, V], error) {
	store, err := ctx.broadcastStore(d.Name)
	if err != nil {
		return nil, err
	}
	return state.Broadcast(store, d.Name, d.KeyCodec, d.ValueCodec)
}

// ReadOnlyBroadcastContext is the context of BroadcastProcessFunction's
// ProcessElement: it reads the broadcast state.
type ReadOnlyBroadcastContext[U any] struct {
	outContext[U]
	b *broadcastOp
}

func (c *ReadOnlyBroadcastContext[U]) broadcastStore(name string) (*state.OperatorStore, error) {
	return c.b.store(c.op, name)
}

// BroadcastContext is the context of ProcessBroadcastElement: it reads and
// writes the broadcast state.
type BroadcastContext[U any] struct {
	outContext[U]
	b *broadcastOp
}

func (c *BroadcastContext[U]) broadcastStore(name string) (*state.OperatorStore, error) {
	return c.b.store(c.op, name)
}

func (c *BroadcastContext[U]) writesBroadcast() {}

// KeyedReadOnlyBroadcastContext is the context of
// KeyedBroadcastProcessFunction's ProcessElement and OnTimer: the record's
// (or timer's) key, its timers, and the broadcast state read-only.
type KeyedReadOnlyBroadcastContext[K, U any] struct {
	ReadOnlyBroadcastContext[U]
}

// CurrentKey is the key of the record or timer being handled.
func (c *KeyedReadOnlyBroadcastContext[K, U]) CurrentKey() K {
	k, _ := c.op.CurrentKey().(K)
	return k
}

// RegisterEventTimeTimer sets a timer for the current key at ts.
func (c *KeyedReadOnlyBroadcastContext[K, U]) RegisterEventTimeTimer(ts int64) error {
	return c.op.RegisterTimer(EventTime, ts, nil)
}

// DeleteEventTimeTimer removes a timer of the current key.
func (c *KeyedReadOnlyBroadcastContext[K, U]) DeleteEventTimeTimer(ts int64) error {
	return c.op.DeleteTimer(EventTime, ts, nil)
}

// RegisterProcessingTimeTimer sets a processing-time timer for the current key.
func (c *KeyedReadOnlyBroadcastContext[K, U]) RegisterProcessingTimeTimer(ts int64) error {
	return c.op.RegisterTimer(ProcessingTime, ts, nil)
}

// DeleteProcessingTimeTimer removes a processing-time timer of the current key.
func (c *KeyedReadOnlyBroadcastContext[K, U]) DeleteProcessingTimeTimer(ts int64) error {
	return c.op.DeleteTimer(ProcessingTime, ts, nil)
}

// KeyedBroadcastContext is the context of KeyedBroadcastProcessFunction's
// ProcessBroadcastElement: no current key, the broadcast state read-write,
// and keyed state through ApplyToKeyedState.
type KeyedBroadcastContext[K, U any] struct {
	BroadcastContext[U]
}

// ApplyToKeyedState calls fn once for every key of this subtask that has an
// entry in the keyed state d, with that key current (Flink's
// applyToKeyedState): fn may read, change or clear that key's state through
// the state handles the function holds. Keys come in key group order, then
// key byte order; the keys are collected before the first call, so fn may
// clear state as it goes.
func (c *KeyedBroadcastContext[K, U]) ApplyToKeyedState(d StateDescriber, fn func(key K) error) error {
	op := c.op
	inst := op.inst
	if inst.keyed == nil {
		return fmt.Errorf("operator %q: ApplyToKeyedState needs a keyed stream connected to the broadcast stream", inst.info.Name)
	}
	desc := d.Desc()
	if _, err := op.KeyedTable(desc); err != nil {
		return err
	}
	type keyAt struct {
		key []byte
		kg  int
	}
	var keys []keyAt
	groups := inst.keyed.KeyGroups()
	for kg := groups.Start; kg <= groups.End; kg++ {
		var last []byte
		for en, err := range inst.keyed.Entries(kg, desc.Meta.StateName) {
			if err != nil {
				return fmt.Errorf("operator %q: ApplyToKeyedState %s: %w", inst.info.Name, desc.Meta.StateName, err)
			}
			if last != nil && bytes.Equal(last, en.Key) {
				continue
			}
			last = bytes.Clone(en.Key)
			keys = append(keys, keyAt{key: last, kg: kg})
		}
	}
	defer func() { inst.noKey = true }()
	for _, k := range keys {
		inst.keyed.SetCurrentKey(k.key, k.kg)
		inst.noKey = false
		v, err := inst.keyCodec.DecodeAny(k.key)
		if err != nil {
			return fmt.Errorf("operator %q: ApplyToKeyedState %s: key %s: %w", inst.info.Name, desc.Meta.StateName, state.Hex(k.key), err)
		}
		key, ok := v.(K)
		if !ok {
			return fmt.Errorf("operator %q: ApplyToKeyedState: the key %v is a %T, the function's key type is another", inst.info.Name, v, v)
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	return nil
}

// broadcastOp is Flink's CoBroadcastWithNonKeyedOperator and
// CoBroadcastWithKeyedOperator: it declares the broadcast states at open
// and runs the typed function's two sides.
type broadcastOp struct {
	twoInputUserOp
	states []state.StateDesc
}

func (b *broadcastOp) Open(ctx *OperatorContext) error {
	for _, d := range b.states {
		if err := state.DeclareBroadcast(ctx.Operator(), d); err != nil {
			return err
		}
	}
	return b.twoInputUserOp.Open(ctx)
}

// store checks that the state name is one the broadcast stream declared.
func (b *broadcastOp) store(ctx *OperatorContext, name string) (*state.OperatorStore, error) {
	for _, d := range b.states {
		if d.Meta.StateName == name {
			return ctx.Operator(), nil
		}
	}
	return nil, fmt.Errorf("operator %q: broadcast state %q does not exist: check the state's name, or pass its descriptor to runtime.Broadcast(stream, ...)", ctx.OperatorName(), name)
}

// BroadcastProcess runs f on a non-keyed stream connected to a broadcast
// stream (Flink's CoBroadcastWithNonKeyedOperator).
func BroadcastProcess[T1, T2, U any](c *ConnectedStreams[T1, T2], name string, f BroadcastProcessFunction[T1, T2, U], opts ...Option) *Stream[U] {
	if !c.second.bcast {
		c.job.fail(fmt.Errorf("runtime: operator %q: BroadcastProcess needs a broadcast stream as the second input (runtime.Broadcast)", name))
	}
	if c.first.keyed {
		c.job.fail(fmt.Errorf("runtime: operator %q: a BroadcastProcessFunction can only be used on a non-keyed stream: use KeyedBroadcastProcess", name))
	}
	states := c.second.states
	two := &twoInput{broadcast: 1, states: states}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		f := CloneFunc(f)
		b := &broadcastOp{states: states}
		ro := &ReadOnlyBroadcastContext[U]{b: b}
		rw := &BroadcastContext[U]{b: b}
		b.twoInputUserOp = twoInputUserOp{
			userOp: userOp{fn: f, process: func(ctx *OperatorContext, r Record) error {
				ro.op = ctx
				return f.ProcessElement(ro, r.Value.(T1))
			}},
			process2: func(ctx *OperatorContext, r Record) error {
				rw.op = ctx
				return f.ProcessBroadcastElement(rw, r.Value.(T2))
			}}
		return b
	}, opts)
}

// KeyedBroadcastProcess runs f on a keyed stream connected to a broadcast
// stream (Flink's CoBroadcastWithKeyedOperator).
func KeyedBroadcastProcess[K, T1, T2, U any](c *ConnectedStreams[T1, T2], name string, f KeyedBroadcastProcessFunction[K, T1, T2, U], opts ...Option) *Stream[U] {
	if !c.second.bcast {
		c.job.fail(fmt.Errorf("runtime: operator %q: KeyedBroadcastProcess needs a broadcast stream as the second input (runtime.Broadcast)", name))
	}
	if !c.first.keyed {
		c.job.fail(fmt.Errorf("runtime: operator %q: a KeyedBroadcastProcessFunction can only be used on a keyed stream: key it with KeyBy, or use BroadcastProcess", name))
	}
	states := c.second.states
	two := &twoInput{broadcast: 1, states: states, keyed: c.first.keyed}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		f := CloneFunc(f)
		b := &broadcastOp{states: states}
		ro := &KeyedReadOnlyBroadcastContext[K, U]{ReadOnlyBroadcastContext[U]{b: b}}
		rw := &KeyedBroadcastContext[K, U]{BroadcastContext[U]{b: b}}
		b.twoInputUserOp = twoInputUserOp{
			userOp: userOp{fn: f, process: func(ctx *OperatorContext, r Record) error {
				ro.op = ctx
				return f.ProcessElement(ro, r.Value.(T1))
			}},
			process2: func(ctx *OperatorContext, r Record) error {
				rw.op = ctx
				return f.ProcessBroadcastElement(rw, r.Value.(T2))
			}}
		if t, ok := any(f).(KeyedBroadcastOnTimerFunction[K, U]); ok {
			b.onTimer = func(ctx *OperatorContext, ts int64, d TimeDomain) error {
				ro.op = ctx
				return t.OnTimer(ro, ts, d)
			}
		}
		return b
	}, opts)
}

// NoKeyError is the error of using keyed state or timers while a keyed
// operator handles an element that has no key: a broadcast element.
// Flink fails the same way ("No key set. This method should not be called
// outside of a keyed context.").
type NoKeyError struct {
	Operator string
	What     string // "keyed state \"clicks\"", "timers"
}

func (e *NoKeyError) Error() string {
	return fmt.Sprintf("operator %q: %s used while handling a broadcast element, which has no key: no key is set. Reach keyed state from the broadcast side with ApplyToKeyedState", e.Operator, e.What)
}

// keyGuard refuses every access to a keyed state while the operator handles
// an element without a key.
type keyGuard struct {
	state.Table
	inst *opInstance
}

func (g *keyGuard) check() error {
	if g.inst.noKey {
		return &NoKeyError{Operator: g.inst.info.Name, What: fmt.Sprintf("keyed state %q", g.Table.Desc().Meta.StateName)}
	}
	return nil
}

func (g *keyGuard) Get(ns []byte) (any, bool, error) {
	if err := g.check(); err != nil {
		return nil, false, err
	}
	return g.Table.Get(ns)
}

func (g *keyGuard) Put(ns []byte, v any) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.Put(ns, v)
}

func (g *keyGuard) ListGet(ns []byte) ([]any, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	return g.Table.ListGet(ns)
}

func (g *keyGuard) ListAppend(ns []byte, v any) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.ListAppend(ns, v)
}

func (g *keyGuard) ListPut(ns []byte, vs []any) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.ListPut(ns, vs)
}

func (g *keyGuard) MapGet(ns, uk []byte) (any, bool, error) {
	if err := g.check(); err != nil {
		return nil, false, err
	}
	return g.Table.MapGet(ns, uk)
}

func (g *keyGuard) MapPut(ns, uk []byte, v any) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.MapPut(ns, uk, v)
}

func (g *keyGuard) MapDelete(ns, uk []byte) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.MapDelete(ns, uk)
}

func (g *keyGuard) MapRange(ns []byte, fn func([]byte, any) bool) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.MapRange(ns, fn)
}

func (g *keyGuard) Clear(ns []byte) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.Clear(ns)
}

func (g *keyGuard) MergeNamespaces(target []byte, sources [][]byte) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.Table.MergeNamespaces(target, sources)
}
