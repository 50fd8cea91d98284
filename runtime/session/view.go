package session

import (
	"errors"
	"fmt"

	"streamdbg/runtime"
	"streamdbg/state"
)

// This file turns the runtime's types into plain view values for UIs, as
// delve's service/api does for its terminal: copies that hold no
// reference into the running job, so a UI can keep and render them while
// a command runs. A UI imports this package and query, nothing below.

// View is what a UI shows of the session: taken between commands.
type View struct {
	Job            string
	Position       int64
	Watermark      int64 // the job's event time (math.MinInt64 before the first watermark)
	ProcessingTime int64
	Backend        string
	BackendWhy     string
	Finished       bool
	Failure        *FailureView
	Stop           *StopView // the last stop (nil before the first command)
	Tasks          []TaskView
	Breakpoints    []Breakpoint
	Watches        []WatchResult // the latest result of every watch, in order
	Outputs        []Output      // the kept sink records, oldest first
	OutputTotal    int64         // sink records written so far
	// Checkpoint is the latest in-memory checkpoint: where restart goes.
	Checkpoint CheckpointView
}

// CheckpointView is an in-memory checkpoint.
type CheckpointView struct {
	ID       int64
	Position int64
}

// FailureView is a failed task: where, on what, why.
type FailureView struct {
	Task     string
	Subtask  int
	Operator string
	Record   string
	Key      string
	Position int64
	Message  string // the whole error
	Stack    string
}

// StopView is a Stop as a plain value.
type StopView struct {
	Reason         Reason
	Message        string
	Breakpoint     *Breakpoint
	Before         bool
	Position       int64
	Records        int64
	Replayed       int64
	Steps          int
	Last           StepView
	Events         []Event
	Truncated      int
	Changes        map[EntryID]Change
	ChangesDropped int
	Failure        *FailureView
	Watches        []WatchResult
}

// StepView is one step: which element one operator of one subtask handled.
type StepView struct {
	Task     string
	Subtask  int
	Operator string
	Kind     string // "record", "watermark", "timer", "source", "end of input"
	Record   any
	Where    string
	Key      any
}

// EventKind names what an event is.
type EventKind string

const (
	EventStep           EventKind = "step"
	EventEmitted        EventKind = "emitted"
	EventOutput         EventKind = "output"
	EventStateWrite     EventKind = "state"
	EventTimerSet       EventKind = "timer set"
	EventTimerDeleted   EventKind = "timer deleted"
	EventTimerFired     EventKind = "timer fired"
	EventWatermark      EventKind = "watermark"
	EventProcessingTime EventKind = "processing time"
	EventNote           EventKind = "note"
)

// Event is one thing a step did (runtime.TraceEvent as a plain value).
type Event struct {
	Kind     EventKind
	Step     int
	Task     string
	Subtask  int
	Operator string
	Info     StepView // EventStep
	Tag      string   // side output
	Value    any      // emitted or output record

	State     string
	KeyGroup  int
	Key       any
	Namespace any
	UserKey   any
	Old, New  any
	HadOld    bool
	Cleared   bool

	Domain    string // "event" or "processing"
	Timestamp int64

	From, To int64 // watermarks, processing time

	What  string // notes
	Attrs []any
}

// TaskView is a chain of operators with its subtasks.
type TaskView struct {
	Index       int
	Name        string
	Parallelism int
	// Inputs are the network edges into the task; a task of a two-input
	// operator has two or more.
	Inputs []InputView
	// TwoInputs says the task's head operator has two inputs (step INPUT
	// steps either).
	TwoInputs bool
	Operators []OperatorView
	Subtasks  []SubtaskView
}

// InputView is one network edge into a task.
type InputView struct {
	From      string // the upstream task
	Partition string // hash, rebalance, broadcast, forward
	Label     string // e.g. hash(word)
	Tag       string // side output of the upstream operator
	// Input is the input of a two-input task the edge feeds (1 or 2; 0 in
	// a one-input task).
	Input int
}

// InputStatusView is the watermark and status of one input of a
// two-input subtask.
type InputStatusView struct {
	Input     int
	Watermark int64
	Idle      bool
}

