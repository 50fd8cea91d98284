package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/internal/numfmt"
	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// watchShow bounds the rows shown per watch; the count says how many more.
const watchShow = 8

// watchLine is one line of the watches pane: a watch's header, its columns,
// a row (marked + when it appeared at the last stop), a removed row (−).
type watchLine struct {
	text  string
	watch int // index of the watch it belongs to
	kind  byte
}

const (
	wlHeader  = 'h'
	wlColumns = 'c'
	wlRow     = 'r'
	wlAdded   = '+'
	wlRemoved = '-'
	wlNote    = 'n'
)

// watchPane lists the watches, each with its current rows (bounded) and
// what changed since the previous stop; it shares the output pane's place
// (W switches).
type watchPane struct {
	keys   *keys.KeyMap
	st     *styles.Styles
	ids    []int
	lines  []watchLine
	heads  []int // line of each watch's header
	sel    int   // selected watch
	offset int
	w, h   int
}

func (p *watchPane) SetSize(w, h int) { p.w, p.h = w, h }

// setWatches lays out the watches' latest results.
func (p *watchPane) setWatches(ws []session.WatchResult) {
	p.ids, p.lines, p.heads = p.ids[:0], p.lines[:0], p.heads[:0]
	for i, r := range ws {
		p.ids = append(p.ids, r.WatchID)
		p.heads = append(p.heads, len(p.lines))
		add := func(kind byte, s string) { p.lines = append(p.lines, watchLine{text: s, watch: i, kind: kind}) }
		// The counts go before the query, which a narrow pane cuts.
		head := fmt.Sprintf("#%d", r.WatchID)
		if r.Err != nil {
			add(wlHeader, head+" · error · "+r.Query)
			add(wlRemoved, "    "+oneLine(r.Err.Error()))
			continue
		}
		n := plural(int64(len(r.Rows)), "row", "rows")
		if r.Capped {
			n = numfmt.Commas(int64(len(r.Rows))) + "+ rows"
		}
		head += " · " + n
		if len(r.Added)+len(r.Removed) > 0 {
			head += fmt.Sprintf(" · +%d −%d", len(r.Added), len(r.Removed))
		}
		add(wlHeader, head+" · "+r.Query)
		shown := r.Rows[:min(len(r.Rows), watchShow)]
		gone := r.Removed[:min(len(r.Removed), watchShow)]
		cells := watchCells(r.Columns, shown, gone)
		if len(r.Columns) > 0 {
			add(wlColumns, "    "+cells(anyRow(r.Columns)))
		}
		added := map[string]int{}
		for _, row := range r.Added {
			added[fmt.Sprint(row)]++
		}
		for _, row := range shown {
			k := fmt.Sprint(row)
			if added[k] > 0 {
				added[k]--
				add(wlAdded, "  + "+cells(row))
			} else {
				add(wlRow, "    "+cells(row))
			}
		}
		if more := len(r.Rows) - watchShow; more > 0 {
			add(wlNote, fmt.Sprintf("    … %d more (: runs the query in full)", more))
		}
		for _, row := range gone {
			add(wlRemoved, "  − "+cells(row))
		}
		if more := len(r.Removed) - watchShow; more > 0 {
			add(wlNote, fmt.Sprintf("    … %d more removed", more))
		}
	}
	p.sel = max(0, min(p.sel, len(p.ids)-1))
}

// watchColumnMax bounds a watch column's width, so one long value does not
// push the others off the pane.
const watchColumnMax = 24

// watchCells returns a formatter that aligns a watch's rows in columns as
// wide as the widest shown cell (bounded).
func watchCells(cols []string, rowSets ...[][]any) func([]any) string {
	widths := make([]int, len(cols))
	for j, c := range cols {
		widths[j] = ansi.StringWidth(c)
	}
	for _, rows := range rowSets {
		for _, r := range rows {
			for j := range min(len(r), len(widths)) {
				widths[j] = max(widths[j], ansi.StringWidth(show(r[j])))
			}
		}
	}
	return func(r []any) string {
		var b strings.Builder
		for j, v := range r {
			s := show(v)
			if j < len(r)-1 && j < len(widths) {
				s = fit(s, min(widths[j], watchColumnMax)) + "  "
			}
			b.WriteString(s)
		}
		return b.String()
	}
}

