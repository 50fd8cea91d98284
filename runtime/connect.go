package runtime

import (
	"fmt"

	"streamdbg/state"
)

// twoInput is what the plan and the executor know of a two-input operator
// (Flink's TwoInputTransformation): whether it has keyed state, and which
// of its inputs, if any, is a broadcast stream with broadcast state.
type twoInput struct {
	// keyed: the operator has keyed state and timers. That is the case when
	// both inputs are keyed (Flink sets state key selectors only then), or
	// for a keyed stream connected to a broadcast stream.
	keyed bool
	// broadcast is the input that carries a BroadcastStream (1), or -1.
	broadcast int
	// states are the broadcast states declared by the BroadcastStream.
	states []state.StateDesc
}

// inputSpec is one input of a two-input operator as the job graph needs it.
type inputSpec struct {
	job    *Job
	refs   []streamRef
	part   partitioner
	key    KeySelector
	label  string
	keyed  bool
	states []state.StateDesc // a BroadcastStream's broadcast states
	bcast  bool              // a BroadcastStream
}

// ConnectInput is what Connect takes: a Stream, a KeyedStream or (as the
// second input) a BroadcastStream.
type ConnectInput[T any] interface {
	connectInput() inputSpec
	elements(*T)
}

func (s *Stream[T]) connectInput() inputSpec {
	return inputSpec{job: s.job, refs: s.refs, part: s.part}
}

func (k *KeyedStream[K, T]) connectInput() inputSpec {
	return inputSpec{job: k.in.job, refs: k.in.refs, part: hashPartition, key: k.erased, label: k.label, keyed: true}
}

// ConnectedStreams are two streams connected for a two-input operator
// (Flink's ConnectedStreams and BroadcastConnectedStream): CoMap, CoFlatMap,
// CoProcess, KeyedCoProcess, BroadcastProcess and KeyedBroadcastProcess
// turn them into one stream. The operator's watermark is the minimum of its
// two inputs' watermarks, an idle input excluded.
type ConnectedStreams[T1, T2 any] struct {
	job           *Job
	first, second inputSpec
}

// Connect connects two streams. Either may be keyed; the second may be a
// BroadcastStream (see Broadcast). A BroadcastStream cannot be the first.
func Connect[T1, T2 any](first ConnectInput[T1], second ConnectInput[T2]) *ConnectedStreams[T1, T2] {
	a, b := first.connectInput(), second.connectInput()
	c := &ConnectedStreams[T1, T2]{job: a.job, first: a, second: b}
	switch {
	case a.job != b.job:
		a.job.fail(fmt.Errorf("runtime: Connect: the two streams belong to different jobs"))
	case a.bcast:
		a.job.fail(fmt.Errorf("runtime: Connect: a broadcast stream can only be the second input (connect the other stream to it)"))
	}
	return c
}

// Job returns the job the streams belong to.
func (c *ConnectedStreams[T1, T2]) Job() *Job { return c.job }

// ConnectedKeyBy keys both connected streams by the same key type (Flink's
// ConnectedStreams.keyBy): key1 and key2 extract the key of each input,
// KeyCodec[K] encodes it, so equal keys of both inputs meet in one key
// group. (Key each stream with KeyByCodec and Connect them for another
// codec.)
func ConnectedKeyBy[K, T1, T2 any](c *ConnectedStreams[T1, T2], keyName string, key1 func(T1) K, key2 func(T2) K) *ConnectedStreams[T1, T2] {
	codec := KeyCodec[K]()
	if c.second.bcast {
		c.job.fail(fmt.Errorf("runtime: ConnectedKeyBy: a broadcast stream cannot be keyed"))
	}
	a := KeyByCodec(&Stream[T1]{job: c.job, refs: c.first.refs, part: c.first.part}, keyName, key1, codec)
	b := KeyByCodec(&Stream[T2]{job: c.job, refs: c.second.refs, part: c.second.part}, keyName, key2, codec)
	return &ConnectedStreams[T1, T2]{job: c.job, first: a.connectInput(), second: b.connectInput()}
}

// bothKeyed reports whether both inputs are keyed with the same key type;
// a key type mismatch fails the job, as Flink refuses it.
func (c *ConnectedStreams[T1, T2]) bothKeyed(name string) bool {
	if !c.first.keyed || !c.second.keyed {
		return false
	}
	t1, t2 := c.first.key.Codec.TypeName(), c.second.key.Codec.TypeName()
	if t1 != t2 {
		c.job.fail(fmt.Errorf("runtime: operator %q: the key types of the connected keyed streams differ: %s and %s", name, t1, t2))
		return false
	}
	return true
}

