package runtime

import "streamdbg/state"

// SubtaskView is what a view shows of one subtask.
type SubtaskView struct {
	Task      *Task
	Index     int
	KeyGroups state.KeyGroupRange
	// Queued is the number of elements waiting in the input queue, and
	// QueuedRecords the records among them (oldest first, at most 20).
	Queued        int
	QueuedRecords []any
	Watermark     int64
	// Done is true for a source subtask at the end of its input.
	Done      bool
	Operators []OperatorView
}

// OperatorView is one operator in one subtask.
type OperatorView struct {
	Info             *OperatorInfo
	Watermark        int64
	EventTimers      int
	ProcessingTimers int
	// Keyed is the operator's keyed backend (nil when its input is not
	// keyed). Views may read it; they must not write.
	Keyed state.KeyedBackend
	// OperatorState is the operator state of the subtask.
	OperatorState *state.OperatorStore
}

// Subtasks lists every subtask in the scheduler's order.
func (e *Executor) Subtasks() []SubtaskView {
	out := make([]SubtaskView, 0, len(e.subtasks))
	for _, st := range e.subtasks {
		v := SubtaskView{Task: st.task, Index: st.index, KeyGroups: st.groups, Queued: st.inbox.len(), Watermark: st.wm, Done: st.done}
		for _, el := range st.inbox.queued() {
			if len(v.QueuedRecords) == 20 {
				break
			}
			if !el.isWatermark {
				v.QueuedRecords = append(v.QueuedRecords, el.rec.Value)
			}
		}
		for _, inst := range st.ops {
			ov := OperatorView{Info: inst.info, Watermark: inst.wm, Keyed: inst.keyed, OperatorState: inst.opStore}
			if inst.event != nil {
				ov.EventTimers = inst.event.Len()
			}
			if inst.proc != nil {
				ov.ProcessingTimers = inst.proc.Len()
			}
			v.Operators = append(v.Operators, ov)
		}
		out = append(out, v)
	}
	return out
}

// Watermark is the job's event time: the lowest watermark of any operator
// in any subtask (MinWatermark before the first watermark).
func (e *Executor) Watermark() int64 {
	wm := int64(MaxWatermark)
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			wm = min(wm, inst.wm)
		}
	}
	return wm
}
