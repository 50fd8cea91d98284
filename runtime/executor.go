package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"streamdbg/state"
)

// Executor runs a planned job: it owns every subtask, its state and its
// queues, and schedules elements one step at a time. It is not safe for
// concurrent use: the session serialises access.
type Executor struct {
	job  *Job
	plan *Plan
	opts Options
	log  *slog.Logger

	subtasks []*subtask // task order, then subtask index
	sources  []*subtask
	nextSrc  int
	active   *subtask
	// procPending lists subtasks that still have to fire processing-time
	// timers after the clock moved.
	procPending []*subtask
	procTime    int64
	// idlePending lists source subtasks whose idle timeout passed.
	idlePending []*subtask

	position int64 // source events read
	// reads counts source reads, those that find the end of the input
	// too: the clock of Options.Schedule, kept by checkpoints.
	reads int64
	steps int64 // steps taken
	// forced maps a position to the source subtask (index in sources)
	// StepIntoInput chose to read there instead of the due one; replays
	// after a restart read the same.
	forced   map[int64]int
	finished bool
	failure  *Failure
	closed   bool

	backend       string
	backendReason string
	// stateDir holds this executor's pebble files under Options.StateDir;
	// ownedDirs are the directories of backends adopted from the executor
	// this one restarted (removed on close too).
	stateDir  string
	ownedDirs []string
	// adopt is set while Restart builds this executor.
	adopt *adoption
	// replaced are the sources Options.Sources replaces.
	replaced map[*node]sourceFactory

	out   *jsonWriter
	trace *Trace
	// light is set in light mode (light.go); trace is nil then.
	light *light
	// describe: the step's StepInfo is read (StepInto), so it names where
	// a source read; a run skips building that string per record.
	describe bool
	// slotGen moves on whenever nothing is in flight (slot.go).
	slotGen uint64
	// batching: drainBatch runs the steps (runDirect may run chained
	// operators at once); batch is its current step.
	batching bool
	batch    batchStep
	// emission scratch, reused across steps
	chained []work
	keyBuf  []byte
}

type workKind uint8

const (
	wRecord workKind = iota
	wWatermark
	wSourcePull
	wProcTimers
	// wStatus: a watermark status change (w.idle) reaching an operator.
	wStatus
	// wSourceIdle: a source found it had no record for its idle timeout.
	wSourceIdle
)

// work is one element waiting for one operator of a subtask's chain.
//
// Its fields are ordered and sized to keep it small: it is copied several
// times per record.
type work struct {
	rec Record
	key []byte
	wm  int64
	op  int32
	kg  int32
	// input is the input of a two-input operator the record came on.
	input uint8
	kind  workKind
	// cont marks a watermark whose operator already saw it and is still
	// firing timers.
	cont bool
	idle bool // wStatus
}

// subtask is one parallel instance of a task.
type subtask struct {
	task   *Task
	index  int
	groups state.KeyGroupRange
	ops    []*opInstance
	inbox  inbox
	// valve combines the watermarks and statuses of the input channels;
	// channels says where each comes from.
	valve    *WatermarkValve
	channels []channel
	// pts holds the physical processing-time timers of the operators.
	pts   procTimeService
	stack []work
	done  bool // a source subtask at the end of its input
	// downstream: every output of the subtask's operators goes to
	// subtasks after it in Executor.subtasks, so running one of its
	// records queues nothing in a subtask the scheduler looks at first
	// (drainHead).
	downstream bool
}

// channel is one input channel of a subtask: one upstream subtask of one
// input edge, with what it last sent (for views and why).
type channel struct {
	from *subtask
	// input is the input of a two-input operator the channel feeds.
	input uint8
	// lastTS is the timestamp of the last record with one (hasTS).
	lastTS  int64
	hasTS   bool
	records int64
}

// took counts r, a record the subtask took from the channel.
func (ch *channel) took(r *Record) {
	ch.records++
	if r.HasTimestamp {
		ch.lastTS, ch.hasTS = r.Timestamp, true
	}
}

// opInstance is one operator in one subtask.
type opInstance struct {
	info     *OperatorInfo
	op       Operator
	two      TwoInputOperator // op, when it has two inputs
	src      sourceRunner
	ctx      *OperatorContext
	keyed    state.KeyedBackend
	keyCodec state.AnyCodec
	opStore  *state.OperatorStore
	outs     []route
	wm       int64
	// idle is the watermark status the operator last announced on its
	// outputs; watermarks are not forwarded while it is idle (Flink's
	// ChainingOutput and RecordWriterOutput).
	idle bool
	// svc holds the operator's timers (keyed operators only).
	svc    timerService
	opened bool
	// adopted: keyed is the backend of the executor this one restarted,
	// rolled back to the checkpoint (no restore from entries).
	adopted bool
	// noKey is set while a keyed operator handles an element without a key
	// (a broadcast element): keyed state and timers refuse to work.
	noKey bool
	// slotOut: the main output's consumers all read slots (slot.go).
	slotOut bool
	// direct: the operator emits last in its call (node.emitsLast), to
	// one chained operator of one input and nothing else, so drainBatch
	// runs that operator at once (runDirect).
	direct bool
	// next is the typed entry (userOp.typed) of that operator when it is
	// a typed operator of this package: a typed emission (emitSlot) calls
	// it without an Operator call or a type assertion (runDirectTyped).
	next any
	// nextIn is that operator's own input slot (userOp.in), nil when it
	// holds on to the slots it gets.
	nextIn any
	// process is the typed operator's own handling of a record
	// (typedUserOp: userOp.process), called without the Operator call.
	process func(ctx *OperatorContext, r Record) error
	// drain is the typed operator's loop over records of its subtask's
	// input queue (userOp.drain, drainHead), used at the head of a
	// subtask.
	drain func(e *Executor, st *subtask, el *inElem) error
	// hashOut is the operator's one output when that is the main output,
	// hash-partitioned to a task of one subtask: a typed emission queues
	// its records there without emit (emitSlot).
	hashOut *route
	// tables are the keyed states the operator declared, by name, for
	// readers between steps (KeyedState).
	tables map[string]state.Table
	// fnPrint is the print of the operator's function value after Open
	// (CheckFunctionState).
	fnPrint fieldPrint
}

// route is where one output edge of an operator goes.
type route struct {
	tag     string
	chained int // chain index of the target, or -1
	part    partitioner
	key     KeySelector
	targets []*subtask
	channel int // this subtask's channel index in every target
	rr      int
}