// TwoInputOperator is an Operator with two inputs: ProcessElement handles
// the records of the first input, ProcessElement2 those of the second. A
// two-input operator is always the head of its task (never chained to an
// input), as in Flink.
type TwoInputOperator interface {
	Operator
	ProcessElement2(ctx *OperatorContext, r Record) error
}

// AddTwoInputOperator adds an operator reading both connected streams and
// emitting records of type U; newOp must make a TwoInputOperator. keyed
// says whether it has keyed state: both inputs must then be keyed with the
// same key type. It is the door for operators the functions of this
// package do not cover.
func AddTwoInputOperator[T1, T2, U any](c *ConnectedStreams[T1, T2], name string, keyed bool, newOp func() TwoInputOperator, opts ...Option) *Stream[U] {
	two := &twoInput{broadcast: -1}
	if keyed {
		if !c.first.keyed || !c.second.keyed {
			c.job.fail(fmt.Errorf("runtime: operator %q needs keyed state: key both connected streams first (KeyBy or ConnectedKeyBy)", name))
		}
		two.keyed = c.bothKeyed(name)
	}
	if c.second.bcast {
		c.job.fail(fmt.Errorf("runtime: operator %q: a broadcast stream is processed by BroadcastProcess or KeyedBroadcastProcess", name))
	}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator { return newOp() }, opts)
}

func addTwoInput[U any](job *Job, first, second inputSpec, name string, two *twoInput, newOp func() Operator, opts []Option) *Stream[U] {
	n := job.newNode(name, opts, newOp)
	n.two = two
	n.connect(first.refs, first.part, first.key, first.label, 0)
	n.connect(second.refs, second.part, second.key, second.label, 1)
	return &Stream[U]{job: job, refs: []streamRef{{node: n}}}
}

// CoMapFunction maps the records of each input to one record.
type CoMapFunction[T1, T2, U any] interface {
	Map1(in T1) (U, error)
	Map2(in T2) (U, error)
}

// CoFlatMapFunction turns the records of each input into any number of
// records.
type CoFlatMapFunction[T1, T2, U any] interface {
	FlatMap1(in T1, out Collector[U]) error
	FlatMap2(in T2, out Collector[U]) error
}

// CoProcessFunction sees the records of each input with their context. On
// two keyed inputs it may use keyed state and timers (Flink runs it as a
// keyed operator then); one that implements OnTimerFunction gets its
// timers.
type CoProcessFunction[T1, T2, U any] interface {
	ProcessElement1(ctx *ProcessContext[U], in T1) error
	ProcessElement2(ctx *ProcessContext[U], in T2) error
}

// KeyedProcessContext is a ProcessContext on keyed inputs: the current key
// has the key's type.
type KeyedProcessContext[K, U any] struct {
	ProcessContext[U]
}

// CurrentKey is the key of the record (or timer) being handled.
func (c *KeyedProcessContext[K, U]) CurrentKey() K {
	k, _ := c.op.CurrentKey().(K)
	return k
}

// KeyedCoProcessFunction sees the records of two inputs keyed by the same
// key, with keyed state and timers of that key. One that implements
// KeyedOnTimerFunction gets its timers.
type KeyedCoProcessFunction[K, T1, T2, U any] interface {
	ProcessElement1(ctx *KeyedProcessContext[K, U], in T1) error
	ProcessElement2(ctx *KeyedProcessContext[K, U], in T2) error
}

// KeyedOnTimerFunction is a keyed function with timers.
type KeyedOnTimerFunction[K, U any] interface {
	OnTimer(ctx *KeyedProcessContext[K, U], timestamp int64, domain TimeDomain) error
}

// twoInputUserOp runs typed two-input user functions.
type twoInputUserOp struct {
	userOp
	process2 func(ctx *OperatorContext, r Record) error
}

func (u *twoInputUserOp) ProcessElement2(ctx *OperatorContext, r Record) error {
	return u.process2(ctx, r)
}

func (c *ConnectedStreams[T1, T2]) refuseBroadcast(name string) {
	if c.second.bcast {
		c.job.fail(fmt.Errorf("runtime: operator %q: the second input is a broadcast stream: process it with BroadcastProcess or KeyedBroadcastProcess", name))
	}
}

