package runtime

import (
	"iter"
	"time"

	"streamdbg/savepoint"
	"streamdbg/state"
)

// SavepointSnapshot describes the executor's state for savepoint.Write. It
// must be called when the executor is idle; the keyed entries are read from
// the backends while the savepoint is written, so the executor must not step
// until Write returns. The creation time is the job's processing-time clock,
// so two savepoints of the same job at the same point are byte-identical.
func (e *Executor) SavepointSnapshot(checkpointID int64) (*savepoint.Snapshot, error) {
	if err := e.prepareSnapshot("savepoint"); err != nil {
		return nil, err
	}
	snap := &savepoint.Snapshot{JobName: e.plan.Job, JobFingerprint: e.plan.Fingerprint(), CheckpointID: checkpointID,
		Created: time.UnixMilli(e.procTime).UTC(), Position: e.position, ProcessingTime: e.procTime}
	for _, info := range e.plan.Operators {
		op := savepoint.OperatorSnapshot{ID: info.ID, UID: info.UID, Name: info.Name, Parallelism: info.Parallelism,
			MaxParallelism: e.plan.MaxParallelism, States: e.declaredStates(info)}
		for _, inst := range e.instances(info) {
			st := inst.ctx.st
			sub := savepoint.SubtaskSnapshot{Index: st.index, KeyGroups: st.groups, Operator: inst.opStore.Entries()}
			if inst.keyed != nil {
				kb := inst.keyed
				sub.Keyed = func(kg int) iter.Seq2[state.Entry, error] { return kb.Entries(kg, "") }
				if eb, ok := kb.(state.EntryBatcher); ok {
					// The same entries, a batch per iterator step.
					sub.KeyedBatches = func(kg int) iter.Seq2[[]state.Entry, error] { return eb.EntryBatches(kg, "") }
				}
			}
			if info.IsSource {
				snap.Sources = append(snap.Sources, sourcePositions(info, sub.Operator)...)
			}
			op.Subtasks = append(op.Subtasks, sub)
		}
		snap.Operators = append(snap.Operators, op)
	}
	return snap, nil
}

// sourcePositions reads {"partition", "offset"} elements of a source's
// "offsets" state, for the people reading _metadata.
func sourcePositions(info *OperatorInfo, entries []state.OperatorEntry) []savepoint.SourcePosition {
	var out []savepoint.SourcePosition
	for _, en := range entries {
		if en.State != "offsets" {
			continue
		}
		v, err := state.DisplayJSON(en.Value)
		if err != nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		p, _ := m["partition"].(int64)
		o, _ := m["offset"].(int64)
		out = append(out, savepoint.SourcePosition{Source: info.Name, Partition: int(p), Offset: o})
	}
	return out
}

// FromSavepoint makes a savepoint a Restore.
func FromSavepoint(sp *savepoint.Savepoint) Restore { return savepointRestore{sp} }

type savepointRestore struct{ sp *savepoint.Savepoint }

func (r savepointRestore) Info() RestoreInfo {
	m := r.sp.Meta()
	return RestoreInfo{Job: m.JobName, Fingerprint: m.JobFingerprint, CheckpointID: m.CheckpointID, Position: m.Position, ProcessingTime: m.ProcessingTime}
}

func (r savepointRestore) Operators() []RestoredOperator {
	var out []RestoredOperator
	for _, o := range r.sp.Meta().Operators {
		out = append(out, RestoredOperator{ID: o.ID, UID: o.UID, Name: o.Name, Parallelism: o.Parallelism,
			MaxParallelism: o.MaxParallelism, States: r.sp.StateMetasFor(o.ID)})
	}
	return out
}

func (r savepointRestore) KeyedEntries(id string, groups state.KeyGroupRange) iter.Seq2[state.Entry, error] {
	return r.sp.KeyedEntriesFor(id, groups)
}

// KeyedBatches is KeyedEntries in batches: what restores read.
func (r savepointRestore) KeyedBatches(id string, groups state.KeyGroupRange) iter.Seq2[[]state.Entry, error] {
	return r.sp.KeyedBatchesFor(id, groups)
}

func (r savepointRestore) OperatorEntries(id string, parallelism, index int) ([]state.OperatorEntry, error) {
	return r.sp.OperatorEntriesFor(id, parallelism, index)
}