func (o *opInstance) timers(d TimeDomain) (state.TimerQueue, error) {
	if o.keyed == nil {
		return nil, fmt.Errorf("operator %q: timers need a keyed stream; key the stream with KeyBy first", o.info.Name)
	}
	if o.noKey {
		return nil, &NoKeyError{Operator: o.info.Name, What: "timers"}
	}
	q := &o.svc.event
	name := "event_timers"
	if d == ProcessingTime {
		q, name = &o.svc.proc, "processing_timers"
	}
	if *q == nil {
		nsType := state.VoidCodec.TypeName()
		if o.info.node.timerNamespace != nil {
			nsType = o.info.node.timerNamespace.TypeName()
		}
		meta := state.StateMeta{OperatorID: o.info.ID, OperatorName: o.info.Name, StateName: state.TimerStateName(name),
			Scope: state.ScopeKeyed, Kind: state.KindTimers, KeyType: o.info.KeyType, NamespaceType: nsType, ValueType: "int64"}
		tq, err := o.keyed.Timers(name, meta)
		if err != nil {
			return nil, err
		}
		*q = tq
	}
	return *q, nil
}

// NewExecutor plans the job and sets up every subtask: state backends,
// restored state (from restore, when not nil), operator state, and opens
// every operator, as Flink's StreamTask does before it runs.
func NewExecutor(j *Job, opts Options, from Restore) (*Executor, error) {
	return newExecutor(j, opts, from, nil)
}

func newExecutor(j *Job, opts Options, from Restore, adopt *adoption) (*Executor, error) {
	plan, err := BuildPlan(j, opts.Parallelism, opts.MaxParallelism)
	if err != nil {
		return nil, err
	}
	e := &Executor{job: j, plan: plan, opts: opts, log: opts.logger(), procTime: opts.StartProcessingTime, out: newJSONWriter(opts.Output), adopt: adopt}
	if opts.Trace {
		e.trace = &Trace{}
	}
	for _, w := range plan.Warnings {
		e.log.Warn(w)
	}
	if e.replaced, err = replaceSources(j, opts.Sources); err != nil {
		return nil, err
	}
	e.backend, e.backendReason = chooseBackend(j, opts)
	e.log.Info("state backend", "backend", e.backend, "why", e.backendReason)
	var restore *restoring
	if from != nil {
		restore = &restoring{src: from, opts: RestoreOptions{AllowNonRestoredState: opts.AllowNonRestoredState}}
		if err := restore.check(plan); err != nil {
			return nil, err
		}
		info := from.Info()
		e.position, e.procTime = info.Position, info.ProcessingTime
		if cp, ok := from.(*Checkpoint); ok {
			e.reads = cp.reads
		}
	}
	if err := e.build(restore); err != nil {
		if adopt != nil {
			for _, t := range adopt.taken {
				t.inst.keyed = nil // not this executor's to close
			}
		}
		e.Close()
		return nil, err
	}
	e.adopt = nil
	return e, nil
}

// adoption hands the keyed backends of an executor to the one that
// restarts it from an incremental checkpoint.
type adoption struct {
	prev  *Executor
	cp    *Checkpoint
	taken []adopted
}

type adopted struct {
	prevInst, inst *opInstance
	kb             state.KeyedBackend
}

// take returns prev's backend of inst's operator and subtask rolled back
// to the checkpoint, or nil when the checkpoint holds no mark in it.
func (a *adoption) take(e *Executor, inst *opInstance, st *subtask) (state.KeyedBackend, error) {
	if a == nil || e.backend != a.prev.backend {
		return nil, nil
	}
	op := a.cp.op(inst.info.ID)
	prevInfo, ok := planOperatorByID(a.prev.plan, inst.info.ID)
	if op == nil || !ok || st.index >= len(op.subtasks) || prevInfo.Parallelism != inst.info.Parallelism {
		return nil, nil
	}
	sub := op.subtasks[st.index]
	prevInst := a.prev.instances(prevInfo)[st.index]
	if sub.inc == nil || sub.groups != st.groups || prevInst.keyed == nil || prevInst.keyed != state.KeyedBackend(sub.inc) {
		return nil, nil
	}
	if err := sub.inc.RollBack(sub.mark); err != nil {
		return nil, err
	}
	a.taken = append(a.taken, adopted{prevInst: prevInst, inst: inst, kb: prevInst.keyed})
	prevInst.keyed = nil
	inst.adopted = true
	return sub.inc, nil
}

// Restart replaces e with an executor restored from cp, as a failed job
// restarts from its latest checkpoint: new operator instances, initialised
// and opened as on any restore. When cp is an incremental checkpoint of e
// (or of an executor e restarted), the new executor takes over e's keyed
// backends rolled back to cp, which costs what changed since cp instead of
// a copy of the state. e is closed. If the new executor cannot be built,
// e keeps its backends (now at cp) and stays failed with the error.
func (e *Executor) Restart(j *Job, opts Options, cp *Checkpoint) (*Executor, error) {
	a := &adoption{prev: e, cp: cp}
	n, err := newExecutor(j, opts, cp, a)
	if err != nil {
		for _, t := range a.taken {
			t.prevInst.keyed = t.kb
		}
		if len(a.taken) > 0 && e.failure == nil {
			f, ok := err.(*Failure)
			if !ok {
				f = &Failure{Operator: "restart", Err: err, Position: e.position}
			}
			e.failure = f
		}
		return nil, err
	}
	if len(a.taken) > 0 && e.stateDir != "" {
		n.ownedDirs = append(n.ownedDirs, e.stateDir)
		e.stateDir = ""
	}
	n.ownedDirs = append(n.ownedDirs, e.ownedDirs...)
	e.ownedDirs = nil
	n.forced = maps.Clone(e.forced)
	e.Close()
	return n, nil
}

