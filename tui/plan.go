package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// subtaskRef is a selectable subtask of the plan with its chain's
// operators; the state pane shows one of them.
type subtaskRef struct {
	task      string
	index     int
	parallel  int
	groups    session.KeyGroups
	operators []session.OperatorView
	// twoInputs: the chain's head has two inputs ([ and ] step either).
	twoInputs bool
}

// defaultOperator is the operator a subtask shows first: the chain's keyed
// operator, else the first with state, else the first.
func (r subtaskRef) defaultOperator() int {
	for i, op := range r.operators {
		if op.Keyed {
			return i
		}
	}
	for i, op := range r.operators {
		if len(op.States) > 0 {
			return i
		}
	}
	return 0
}

// planLine is one line of the plan pane; sub is the index of the subtask it
// selects, or -1. A line with parts is laid out to the pane's width: the
// parts go on one line when they fit, else over several.
type planLine struct {
	text string
	// parts are the pieces of the line, each after the first starting with
	// its separator (dropped when the piece begins a continuation line).
	parts []string
	cont  string // indent of continuation lines
	// firstFit puts each part on the first line with room for it (the
	// fields of a subtask), not only the last (a chain's operator names).
	firstFit bool
	sub      int
	dim      bool
}

// planLines describes the tasks: each chain with its network inputs (all
// of them: a two-input task lists both) and its subtasks.
func planLines(tasks []session.TaskView) ([]planLine, []subtaskRef) {
	var lines []planLine
	var subs []subtaskRef
	for _, t := range tasks {
		parts := chainParts("▸ " + t.Name)
		parts = append(parts, fmt.Sprintf("  ×%d", t.Parallelism))
		lines = append(lines, planLine{parts: parts, cont: "    ", sub: -1})
		for _, in := range t.Inputs {
			label := in.Label
			if label == "" {
				label = in.Partition
			}
			if in.Tag != "" {
				label += " (side output " + in.Tag + ")"
			}
			if len(t.Inputs) > 1 {
				label += " from " + in.From
			}
			if in.Input > 0 {
				label = fmt.Sprintf("%d: %s", in.Input, label)
			}
			lines = append(lines, planLine{text: "    ⇐ " + label, sub: -1, dim: true})
		}
		for _, v := range t.Subtasks {
			ref := subtaskRef{task: t.Name, index: v.Index, parallel: t.Parallelism, groups: v.KeyGroups, operators: t.Operators, twoInputs: t.TwoInputs}
			parts := []string{fmt.Sprintf("  [%d] kg %d–%d", v.Index, v.KeyGroups.Start, v.KeyGroups.End), "  wm " + clock(subtaskWatermark(v))}
			for _, in := range v.Inputs {
				idle := ""
				if in.Idle {
					idle = " idle"
				}
				parts = append(parts, fmt.Sprintf("  in%d %s%s", in.Input, clock(in.Watermark), idle))
			}
			if v.Queued > 0 || len(t.Inputs) > 0 {
				parts = append(parts, fmt.Sprintf("  queued %d", v.Queued))
			}
			if v.Done {
				parts = append(parts, "  done")
			}
			if subtaskIdle(v) {
				parts = append(parts, "  idle")
			}
			lines = append(lines, planLine{parts: parts, cont: "      ", firstFit: true, sub: len(subs)})
			if ch := channelParts(v); ch != nil {
				lines = append(lines, planLine{parts: ch, cont: "        ", firstFit: true, sub: -1, dim: true})
			}
			for _, r := range v.QueuedRecords[:min(len(v.QueuedRecords), 3)] {
				lines = append(lines, planLine{text: "      ⋯ " + showRecord(r), sub: -1, dim: true})
			}
			subs = append(subs, ref)
		}
	}
	return lines, subs
}

// subtaskWatermark is a subtask's input watermark, or for a source subtask
// the one it generates.
func subtaskWatermark(v session.SubtaskView) int64 {
	if v.Source != nil {
		return v.Source.Watermark
	}
	return v.Watermark
}

func subtaskIdle(v session.SubtaskView) bool {
	if v.Source != nil {
		return v.Source.Idle
	}
	return v.Idle
}

