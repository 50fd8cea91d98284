package runtime

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	"streamdbg/state"
)

// Job is a stream job under construction: a graph of operators connected by
// edges. Build it with FromSource and the functions of this package, then
// hand it to NewExecutor (or to runtime/session for debugging).
type Job struct {
	Name string
	// Parallelism is the default parallelism of operators that do not set
	// their own. Options.Parallelism overrides it.
	Parallelism int
	// MaxParallelism is the number of key groups (default 128).
	MaxParallelism int
	// Backend names the keyed state backend chosen in the job's code ("heap"
	// or "pebble"); it wins over flags and configuration, as in Flink.
	Backend string

	nodes []*node
	err   error
}

// NewJob starts a job with default parallelism 1 and max parallelism 128.
func NewJob(name string) *Job {
	return &Job{Name: name, Parallelism: 1, MaxParallelism: state.DefaultMaxParallelism}
}

// Err returns the first error made while building the job (a bad window
// size, a duplicate uid): the job cannot run until it is fixed.
func (j *Job) Err() error { return j.err }

func (j *Job) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

// Fail records a build error; packages that add operators use it.
func (j *Job) Fail(err error) { j.fail(err) }

type partitioner uint8

const (
	forward partitioner = iota
	hashPartition
	rebalance
	broadcast
)

func (p partitioner) String() string {
	return [...]string{"forward", "hash", "rebalance", "broadcast"}[p]
}

// edge connects an output of one node (its main output or a side output) to
// an input of another.
type edge struct {
	from, to *node
	tag      string // side output tag; "" is the main output
	part     partitioner
	key      KeySelector // for hash edges
	label    string      // how the key is described in the plan, e.g. "hash(word)"
	// input is the input of a two-input operator the edge feeds (0 or 1);
	// 0 for every edge of a one-input operator.
	input int
}

// KeySelector extracts a record's key and encodes it; the encoding decides
// the key group. Typed keyed streams build one from a key function and codec.
type KeySelector struct {
	// Append appends the encoded key of v to dst.
	Append func(dst []byte, v any) []byte
	// Codec decodes keys for display and names the key type.
	Codec state.AnyCodec
	// Type is the Go type of the keys (nil when not known).
	Type reflect.Type
	// typed is Append for a record value of the stream's type T, a
	// func(dst []byte, v T) []byte (KeyByCodec), for a typed emission to
	// one hash target (emitSlot); nil when not known.
	typed any
}

// node is one operator of the job graph.
type node struct {
	id          int
	name        string
	uid         string
	uidDerived  bool
	parallelism int // 0: the job's default
	newOp       func() Operator
	source      sourceFactory // for source nodes
	inputs      []*edge
	outputs     []*edge
	isSink      bool
	// typedIn: the operator reads its input with readValue (slot.go).
	typedIn bool
	// emitsLast: the operator emits at most one record per call, as the
	// last thing the call does (Map, Filter): nothing it does can follow
	// or fail after the emission (see opInstance.direct).
	emitsLast bool
	// timerNamespace is the type of the namespaces of this operator's timers.
	timerNamespace state.AnyCodec
	// two describes a two-input operator (nil for one input).
	two *twoInput
	// inheritParallelism: the parallelism is the input's (InputParallelism).
	inheritParallelism bool
	// recordType is the type of the records the node emits on its main
	// output (sources) or consumes (sinks); nil when not known.
	recordType reflect.Type
	// sideOutputs are the side outputs of the node the job reads.
	sideOutputs []SideOutputInfo
	// replaceSource builds the source factory of a replacement (Options.
	// Sources) for a source node; ok=false when f has the wrong type.
	replaceSource func(f any) (sourceFactory, bool)
}

func (n *node) keyed() bool {
	if n.two != nil {
		return n.two.keyed
	}
	return len(n.inputs) > 0 && n.inputs[0].part == hashPartition
}

// Option configures an operator when it is added.
type Option func(*node)

// UID sets the operator's uid: state maps to operators by uid on restore.
func UID(uid string) Option { return func(n *node) { n.uid = uid } }

// Parallelism sets the operator's parallelism.
func Parallelism(p int) Option { return func(n *node) { n.parallelism = p } }

// InputParallelism gives the operator the parallelism of its (first)
// input, so that it chains to it: what Flink does for the helper maps it
// adds itself (a window join's tagging maps).
func InputParallelism() Option { return func(n *node) { n.inheritParallelism = true } }

func (j *Job) addNode(name string, opts []Option, newOp func() Operator, in []streamRef, part partitioner, key KeySelector, label string) *node {
	n := j.newNode(name, opts, newOp)
	n.connect(in, part, key, label, 0)
	return n
}