func (e *Executor) build(restore *restoring) error {
	// Subtasks and operator instances first, routes second: routes point
	// at the subtasks of downstream tasks.
	byTask := make([][]*subtask, len(e.plan.Tasks))
	for ti, t := range e.plan.Tasks {
		for i := 0; i < t.Parallelism; i++ {
			st := &subtask{task: t, index: i,
				groups: state.KeyGroupRangeFor(e.plan.MaxParallelism, t.Parallelism, i)}
			for _, info := range t.Operators {
				inst := &opInstance{info: info, wm: MinWatermark, opStore: state.NewOperatorStore(info.ID, info.Name)}
				if info.node.source != nil {
					newSrc := info.node.source
					if f, ok := e.replaced[info.node]; ok {
						newSrc = f
					}
					inst.src = newSrc()
					inst.op = inst.src
				} else {
					inst.op = info.node.newOp()
					if info.node.two != nil {
						two, ok := inst.op.(TwoInputOperator)
						if !ok {
							return fmt.Errorf("runtime: operator %q has two inputs but is not a TwoInputOperator", info.Name)
						}
						inst.two = two
					}
				}
				if u, ok := inst.op.(*userOp); ok && u.typed != nil {
					inst.process, inst.drain = u.process, u.drain
				}
				inst.ctx = &OperatorContext{exec: e, st: st, inst: inst}
				inst.slotOut = slotsOut(info.node)
				inst.svc.pts, inst.svc.owner = &st.pts, len(st.ops)
				st.ops = append(st.ops, inst)
			}
			byTask[ti] = append(byTask[ti], st)
			e.subtasks = append(e.subtasks, st)
			if st.ops[0].src != nil {
				e.sources = append(e.sources, st)
			}
		}
	}
	for ti, t := range e.plan.Tasks {
		for _, st := range byTask[ti] {
			for _, inst := range st.ops {
				for _, out := range inst.info.node.outputs {
					r := route{tag: out.tag, chained: -1, part: out.part, key: out.key}
					target := e.infoOf(out.to)
					if target.Task == t {
						r.chained = target.ChainIndex
					} else {
						r.targets = byTask[target.Task.Index]
						r.channel = e.channelIndex(target.Task, out, st.index)
					}
					inst.outs = append(inst.outs, r)
				}
				inst.direct = inst.info.node.emitsLast && len(inst.outs) == 1 && inst.outs[0].chained >= 0 &&
					st.ops[inst.outs[0].chained].two == nil
				if len(inst.outs) == 1 {
					if rt := &inst.outs[0]; rt.tag == "" && rt.chained < 0 && rt.part == hashPartition && len(rt.targets) == 1 {
						inst.hashOut = rt
					}
				}
				// A source emits its one record last too, but for --fail-at
				// (sourceOp.emitDirect).
				srcDirect := inst.src != nil && len(inst.outs) == 1 && inst.outs[0].chained >= 0 && st.ops[inst.outs[0].chained].two == nil
				if (inst.direct || srcDirect) && inst.outs[0].tag == "" {
					if c, ok := st.ops[inst.outs[0].chained].op.(*userOp); ok {
						inst.next, inst.nextIn = c.typed, c.in
					}
				}
			}
		}
	}
	order := make(map[*subtask]int, len(e.subtasks))
	for i, st := range e.subtasks {
		order[st] = i
	}
	for _, st := range e.subtasks {
		st.downstream = true
		for _, inst := range st.ops {
			for _, rt := range inst.outs {
				for _, t := range rt.targets {
					st.downstream = st.downstream && order[t] > order[st]
				}
			}
		}
	}
	for _, sts := range byTask {
		for _, st := range sts {
			perInput := make([]int, 2)
			for _, in := range st.task.nodes[0].inputs {
				for _, up := range byTask[e.infoOf(in.from).Task.Index] {
					st.channels = append(st.channels, channel{from: up, input: uint8(in.input)})
					perInput[in.input]++
				}
			}
			if st.task.nodes[0].two != nil {
				st.valve = NewTwoInputWatermarkValve(perInput[0], perInput[1])
			} else {
				st.valve = NewWatermarkValve(len(st.channels))
			}
		}
	}
	// Initialise state and open, as StreamTask.invoke: keyed backends only
	// for operators with a keyed input, operator state for all.
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			if err := e.initOperator(st, inst, restore); err != nil {
				return err
			}
			// Restored processing-time timers get their physical timer,
			// as Flink's timer service does when it starts.
			if err := inst.svc.rearm(); err != nil {
				return err
			}
		}
	}
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			if err := e.guard(st, inst, nil, func() error { return inst.op.Open(inst.ctx) }); err != nil {
				return err
			}
			inst.opened = true
			inst.printAfterOpen()
		}
	}
	return nil
}

func (e *Executor) infoOf(n *node) *OperatorInfo {
	for _, o := range e.plan.Operators {
		if o.node == n {
			return o
		}
	}
	panic("runtime: node without operator info") // INVARIANT: every node is planned
}

// channelIndex numbers the input channels of a task: every upstream
// subtask of every input edge, in edge order.
func (e *Executor) channelIndex(t *Task, in *edge, upstreamIndex int) int {
	n := 0
	for _, other := range t.nodes[0].inputs {
		if other == in {
			return n + upstreamIndex
		}
		n += e.infoOf(other.from).Parallelism
	}
	panic("runtime: edge is not an input of its task") // INVARIANT
}

func (e *Executor) initOperator(st *subtask, inst *opInstance, restore *restoring) error {
	if inst.info.Keyed {
		kb, err := e.adopt.take(e, inst, st)
		if err != nil {
			return fmt.Errorf("operator %q subtask %d: roll back to checkpoint: %w", inst.info.Name, st.index, err)
		}
		if kb == nil {
			kb, err = newKeyedBackend(e, inst.info, st)
		}
		if err != nil {
			return fmt.Errorf("operator %q subtask %d: state backend %s: %w", inst.info.Name, st.index, e.backend, err)
		}
		inst.keyed = kb
		inst.keyCodec = inst.info.node.inputs[0].key.Codec
	}
	if restore != nil {
		if err := restore.restoreOperator(inst, st); err != nil {
			return err
		}
	}
	if so, ok := inst.op.(StatefulOperator); ok {
		return e.guard(st, inst, nil, func() error { return so.InitializeState(inst.ctx) })
	}
	return nil
}

// SetFailAt injects one failure while source event n is read.
func (e *Executor) SetFailAt(n int64) { e.opts.FailAt = n }

// ErrInjected is the failure Options.FailAt injects (errors.Is).
var ErrInjected = errors.New("injected failure (--fail-at)")

// injectedFailure is ErrInjected at a record.
type injectedFailure int64

func (f injectedFailure) Error() string {
	return fmt.Sprintf("injected failure at record %d (--fail-at)", int64(f))
}

func (injectedFailure) Is(target error) bool { return target == ErrInjected }

// Plan is the executed plan.
func (e *Executor) Plan() *Plan { return e.plan }

// Backend names the keyed backend in use and why it was chosen.
func (e *Executor) Backend() (name, why string) { return e.backend, e.backendReason }

// Steps is the number of steps taken so far.
func (e *Executor) Steps() int64 { return e.steps }

// Position is the number of source events read so far.
func (e *Executor) Position() int64 { return e.position }

// ProcessingTime is the virtual processing clock (epoch ms).
func (e *Executor) ProcessingTime() int64 { return e.procTime }

