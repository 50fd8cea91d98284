package runtime

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"strings"

	"streamdbg/state"
)

// Restore is state to start a job from: an in-memory checkpoint or a
// savepoint on disk. Restore maps state to operators by operator id (from
// the uid) and redistributes it to the job's parallelism.
type Restore interface {
	// Info describes where the snapshot was taken.
	Info() RestoreInfo
	// Operators lists the operators that have state in the snapshot.
	Operators() []RestoredOperator
	// KeyedEntries yields the keyed entries of one operator in groups.
	KeyedEntries(operatorID string, groups state.KeyGroupRange) iter.Seq2[state.Entry, error]
	// OperatorEntries is the operator state of subtask index of parallelism,
	// redistributed as Flink does (split round-robin, union and broadcast to all).
	OperatorEntries(operatorID string, parallelism, index int) ([]state.OperatorEntry, error)
}

// RestoreInfo is where a snapshot was taken.
type RestoreInfo struct {
	Job            string
	Fingerprint    string
	CheckpointID   int64
	Position       int64 // source events read
	ProcessingTime int64
}

// RestoredOperator is one operator of a snapshot.
type RestoredOperator struct {
	ID, UID, Name  string
	Parallelism    int
	MaxParallelism int
	States         []state.StateMeta
}

// RestoreOptions say how strict a restore is.
type RestoreOptions struct {
	// AllowNonRestoredState skips snapshot state whose operator is not in
	// the job instead of refusing the restore (Flink's
	// --allowNonRestoredState).
	AllowNonRestoredState bool
}

type restoring struct {
	src  Restore
	opts RestoreOptions
	ops  map[string]RestoredOperator
}

// check refuses a snapshot that cannot restore into the plan.
func (r *restoring) check(p *Plan) error {
	r.ops = map[string]RestoredOperator{}
	var unmatched []string
	for _, o := range r.src.Operators() {
		r.ops[o.ID] = o
		info, ok := planOperatorByID(p, o.ID)
		if !ok {
			if len(o.States) > 0 {
				unmatched = append(unmatched, fmt.Sprintf("%s (uid %q, %d states)", o.Name, o.UID, len(o.States)))
			}
			continue
		}
		if o.MaxParallelism != p.MaxParallelism && hasKeyed(o.States) {
			return &MaxParallelismError{Operator: info.Name, Snapshot: o.MaxParallelism, Job: p.MaxParallelism}
		}
	}
	if len(unmatched) > 0 && !r.opts.AllowNonRestoredState {
		return &UnmatchedStateError{Operators: unmatched}
	}
	return nil
}

// MaxParallelismError refuses a snapshot whose max parallelism differs
// from the job's for an operator with keyed state: key groups cannot
// change.
type MaxParallelismError struct {
	Operator      string
	Snapshot, Job int // their max parallelisms
	// Remedy, when set, replaces the CLI's ("keep --max-parallelism N") in
	// the message: a Go test passes an option, not a flag.
	Remedy string
}

func (e *MaxParallelismError) Error() string {
	remedy := e.Remedy
	if remedy == "" {
		remedy = fmt.Sprintf("keep --max-parallelism %d", e.Snapshot)
	}
	return fmt.Sprintf("runtime: cannot restore operator %q: the snapshot has max parallelism %d, the job %d; key groups cannot change (%s)",
		e.Operator, e.Snapshot, e.Job, remedy)
}

// UnmatchedStateError refuses a snapshot with state of operators the job
// does not have, unless the restore allows non-restored state.
type UnmatchedStateError struct {
	Operators []string // name (uid, number of states)
	// Remedy, when set, replaces the CLI's ("restore with
	// --allow-non-restored-state to drop it") in the message.
	Remedy string
}

func (e *UnmatchedStateError) Error() string {
	remedy := e.Remedy
	if remedy == "" {
		remedy = "restore with --allow-non-restored-state to drop it"
	}
	return fmt.Sprintf("runtime: the snapshot has state for operators the job does not have: %s; %s", strings.Join(e.Operators, ", "), remedy)
}

func hasKeyed(ms []state.StateMeta) bool {
	for _, m := range ms {
		if m.Scope == state.ScopeKeyed {
			return true
		}
	}
	return false
}

func planOperatorByID(p *Plan, id string) (*OperatorInfo, bool) {
	for _, o := range p.Operators {
		if o.ID == id {
			return o, true
		}
	}
	return nil, false
}

// batchSource is a Restore that also hands its keyed entries over in
// batches (a savepoint: decoded on every core while the backend loads).
type batchSource interface {
	KeyedBatches(operatorID string, groups state.KeyGroupRange) iter.Seq2[[]state.Entry, error]
}

