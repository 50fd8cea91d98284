package tui

import (
	"fmt"
	"strings"

	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/state"
)

// snapshot is what the debug screen shows of a session, taken when the
// session is not running, so rendering never calls into the session.
type snapshot struct {
	job       string
	position  int64
	watermark int64
	procTime  int64
	backend   string
	finished  bool
	failure   *runtime.Failure
	stop      *session.Stop
	plan      []planLine
	subtasks  []subtaskRef
	outputs   []string
	changes   map[string]change
	watches   []session.WatchResult
	bps       []bpLine
}

// subtaskRef is a selectable subtask of the plan with the operator whose
// state the state pane shows.
type subtaskRef struct {
	task      string
	index     int
	parallel  int
	groups    state.KeyGroupRange
	operator  *runtime.OperatorInfo // the chain's keyed operator, else its first
	operators []*runtime.OperatorInfo
}

type bpLine struct {
	id      int
	enabled bool
	hits    int
	text    string
}

// change is the old value of an entry the last stop wrote.
type change struct {
	old     string
	hadOld  bool
	cleared bool
}

func changeKey(op string, subtask int, stateName string, key, ns, uk any) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%s\x00%s\x00%s", op, subtask, stateName, show(key), show(ns), show(uk))
}

// outputKeep bounds the sink records kept for the output pane.
const outputKeep = 500

func takeSnapshot(s *session.Session) *snapshot {
	ex := s.Executor()
	name, _ := ex.Backend()
	sn := &snapshot{job: s.Job().Name, position: s.Position(), watermark: ex.Watermark(), procTime: ex.ProcessingTime(),
		backend: name, finished: s.Finished(), failure: s.Failure(), stop: s.Last(), changes: map[string]change{}}
	if sn.stop != nil {
		sn.watches = sn.stop.Watches
		for _, e := range sn.stop.Events {
			if e.Kind != runtime.TraceStateWrite {
				continue
			}
			k := changeKey(e.Operator, e.Subtask, e.State, e.Key, e.Namespace, e.UserKey)
			if _, seen := sn.changes[k]; seen {
				continue // keep the oldest value of the command
			}
			sn.changes[k] = change{old: show(e.Old), hadOld: e.HadOld, cleared: e.Cleared}
		}
	}
	var task *runtime.Task
	for _, v := range ex.Subtasks() {
		if v.Task != task {
			task = v.Task
			parts := chainParts("▸ " + task.Name)
			parts = append(parts, fmt.Sprintf("  ×%d", task.Parallelism))
			sn.plan = append(sn.plan, planLine{parts: parts, cont: "    ", sub: -1})
			for _, in := range task.Inputs {
				sn.plan = append(sn.plan, planLine{text: "    ⇐ " + in.Label + tagSuffix(in.Tag), sub: -1, dim: true})
			}
		}
		ref := subtaskRef{task: task.Name, index: v.Index, parallel: task.Parallelism, groups: v.KeyGroups, operators: task.Operators}
		for _, op := range task.Operators {
			if op.Keyed {
				ref.operator = op
				break
			}
		}
		if ref.operator == nil && len(task.Operators) > 0 {
			ref.operator = task.Operators[0]
		}
		wm, idle := v.Watermark, v.Idle
		if v.Source != nil {
			// A source subtask's watermark is the one it generates.
			wm, idle = v.Source.Watermark, v.Source.Idle
		}
		parts := []string{fmt.Sprintf("  [%d] kg %d–%d", v.Index, v.KeyGroups.Start, v.KeyGroups.End), "  wm " + clock(wm)}
		if v.Queued > 0 || len(task.Inputs) > 0 {
			parts = append(parts, fmt.Sprintf("  queued %d", v.Queued))
		}
		if v.Done {
			parts = append(parts, "  done")
		}
		if idle {
			parts = append(parts, "  idle")
		}
		sn.plan = append(sn.plan, planLine{parts: parts, cont: "      ", firstFit: true, sub: len(sn.subtasks)})
		if ch := channelParts(v); ch != nil {
			sn.plan = append(sn.plan, planLine{parts: ch, cont: "        ", firstFit: true, sub: -1, dim: true})
		}
		for _, r := range v.QueuedRecords[:min(len(v.QueuedRecords), 3)] {
			sn.plan = append(sn.plan, planLine{text: "      ⋯ " + showRecord(r), sub: -1, dim: true})
		}
		sn.subtasks = append(sn.subtasks, ref)
	}
	outs := s.Outputs()
	for _, o := range outs[max(0, len(outs)-outputKeep):] {
		sn.outputs = append(sn.outputs, fmt.Sprintf("%s[%d] %s", o.Sink, o.Subtask, showRecord(o.Value)))
	}
	for _, b := range s.Breakpoints() {
		sn.bps = append(sn.bps, bpLine{id: b.ID, enabled: b.Enabled, hits: b.Hits, text: b.Describe()})
	}
	return sn
}

// channelParts shows a subtask's input channels when it has more than one:
// each channel's upstream subtask, watermark and status, the one holding
// the subtask's watermark back marked ▸.
func channelParts(v runtime.SubtaskView) []string {
	if len(v.Channels) < 2 {
		return nil
	}
	parts := []string{"      ⇐"}
	for _, c := range v.Channels {
		mark := " "
		if c.Index == v.HoldingBack {
			mark = " ▸"
		}
		st := ""
		switch {
		case c.Idle:
			st = " idle"
		case !c.Aligned:
			st = " catching up"
		}
		parts = append(parts, fmt.Sprintf("%s[%d] %s%s", mark, c.FromSubtask, clock(c.Watermark), st))
	}
	return parts
}

