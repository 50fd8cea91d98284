package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

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

// planPane shows tasks as chains with their subtasks; the selected subtask
// picks what the state pane shows.
type planPane struct {
	keys   *keys.KeyMap
	items  []planLine // from the snapshot
	lines  []planLine // laid out to the width
	sel    int        // selected subtask
	nsub   int
	offset int
	w, h   int
}

func (p *planPane) SetSize(w, h int) {
	p.w, p.h = w, h
	p.lines = layoutPlan(p.items, w-2)
}

func (p *planPane) setLines(items []planLine, nsub int) {
	p.items, p.nsub = items, nsub
	p.lines = layoutPlan(items, p.w-2)
	p.sel = min(p.sel, max(0, nsub-1))
}

// Update moves the selection; it reports whether it changed.
func (p *planPane) Update(msg tea.Msg) bool {
	before := p.sel
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.Up):
			p.sel--
		case key.Matches(msg, p.keys.Down):
			p.sel++
		case key.Matches(msg, p.keys.Top):
			p.sel = 0
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.sel--
		} else if msg.Button == tea.MouseWheelDown {
			p.sel++
		}
	}
	p.sel = max(0, min(p.sel, p.nsub-1))
	return p.sel != before
}

func (p *planPane) View(st *styles.Styles, focused bool) string {
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
			s = st.Selected.Render(s)
		case l.dim:
			s = st.Dim.Render(s)
		}
		out = append(out, s)
	}
	return box(st, "Plan", focused, p.w, p.h, out)
}

func (p *planPane) Help() []key.Binding { return []key.Binding{p.keys.Up, p.keys.Down} }

// textPane is a scrollable list of lines: the record pane and the output
// pane. With tail set it follows the newest line until scrolled up.
type textPane struct {
	keys   *keys.KeyMap
	title  string
	lines  []string
	style  func(st *styles.Styles, line string) string
	tail   bool
	wrap   bool // wrap long lines (errors, stacks) instead of cutting them
	offset int  // first line shown; -1 follows the tail
	w, h   int
	raw    []string
}

func (p *textPane) SetSize(w, h int) {
	p.w, p.h = w, h
	if p.wrap {
		p.lines = wrapLines(p.raw, w-2)
	}
}

func (p *textPane) setLines(lines []string) {
	p.raw, p.lines = lines, lines
	if p.wrap {
		p.lines = wrapLines(lines, p.w-2)
	}
	if p.tail {
		p.offset = -1
	} else {
		p.offset = 0
	}
}

func (p *textPane) maxOffset() int { return max(0, len(p.lines)-(p.h-2)) }

func (p *textPane) Update(msg tea.Msg) {
	cur := p.offset
	if cur < 0 {
		cur = p.maxOffset()
	}
	page := max(1, p.h-3)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.Up):
			cur--
		case key.Matches(msg, p.keys.Down):
			cur++
		case key.Matches(msg, p.keys.PageUp):
			cur -= page
		case key.Matches(msg, p.keys.PageDown):
			cur += page
		case key.Matches(msg, p.keys.Top):
			cur = 0
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			cur -= 3
		} else if msg.Button == tea.MouseWheelDown {
			cur += 3
		}
	}
	cur = max(0, min(cur, p.maxOffset()))
	if p.tail && cur == p.maxOffset() {
		cur = -1
	}
	p.offset = cur
}

func (p *textPane) View(st *styles.Styles, focused bool) string {
	inner := p.h - 2
	off := p.offset
	if off < 0 {
		off = p.maxOffset()
	}
	off = max(0, min(off, p.maxOffset()))
	end := min(len(p.lines), off+inner)
	out := make([]string, 0, inner)
	for _, l := range p.lines[off:end] {
		l = fit(oneLine(l), p.w-2)
		if p.style != nil {
			l = p.style(st, l)
		}
		out = append(out, l)
	}
	title := p.title
	if len(p.lines) > inner {
		title += fmt.Sprintf(" · %d–%d of %d", off+1, end, len(p.lines))
	}
	return box(st, title, focused, p.w, p.h, out)
}

func (p *textPane) Help() []key.Binding {
	return []key.Binding{p.keys.Up, p.keys.Down, p.keys.PageUp, p.keys.PageDown}
}

// wrapLines wraps each line to w cells (not at ':', which would split
// times of day).
func wrapLines(lines []string, w int) []string {
	if w < 1 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, w, " ,;/"), "\n")...)
	}
	return out
}