// Finished reports whether every source ended and every queue is empty.
func (e *Executor) Finished() bool { return e.finished && e.idle() }

// Failure is the failure that stopped the job, if any.
func (e *Executor) Failure() *Failure { return e.failure }

func (e *Executor) idle() bool {
	if e.active != nil && len(e.active.stack) > 0 || len(e.procPending) > 0 || len(e.idlePending) > 0 {
		return false
	}
	for _, st := range e.subtasks {
		if st.inbox.len() > 0 || len(st.stack) > 0 {
			return false
		}
	}
	return true
}

// Idle reports whether the last source event and everything it caused are
// fully processed.
func (e *Executor) Idle() bool { return e.idle() }

// ErrFinished is returned by steps after the end of the input.
var ErrFinished = errors.New("runtime: end of input")

// ErrNoInput is returned by Next when no source may read now but not all
// of them ended: the sources a schedule drives (a test's inputs) wait for
// the test to push more.
var ErrNoInput = errors.New("runtime: waiting for input: no source has an event to read now (the sources a test drives read only what it pushes)")

// StepInfo describes one step: which element one operator handled.
type StepInfo struct {
	Task     string
	Subtask  int
	Operator string
	Kind     string // "record", "watermark", "timer", "source"
	Record   any    // the record handled (for record steps)
	Where    string // the source position of a source step
	Key      any
	// Input is the input of a two-input operator a record step took its
	// record from: 1 or 2 (0 for one-input operators).
	Input int
	// Timestamp is a record step's event timestamp (epoch milliseconds),
	// when the record has one (HasTimestamp).
	Timestamp    int64
	HasTimestamp bool
}

// Next reads one source event and runs everything it causes until all
// queues are empty. After a StepInto it first finishes the event in flight.
func (e *Executor) Next() error {
	if e.failure != nil {
		return e.failure
	}
	if e.idle() {
		if err := e.startSource(); err != nil {
			return err
		}
	}
	return e.drain()
}

// StepInto handles one element by one operator. When nothing is in flight it
// reads the next source event first.
func (e *Executor) StepInto() (StepInfo, error) {
	if e.failure != nil {
		return StepInfo{}, e.failure
	}
	if e.idle() {
		if err := e.startSource(); err != nil {
			return StepInfo{}, err
		}
	}
	e.describe = true
	info, _, err := e.step()
	e.describe = false
	return info, err
}

func (e *Executor) startSource() error {
	if e.opts.WallClock != nil {
		if now := e.opts.WallClock(); now > e.procTime {
			e.advanceProcessingTime(now - e.procTime)
			if len(e.procPending) > 0 {
				// Fire the timers that came due before reading on.
				return nil
			}
		}
	}
	st, err := e.dueSource()
	if err != nil {
		return err
	}
	if i, ok := e.forced[e.position]; ok && i < len(e.sources) && !e.sources[i].done {
		st = e.sources[i]
	}
	if st == nil {
		e.finished = true
		return ErrFinished
	}
	e.reads++
	st.stack = append(st.stack, work{kind: wSourcePull})
	e.active = st
	return nil
}

// dueSource picks the source subtask to read next. With a schedule
// (Options.Schedule) the schedule names it, or lets the executor choose
// among the sources it does not drive. The executor chooses as follows:
// with several sources whose subtasks all assign timestamps and can peek,
// the subtask whose next record has the lowest timestamp (control records
// and the end of input first; ties: the source declared first, then the
// lower subtask); otherwise (one source, parallel or not, included)
// round-robin by record. nil when every source is done.
func (e *Executor) dueSource() (*subtask, error) {
	sched := e.opts.Schedule
	if sched != nil {
		name, sub, ok := sched.Due(e.reads)
		if !ok {
			if e.allSourcesDone() {
				return nil, nil
			}
			return nil, ErrNoInput
		}
		if name != "" {
			for _, st := range e.sources {
				if st.task.Operators[0].Name == name && st.index == sub {
					if st.done {
						return nil, fmt.Errorf("runtime: source %q subtask %d is at the end of its input: it reads nothing more", name, sub)
					}
					return st, nil
				}
			}
			return nil, fmt.Errorf("runtime: the schedule names source %q subtask %d, which the job does not have", name, sub)
		}
	}
	if len(e.sources) == 1 && sched == nil {
		// One source subtask: the round robin below, without its search.
		if st := e.sources[0]; !st.done {
			e.nextSrc++
			return st, nil
		}
		return nil, nil // every source is done
	}
	var first, last *subtask
	ordered := true
	for _, st := range e.sources {
		if !e.choosable(st) {
			continue
		}
		if first == nil {
			first = st
		}
		last = st
		ordered = ordered && st.ops[0].src.orderable()
	}
	if first == nil {
		if e.allSourcesDone() {
			return nil, nil
		}
		return nil, ErrNoInput
	}
	if ordered && first.task != last.task {
		var best *subtask
		var bestDue int64
		for _, st := range e.sources {
			if !e.choosable(st) {
				continue
			}
			if d := st.ops[0].src.due(); best == nil || d < bestDue {
				best, bestDue = st, d
			}
		}
		return best, nil
	}
	for range e.sources {
		st := e.sources[e.nextSrc%len(e.sources)]
		e.nextSrc++
		if e.choosable(st) {
			return st, nil
		}
	}
	return nil, nil // INVARIANT: not reached, first is choosable
}

// choosable reports whether the executor may choose st to read next: it
// has not ended, and no schedule drives it.
func (e *Executor) choosable(st *subtask) bool {
	return !st.done && (e.opts.Schedule == nil || !e.opts.Schedule.Driven(st.task.Operators[0].Name))
}

// pick chooses the next subtask with work, in the scheduler's fixed order.
func (e *Executor) pick() *subtask {
	if e.active != nil && len(e.active.stack) > 0 {
		return e.active
	}
	e.active = nil
	if len(e.idlePending) > 0 {
		st := e.idlePending[0]
		e.idlePending = e.idlePending[1:]
		st.stack = append(st.stack, work{kind: wSourceIdle})
		e.active = st
		return st
	}
	for len(e.procPending) > 0 {
		st := e.procPending[0]
		pt, ok := st.pts.next(e.procTime)
		if !ok {
			e.procPending = e.procPending[1:]
			continue
		}
		// The operator fires its timers due at the physical timer's time,
		// then sets its physical timer again (Flink's onProcessingTime).
		st.ops[pt.owner].svc.physicalFired()
		st.stack = append(st.stack, work{kind: wProcTimers, op: int32(pt.owner), wm: pt.time})
		e.active = st
		return st
	}
	for _, st := range e.subtasks {
		for st.inbox.len() > 0 {
			if e.deliver(st, st.inbox.pop()) {
				return st
			}
		}
	}
	return nil
}