// OperatorView is one operator of the plan.
type OperatorView struct {
	ID, UID, Name string
	// Label tells apart operators of the same name: the name, with the
	// uid when another operator has that name too.
	Label      string
	Task       string
	ChainIndex int
	Keyed      bool
	Source     bool
	Sink       bool
	KeyType    string
	// States are the states the operator declared (no counts).
	States []StateInfo
}

// StateInfo is a declared state.
type StateInfo struct {
	Name  string
	Scope string // keyed, operator
	Kind  string // value, list, map, ..., timers
}

// KeyGroups is a range of key groups, both ends included.
type KeyGroups struct{ Start, End int }

// SubtaskView is one subtask of a task.
type SubtaskView struct {
	Index     int
	KeyGroups KeyGroups
	Watermark int64 // its input watermark
	Idle      bool
	Queued    int
	// QueuedRecords are the first records waiting (at most 20).
	QueuedRecords []any
	Done          bool
	// Channels are its input channels; HoldingBack is the one that holds
	// its watermark back (-1 if none).
	Channels    []ChannelView
	HoldingBack int
	// Inputs are a two-input subtask's inputs (nil otherwise): Watermark
	// is the lower of the active ones.
	Inputs    []InputStatusView
	Source    *SourceView
	Operators []SubtaskOperatorView
}

// ChannelView is one input channel of a subtask.
type ChannelView struct {
	Index        int
	From         string // upstream task
	FromSubtask  int
	Input        int // of a two-input task: 1 or 2
	Watermark    int64
	Idle         bool
	Aligned      bool
	LastRecordTS int64
	HasRecordTS  bool
	Records      int64
}

// SourceView is what a source subtask knows of its input.
type SourceView struct {
	Reads        string
	LastWhere    string
	LastRecordTS int64
	HasRecordTS  bool
	Watermark    int64
	Idle         bool
	IdleTimeout  int64
}

// SubtaskOperatorView is one operator in one subtask.
type SubtaskOperatorView struct {
	Name             string
	Watermark        int64
	EventTimers      int
	ProcessingTimers int
}

// View takes a view of the session. It must not be called while a command
// runs.
func (s *Session) View() *View {
	name, why := s.exec.Backend()
	cp := s.LatestCheckpoint().Info()
	v := &View{Job: s.job.Name, Position: s.exec.Position(), Watermark: s.exec.Watermark(), ProcessingTime: s.exec.ProcessingTime(),
		Backend: name, BackendWhy: why, Finished: s.exec.Finished(), Failure: failureView(s.exec.Failure()),
		Breakpoints: s.Breakpoints(), OutputTotal: s.outSeq, Checkpoint: CheckpointView{ID: cp.CheckpointID, Position: cp.Position}}
	v.Outputs = append([]Output(nil), s.Outputs()...)
	for _, w := range s.watches {
		v.Watches = append(v.Watches, w.res)
	}
	if s.last != nil {
		v.Stop = stopView(s.last)
	}
	v.Tasks = s.tasks()
	return v
}