// chainParts cuts a chain's name where a line may break: after each "->"
// and each ",", the space going with the next piece.
func chainParts(name string) []string {
	var parts []string
	cur := ""
	for i, w := range strings.Split(name, " ") {
		if i > 0 {
			cur += " "
		}
		cur += w
		if strings.HasSuffix(w, "->") || strings.HasSuffix(w, ",") {
			parts, cur = append(parts, cur), ""
		}
	}
	if cur != "" {
		parts = append(parts, cur)
	}
	return parts
}

func tagSuffix(tag string) string {
	if tag == "" {
		return ""
	}
	return " (side output " + tag + ")"
}

// runState is the header's word for the session.
func (sn *snapshot) runState() string {
	switch {
	case sn.failure != nil:
		return "failed"
	case sn.finished:
		return "finished"
	}
	return "stopped"
}

// why says why the session stopped.
func (sn *snapshot) why() string {
	if sn.stop == nil {
		return "at the start"
	}
	msg := sn.stop.Message
	if sn.stop.Reason == session.ReasonFailure && sn.failure != nil {
		msg = "in " + sn.failure.Operator
	}
	if msg == "" || msg == string(sn.stop.Reason) {
		return string(sn.stop.Reason)
	}
	if sn.stop.Reason == session.ReasonBreakpoint || sn.stop.Reason == session.ReasonNext {
		return msg
	}
	return string(sn.stop.Reason) + " (" + msg + ")"
}

// eventLines describes what the last stop caused, operator by operator.
func eventLines(stop *session.Stop) []string {
	if stop == nil {
		return []string{"nothing yet: n reads the next record"}
	}
	var out []string
	if stop.Truncated > 0 {
		out = append(out, fmt.Sprintf("… %d earlier events", stop.Truncated))
	}
	for _, e := range stop.Events {
		where := fmt.Sprintf("%s[%d]", e.Operator, e.Subtask)
		switch e.Kind {
		case runtime.TraceStep:
			if e.Info.Kind == "source" {
				out = append(out, fmt.Sprintf("● %s read %s", e.Info.Operator, e.Info.Where))
			}
		case runtime.TraceEmitted:
			tag := ""
			if e.Tag != "" {
				tag = e.Tag + ": "
			}
			out = append(out, fmt.Sprintf("  %s → %s%s", where, tag, showRecord(e.Value)))
		case runtime.TraceStateWrite:
			s := fmt.Sprintf("  %s %s[%s]", where, e.State, show(e.Key))
			if e.UserKey != nil {
				s += "[" + show(e.UserKey) + "]"
			}
			switch {
			case e.Cleared:
				s += " cleared"
			case e.HadOld:
				s += " = " + show(e.New) + " ← " + show(e.Old)
			default:
				s += " = " + show(e.New)
			}
			out = append(out, s)
		case runtime.TraceOutput:
			out = append(out, fmt.Sprintf("  %s ⇒ %s", where, showRecord(e.Value)))
		case runtime.TraceTimerSet, runtime.TraceTimerDeleted, runtime.TraceTimerFired:
			out = append(out, fmt.Sprintf("  %s %s %s %s key %s", where, e.Kind, e.Domain, clock(e.Timestamp), show(e.Key)))
		case runtime.TraceWatermark:
			out = append(out, fmt.Sprintf("  %s wm %s → %s", where, clock(e.From), clock(e.To)))
		case runtime.TraceProcessingTime:
			out = append(out, "  processing time → "+clock(e.To))
		case runtime.TraceNote:
			out = append(out, fmt.Sprintf("  %s %s %s", where, e.What, formatAttrs(e.Attrs)))
		}
	}
	for _, w := range stop.Watches {
		// The rows are in the watches pane (W); say here what changed.
		switch {
		case w.Err != nil:
			out = append(out, fmt.Sprintf("watch #%d failed: %v", w.WatchID, oneLine(w.Err.Error())))
		case len(w.Added)+len(w.Removed) > 0:
			out = append(out, fmt.Sprintf("watch #%d changed: +%d −%d (W shows it)", w.WatchID, len(w.Added), len(w.Removed)))
		}
	}
	if len(out) == 0 {
		out = append(out, stop.Message)
	}
	return out
}

// formatAttrs prints an operator note's attributes, given as alternating
// names and values (as slog takes them), as name=value pairs.
func formatAttrs(attrs []any) string {
	var b strings.Builder
	for i := 0; i < len(attrs); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i+1 == len(attrs) {
			b.WriteString(show(attrs[i]))
			break
		}
		fmt.Fprintf(&b, "%v=%s", attrs[i], show(attrs[i+1]))
	}
	return b.String()
}

// failureLines describes a failure: what, where, the record, the stack.
func failureLines(f *runtime.Failure, err error) []string {
	var out []string
	if f == nil {
		return strings.Split(err.Error(), "\n")
	}
	out = append(out, strings.Split(f.Error(), "\n")...)
	out = append(out, "", "operator  "+f.Operator, fmt.Sprintf("task      %s (subtask %d)", f.Task, f.Subtask))
	if f.Record != "" {
		out = append(out, "record    "+f.Record)
	}
	if f.Key != "" {
		out = append(out, "key       "+f.Key)
	}
	out = append(out, fmt.Sprintf("position  %d", f.Position))
	if f.Stack != "" {
		out = append(out, "", "stack:")
		out = append(out, strings.Split(strings.TrimRight(f.Stack, "\n"), "\n")...)
	}
	return out
}