// deliver hands one element of st's input queue to its head operator: a
// record as work, a watermark or status through the valve (work only when
// the subtask's own watermark or status changed). It reports whether work
// was pushed, with st active.
func (e *Executor) deliver(st *subtask, el inElem) bool {
	var out ValveOutput
	switch el.kind {
	case elWatermark:
		out = st.valve.InputWatermark(int(el.channel), el.wm)
	case elStatus:
		out = st.valve.InputStatus(int(el.channel), el.idle)
	default:
		ch := &st.channels[el.channel]
		ch.took(&el.rec)
		st.stack = append(st.stack, work{kind: wRecord, rec: el.rec, key: el.key, kg: el.kg, input: ch.input})
		e.active = st
		return true
	}
	if !out.HasWatermark && !out.HasStatus {
		return false // the subtask's watermark and status did not change
	}
	// The stack is last in, first out: the watermark goes first.
	if out.HasStatus {
		st.stack = append(st.stack, work{kind: wStatus, idle: out.Idle})
	}
	if out.HasWatermark {
		st.stack = append(st.stack, work{kind: wWatermark, wm: out.Watermark})
	}
	e.active = st
	return true
}

// step runs one work item; ok=false when there was nothing to do.
func (e *Executor) step() (info StepInfo, ok bool, err error) {
	st := e.pick()
	if st == nil {
		e.noWork()
		return StepInfo{}, false, nil
	}
	w := st.stack[len(st.stack)-1]
	st.stack[len(st.stack)-1] = work{}
	st.stack = st.stack[:len(st.stack)-1]
	inst := st.ops[w.op]
	e.steps++
	info = StepInfo{Task: st.task.Name, Subtask: st.index, Operator: inst.info.Name}
	if e.trace != nil {
		e.trace.begin(st, inst)
	}
	err = e.guard(st, inst, &w, func() error { return e.run(st, inst, w, &info) })
	if e.trace != nil {
		e.trace.end(info)
	}
	return info, true, err
}

func (e *Executor) allSourcesDone() bool {
	for _, s := range e.sources {
		if !s.done {
			return false
		}
	}
	return true
}

func (e *Executor) run(st *subtask, inst *opInstance, w work, info *StepInfo) error {
	ctx := inst.ctx
	switch w.kind {
	case wSourcePull:
		info.Kind = "source"
		e.position++
		ctx.where = Where{}
		done, err := inst.src.pull(ctx)
		if e.describe || e.trace != nil {
			info.Where = ctx.where.String() // not per record of a run
		}
		if done {
			// The end of the input is not a record: positions count records.
			e.position--
			st.done = true
			info.Kind = "end of input"
		} else if err == nil && e.position == e.opts.FailAt {
			err = injectedFailure(e.opts.FailAt)
		}
		return err
	case wRecord:
		info.Kind = "record"
		info.Timestamp, info.HasTimestamp = w.rec.Timestamp, w.rec.HasTimestamp
		if e.describe || e.trace != nil {
			info.Record = plainValue(w.rec.Value)
		}
		ctx.rec = w.rec
		if inst.two != nil {
			info.Input = int(w.input) + 1
		}
		if inst.keyed != nil {
			if inst.broadcastInput(w.input) {
				// A broadcast element: no key (Flink's broadcast side).
				// (Not told by a nil key: the empty string's key is no
				// bytes, and a click of user "" was taken for one.)
				inst.noKey = true
				defer func() { inst.noKey = false }()
			} else {
				inst.keyed.SetCurrentKey(w.key, int(w.kg))
				if e.trace != nil {
					info.Key = ctx.CurrentKey()
				}
			}
		}
		if w.input == 1 {
			return inst.two.ProcessElement2(ctx, w.rec)
		}
		return inst.op.ProcessElement(ctx, w.rec)
	case wWatermark:
		info.Kind = "watermark"
		if !w.cont {
			if w.wm <= inst.wm {
				return nil // operators only see watermarks that advance
			}
			if e.trace != nil {
				e.trace.watermark(st, inst, inst.wm, w.wm)
			} else {
				e.countEvent()
			}
			inst.wm = w.wm
		}
		if t, ok, err := due(inst.svc.event, inst.wm); err != nil {
			return err
		} else if ok {
			info.Kind = "timer"
			// The continuation goes under the timer's output: the
			// operator fires its next timer after this one's records.
			st.stack = append(st.stack, work{kind: wWatermark, op: w.op, wm: w.wm, cont: true})
			return e.fire(st, inst, t, EventTime, info)
		}
		if wo, ok := inst.op.(WatermarkOperator); ok {
			if err := wo.ProcessWatermark(ctx, inst.wm); err != nil {
				return err
			}
		}
		if !ownsWatermarks(inst.op) {
			e.forwardWatermark(st, inst, inst.wm)
		}
		return nil
	case wStatus:
		info.Kind = "watermark status"
		if so, ok := inst.op.(WatermarkStatusOperator); ok {
			if err := so.ProcessWatermarkStatus(ctx, w.idle); err != nil {
				return err
			}
		}
		e.forwardStatus(st, inst, w.idle)
		return nil
	case wSourceIdle:
		info.Kind = "source idle"
		if src, ok := inst.src.(interface{ idleTimeout(*OperatorContext) }); ok {
			src.idleTimeout(ctx)
		}
		return nil
	case wProcTimers:
		info.Kind = "timer"
		// w.wm is the time of the physical timer that fired.
		t, ok, err := due(inst.svc.proc, w.wm)
		if err != nil {
			return err
		}
		if !ok {
			return inst.svc.rearm()
		}
		st.stack = append(st.stack, work{kind: wProcTimers, op: w.op, wm: w.wm})
		return e.fire(st, inst, t, ProcessingTime, info)
	}
	return fmt.Errorf("runtime: unknown work kind %d", w.kind)
}

func (e *Executor) fire(st *subtask, inst *opInstance, t state.Timer, d TimeDomain, info *StepInfo) error {
	ctx := inst.ctx
	inst.keyed.SetCurrentKey(t.Key, t.KeyGroup)
	// An event-time timer's records carry its timestamp; a processing-time
	// timer's main output carries none (Flink erases it), its context's
	// timestamp and side outputs are the timer's (OnTimerContext).
	ctx.rec = Record{}
	if d == EventTime {
		ctx.rec = Record{Timestamp: t.Timestamp, HasTimestamp: true}
	} else {
		ctx.procTimer, ctx.inProcTimer = t.Timestamp, true
		defer func() { ctx.inProcTimer = false }()
	}
	if e.trace != nil {
		info.Key = ctx.CurrentKey()
	}
	if e.trace != nil {
		e.trace.timer(TraceTimerFired, ctx, d, t)
	} else {
		e.countEvent()
	}
	to, ok := inst.op.(TimerOperator)
	if !ok {
		return fmt.Errorf("operator %q has timers but does not handle them", inst.info.Name)
	}
	return to.OnTimer(ctx, t, d)
}