func anyRow(cols []string) []any {
	r := make([]any, len(cols))
	for i, c := range cols {
		r[i] = c
	}
	return r
}

// watchSummary is the watches' state in a word, for the output pane's title.
func watchSummary(ws []session.WatchResult) string {
	if len(ws) == 0 {
		return ""
	}
	added, removed, errs := 0, 0, 0
	for _, w := range ws {
		added += len(w.Added)
		removed += len(w.Removed)
		if w.Err != nil {
			errs++
		}
	}
	s := plural(int64(len(ws)), "watch", "watches")
	if added+removed > 0 {
		s += fmt.Sprintf(" +%d −%d", added, removed)
	}
	if errs > 0 {
		s += fmt.Sprintf(" · %d failing", errs)
	}
	return s
}

// Update moves between watches (↑/↓), scrolls and asks for the selected
// watch to be deleted (x).
func (p *watchPane) Update(msg tea.Msg) tea.Cmd {
	if len(p.ids) == 0 {
		return nil
	}
	page := max(1, p.h-3)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.Delete):
			return runLine(fmt.Sprintf("unwatch %d", p.ids[p.sel]))
		case key.Matches(msg, p.keys.Up):
			p.selectWatch(p.sel - 1)
		case key.Matches(msg, p.keys.Down):
			p.selectWatch(p.sel + 1)
		case key.Matches(msg, p.keys.Top):
			p.selectWatch(0)
		case key.Matches(msg, p.keys.Bottom):
			p.selectWatch(len(p.ids) - 1)
		case key.Matches(msg, p.keys.PageUp):
			p.scroll(-page)
		case key.Matches(msg, p.keys.PageDown):
			p.scroll(page)
		}
	case wheelMsg:
		if msg.up {
			p.scroll(-3)
		} else {
			p.scroll(3)
		}
	case clickMsg:
		if i := p.offset + msg.y - 1; msg.y >= 1 && i < len(p.lines) {
			p.sel = p.lines[i].watch
		}
	}
	return nil
}

func (p *watchPane) selectWatch(i int) {
	p.sel = max(0, min(i, len(p.ids)-1))
	p.offset = p.heads[p.sel]
	p.scroll(0)
}

// scroll moves the first line shown; the selection follows the watch whose
// lines are at the top.
func (p *watchPane) scroll(d int) {
	p.offset = max(0, min(p.offset+d, len(p.lines)-(p.h-2)))
	if d != 0 && p.offset < len(p.lines) {
		p.sel = p.lines[p.offset].watch
	}
}

func (p *watchPane) View(focused bool) string {
	inner := p.h - 2
	if len(p.ids) == 0 {
		return box(p.st, "Watches", focused, p.w, p.h, []string{p.st.Dim.Render("no watches: w adds one (a query re-run at every stop)")})
	}
	off := max(0, min(p.offset, len(p.lines)-inner))
	end := min(len(p.lines), off+inner)
	out := make([]string, 0, inner)
	for _, l := range p.lines[off:end] {
		s := fit(oneLine(l.text), p.w-2)
		switch {
		case l.kind == wlHeader && l.watch == p.sel:
			s = p.st.Selected.Render(s)
		case l.kind == wlHeader:
			s = p.st.Header.Render(s)
		case l.kind == wlAdded:
			s = p.st.Changed.Render(s)
		case l.kind == wlRemoved:
			s = p.st.Failed.Render(s)
		case l.kind == wlColumns, l.kind == wlNote:
			s = p.st.Dim.Render(s)
		}
		out = append(out, s)
	}
	title := fmt.Sprintf("Watches · #%d %d/%d · x delete · W output", p.ids[p.sel], p.sel+1, len(p.ids))
	if len(p.lines) > inner {
		title += fmt.Sprintf(" · %d–%d of %d", off+1, end, len(p.lines))
	}
	return box(p.st, title, focused, p.w, p.h, out)
}

func (p *watchPane) KeyMap() []key.Binding {
	return []key.Binding{p.keys.Up, p.keys.Down, p.keys.Top, p.keys.Bottom, p.keys.PageDown, p.keys.Delete, p.keys.Watches}
}
