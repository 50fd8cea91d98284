package tui

import (
	"fmt"
	"strings"

	"streamdbg/internal/numfmt"
	"streamdbg/runtime/session"
	"streamdbg/tui/styles"
)

// recordView is what the record pane shows of a stop: the pinned current
// location, then the events, one line each, with the event each line
// stands for (for Enter), where the current record starts and the line of
// the step it stopped at.
type recordView struct {
	pinned string
	lines  []string
	events []int // event index of each line, -1 for none
	start  int   // first line of the current record
	focus  int   // line of the step where execution stopped
}

// describeStop lays a stop out for the record pane. A long run keeps its
// last events; the pane opens on the current record, not on the oldest.
func describeStop(v *session.View) recordView {
	st := v.Stop
	rv := recordView{focus: -1}
	add := func(ev int, s string) {
		rv.lines = append(rv.lines, s)
		rv.events = append(rv.events, ev)
	}
	if st == nil {
		rv.pinned = "▶ at the start: n reads the first record, c runs to a breakpoint"
		if v.Position > 0 { // restored from a savepoint
			rv.pinned = fmt.Sprintf("▶ at record %d: n reads record %d, c runs to a breakpoint", v.Position, v.Position+1)
		}
		add(-1, "nothing yet")
		return rv
	}
	rv.pinned = pinnedLocation(v)
	if v.Failure != nil {
		for _, l := range failureLines(v.Failure) {
			add(-1, l)
		}
		add(-1, fmt.Sprintf("R restarts from checkpoint %d (record %d) · u goes back before the last command", v.Checkpoint.ID, v.Checkpoint.Position))
		add(-1, "")
	}
	if st.Truncated > 0 {
		add(-1, fmt.Sprintf("… %s earlier events (the last %s are kept)", numfmt.Commas(int64(st.Truncated)), numfmt.Commas(int64(len(st.Events)))))
	}
	lastStep := -1
	for i, e := range st.Events {
		if e.Kind == session.EventStep {
			lastStep = i
		}
	}
	for i, e := range st.Events {
		where := fmt.Sprintf("%s[%d]", e.Operator, e.Subtask)
		if i == lastStep && rv.focus < 0 && !st.Before && st.Reason != session.ReasonNext && st.Reason != session.ReasonEnd {
			rv.focus = len(rv.lines)
		}
		switch e.Kind {
		case session.EventStep:
			switch e.Info.Kind {
			case "source":
				rv.start = len(rv.lines)
				add(i, fmt.Sprintf("● %s read %s", e.Info.Operator, e.Info.Where))
			case "record", "timer":
				if i == lastStep && (st.Reason == session.ReasonBreakpoint || st.Reason == session.ReasonStep) {
					add(i, fmt.Sprintf("▶ %s handled %s%s", where, stepWhat(e.Info), keySuffix(e.Info.Key)))
				}
			}
		case session.EventEmitted:
			tag := ""
			if e.Tag != "" {
				tag = e.Tag + ": "
			}
			add(i, fmt.Sprintf("  %s → %s%s", where, tag, showRecord(e.Value)))
		case session.EventStateWrite:
			s := fmt.Sprintf("  %s %s[%s]", where, e.State, show(e.Key))
			if e.Namespace != nil {
				s += "@" + show(e.Namespace)
			}
			if e.UserKey != nil {
				s += "[" + show(e.UserKey) + "]"
			}
			switch {
			case e.Cleared:
				s += " cleared"
			case e.HadOld:
				s += " = " + show(e.New) + " ← " + show(e.Old)
			default:
				s += " = " + show(e.New) + " (new)"
			}
			add(i, s)
		case session.EventOutput:
			add(i, fmt.Sprintf("  %s ⇒ %s", where, showRecord(e.Value)))
		case session.EventTimerSet, session.EventTimerDeleted, session.EventTimerFired:
			add(i, fmt.Sprintf("  %s %s %s %s key %s", where, e.Kind, e.Domain, timestamp(e.Timestamp), show(e.Key)))
		case session.EventWatermark:
			add(i, fmt.Sprintf("  %s wm %s → %s", where, clock(e.From), clock(e.To)))
		case session.EventProcessingTime:
			add(i, "  processing time → "+clock(e.To))
		case session.EventNote:
			add(i, fmt.Sprintf("  %s %s %s", where, e.What, formatAttrs(e.Attrs)))
		}
	}
	if st.Before {
		rv.focus = len(rv.lines)
		add(-1, fmt.Sprintf("▶ next: %s[%d] handles %s%s (not run yet: the state is before its update)",
			st.Last.Operator, st.Last.Subtask, stepWhat(st.Last), keySuffix(st.Last.Key)))
	}
	for _, w := range st.Watches {
		// The rows are in the watches pane (W); say here what changed.
		switch {
		case w.Err != nil:
			add(-1, fmt.Sprintf("watch #%d failed: %v", w.WatchID, oneLine(w.Err.Error())))
		case len(w.Added)+len(w.Removed) > 0:
			add(-1, fmt.Sprintf("watch #%d changed: +%d −%d (W shows it)", w.WatchID, len(w.Added), len(w.Removed)))
		}
	}
	if len(rv.lines) == 0 {
		add(-1, st.Message)
	}
	if rv.focus < 0 {
		rv.focus = rv.start
	}
	return rv
}