// emit routes a record from an operator to its outputs with the given tag.
// Network outputs are queued at once; chained outputs are pushed on the
// subtask's stack after the operator returns (see flushChained).
func (e *Executor) emit(ctx *OperatorContext, tag string, r Record) {
	inst := ctx.inst
	if e.trace != nil {
		e.trace.emitted(ctx, tag, plainValue(r.Value))
	} else if e.light != nil {
		e.light.cur.Events++
	}
	if tag != "" && e.opts.Capture != nil {
		e.capture(ctx, tag, r.Value, r)
	}
	for i := range inst.outs {
		rt := &inst.outs[i]
		if rt.tag != tag {
			continue
		}
		if rt.chained >= 0 {
			if inst.direct && e.canRunDirect() {
				e.runDirect(ctx.st, rt.chained, r)
				continue
			}
			e.chained = append(e.chained, work{kind: wRecord, op: int32(rt.chained), rec: r})
			continue
		}
		switch rt.part {
		case hashPartition:
			if len(rt.targets) == 1 {
				// One target owns every key group: the key is encoded
				// straight into its queue.
				rt.targets[0].inbox.pushKeyed(rt.channel, r, rt.key.Append, e.plan.MaxParallelism)
				continue
			}
			e.keyBuf = rt.key.Append(e.keyBuf[:0], r.Value)
			kg := state.KeyGroupFor(e.keyBuf, e.plan.MaxParallelism)
			t := rt.targets[state.SubtaskFor(e.plan.MaxParallelism, len(rt.targets), kg)]
			t.inbox.pushRecord(rt.channel, r, e.keyBuf, kg)
		case broadcast:
			for _, t := range rt.targets {
				t.inbox.pushRecord(rt.channel, r, nil, 0)
			}
		case rebalance:
			t := rt.targets[(ctx.st.index+rt.rr)%len(rt.targets)]
			rt.rr++
			t.inbox.pushRecord(rt.channel, r, nil, 0)
		default:
			rt.targets[ctx.st.index].inbox.pushRecord(rt.channel, r, nil, 0)
		}
	}
}

// flushChained pushes the chained emissions of the last operator call so
// that the first emitted is handled first.
func (e *Executor) flushChained(st *subtask) {
	for i := len(e.chained) - 1; i >= 0; i-- {
		st.stack = append(st.stack, e.chained[i])
	}
	clear(e.chained)
	e.chained = e.chained[:0]
}

// emitWatermarkAfter makes a source's watermark follow the records it
// emitted in the same call.
func (e *Executor) emitWatermarkAfter(ctx *OperatorContext, wm int64) {
	ctx.inst.wm = wm
	e.forwardWatermark(ctx.st, ctx.inst, wm)
}

func (e *Executor) forwardWatermark(st *subtask, inst *opInstance, wm int64) {
	if inst.idle {
		return // an idle output forwards no watermarks
	}
	for i := range inst.outs {
		rt := &inst.outs[i]
		if rt.chained >= 0 {
			// An operator reached by several outputs (main and side) gets
			// the watermark once.
			if !slices.ContainsFunc(inst.outs[:i], func(o route) bool { return o.chained == rt.chained }) {
				e.chained = append(e.chained, work{kind: wWatermark, op: int32(rt.chained), wm: wm})
			}
			continue
		}
		for _, t := range rt.targets {
			t.inbox.pushWatermark(rt.channel, wm)
		}
	}
}

// forwardStatus announces a watermark status change on the operator's
// outputs: chained operators get it as a step, network channels in order
// with the records and watermarks before it.
func (e *Executor) forwardStatus(st *subtask, inst *opInstance, idle bool) {
	if inst.idle == idle {
		return
	}
	inst.idle = idle
	if e.trace != nil {
		e.trace.status(st, inst, idle)
	} else {
		e.countEvent()
	}
	for i := range inst.outs {
		rt := &inst.outs[i]
		if rt.chained >= 0 {
			if !slices.ContainsFunc(inst.outs[:i], func(o route) bool { return o.chained == rt.chained }) {
				e.chained = append(e.chained, work{kind: wStatus, op: int32(rt.chained), idle: idle})
			}
			continue
		}
		for _, t := range rt.targets {
			t.inbox.pushStatus(rt.channel, idle)
		}
	}
}

// advanceProcessingTime moves the virtual clock; processing-time timers
// fire on the following steps, subtask by subtask.
func (e *Executor) advanceProcessingTime(ms int64) {
	if ms <= 0 {
		return
	}
	// The clock stops at the end of time rather than wrap to year 1677.
	e.procTime = min(e.procTime, math.MaxInt64-ms) + ms
	if e.trace != nil {
		e.trace.processingTime(e.procTime)
	} else {
		e.countEvent()
	}
	for _, st := range e.subtasks {
		st.pts.clockMoved()
		if st.pts.pending(e.procTime) && !slices.Contains(e.procPending, st) {
			e.procPending = append(e.procPending, st)
		}
	}
	for _, st := range e.sources {
		if !st.done && st.ops[0].src.idleDue(e.procTime) && !slices.Contains(e.idlePending, st) {
			e.idlePending = append(e.idlePending, st)
		}
	}
}

// AdvanceProcessingTime moves the virtual processing clock by d (whole
// milliseconds) and fires the processing-time timers that became due.
func (e *Executor) AdvanceProcessingTime(d time.Duration) error {
	if e.failure != nil {
		return e.failure
	}
	e.advanceProcessingTime(d.Milliseconds())
	return e.drain()
}

// AdvanceWatermark makes every source emit the watermark wm (when it moves
// event time forward) and runs everything it causes.
func (e *Executor) AdvanceWatermark(wm int64) error {
	if e.failure != nil {
		return e.failure
	}
	if err := e.drain(); err != nil {
		return err
	}
	for _, st := range e.sources {
		inst := st.ops[0]
		if wm > inst.wm {
			e.active = st
			inst.src.commandWatermark(inst.ctx, wm)
			e.flushChained(st)
			if err := e.drain(); err != nil {
				return err
			}
		}
	}
	return nil
}