// CoMap applies f.Map1 to the first input's records and f.Map2 to the
// second's.
func CoMap[T1, T2, U any](c *ConnectedStreams[T1, T2], name string, f CoMapFunction[T1, T2, U], opts ...Option) *Stream[U] {
	c.refuseBroadcast(name)
	two := &twoInput{broadcast: -1, keyed: c.bothKeyed(name)}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		f := CloneFunc(f)
		return &twoInputUserOp{
			userOp: userOp{fn: f, process: func(ctx *OperatorContext, r Record) error {
				out, err := f.Map1(r.Value.(T1))
				if err == nil {
					ctx.Emit(out)
				}
				return err
			}},
			process2: func(ctx *OperatorContext, r Record) error {
				out, err := f.Map2(r.Value.(T2))
				if err == nil {
					ctx.Emit(out)
				}
				return err
			}}
	}, opts)
}

// CoFlatMap applies f.FlatMap1 and f.FlatMap2 to the records of each input.
func CoFlatMap[T1, T2, U any](c *ConnectedStreams[T1, T2], name string, f CoFlatMapFunction[T1, T2, U], opts ...Option) *Stream[U] {
	c.refuseBroadcast(name)
	two := &twoInput{broadcast: -1, keyed: c.bothKeyed(name)}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		f := CloneFunc(f)
		out := &collector[U]{}
		return &twoInputUserOp{
			userOp: userOp{fn: f, process: func(ctx *OperatorContext, r Record) error {
				out.op = ctx
				return f.FlatMap1(r.Value.(T1), out)
			}},
			process2: func(ctx *OperatorContext, r Record) error {
				out.op = ctx
				return f.FlatMap2(r.Value.(T2), out)
			}}
	}, opts)
}

// CoProcess runs f on the records of both inputs. When both inputs are
// keyed (with the same key type), f has keyed state and timers, as Flink's
// keyed co-process operator; otherwise it has neither.
func CoProcess[T1, T2, U any](c *ConnectedStreams[T1, T2], name string, f CoProcessFunction[T1, T2, U], opts ...Option) *Stream[U] {
	c.refuseBroadcast(name)
	two := &twoInput{broadcast: -1, keyed: c.bothKeyed(name)}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		f := CloneFunc(f)
		pc := &ProcessContext[U]{}
		op := &twoInputUserOp{
			userOp: userOp{fn: f, process: func(ctx *OperatorContext, r Record) error {
				pc.op = ctx
				return f.ProcessElement1(pc, r.Value.(T1))
			}},
			process2: func(ctx *OperatorContext, r Record) error {
				pc.op = ctx
				return f.ProcessElement2(pc, r.Value.(T2))
			}}
		if t, ok := any(f).(OnTimerFunction[U]); ok {
			op.onTimer = func(ctx *OperatorContext, ts int64, d TimeDomain) error {
				pc.op = ctx
				return t.OnTimer(pc, ts, d)
			}
		}
		return op
	}, opts)
}

// KeyedCoProcess runs f on two inputs keyed by the same key type (Flink's
// KeyedCoProcessOperator): each record is handled under its key, with that
// key's state and timers. Both inputs must be keyed.
func KeyedCoProcess[K, T1, T2, U any](c *ConnectedStreams[T1, T2], name string, f KeyedCoProcessFunction[K, T1, T2, U], opts ...Option) *Stream[U] {
	c.refuseBroadcast(name)
	if !c.first.keyed || !c.second.keyed {
		c.job.fail(fmt.Errorf("runtime: operator %q: a KeyedCoProcessFunction can only be used when both inputs are keyed streams (KeyBy both, or ConnectedKeyBy)", name))
	}
	two := &twoInput{broadcast: -1, keyed: c.bothKeyed(name)}
	return addTwoInput[U](c.job, c.first, c.second, name, two, func() Operator {
		f := CloneFunc(f)
		pc := &KeyedProcessContext[K, U]{}
		op := &twoInputUserOp{
			userOp: userOp{fn: f, process: func(ctx *OperatorContext, r Record) error {
				pc.op = ctx
				return f.ProcessElement1(pc, r.Value.(T1))
			}},
			process2: func(ctx *OperatorContext, r Record) error {
				pc.op = ctx
				return f.ProcessElement2(pc, r.Value.(T2))
			}}
		if t, ok := any(f).(KeyedOnTimerFunction[K, U]); ok {
			op.onTimer = func(ctx *OperatorContext, ts int64, d TimeDomain) error {
				pc.op = ctx
				return t.OnTimer(pc, ts, d)
			}
		}
		return op
	}, opts)
}
