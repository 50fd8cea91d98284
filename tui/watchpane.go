package tui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// unwatchMsg asks the model to delete a watch (x in the watches pane).
type unwatchMsg struct{ id int }

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
// what changed since the previous stop. Its lines are built when the
// snapshot is taken, so View only slices them.
type watchPane struct {
	keys   *keys.KeyMap
	ids    []int
	lines  []watchLine
	heads  []int // line of each watch's header
	sel    int   // selected watch
	offset int
	w, h   int
}

func (p *watchPane) SetSize(w, h int) { p.w, p.h = w, h }

// setWatches lays out the watches' latest results; a watch with no result
// yet (added since the last stop, result still coming) says so.
func (p *watchPane) setWatches(ws []watchView) {
	p.ids, p.lines, p.heads = p.ids[:0], p.lines[:0], p.heads[:0]
	for i, w := range ws {
		p.ids = append(p.ids, w.id)
		p.heads = append(p.heads, len(p.lines))
		add := func(kind byte, s string) { p.lines = append(p.lines, watchLine{text: s, watch: i, kind: kind}) }
		// The counts go before the query, which a narrow pane cuts.
		head := fmt.Sprintf("#%d", w.id)
		switch {
		case w.res == nil:
			add(wlHeader, head+" · "+w.query)
			add(wlNote, "    rows show at the next stop")
			continue
		case w.res.Err != nil:
			add(wlHeader, head+" · error · "+w.query)
			add(wlRemoved, "    "+oneLine(w.res.Err.Error()))
			continue
		}
		r := w.res
		n := fmt.Sprintf("%d", len(r.Rows))
		if w.capped {
			n += "+"
		}
		head += " · " + n + " rows"
		if len(r.Added)+len(r.Removed) > 0 {
			head += fmt.Sprintf(" · +%d −%d", len(r.Added), len(r.Removed))
		}
		add(wlHeader, head+" · "+w.query)
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
				widths[j] = max(widths[j], ansi.StringWidth(oneLine(show(r[j]))))
			}
		}
	}
	return func(r []any) string {
		var b strings.Builder
		for j, v := range r {
			s := oneLine(show(v))
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

// summary is the watches' state in a word, for the output pane's title.
func (p *watchPane) summary(ws []watchView) string {
	if len(ws) == 0 {
		return ""
	}
	added, removed, errs := 0, 0, 0
	for _, w := range ws {
		if w.res != nil {
			added += len(w.res.Added)
			removed += len(w.res.Removed)
			if w.res.Err != nil {
				errs++
			}
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

// Update moves between watches (↑/↓), scrolls (pgup/pgdn) and asks for the
// selected watch to be deleted (x).
func (p *watchPane) Update(msg tea.Msg) tea.Cmd {
	if len(p.ids) == 0 {
		return nil
	}
	page := max(1, p.h-3)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.Delete):
			id := p.ids[p.sel]
			return func() tea.Msg { return unwatchMsg{id: id} }
		case key.Matches(msg, p.keys.Up):
			p.selectWatch(p.sel - 1)
		case key.Matches(msg, p.keys.Down):
			p.selectWatch(p.sel + 1)
		case key.Matches(msg, p.keys.Top):
			p.selectWatch(0)
		case key.Matches(msg, p.keys.PageUp):
			p.scroll(-page)
		case key.Matches(msg, p.keys.PageDown):
			p.scroll(page)
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.scroll(-3)
		} else if msg.Button == tea.MouseWheelDown {
			p.scroll(3)
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

func (p *watchPane) View(st *styles.Styles, focused bool) string {
	inner := p.h - 2
	if len(p.ids) == 0 {
		return box(st, "Watches", focused, p.w, p.h, []string{st.Dim.Render("no watches: w adds one (a query re-run at every stop)")})
	}
	off := max(0, min(p.offset, len(p.lines)-inner))
	end := min(len(p.lines), off+inner)
	out := make([]string, 0, inner)
	for _, l := range p.lines[off:end] {
		s := fit(oneLine(l.text), p.w-2)
		switch {
		case l.kind == wlHeader && l.watch == p.sel:
			s = st.Selected.Render(s)
		case l.kind == wlHeader:
			s = st.Header.Render(s)
		case l.kind == wlAdded:
			s = st.Changed.Render(s)
		case l.kind == wlRemoved:
			s = st.Failed.Render(s)
		case l.kind == wlColumns, l.kind == wlNote:
			s = st.Dim.Render(s)
		}
		out = append(out, s)
	}
	title := fmt.Sprintf("Watches · #%d %d/%d · x delete · W output", p.ids[p.sel], p.sel+1, len(p.ids))
	if len(p.lines) > inner {
		title += fmt.Sprintf(" · %d–%d of %d", off+1, end, len(p.lines))
	}
	return box(st, title, focused, p.w, p.h, out)
}

func (p *watchPane) Help() []key.Binding {
	return []key.Binding{p.keys.Up, p.keys.Down, p.keys.Delete, p.keys.Watches}
}

// watchView is a watch with its latest result: from the last stop, or from
// its first run when it was added after that stop (nil until that comes).
type watchView struct {
	id     int
	query  string
	res    *session.WatchResult
	capped bool // the session keeps only the first rows
}

// watchViews pairs the session's watches with their latest results.
func watchViews(ws []session.Watch, stop []session.WatchResult, fresh map[int]*session.WatchResult) []watchView {
	out := make([]watchView, 0, len(ws))
	for _, w := range ws {
		v := watchView{id: w.ID, query: w.Query, res: fresh[w.ID]}
		if v.res == nil {
			for i := range stop {
				if stop[i].WatchID == w.ID {
					v.res = &stop[i]
				}
			}
		}
		v.capped = v.res != nil && len(v.res.Rows) >= watchRowLimit
		out = append(out, v)
	}
	return out
}

// watchRowLimit is the number of rows the session keeps per watch result;
// a result that long may have more.
const watchRowLimit = session.WatchRowLimit

// firstRun is a new watch's first result, worked out when the session added
// it, so its rows show before the next stop.
func firstRun(_ context.Context, s *session.Session) *session.WatchResult {
	ws := s.Watches()
	if len(ws) == 0 {
		return nil
	}
	res := ws[len(ws)-1].Last()
	return &res
}