// drain runs steps until nothing is in flight.
func (e *Executor) drain() error {
	if e.trace == nil {
		return e.drainBatch()
	}
	for {
		_, ok, err := e.step()
		if err != nil || !ok {
			return err
		}
	}
}

// processRecord hands a record to a one-input operator, its key (if
// keyed) made current first: drainBatch's step for a record, whether it
// comes from an input queue or from the chain.
func (inst *opInstance) processRecord(rec Record, key []byte, kg int32) error {
	ctx := inst.ctx
	ctx.rec = rec
	if inst.keyed != nil {
		inst.keyed.SetCurrentKey(key, int(kg))
	}
	if inst.process != nil {
		return inst.process(ctx, rec)
	}
	return inst.op.ProcessElement(ctx, rec)
}

// drainBatch is drain without a trace: the steps run in one loop under one
// recover, where step builds a StepInfo and defers a recover per element.
// A panic still fails the task naming the step's operator, record, key
// and stack: the deferred recover runs before the stack unwinds, with the
// step's subtask, operator and work item in its variables.
//
// It hands work over without the stack where the stack would give it back
// at once: the one record an operator call emitted to its chain (pushed
// and popped next), and a record taken from an input queue.
func (e *Executor) drainBatch() (err error) {
	b := &e.batch
	var info StepInfo // run fills it in; nobody reads it here
	defer func() {
		e.batching = false
		if r := recover(); r != nil {
			buf := make([]byte, 16<<10)
			buf = buf[:goruntime.Stack(buf, false)]
			err = e.fail(b.st, b.inst, b.step(), fmt.Errorf("panic: %v", r), string(buf))
			clear(b.ws[1:]) // the steps runDirect left on the panic's way
		}
		b.st, b.inst, b.w, b.el, b.depth = nil, nil, nil, nil, 0
		b.ws[0] = work{} // runDirect clears the others as it returns
	}()
	e.batching = true
	w := &b.ws[0]
	have := false // w is the next work item, of subtask b.st
	for {
		// el is a record taken in place from b.st's input queue, for its
		// head operator (w is not used then).
		var el *inElem
		if !have {
			if st := e.active; st != nil && len(st.stack) > 0 {
				n := len(st.stack) - 1
				b.st, *w = st, st.stack[n]
				st.stack[n] = work{}
				st.stack = st.stack[:n]
			} else if b.st, el = e.pickRecord(); el == nil {
				if e.pick() == nil {
					e.noWork()
					return nil
				}
				continue
			}
		}
		have = false
		st := b.st
		var inst *opInstance
		var err error
		if el != nil && st.ops[0].two == nil {
			inst = st.ops[0]
			b.inst, b.w, b.el = inst, nil, el
			e.steps++
			if inst.drain != nil {
				err = inst.drain(e, st, el)
			} else {
				err = inst.processRecord(el.rec, el.key, el.kg)
			}
		} else {
			if el != nil {
				*w = el.work(st)
			}
			inst = st.ops[w.op]
			b.inst, b.w, b.el = inst, w, nil
			e.steps++
			if w.kind == wRecord && inst.two == nil {
				err = inst.processRecord(w.rec, w.key, w.kg)
			} else {
				err = e.run(st, inst, *w, &info)
			}
		}
		if ctx := inst.ctx; ctx != nil && ctx.err != nil {
			if err == nil {
				err = ctx.err
			}
			ctx.err = nil
		}
		if err != nil {
			return e.fail(st, inst, b.step(), err, "")
		}
		if e.failure != nil {
			return e.failure // an operator it ran directly failed
		}
		switch len(e.chained) {
		case 0:
		case 1:
			// Pushed and popped at once: run it next.
			*w, have = e.chained[0], true
			e.chained[0] = work{}
			e.chained = e.chained[:0]
			e.active = st
		default:
			e.flushChained(st)
		}
	}
}

// drainHead runs f, the typed operator at the head of st, on el, a record
// pickRecord took from st's input queue, and then on the records queued
// after it for as long as pickRecord would take them next, each as a step
// of its own: the call emitted nothing to the chain and nothing failed,
// st's stack is empty, no timers or idleness are pending, and the next
// element is a record. The subtasks pickRecord looks at before st stay
// empty: they were, and st's records only reach subtasks after it
// (subtask.downstream). It returns the error of the last call; drainBatch
// ends that step as it ends any other (the context's error, chained
// emissions). A failure or panic names the step's record through
// batchStep.el, as for a record drainBatch hands over itself.
func drainHead[T any](e *Executor, st *subtask, el *inElem, f typedFn[T]) error {
	inst := st.ops[0]
	ctx := inst.ctx
	q := &st.inbox
	for {
		ctx.rec = el.rec
		if inst.keyed != nil {
			inst.keyed.SetCurrentKey(el.key, int(el.kg))
		}
		var err error
		if s, ok := el.rec.Value.(*slot[T]); ok {
			err = f(ctx, s.v, s)
		} else {
			err = f(ctx, el.rec.Value.(T), el.rec.Value)
		}
		if err != nil || ctx.err != nil || e.failure != nil || len(e.chained) > 0 || len(st.stack) > 0 ||
			!st.downstream || len(e.idlePending) > 0 || len(e.procPending) > 0 || q.len() == 0 {
			return err
		}
		if el = q.peek(); el.kind != elRecord {
			return nil
		}
		q.head++
		st.channels[el.channel].took(&el.rec)
		e.batch.el = el
		e.steps++
	}
}

// batchStep is the step drainBatch runs, for its recover: w points into
// ws, whose first element is drainBatch's step and the others the steps
// runDirect runs within it, depth deep.
type batchStep struct {
	st   *subtask
	inst *opInstance
	w    *work
	// el is the step's record in st's input queue when w is nil.
	el    *inElem
	ws    [maxDirect + 1]work
	depth int
}

// step is the work item of the step running now, for a failure.
func (b *batchStep) step() *work {
	if b.w == nil && b.el != nil {
		w := b.el.work(b.st)
		return &w
	}
	if b.depth > 0 {
		// A direct step: runDirectTyped leaves its record in the
		// operator's context only.
		b.w.rec = b.inst.ctx.rec
	}
	return b.w
}

// maxDirect bounds how deep runDirect nests; deeper records go through
// the stack.
const maxDirect = 8

// runDirect runs the chained operator op on r at once, as a step of its
// own, while the operator that emitted r is still in its call: the
// emitter emits last (emitsLast) to this one consumer alone, so the
// stack would hand r to op next anyway. A failure of op fails the job
// (the emitter's step then ends it); a panic reaches drainBatch's recover
// naming op and r.
func (e *Executor) runDirect(st *subtask, op int, r Record) {
	inst, prev := e.enterDirect(st, op, r)
	e.leaveDirect(st, inst, prev, inst.op.ProcessElement(inst.ctx, r))
}