func stepWhat(i session.StepView) string {
	switch i.Kind {
	case "record":
		return showRecord(i.Record)
	case "":
		return "nothing"
	}
	return "a " + i.Kind
}

func keySuffix(k any) string {
	if k == nil {
		return ""
	}
	return " (key " + show(k) + ")"
}

// pinnedLocation is where execution stopped, in one line.
func pinnedLocation(v *session.View) string {
	st := v.Stop
	if f := v.Failure; f != nil {
		s := fmt.Sprintf("✗ failed in %s[%d] at record %d", f.Operator, f.Subtask, f.Position)
		if f.Key != "" {
			s += " · key " + f.Key
		}
		return s
	}
	switch st.Reason {
	case session.ReasonBreakpoint:
		when := "after"
		if st.Before {
			when = "before"
		}
		id := 0
		if st.Breakpoint != nil {
			id = st.Breakpoint.ID
		}
		return fmt.Sprintf("▶ #%d %s %s[%d]%s · record %d", id, when, st.Last.Operator, st.Last.Subtask, keySuffix(st.Last.Key), st.Position)
	case session.ReasonStep:
		return fmt.Sprintf("▶ %s[%d] handled %s%s · record %d", st.Last.Operator, st.Last.Subtask, stepWhat(st.Last), keySuffix(st.Last.Key), st.Position)
	}
	where := ""
	for i := len(st.Events) - 1; i >= 0; i-- {
		if e := st.Events[i]; e.Kind == session.EventStep && e.Info.Kind == "source" {
			where = " · " + e.Info.Where
			break
		}
	}
	return fmt.Sprintf("▶ record %d%s · %s", st.Position, where, st.Message)
}

// recordStyle colours a record pane line by what it says.
func recordStyle(st *styles.Styles, l string) string {
	t := strings.TrimLeft(l, " ")
	switch {
	case strings.HasPrefix(t, "▶"), strings.HasPrefix(t, "✗"):
		return st.Pinned.Render(l)
	case strings.Contains(l, " ⇒ "):
		return st.Output.Render(l)
	case strings.Contains(l, " → "):
		return st.Emitted.Render(l)
	case strings.Contains(l, " ← "), strings.Contains(l, " = "):
		return st.Changed.Render(l)
	case strings.HasPrefix(t, "●"):
		return st.Header.Render(l)
	}
	return l
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
func failureLines(f *session.FailureView) []string {
	out := strings.Split(f.Message, "\n")
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

// eventDetail is the detail view of an event of the record pane.
func eventDetail(e session.Event) detail {
	d := detail{title: fmt.Sprintf("%s · %s[%d]", e.Kind, e.Operator, e.Subtask)}
	switch e.Kind {
	case session.EventStep:
		d.fields = [][2]string{{"step", e.Info.Kind}, {"operator", fmt.Sprintf("%s[%d]", e.Info.Operator, e.Info.Subtask)}, {"where", e.Info.Where}, {"key", pretty(e.Info.Key)}}
		d.value, d.hasValue = e.Info.Record, e.Info.Record != nil
	case session.EventEmitted, session.EventOutput:
		d.fields = [][2]string{{"operator", fmt.Sprintf("%s[%d]", e.Operator, e.Subtask)}}
		if e.Tag != "" {
			d.fields = append(d.fields, [2]string{"side output", e.Tag})
		}
		d.value, d.hasValue = e.Value, true
	case session.EventStateWrite:
		d.fields = [][2]string{{"state", e.State}, {"key", pretty(e.Key)}, {"namespace", pretty(e.Namespace)}, {"user key", pretty(e.UserKey)},
			{"key group", fmt.Sprint(e.KeyGroup)}, {"subtask", fmt.Sprint(e.Subtask)}}
		if e.HadOld {
			d.fields = append(d.fields, [2]string{"was", pretty(e.Old)})
		}
		d.value, d.hasValue = e.New, !e.Cleared
		id := session.Entry(e.Operator, e.Subtask, e.State, e.Key, e.Namespace, e.UserKey)
		d.entry = &id
	case session.EventTimerSet, session.EventTimerDeleted, session.EventTimerFired:
		d.fields = [][2]string{{"domain", e.Domain}, {"timestamp", timestamp(e.Timestamp)}, {"epoch ms", fmt.Sprint(e.Timestamp)}, {"key", pretty(e.Key)}, {"namespace", pretty(e.Namespace)}}
	case session.EventWatermark:
		d.fields = [][2]string{{"from", timestamp(e.From)}, {"to", timestamp(e.To)}}
	default:
		d.fields = [][2]string{{"what", e.What}, {"attributes", formatAttrs(e.Attrs)}}
	}
	return d
}