func (j *Job) newNode(name string, opts []Option, newOp func() Operator) *node {
	n := &node{id: len(j.nodes), name: name, newOp: newOp}
	for _, o := range opts {
		o(n)
	}
	if n.parallelism < 0 {
		j.fail(fmt.Errorf("runtime: operator %q: parallelism %d must be positive", n.name, n.parallelism))
	}
	j.nodes = append(j.nodes, n)
	return n
}

// connect adds n's edges from the outputs in, feeding n's input input.
func (n *node) connect(in []streamRef, part partitioner, key KeySelector, label string, input int) {
	for _, r := range in {
		e := &edge{from: r.node, to: n, tag: r.tag, part: part, key: key, label: label, input: input}
		n.inputs = append(n.inputs, e)
		r.node.outputs = append(r.node.outputs, e)
	}
}

// streamRef is one output of one node.
type streamRef struct {
	node *node
	tag  string
}

// Stream is a stream of records of type T: the output of one or more
// operators (more after Union).
type Stream[T any] struct {
	job  *Job
	refs []streamRef
	part partitioner
}

// Job returns the job the stream belongs to.
func (s *Stream[T]) Job() *Job { return s.job }

// Input is what an operator can read from: a Stream or a KeyedStream.
type Input[T any] interface {
	input() (job *Job, refs []streamRef, part partitioner, key KeySelector, label string)
	// elements names T in the method set so that Go infers T from a
	// *Stream[T] or *KeyedStream[K, T] argument.
	elements(*T)
}

func (s *Stream[T]) elements(*T)         {}
func (k *KeyedStream[K, T]) elements(*T) {}

func (s *Stream[T]) input() (*Job, []streamRef, partitioner, KeySelector, string) {
	return s.job, s.refs, s.part, KeySelector{}, ""
}

// Rebalance distributes the stream round-robin over the next operator's
// subtasks; it breaks the chain.
func (s *Stream[T]) Rebalance() *Stream[T] {
	return &Stream[T]{job: s.job, refs: s.refs, part: rebalance}
}

// Broadcast sends every record to every subtask of the next operator.
func (s *Stream[T]) Broadcast() *Stream[T] {
	return &Stream[T]{job: s.job, refs: s.refs, part: broadcast}
}

// Union merges streams of the same type; the next operator reads them all.
func Union[T any](first *Stream[T], more ...*Stream[T]) *Stream[T] {
	out := &Stream[T]{job: first.job, refs: append([]streamRef(nil), first.refs...), part: first.part}
	for _, s := range more {
		out.refs = append(out.refs, s.refs...)
	}
	return out
}

// KeyedStream is a stream partitioned by a key: operators reading it get
// keyed state and timers scoped to the current record's key.
type KeyedStream[K, T any] struct {
	in     *Stream[T]
	keyOf  func(T) K
	codec  state.Codec[K]
	label  string
	erased KeySelector
}

// KeyBy partitions s by key(record). keyName names the key in the plan
// ("word" shows as hash(word)). The key's codec, which decides its key
// group and how savepoints store it, is KeyCodec[K]; KeyByCodec takes
// another.
func KeyBy[K, T any](s *Stream[T], keyName string, key func(T) K) *KeyedStream[K, T] {
	return KeyByCodec(s, keyName, key, KeyCodec[K]())
}

// KeyByCodec is KeyBy with the key codec given: for keys stored as
// another system stores them, or encoded more compactly than KeyCodec does.
func KeyByCodec[K, T any](s *Stream[T], keyName string, key func(T) K, codec state.Codec[K]) *KeyedStream[K, T] {
	ks := &KeyedStream[K, T]{in: s, keyOf: key, codec: codec, label: "hash(" + keyName + ")"}
	typed := func(dst []byte, v T) []byte { return codec.Append(dst, key(v)) }
	if sk, ok := any(key).(func(T) string); ok && any(codec) == any(state.String) {
		// A string key in state.String's encoding is its bytes: appended
		// without a call through the codec's interface.
		typed = func(dst []byte, v T) []byte { return append(dst, sk(v)...) }
	}
	ks.erased = KeySelector{
		Append: func(dst []byte, v any) []byte { return codec.Append(dst, key(readValue[T](v))) },
		Codec:  state.Erase(codec),
		Type:   reflect.TypeFor[K](),
		typed:  typed,
	}
	return ks
}

func (k *KeyedStream[K, T]) input() (*Job, []streamRef, partitioner, KeySelector, string) {
	return k.in.job, k.in.refs, hashPartition, k.erased, k.label
}

// Job returns the job the stream belongs to.
func (k *KeyedStream[K, T]) Job() *Job { return k.in.job }