// channelParts shows a subtask's input channels when it has more than one:
// each channel's upstream subtask, watermark and status, the one holding
// the subtask's watermark back marked ▸.
func channelParts(v session.SubtaskView) []string {
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
		in := ""
		if c.Input > 0 {
			in = fmt.Sprintf("%d:", c.Input)
		}
		parts = append(parts, fmt.Sprintf("%s%s[%d] %s%s", mark, in, c.FromSubtask, clock(c.Watermark), st))
	}
	return parts
}

// layoutPlan lays plan lines out to w cells: a chain too long for the pane
// continues under its first name, a subtask's fields fill two lines.
func layoutPlan(items []planLine, w int) []planLine {
	out := make([]planLine, 0, len(items)+4)
	for _, it := range items {
		if it.parts == nil {
			out = append(out, it)
			continue
		}
		var rows []string
		for _, part := range it.parts {
			placed := false
			from := len(rows) - 1
			if it.firstFit {
				from = 0
			}
			for i := max(0, from); i < len(rows); i++ {
				if ansi.StringWidth(rows[i]+part) <= w {
					rows[i] += part
					placed = true
					break
				}
			}
			if !placed {
				if len(rows) == 0 {
					rows = append(rows, part)
				} else {
					rows = append(rows, it.cont+strings.TrimLeft(part, " "))
				}
			}
		}
		for _, r := range rows {
			l := it
			l.text, l.parts = r, nil
			out = append(out, l)
		}
	}
	return out
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

// planPane shows tasks as chains with their subtasks; the selected subtask
// picks what the state pane shows.
type planPane struct {
	keys   *keys.KeyMap
	st     *styles.Styles
	items  []planLine
	lines  []planLine // laid out to the width
	subs   []subtaskRef
	sel    int // selected subtask
	offset int
	w, h   int
}

func (p *planPane) SetSize(w, h int) {
	p.w, p.h = w, h
	p.lines = layoutPlan(p.items, w-2)
}

func (p *planPane) setTasks(tasks []session.TaskView) {
	p.items, p.subs = planLines(tasks)
	p.lines = layoutPlan(p.items, p.w-2)
	p.sel = max(0, min(p.sel, len(p.subs)-1))
}

func (p *planPane) selected() (subtaskRef, bool) {
	if p.sel < len(p.subs) {
		return p.subs[p.sel], true
	}
	return subtaskRef{}, false
}

// Update moves the selection.
func (p *planPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.Up):
			p.sel--
		case key.Matches(msg, p.keys.Down):
			p.sel++
		case key.Matches(msg, p.keys.Top):
			p.sel = 0
		case key.Matches(msg, p.keys.Bottom):
			p.sel = len(p.subs) - 1
		}
	case wheelMsg:
		if msg.up {
			p.sel--
		} else {
			p.sel++
		}
	case clickMsg:
		if i := p.offset + msg.y - 1; msg.y >= 1 && i < len(p.lines) && p.lines[i].sub >= 0 {
			p.sel = p.lines[i].sub
		}
	}
	p.sel = max(0, min(p.sel, len(p.subs)-1))
	return nil
}

func (p *planPane) View(focused bool) string {
	inner := p.h - 2
	selFirst, selLast := -1, 0
	for i, l := range p.lines {
		if l.sub == p.sel {
			if selFirst < 0 {
				selFirst = i
			}
			selLast = i
		}
	}
	selFirst = max(0, selFirst)
	if selLast >= p.offset+inner {
		p.offset = selLast - inner + 1
	}
	if selFirst < p.offset {
		p.offset = selFirst
	}
	p.offset = max(0, min(p.offset, len(p.lines)-inner))
	var out []string
	for i := p.offset; i < len(p.lines) && len(out) < inner; i++ {
		l := p.lines[i]
		s := fit(l.text, p.w-2)
		switch {
		case l.sub == p.sel && l.sub >= 0:
			s = p.st.Selected.Render(s)
		case l.dim:
			s = p.st.Dim.Render(s)
		}
		out = append(out, s)
	}
	return box(p.st, "Plan", focused, p.w, p.h, out)
}

func (p *planPane) KeyMap() []key.Binding {
	return []key.Binding{p.keys.Up, p.keys.Down, p.keys.Top, p.keys.Bottom}
}