// directFrame is what enterDirect replaced in the batch step, for
// leaveDirect to put back.
type directFrame struct {
	inst *opInstance
	w    *work
}

// enterDirect makes the chained operator op, about to handle r, the
// batch's step (runDirect, runDirectTyped).
func (e *Executor) enterDirect(st *subtask, op int, r Record) (*opInstance, directFrame) {
	b := &e.batch
	prev := directFrame{b.inst, b.w}
	b.depth++
	// INVARIANT: ws[depth] is zero but while runDirect uses it, so a
	// record step needs only its operator and record set.
	w := &b.ws[b.depth]
	inst := st.ops[op]
	w.op, w.rec = int32(op), r
	b.inst, b.w = inst, w
	e.steps++
	inst.ctx.rec = r
	if inst.keyed != nil {
		inst.keyed.SetCurrentKey(nil, 0) // as a chained record's step does
	}
	return inst, prev
}

// leaveDirect ends the step enterDirect began, which returned err.
func (e *Executor) leaveDirect(st *subtask, inst *opInstance, prev directFrame, err error) {
	b := &e.batch
	w := b.w
	ctx := inst.ctx
	if ctx.err != nil {
		if err == nil {
			err = ctx.err
		}
		ctx.err = nil
	}
	if err != nil {
		e.fail(st, inst, w, err, "")
	}
	w.op, w.rec = 0, Record{}
	b.depth--
	b.inst, b.w = prev.inst, prev.w
}

// canRunDirect reports whether an operator's emission may run its direct
// consumer at once (opInstance.direct): drainBatch runs, nothing else was
// emitted in the call, nothing failed and the nesting is not too deep.
func (e *Executor) canRunDirect() bool {
	return e.batching && len(e.chained) == 0 && e.failure == nil && e.batch.depth < maxDirect
}

// pickRecord takes the next element of the input queues when it is a
// record, as pick would choose it: nothing else has work (no active
// stack, no timers or idleness pending), and the first subtask with a
// queued element has a record first. The element stays in the queue's
// array, valid while the subtask runs: only upstream subtasks push to
// its queue (the plan is acyclic), and a push into an emptied queue
// clears it (inbox.reset).
func (e *Executor) pickRecord() (*subtask, *inElem) {
	if len(e.idlePending) > 0 || len(e.procPending) > 0 {
		return nil, nil
	}
	for _, st := range e.subtasks {
		q := &st.inbox
		if q.len() == 0 {
			continue
		}
		el := q.peek()
		if el.kind != elRecord {
			return nil, nil
		}
		q.head++
		st.channels[el.channel].took(&el.rec)
		e.active = st
		return st, el
	}
	return nil, nil
}

// noWork notes that nothing is left to run: the end of the input when
// every source ended, and a new slot generation when nothing is in flight.
func (e *Executor) noWork() {
	if e.finished || e.allSourcesDone() {
		e.finished = true
	}
	if e.idle() {
		e.slotGen++ // no record holds a slot any more
	}
}

// guard runs user code: a panic or an error becomes a *Failure naming the
// task, operator, record and key, and the executor stops.
func (e *Executor) guard(st *subtask, inst *opInstance, w *work, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 16<<10)
			buf = buf[:goruntime.Stack(buf, false)]
			err = e.fail(st, inst, w, fmt.Errorf("panic: %v", r), string(buf))
		}
	}()
	err = f()
	if err == nil && inst.ctx != nil && inst.ctx.err != nil {
		err = inst.ctx.err
	}
	if inst.ctx != nil {
		inst.ctx.err = nil
	}
	if err != nil {
		return e.fail(st, inst, w, err, "")
	}
	e.flushChained(st)
	return nil
}

// broadcastInput reports whether input (0 the first, 1 the second) of a
// two-input operator carries a BroadcastStream: its elements have no key.
func (o *opInstance) broadcastInput(input uint8) bool {
	two := o.info.node.two
	return o.two != nil && two != nil && two.broadcast == int(input)
}

func (e *Executor) fail(st *subtask, inst *opInstance, w *work, cause error, stack string) error {
	clear(e.chained)
	e.chained = e.chained[:0]
	f := &Failure{Task: st.task.Name, Subtask: st.index, Operator: inst.info.Name, Err: cause, Stack: stack, Position: e.position}
	if w != nil {
		switch w.kind {
		case wRecord:
			f.Record = describeValue(plainValue(w.rec.Value))
			if inst.keyed != nil && !inst.broadcastInput(w.input) {
				f.Key = describeValue(inst.ctx.CurrentKey())
			}
		case wSourcePull:
			f.Record = inst.ctx.where.String()
		case wWatermark:
			f.Record = "watermark " + state.FormatMillis(w.wm)
		}
	}
	if stack != "" {
		f.Stack = trimStack(stack)
	}
	e.failure = f
	return f
}

// trimStack keeps the frames a user needs: from the panicking call down to
// the executor's own frames (dispatchFrames), without the recovery
// machinery above it.
func trimStack(s string) string {
	lines := strings.Split(s, "\n")
	start, end := 0, len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && start == 0 {
			start = i + 2 // the panic call and its file line
		}
		if i > start && start > 0 && slices.ContainsFunc(dispatchFrames, func(f string) bool { return strings.HasPrefix(l, f) }) {
			end = i
			break
		}
	}
	if start == 0 || start >= end {
		return s
	}
	return strings.Join(lines[start:end], "\n")
}

// dispatchFrames start the frames of the executor handing an element to an
// operator: the executor's methods, and the typed entry of the operators
// of this package, which the executor calls from an Operator call
// (typedUserOp), straight from the producer (runDirectTyped) or from the
// loop over a subtask's input queue (drainHead).
var dispatchFrames = []string{"streamdbg/runtime.(*Executor).", "streamdbg/runtime.typedUserOp[", "streamdbg/runtime.runDirectTyped[", "streamdbg/runtime.drainHead["}

// Close closes every operator and releases the state backends.
func (e *Executor) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	e.flushWritten() // a light run's entries count as written
	var errs []error
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			if inst.opened {
				if err := e.guard(st, inst, nil, inst.op.Close); err != nil && e.failure == nil {
					errs = append(errs, err)
				}
			}
			if inst.keyed != nil {
				if err := inst.keyed.Close(); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, dir := range append(e.ownedDirs, e.stateDir) {
		if dir == "" {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