// Codec is the key codec.
func (k *KeyedStream[K, T]) Codec() state.Codec[K] { return k.codec }

// AddOperator adds an operator that reads in and emits records of type U. It
// is the door for operator packages (windows) and for jobs that need more
// than Map, FlatMap, Filter and Process.
func AddOperator[T, U any](in Input[T], name string, newOp func() Operator, opts ...Option) *Stream[U] {
	job, refs, part, key, label := in.input()
	n := job.addNode(name, opts, newOp, refs, part, key, label)
	return &Stream[U]{job: job, refs: []streamRef{{node: n}}}
}

// SetTimerNamespace declares the namespace type of the timers of the
// operator that produces s (void when never set).
func SetTimerNamespace[T any](s *Stream[T], c state.AnyCodec) {
	for _, r := range s.refs {
		r.node.timerNamespace = c
	}
}

// SideOutput returns the records an operator emitted to the side output tag.
func SideOutput[T, U any](s *Stream[T], tag OutputTag[U]) *Stream[U] {
	if tag.ID == "" {
		s.job.fail(fmt.Errorf("runtime: side output of %s: the output tag has no name (runtime.NewOutputTag(\"name\"))", joinNames(refNodes(s.refs))))
	}
	refs := make([]streamRef, len(s.refs))
	for i, r := range s.refs {
		refs[i] = streamRef{node: r.node, tag: tag.ID}
		if !slices.ContainsFunc(r.node.sideOutputs, func(o SideOutputInfo) bool { return o.Tag == tag.ID }) {
			r.node.sideOutputs = append(r.node.sideOutputs, SideOutputInfo{Operator: r.node.name, Tag: tag.ID, Type: reflect.TypeFor[U]()})
		}
	}
	return &Stream[U]{job: s.job, refs: refs}
}

func refNodes(refs []streamRef) []*node {
	ns := make([]*node, len(refs))
	for i, r := range refs {
		ns[i] = r.node
	}
	return ns
}

// OutputTag names a side output of records of type T; its name must not be
// empty.
type OutputTag[T any] struct{ ID string }

// NewOutputTag names a side output.
func NewOutputTag[T any](id string) OutputTag[T] { return OutputTag[T]{ID: id} }

// Options are the settings of one execution of a job that do not belong to
// the job's code: what flags and configuration files say.
type Options struct {
	// Parallelism overrides the job's default parallelism when > 0.
	Parallelism int
	// MaxParallelism overrides the job's max parallelism when > 0.
	MaxParallelism int
	// Backend is the keyed backend from flags or configuration; the job's
	// own Job.Backend wins. BackendOrigin says where it came from ("flag",
	// "config"), for the log line that explains the choice.
	Backend       string
	BackendOrigin string
	// StateDir is where a disk backend keeps its files ("" = a temp dir
	// removed on close).
	StateDir string
	// Output receives sink records as JSON lines (nil discards them).
	Output io.Writer
	// Log receives warnings and progress (nil discards them).
	Log *slog.Logger
	// Trace records what each step did (emissions, state writes, timers,
	// watermarks) for the debugger. Off in run mode.
	Trace bool
	// AllowNonRestoredState drops snapshot state of operators the job does
	// not have instead of refusing the restore.
	AllowNonRestoredState bool
	// FailAt injects one failure while source event FailAt (1-based) is
	// read, to exercise recovery (0: never).
	FailAt int64
	// WallClock, when set, makes the processing clock follow it (epoch ms)
	// before every source event: the opt-in wall-clock mode. Runs are then
	// no longer deterministic.
	WallClock func() int64
	// StartProcessingTime is the virtual processing clock's start (epoch ms).
	StartProcessingTime int64
	// Sources replaces the sources named by the keys (a test driver's
	// inputs): each value is a func() Source[T], T the record type of that
	// source; the source keeps its name, uid, parallelism and watermark
	// strategy. A name the job does not have, or another type, fails
	// NewExecutor.
	Sources map[string]any
	// Schedule, when set, decides which source reads when (SourceSchedule).
	Schedule SourceSchedule
	// Capture, when set, receives every record a sink gets and every record
	// an operator emits to a side output, as it happens (no trace needed).
	Capture func(Captured)
	// Written, when set (and Trace is), is told every keyed state entry
	// the executor writes; a debugger shares one among the executors of a
	// session (see WrittenEntries and LightEntryFresh).
	Written *WrittenEntries
}

func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// describeNode is how errors name an operator.
func describeNode(n *node) string { return fmt.Sprintf("%q", n.name) }

func joinNames(ns []*node) string {
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.name
	}
	return strings.Join(names, " -> ")
}
