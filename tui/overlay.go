package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/query"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// overlay is a scrollable view over the body: help, query results, a
// message, an error, the breakpoint list. esc closes it.
type overlay struct {
	keys       *keys.KeyMap
	title      string
	text       []string   // a text overlay
	cols       []string   // a table overlay
	rows       [][]string // its rows (bounded by queryKeep)
	err        bool
	sel        int // selected row (breakpoints)
	selectable bool
	offset     int
	w, h       int
}

func (o *overlay) SetSize(w, h int) { o.w, o.h = w, h }

func (o *overlay) length() int {
	if o.cols != nil {
		return len(o.rows)
	}
	return len(o.text)
}

func (o *overlay) inner() int {
	n := o.h - 2
	if o.cols != nil {
		n-- // header row
	}
	return max(1, n)
}

func (o *overlay) Update(msg tea.Msg) {
	page := o.inner()
	delta := 0
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, o.keys.Up):
			delta = -1
		case key.Matches(msg, o.keys.Down):
			delta = 1
		case key.Matches(msg, o.keys.PageUp):
			delta = -page
		case key.Matches(msg, o.keys.PageDown):
			delta = page
		case key.Matches(msg, o.keys.Top):
			delta = -o.length()
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			delta = -3
		} else if msg.Button == tea.MouseWheelDown {
			delta = 3
		}
	}
	if o.selectable {
		o.sel = max(0, min(o.sel+delta, o.length()-1))
		if o.sel < o.offset {
			o.offset = o.sel
		}
		if o.sel >= o.offset+page {
			o.offset = o.sel - page + 1
		}
		return
	}
	o.offset = max(0, min(o.offset+delta, o.length()-page))
}

func (o *overlay) View(st *styles.Styles) string {
	page := o.inner()
	var lines []string
	end := min(o.length(), o.offset+page)
	if o.cols != nil {
		cols := make([]column, len(o.cols))
		for j, c := range o.cols {
			cols[j] = column{title: c, min: min(24, max(len(c), 4)), grow: 1}
		}
		lines = table(st, cols, o.rows[o.offset:end], o.w-2, nil)
	} else {
		for i := o.offset; i < end; i++ {
			l := o.text[i]
			if o.selectable && i == o.sel {
				l = st.Selected.Render(fit(l, o.w-2))
			} else if o.err {
				l = st.Failed.Render(l)
			}
			lines = append(lines, l)
		}
	}
	title := o.title
	if o.length() > page {
		title += fmt.Sprintf(" · %d–%d of %d", o.offset+1, end, o.length())
	}
	return box(st, title, true, o.w, o.h, lines)
}

// queryKeep bounds the rows a query overlay keeps; the count goes on.
const queryKeep = 10000

// queryResult is a query run in the background.
type queryResult struct {
	text    string
	cols    []string
	rows    [][]string
	total   int
	elapsed time.Duration
}

// readRows reads a query's rows, keeping the first queryKeep.
func readRows(text string, rows *query.Rows, start time.Time) (*queryResult, error) {
	defer rows.Close()
	q := &queryResult{text: text, cols: rows.Columns()}
	for r, err := range rows.All() {
		if err != nil {
			return nil, err
		}
		q.total++
		if len(q.rows) < queryKeep {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = show(v)
			}
			q.rows = append(q.rows, cells)
		}
	}
	q.elapsed = time.Since(start)
	return q, nil
}

func queryOverlay(k *keys.KeyMap, q *queryResult) *overlay {
	title := fmt.Sprintf("Query · %s · %s", plural(int64(q.total), "row", "rows"), q.elapsed.Round(10*time.Microsecond))
	if q.total > len(q.rows) {
		title += fmt.Sprintf(" · first %d shown", len(q.rows))
	}
	return &overlay{keys: k, title: title, cols: q.cols, rows: q.rows}
}

// errorOverlay shows an error; a query error gets a caret under its column.
func errorOverlay(k *keys.KeyMap, text string, err error) *overlay {
	o := &overlay{keys: k, title: "Error", err: true}
	var qe *query.Error
	if errors.As(err, &qe) && text != "" && qe.Pos.Line > 0 {
		lines := strings.Split(text, "\n")
		if qe.Pos.Line <= len(lines) {
			o.text = append(o.text, "  "+lines[qe.Pos.Line-1], "  "+strings.Repeat(" ", max(0, qe.Pos.Col-1))+"^")
		}
	}
	o.text = append(o.text, strings.Split(err.Error(), "\n")...)
	o.text = append(o.text, "", "esc closes")
	return o
}
