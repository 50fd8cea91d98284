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
	// Watermark is the subtask's input watermark: what its valve emitted
	// (a source subtask has none: see its operators' watermarks).
	Watermark int64
	// Idle says every input channel is idle.
	Idle bool
	// Channels are the input channels, in channel order.
	Channels []ChannelView
	// HoldingBack is the index of the channel that holds Watermark back
	// (the active, aligned channel with the lowest watermark), -1 if none.
	HoldingBack int
	// PhysicalTimers are the times of the subtask's physical
	// processing-time timers: one per operator with processing-time timers,
	// at its earliest (Flink's InternalTimerServiceImpl), earliest first.
	PhysicalTimers []int64
	// Inputs are the watermark and status of each input of a two-input
	// task (nil otherwise): its Watermark is the lower of the active ones.
	Inputs []InputStatus
	// Done is true for a source subtask at the end of its input.
	Done bool
	// Source describes a source subtask's input (nil for other subtasks).
	Source    *SourceView
	Operators []OperatorView
}

// ChannelView is one input channel of a subtask.
type ChannelView struct {
	Index int
	// From is the upstream subtask: its task and index.
	From        *Task
	FromSubtask int
	// Input is the input of a two-input task the channel feeds: 1 or 2
	// (0 in a one-input task).
	Input int
	ChannelStatus
	// LastRecordTS is the timestamp of the last record received with one
	// (HasRecordTS); Records counts the records received.
	LastRecordTS int64
	HasRecordTS  bool
	Records      int64
}

// SourceView is what a source subtask knows of its input.
type SourceView struct {
	// Reads describes what the subtask reads ("partitions 0, 4"), when the
	// source says.
	Reads string
	// LastWhere is where the last event read came from ("orders.jsonl:12"),
	// LastRecordWhere where the last record did.
	LastWhere, LastRecordWhere string
	// LastRecordTS is the timestamp of the last record (HasRecordTS).
	LastRecordTS int64
	HasRecordTS  bool
	// Watermark is the last watermark the source emitted; Idle its status.
	Watermark int64
	Idle      bool
	// IdleTimeout is WatermarkStrategy.WithIdleness's timeout (0: none).
	IdleTimeout int64
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
		v := SubtaskView{Task: st.task, Index: st.index, KeyGroups: st.groups, Queued: st.inbox.len(),
			Watermark: st.valve.Watermark(), Idle: st.valve.Idle(), HoldingBack: st.valve.HoldingBack(), Done: st.done,
			PhysicalTimers: st.pts.times()}
		for i, ch := range st.channels {
			v.Channels = append(v.Channels, ChannelView{Index: i, From: ch.from.task, FromSubtask: ch.from.index, Input: channelInput(st, ch), ChannelStatus: st.valve.Channel(i),
				LastRecordTS: ch.lastTS, HasRecordTS: ch.hasTS, Records: ch.records})
		}
		v.Inputs = st.valve.Inputs()
		if src := st.ops[0].src; src != nil {
			sv := src.view()
			v.Source = &sv
		}
		for _, el := range st.inbox.queued() {
			if len(v.QueuedRecords) == 20 {
				break
			}
			if el.kind == elRecord {
				v.QueuedRecords = append(v.QueuedRecords, plainValue(el.rec.Value))
			}
		}
		for _, inst := range st.ops {
			ov := OperatorView{Info: inst.info, Watermark: inst.wm, Keyed: inst.keyed, OperatorState: inst.opStore}
			if inst.svc.event != nil {
				ov.EventTimers = inst.svc.event.Len()
			}
			if inst.svc.proc != nil {
				ov.ProcessingTimers = inst.svc.proc.Len()
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

// DescribeStates lists the states an operator declared (keyed and operator
// state, timers included), without counting entries: it costs nothing per
// entry, so a debugger can check a condition's state names at any size.
func (e *Executor) DescribeStates(info *OperatorInfo) []state.StateMeta {
	seen := map[string]bool{}
	var out []state.StateMeta
	for _, inst := range e.instances(info) {
		var metas []state.StateMeta
		if inst.keyed != nil {
			metas = append(metas, inst.keyed.Describe()...)
		}
		metas = append(metas, inst.opStore.States()...)
		for _, m := range metas {
			if !seen[m.StateName] {
				seen[m.StateName] = true
				out = append(out, m)
			}
		}
	}
	return out
}

func channelInput(st *subtask, ch channel) int {
	if st.task.TwoInputs() {
		return int(ch.input) + 1
	}
	return 0
}
