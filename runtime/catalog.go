package runtime

import (
	"iter"
	"slices"
	"strings"

	"streamdbg/state"
)

// Catalog presents the live state of the executor as a state.Catalog, so
// queries, views and watches read a running job exactly as a savepoint.
// It must only be used while the executor is not stepping.
//
// Before it is read, checkpointed functions write their state (a source its
// offsets), as they would for a snapshot, so views show current positions.
func (e *Executor) Catalog() state.Catalog {
	if e.idle() && e.failure == nil {
		_ = e.snapshotFunctions() // a failing function fails the job: views show it
	}
	return liveCatalog{e}
}

type liveCatalog struct{ e *Executor }

func (c liveCatalog) Operators() []state.OperatorInfo {
	out := make([]state.OperatorInfo, len(c.e.plan.Operators))
	for i, o := range c.e.plan.Operators {
		out[i] = state.OperatorInfo{ID: o.ID, UID: o.UID, Name: o.Name, Parallelism: o.Parallelism, MaxParallelism: c.e.plan.MaxParallelism}
	}
	return out
}

// instances returns the operator's instances in subtask order.
func (e *Executor) instances(info *OperatorInfo) []*opInstance {
	var out []*opInstance
	for _, st := range e.subtasks {
		if st.task == info.Task {
			out = append(out, st.ops[info.ChainIndex])
		}
	}
	return out
}

func (c liveCatalog) States() []state.StateMeta {
	var out []state.StateMeta
	for _, info := range c.e.plan.Operators {
		metas := map[string]state.StateMeta{}
		for _, inst := range c.e.instances(info) {
			if inst.keyed != nil {
				for _, m := range inst.keyed.States() {
					addMeta(metas, m)
				}
			}
			for _, m := range inst.opStore.States() {
				addMeta(metas, m)
			}
		}
		start := len(out)
		for _, m := range metas {
			out = append(out, m)
		}
		slices.SortFunc(out[start:], func(a, b state.StateMeta) int { return strings.Compare(a.StateName, b.StateName) })
	}
	return out
}

func (c liveCatalog) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	return func(yield func(state.KeyedRow, error) bool) {
		for _, info := range c.e.plan.Operators {
			if !info.Keyed || scan.OperatorID != "" && scan.OperatorID != info.ID {
				continue
			}
			for _, inst := range c.e.instances(info) {
				if !c.scanInstance(inst, scan, false, func(r state.KeyedRow) bool { return yield(r, nil) }, func(err error) { yield(state.KeyedRow{}, err) }) {
					return
				}
			}
		}
	}
}

// scanInstance yields the keyed rows (or, with timers, the timer entries as
// rows) of one operator instance; false when the consumer stopped or an
// error was reported.
func (c liveCatalog) scanInstance(inst *opInstance, scan state.KeyedScan, timers bool, yield func(state.KeyedRow) bool, fail func(error)) bool {
	groups := scan.KeyGroups
	rng := inst.ctx.st.groups
	if groups == nil {
		for kg := rng.Start; kg <= rng.End; kg++ {
			groups = append(groups, kg)
		}
	}
	metas := map[string]state.StateMeta{}
	for _, m := range inst.keyed.Describe() {
		metas[m.StateName] = m
	}
	keys := state.NewKeyFilter(inst.info.KeyType, scan.Keys)
	for _, kg := range groups {
		if !rng.Contains(kg) {
			continue
		}
		for en, err := range inst.keyed.Entries(kg, scan.StateName) {
			if err != nil {
				fail(err)
				return false
			}
			isTimer := state.TimerDomain(en.State) != ""
			if isTimer != timers || !keys.Match(en.Key) {
				continue
			}
			m := metas[en.State]
			row := state.KeyedRow{OperatorID: inst.info.ID, OperatorName: inst.info.Name, Subtask: inst.ctx.st.index,
				KeyGroup: en.KeyGroup, StateName: en.State, Kind: m.Kind, Key: display(m.KeyType, en.Key),
				Namespace: displayNS(m.NamespaceType, en.Namespace)}
			if isTimer {
				ts, _ := state.Int64.Decode(en.UserKey)
				row.Value = ts
			} else {
				row.Value = display(m.ValueType, en.Value)
				if en.UserKey != nil || m.Kind == state.KindMap {
					row.UserKey = display(m.UserKeyType, en.UserKey)
				}
			}
			if !yield(row) {
				return false
			}
		}
	}
	return true
}

func display(typeName string, b []byte) any {
	v, err := state.DisplayBytes(typeName, b)
	if err != nil {
		return state.Hex(b)
	}
	return v
}

func displayNS(typeName string, b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return display(typeName, b)
}

func (c liveCatalog) OperatorState(scan state.OperatorScan) iter.Seq2[state.OperatorRow, error] {
	return func(yield func(state.OperatorRow, error) bool) {
		for _, info := range c.e.plan.Operators {
			if scan.OperatorID != "" && scan.OperatorID != info.ID {
				continue
			}
			for _, inst := range c.e.instances(info) {
				metas := map[string]state.StateMeta{}
				for _, m := range inst.opStore.States() {
					metas[m.StateName] = m
				}
				for _, en := range inst.opStore.Entries() {
					if scan.StateName != "" && scan.StateName != en.State {
						continue
					}
					m := metas[en.State]
					row := state.OperatorRow{OperatorID: info.ID, OperatorName: info.Name, Subtask: inst.ctx.st.index,
						StateName: en.State, Kind: en.Kind, Position: en.Position, Value: display(m.ValueType, en.Value)}
					if en.Kind == state.KindBroadcast {
						row.Key = display(m.UserKeyType, en.Key)
					}
					if !yield(row, nil) {
						return
					}
				}
			}
		}
	}
}

func (c liveCatalog) Timers(scan state.TimerScan) iter.Seq2[state.TimerRow, error] {
	return func(yield func(state.TimerRow, error) bool) {
		for _, info := range c.e.plan.Operators {
			if !info.Keyed || scan.OperatorID != "" && scan.OperatorID != info.ID {
				continue
			}
			for _, inst := range c.e.instances(info) {
				ok := c.scanInstance(inst, state.KeyedScan{KeyGroups: scan.KeyGroups}, true, func(r state.KeyedRow) bool {
					return yield(state.TimerRow{OperatorID: r.OperatorID, OperatorName: r.OperatorName, Subtask: r.Subtask,
						KeyGroup: r.KeyGroup, StateName: r.StateName, Key: r.Key, Namespace: r.Namespace, Domain: state.TimerDomain(r.StateName),
						Timestamp: r.Value.(int64)}, nil)
				}, func(err error) { yield(state.TimerRow{}, err) })
				if !ok {
					return
				}
			}
		}
	}
}

func (c liveCatalog) KeyGroupOf(meta state.StateMeta, key any) (int, bool) {
	b, ok := state.EncodeKeyLiteral(meta.KeyType, key)
	if !ok {
		return 0, false
	}
	return state.KeyGroupFor(b, c.e.plan.MaxParallelism), true
}