func (s *Session) tasks() []TaskView {
	plan := s.exec.Plan()
	names := map[string]int{}
	for _, o := range plan.Operators {
		names[o.Name]++
	}
	var out []TaskView
	index := map[*runtime.Task]int{}
	for _, t := range plan.Tasks {
		tv := TaskView{Index: t.Index, Name: t.Name, Parallelism: t.Parallelism, TwoInputs: t.TwoInputs()}
		for _, in := range t.Inputs {
			from := ""
			if in.From != nil {
				from = in.From.Name
			}
			tv.Inputs = append(tv.Inputs, InputView{From: from, Partition: in.Partition, Label: in.Label, Tag: in.Tag, Input: in.Input})
		}
		for _, o := range t.Operators {
			ov := OperatorView{ID: o.ID, UID: o.UID, Name: o.Name, Label: o.Name, Task: t.Name, ChainIndex: o.ChainIndex,
				Keyed: o.Keyed, Source: o.IsSource, Sink: o.IsSink, KeyType: o.KeyType}
			if names[o.Name] > 1 {
				ov.Label = fmt.Sprintf("%s [%s]", o.Name, o.UID)
			}
			for _, m := range s.exec.DescribeStates(o) {
				ov.States = append(ov.States, StateInfo{Name: m.StateName, Scope: m.Scope.String(), Kind: m.Kind.String()})
			}
			tv.Operators = append(tv.Operators, ov)
		}
		index[t] = len(out)
		out = append(out, tv)
	}
	for _, sv := range s.exec.Subtasks() {
		i, ok := index[sv.Task]
		if !ok {
			continue
		}
		v := SubtaskView{Index: sv.Index, KeyGroups: KeyGroups{sv.KeyGroups.Start, sv.KeyGroups.End}, Watermark: sv.Watermark, Idle: sv.Idle,
			Queued: sv.Queued, QueuedRecords: append([]any(nil), sv.QueuedRecords...), Done: sv.Done, HoldingBack: sv.HoldingBack}
		for _, c := range sv.Channels {
			from := ""
			if c.From != nil {
				from = c.From.Name
			}
			v.Channels = append(v.Channels, ChannelView{Index: c.Index, From: from, FromSubtask: c.FromSubtask, Input: c.Input, Watermark: c.Watermark,
				Idle: c.Idle, Aligned: c.Aligned, LastRecordTS: c.LastRecordTS, HasRecordTS: c.HasRecordTS, Records: c.Records})
		}
		for _, in := range sv.Inputs {
			v.Inputs = append(v.Inputs, InputStatusView{Input: in.Input, Watermark: in.Watermark, Idle: in.Idle})
		}
		if src := sv.Source; src != nil {
			v.Source = &SourceView{Reads: src.Reads, LastWhere: src.LastWhere, LastRecordTS: src.LastRecordTS, HasRecordTS: src.HasRecordTS,
				Watermark: src.Watermark, Idle: src.Idle, IdleTimeout: src.IdleTimeout}
		}
		for _, o := range sv.Operators {
			v.Operators = append(v.Operators, SubtaskOperatorView{Name: o.Info.Name, Watermark: o.Watermark, EventTimers: o.EventTimers, ProcessingTimers: o.ProcessingTimers})
		}
		out[i].Subtasks = append(out[i].Subtasks, v)
	}
	return out
}

func failureView(f *runtime.Failure) *FailureView {
	if f == nil {
		return nil
	}
	return &FailureView{Task: f.Task, Subtask: f.Subtask, Operator: f.Operator, Record: f.Record, Key: f.Key, Position: f.Position,
		Message: f.Error(), Stack: f.Stack}
}

// DescribeFailure is the failure in err (a job that could not start, a
// failed task), or nil when err is no task failure.
func DescribeFailure(err error) *FailureView {
	var f *runtime.Failure
	if errors.As(err, &f) {
		return failureView(f)
	}
	return nil
}

func stopView(st *Stop) *StopView {
	v := &StopView{Reason: st.Reason, Message: st.Message, Before: st.Before, Position: st.Position, Records: st.Records,
		Replayed: st.Replayed, Steps: st.Steps, Last: stepView(st.Last), Truncated: st.Truncated, Changes: st.Changes,
		ChangesDropped: st.ChangesDropped, Failure: failureView(st.Failure), Watches: st.Watches}
	if st.Breakpoint != nil {
		b := *st.Breakpoint
		v.Breakpoint = &b
	}
	v.Events = make([]Event, len(st.Events))
	for i, e := range st.Events {
		v.Events[i] = Event{Kind: EventKind(e.Kind.String()), Step: e.Step, Task: e.Task, Subtask: e.Subtask, Operator: e.Operator,
			Info: stepView(e.Info), Tag: e.Tag, Value: e.Value, State: e.State, KeyGroup: e.KeyGroup, Key: e.Key, Namespace: e.Namespace,
			UserKey: e.UserKey, Old: e.Old, New: e.New, HadOld: e.HadOld, Cleared: e.Cleared, Domain: domainName(e.Domain),
			Timestamp: e.Timestamp, From: e.From, To: e.To, What: e.What, Attrs: e.Attrs}
	}
	return v
}

func stepView(i runtime.StepInfo) StepView {
	return StepView{Task: i.Task, Subtask: i.Subtask, Operator: i.Operator, Kind: i.Kind, Record: i.Record, Where: i.Where, Key: i.Key}
}

func domainName(d runtime.TimeDomain) string { return d.String() }

// Sentinel names a time outside the years 0000–9999 (state.Sentinel: a
// Flink timer at Long.MIN_VALUE+10, say), for views that print times.
func Sentinel(ms int64) (string, bool) { return state.Sentinel(ms) }