// restoreKeyed loads the keyed entries of operator id in groups into kb,
// in batches when both sides can.
func (r *restoring) restoreKeyed(kb state.KeyedBackend, metas []state.StateMeta, id string, groups state.KeyGroupRange) error {
	if src, ok := r.src.(batchSource); ok {
		if br, ok := kb.(state.BatchRestorer); ok {
			return br.RestoreBatches(metas, src.KeyedBatches(id, groups))
		}
	}
	return kb.Restore(metas, r.src.KeyedEntries(id, groups))
}

func (r *restoring) restoreOperator(inst *opInstance, st *subtask) error {
	o, ok := r.ops[inst.info.ID]
	if !ok {
		return nil
	}
	var keyed, opMetas []state.StateMeta
	for _, m := range o.States {
		if m.Scope == state.ScopeKeyed {
			keyed = append(keyed, m)
		} else {
			opMetas = append(opMetas, m)
		}
	}
	if len(keyed) > 0 {
		if inst.keyed == nil {
			return fmt.Errorf("runtime: operator %q: the snapshot has keyed state (%s) but the operator's input is not keyed", inst.info.Name, keyed[0].StateName)
		}
		// An adopted backend was rolled back to the checkpoint already.
		if !inst.adopted {
			if err := r.restoreKeyed(inst.keyed, keyed, o.ID, st.groups); err != nil {
				return fmt.Errorf("runtime: restore operator %q subtask %d: %w", inst.info.Name, st.index, err)
			}
		}
		// Timer queues are otherwise opened when the operator first sets a
		// timer; restored timers must fire even if it never sets another.
		for _, m := range keyed {
			d := EventTime
			switch state.TimerDomain(m.StateName) {
			case "":
				continue
			case "processing":
				d = ProcessingTime
			}
			if _, err := inst.timers(d); err != nil {
				return fmt.Errorf("runtime: restore operator %q subtask %d: %w", inst.info.Name, st.index, err)
			}
		}
	}
	if len(opMetas) > 0 {
		entries, err := r.src.OperatorEntries(o.ID, st.task.Parallelism, st.index)
		if err != nil {
			return fmt.Errorf("runtime: restore operator %q subtask %d: %w", inst.info.Name, st.index, err)
		}
		if err := inst.opStore.Restore(opMetas, entries); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoint is an in-memory snapshot of a running job, taken between two
// source events. It restores at the same parallelism (back, failure
// recovery) or at any other.
//
// A full checkpoint (Executor.Checkpoint) holds the keyed entries as bytes.
// An incremental one (Executor.IncrementalCheckpoint) holds a mark in each
// keyed backend instead (state.IncrementalBackend): taking it costs nothing
// per entry, and Executor.Restart returns to it by rolling the backends back,
// which costs what changed since. Its keyed entries are read from the live
// backends, so it is only readable while they are: until Release, or until
// the executor that holds them closes; Materialize makes it a full one.
type Checkpoint struct {
	info RestoreInfo
	ops  []checkpointOp
	// clock is the executor's event and processing time, for ResumeTime.
	clock *clockState
	// reads is the executor's source reads (Executor.Reads).
	reads int64
}

// ResumeTime makes an executor restored from cp continue cp's event time
// exactly: watermarks, channel statuses and watermark generators go on as
// if nothing happened (what back needs to give the original pass byte for
// byte). Without it a restored executor is Flink's restore: state comes
// back, event time starts over at MinWatermark. The plan must be the one
// cp was taken with.
func (e *Executor) ResumeTime(cp *Checkpoint) error { return e.loadClock(cp.clock) }

// clockState is what a running executor knows of time that is not operator
// state: Flink restores none of it.
type clockState struct {
	subtasks []subtaskClock
	// nextSrc is the round-robin position over the source subtasks.
	nextSrc int
}

type subtaskClock struct {
	valve    valveState
	channels []channel
	ops      []opClock
	source   sourceClock
	// phys are the physical processing-time timers in firing order.
	phys []physTimer
}

type opClock struct {
	wm   int64
	idle bool
}

func (e *Executor) saveClock() *clockState {
	c := &clockState{subtasks: make([]subtaskClock, len(e.subtasks)), nextSrc: e.nextSrc}
	for i, st := range e.subtasks {
		sc := subtaskClock{valve: st.valve.save(), channels: slices.Clone(st.channels)}
		for _, pt := range st.pts.timers {
			sc.phys = append(sc.phys, *pt)
		}
		for _, inst := range st.ops {
			sc.ops = append(sc.ops, opClock{wm: inst.wm, idle: inst.idle})
		}
		if src := st.ops[0].src; src != nil {
			sc.source = src.saveClock()
		}
		c.subtasks[i] = sc
	}
	return c
}

// loadClock puts back what saveClock took; the plan must be the same.
func (e *Executor) loadClock(c *clockState) error {
	if c == nil || len(c.subtasks) != len(e.subtasks) {
		return fmt.Errorf("runtime: cannot resume: the checkpoint was taken with another plan")
	}
	e.nextSrc = c.nextSrc
	for i, st := range e.subtasks {
		sc := c.subtasks[i]
		if len(sc.ops) != len(st.ops) || len(sc.channels) != len(st.channels) {
			return fmt.Errorf("runtime: cannot resume: the checkpoint was taken with another plan")
		}
		st.valve.load(sc.valve)
		for j := range st.channels {
			from := st.channels[j].from
			st.channels[j] = sc.channels[j]
			st.channels[j].from = from
		}
		st.pts = procTimeService{}
		for j, inst := range st.ops {
			inst.wm, inst.idle = sc.ops[j].wm, sc.ops[j].idle
			inst.svc.phys = nil
		}
		for _, pt := range sc.phys {
			st.ops[pt.owner].svc.phys = st.pts.register(pt.time, pt.owner)
		}
		if src := st.ops[0].src; src != nil {
			src.loadClock(sc.source)
		}
	}
	return nil
}

type checkpointOp struct {
	RestoredOperator
	subtasks []checkpointSubtask
}

type checkpointSubtask struct {
	groups   state.KeyGroupRange
	keyed    []byte // snapshot stream of the keyed entries (full)
	inc      state.IncrementalBackend
	mark     state.Mark // in inc (incremental)
	operator []state.OperatorEntry
}

// Checkpoint snapshots every operator of every subtask. It must be called
// when the executor is idle (no element in flight), so no record is half
// processed and queues hold nothing: the snapshot is consistent without
// barriers.
func (e *Executor) Checkpoint(id int64) (*Checkpoint, error) {
	return e.checkpoint(id, false)
}

// IncrementalCheckpoint is Checkpoint with marks in the keyed backends that
// can take them (both built-in ones can) instead of copies of their entries:
// it costs the operator state and nothing per keyed entry.
func (e *Executor) IncrementalCheckpoint(id int64) (*Checkpoint, error) {
	return e.checkpoint(id, true)
}

func (e *Executor) checkpoint(id int64, incremental bool) (*Checkpoint, error) {
	if err := e.prepareSnapshot("checkpoint"); err != nil {
		return nil, err
	}
	cp := &Checkpoint{info: RestoreInfo{Job: e.plan.Job, Fingerprint: e.plan.Fingerprint(), CheckpointID: id, Position: e.position, ProcessingTime: e.procTime},
		clock: e.saveClock(), reads: e.reads}
	for _, info := range e.plan.Operators {
		op := checkpointOp{RestoredOperator: RestoredOperator{ID: info.ID, UID: info.UID, Name: info.Name, Parallelism: info.Parallelism,
			MaxParallelism: e.plan.MaxParallelism, States: e.declaredStates(info)}}
		for _, inst := range e.instances(info) {
			st := inst.ctx.st
			sub := checkpointSubtask{groups: st.groups, operator: inst.opStore.Entries()}
			if ib, ok := inst.keyed.(state.IncrementalBackend); ok && incremental {
				m, err := ib.Mark()
				if err != nil {
					cp.ops = append(cp.ops, op)
					cp.Release()
					return nil, fmt.Errorf("runtime: checkpoint operator %q subtask %d: %w", info.Name, st.index, err)
				}
				sub.inc, sub.mark = ib, m
			} else if inst.keyed != nil {
				var buf bytes.Buffer
				if err := state.WriteKeyGroups(&buf, st.groups, func(kg int) iter.Seq2[state.Entry, error] {
					return inst.keyed.Entries(kg, "")
				}); err != nil {
					return nil, fmt.Errorf("runtime: checkpoint operator %q subtask %d: %w", info.Name, st.index, err)
				}
				sub.keyed = buf.Bytes()
			}
			op.subtasks = append(op.subtasks, sub)
		}
		cp.ops = append(cp.ops, op)
	}
	return cp, nil
}

// prepareSnapshot checks that the executor can be snapshotted (between two
// source events, not failed) and lets checkpointed functions write their
// state, as before every checkpoint and savepoint.
func (e *Executor) prepareSnapshot(what string) error {
	if !e.idle() {
		return fmt.Errorf("runtime: %s while elements are in flight", what)
	}
	if e.failure != nil {
		return e.failure
	}
	return e.snapshotFunctions()
}

// snapshotFunctions calls SnapshotState of every checkpointed operator.
func (e *Executor) snapshotFunctions() error {
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			if so, ok := inst.op.(StatefulOperator); ok {
				if err := e.guard(st, inst, nil, func() error { return so.SnapshotState(inst.ctx) }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// declaredStates is the StateMeta of every state of one operator over its
// subtasks, by name; keyed states are not counted (snapshots count what
// they write).
func (e *Executor) declaredStates(info *OperatorInfo) []state.StateMeta {
	metas := map[string]state.StateMeta{}
	for _, inst := range e.instances(info) {
		for _, m := range inst.opStore.States() {
			addMeta(metas, m)
		}
		if inst.keyed != nil {
			for _, m := range inst.keyed.Describe() {
				addMeta(metas, m)
			}
		}
	}
	out := make([]state.StateMeta, 0, len(metas))
	for _, m := range metas {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b state.StateMeta) int { return strings.Compare(a.StateName, b.StateName) })
	return out
}

func addMeta(metas map[string]state.StateMeta, m state.StateMeta) {
	if old, ok := metas[m.StateName]; ok {
		m.Entries += old.Entries
		m.Bytes += old.Bytes
	}
	metas[m.StateName] = m
}

// Info implements Restore.
func (c *Checkpoint) Info() RestoreInfo { return c.info }

// Operators implements Restore.
func (c *Checkpoint) Operators() []RestoredOperator {
	out := make([]RestoredOperator, len(c.ops))
	for i, o := range c.ops {
		out[i] = o.RestoredOperator
	}
	return out
}

func (c *Checkpoint) op(id string) *checkpointOp {
	for i := range c.ops {
		if c.ops[i].ID == id {
			return &c.ops[i]
		}
	}
	return nil
}

// KeyedEntries implements Restore.
func (c *Checkpoint) KeyedEntries(id string, groups state.KeyGroupRange) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		op := c.op(id)
		if op == nil {
			return
		}
		for _, sub := range op.subtasks {
			if sub.groups.End < groups.Start || sub.groups.Start > groups.End {
				continue
			}
			if sub.inc != nil {
				for kg := max(sub.groups.Start, groups.Start); kg <= min(sub.groups.End, groups.End); kg++ {
					for en, err := range sub.inc.MarkedEntries(sub.mark, kg) {
						if err != nil {
							yield(en, fmt.Errorf("runtime: checkpoint %d operator %q: %w", c.info.CheckpointID, op.Name, err))
							return
						}
						if !yield(en, nil) {
							return
						}
					}
				}
				continue
			}
			for en, err := range state.NewStreamReaderBytes(sub.keyed, 0).All() {
				if err != nil {
					yield(en, err)
					return
				}
				if groups.Contains(en.KeyGroup) && !yield(en, nil) {
					return
				}
			}
		}
	}
}

// OperatorEntries implements Restore.
func (c *Checkpoint) OperatorEntries(id string, parallelism, index int) ([]state.OperatorEntry, error) {
	op := c.op(id)
	if op == nil {
		return nil, nil
	}
	per := make([][]state.OperatorEntry, len(op.subtasks))
	for i, s := range op.subtasks {
		per[i] = s.operator
	}
	return state.RedistributeOperatorState(per, parallelism, index), nil
}

// Incremental reports whether the checkpoint holds marks in live backends.
func (c *Checkpoint) Incremental() bool {
	for _, o := range c.ops {
		for _, s := range o.subtasks {
			if s.inc != nil {
				return true
			}
		}
	}
	return false
}

// Release frees the marks of an incremental checkpoint: the backends drop
// the changes kept only to return to it. The checkpoint cannot be restored
// or read afterwards. It does nothing to a full checkpoint.
func (c *Checkpoint) Release() {
	for i := range c.ops {
		for j := range c.ops[i].subtasks {
			s := &c.ops[i].subtasks[j]
			if s.inc != nil {
				s.inc.Release(s.mark)
				s.inc = nil
				s.keyed = nil
			}
		}
	}
}

// Materialize turns an incremental checkpoint into a full one, readable
// after its executor closed: it copies the keyed entries as they were at
// the checkpoint and releases the marks.
func (c *Checkpoint) Materialize() error {
	for i := range c.ops {
		op := &c.ops[i]
		for j := range op.subtasks {
			s := &op.subtasks[j]
			if s.inc == nil {
				continue
			}
			var buf bytes.Buffer
			inc, m := s.inc, s.mark
			if err := state.WriteKeyGroups(&buf, s.groups, func(kg int) iter.Seq2[state.Entry, error] {
				return inc.MarkedEntries(m, kg)
			}); err != nil {
				return fmt.Errorf("runtime: materialize checkpoint %d operator %q: %w", c.info.CheckpointID, op.Name, err)
			}
			inc.Release(m)
			s.inc, s.keyed = nil, buf.Bytes()
		}
	}
	return nil
}

// Size is the number of bytes the checkpoint holds (for an incremental
// one: its operator state; the backends hold the changes).
func (c *Checkpoint) Size() int {
	n := 0
	for _, o := range c.ops {
		for _, s := range o.subtasks {
			n += len(s.keyed)
			for _, e := range s.operator {
				n += len(e.Key) + len(e.Value)
			}
		}
	}
	return n
}
