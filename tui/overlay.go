package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/internal/numfmt"
	"streamdbg/query"
	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// detail is a row or an event in full: its fields, its whole value, and
// for an entry of keyed state its history in this session.
type detail struct {
	title    string
	fields   [][2]string
	value    any
	hasValue bool
	entry    *session.EntryID
	change   *session.Change
	// forgottenEntries is how many histories the session forgot
	// (Session.HistoryForgotten): an entry without revisions may then have
	// changed after all.
	forgottenEntries int64
}

// lines lays the detail out; revs are the entry's revisions (oldest first)
// and forgotten how many older ones the session no longer keeps.
func (d detail) lines(revs []session.Revision, forgotten int) []string {
	var out []string
	w := 0
	for _, f := range d.fields {
		w = max(w, len(f[0]))
	}
	for _, f := range d.fields {
		if f[1] == "NULL" && (f[0] == "namespace" || f[0] == "user key") {
			continue // a value state has neither
		}
		v := strings.Split(f[1], "\n")
		out = append(out, fmt.Sprintf("%-*s  %s", w, f[0], v[0]))
		for _, more := range v[1:] {
			out = append(out, strings.Repeat(" ", w+2)+more)
		}
	}
	if d.hasValue {
		out = append(out, "", "value:")
		for _, l := range strings.Split(pretty(d.value), "\n") {
			out = append(out, "  "+l)
		}
	}
	if d.change != nil {
		what := "new at the last stop"
		if d.change.HadOld {
			what = "changed at the last stop, was " + show(d.change.Old)
		}
		if d.change.Cleared {
			what = "cleared at the last stop, was " + show(d.change.Old)
		}
		out = append(out, "", what)
	}
	if d.entry != nil {
		out = append(out, "", "history in this session:")
		if forgotten > 0 {
			out = append(out, fmt.Sprintf("  … %d older changes forgotten", forgotten))
		}
		switch {
		case len(revs) > 0:
		case d.forgottenEntries > 0:
			out = append(out, "  none kept. The session keeps the histories of only the "+numfmt.Commas(session.HistoryEntries)+" entries",
				"  written first most recently; it has forgotten "+numfmt.Commas(d.forgottenEntries)+" histories since it",
				"  started (or since a restore), and this entry's may be one of them.")
		default:
			out = append(out, "  no change since the session started (or since a restore)")
		}
		for _, r := range revs {
			s := fmt.Sprintf("  record %-6d ", r.Position)
			switch {
			case r.Cleared:
				s += "cleared"
			case r.HadOld:
				s += show(r.New) + "  ← " + show(r.Old)
			default:
				s += show(r.New) + "  (new)"
			}
			out = append(out, s)
		}
	}
	return out
}

// textOverlay is a scrollable text over the body: help, details, messages.
func textOverlay(k *keys.KeyMap, st *styles.Styles, title string, lines []string) *textList {
	o := newTextList(k, st, title+" · esc closes")
	o.noCursor, o.wrap = true, true
	o.setLines(lines, 0)
	return o
}

// errorLines shows an error; an error at a column of a line (a query's, a
// condition's) gets the line with a caret under the column.
func errorLines(text string, err error) []string {
	var out []string
	var le *session.LineError
	var qe *query.Error
	switch {
	case errors.As(err, &le) && le.Col > 0:
		out = append(out, "  "+le.Line, "  "+strings.Repeat(" ", max(0, le.Col-1))+"^")
	case errors.As(err, &qe) && text != "" && qe.Pos.Line > 0:
		if lines := strings.Split(text, "\n"); qe.Pos.Line <= len(lines) {
			out = append(out, "  "+lines[qe.Pos.Line-1], "  "+strings.Repeat(" ", max(0, qe.Pos.Col-1))+"^")
		}
	}
	out = append(out, strings.Split(err.Error(), "\n")...)
	return out
}

// queryKeep bounds the rows a query result keeps; the count goes on.
const queryKeep = 10000

// queryResult is a query run in the background.
type queryResult struct {
	text    string
	notes   []string // query.Rows.Notes
	cols    []string
	rows    [][]string
	raw     [][]any
	total   int
	elapsed time.Duration
}

// readRows reads a query's rows, keeping the first queryKeep.
func readRows(text string, rows *query.Rows, start time.Time) (*queryResult, error) {
	defer rows.Close()
	q := &queryResult{text: text, cols: rows.Columns(), notes: rows.Notes()}
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
			q.raw = append(q.raw, r)
		}
	}
	q.elapsed = time.Since(start)
	return q, nil
}

// tableView is a query result over the body: columns sized to their
// content, a cursor, Enter for a row in full, z for full-width columns
// scrolled with H and L, / to search.
type tableView struct {
	keys  *keys.KeyMap
	st    *styles.Styles
	title string
	q     *queryResult
	off   int
	cur   int
	full  bool
	hoff  int
	query string
	w, h  int
}

func newTableView(k *keys.KeyMap, st *styles.Styles, q *queryResult) *tableView {
	title := fmt.Sprintf("Query · %s · %s", plural(int64(q.total), "row", "rows"), q.elapsed.Round(10*time.Microsecond))
	if q.total > len(q.rows) {
		title += fmt.Sprintf(" · first %s shown", numfmt.Commas(int64(len(q.rows))))
	}
	return &tableView{keys: k, st: st, title: title + " · esc closes", q: q}
}

func (t *tableView) SetSize(w, h int) { t.w, t.h = w, h; t.clamp() }

func (t *tableView) page() int { return max(1, t.h-3-len(t.q.notes)) }

func (t *tableView) clamp() {
	n := len(t.q.rows)
	t.cur = max(0, min(t.cur, n-1))
	if t.cur < t.off {
		t.off = t.cur
	}
	if t.cur >= t.off+t.page() {
		t.off = t.cur - t.page() + 1
	}
	t.off = max(0, min(t.off, n-t.page()))
}

func (t *tableView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := t.keys
		switch {
		case key.Matches(msg, k.Up):
			t.cur--
		case key.Matches(msg, k.Down):
			t.cur++
		case key.Matches(msg, k.PageUp):
			t.cur -= t.page() - 1
		case key.Matches(msg, k.PageDown):
			t.cur += t.page() - 1
		case key.Matches(msg, k.Top):
			t.cur = 0
		case key.Matches(msg, k.Bottom):
			t.cur = len(t.q.rows) - 1
		case key.Matches(msg, k.Wrap):
			t.full, t.hoff = !t.full, 0
		case key.Matches(msg, k.Left):
			t.hoff = max(0, t.hoff-max(8, t.w/2))
		case key.Matches(msg, k.Right):
			if t.full {
				t.hoff += max(8, t.w/2)
			}
		case key.Matches(msg, k.SearchNext):
			return status(t.find(t.query, 1), false)
		case key.Matches(msg, k.SearchPrev):
			return status(t.find(t.query, -1), false)
		case key.Matches(msg, k.Enter):
			if t.cur < len(t.q.raw) {
				d := detail{title: "query row"}
				for j, c := range t.q.cols {
					if j < len(t.q.raw[t.cur]) {
						d.fields = append(d.fields, [2]string{c, pretty(t.q.raw[t.cur][j])})
					}
				}
				return showDetail(d)
			}
		}
	case wheelMsg:
		if msg.up {
			t.cur -= 3
		} else {
			t.cur += 3
		}
	case clickMsg:
		if r := msg.y - 2; r >= 0 {
			t.cur = t.off + r
		}
	}
	t.clamp()
	return nil
}

func (t *tableView) search(text string) string {
	t.query = text
	return t.find(text, 1)
}

func (t *tableView) find(text string, dir int) string {
	if text == "" {
		return "no search: / searches"
	}
	n := len(t.q.rows)
	s := strings.ToLower(text)
	for step := 1; step <= n; step++ {
		i := ((t.cur+dir*step)%n + n) % n
		if anyCellHas(t.q.rows[i], s) {
			t.cur = i
			t.clamp()
			return fmt.Sprintf("%q: row %d (. next, , previous)", text, i+1)
		}
	}
	return fmt.Sprintf("no row with %q", text)
}

func (t *tableView) View(focused bool) string {
	cols := make([]column, len(t.q.cols))
	for j, c := range t.q.cols {
		cols[j] = column{title: c, min: min(8, len(c))}
	}
	end := min(len(t.q.rows), t.off+t.page())
	q := strings.ToLower(t.query)
	rows := t.q.rows[t.off:end]
	lines := table(t.st, cols, rows, t.w-2, t.full, func(i, j int, s string) string {
		switch {
		case t.off+i == t.cur:
			return t.st.Selected.Render(s)
		case q != "" && strings.Contains(strings.ToLower(s), q):
			return t.st.Match.Render(s)
		}
		return s
	})
	if t.hoff > 0 {
		for i := range lines {
			lines[i] = hscroll(lines[i], t.hoff)
		}
	}
	title := t.title
	if len(t.q.rows) > t.page() {
		title += fmt.Sprintf(" · %d–%d of %d", t.off+1, end, len(t.q.rows))
	}
	if len(t.q.notes) > 0 {
		// What the plan noticed (a name no state has) comes first, above
		// the rows it explains.
		notes := make([]string, len(t.q.notes), len(t.q.notes)+len(lines))
		for i, n := range t.q.notes {
			notes[i] = t.st.Failed.Render("note: " + n)
		}
		lines = append(notes, lines...)
	}
	return box(t.st, title, true, t.w, t.h, lines)
}

func (t *tableView) KeyMap() []key.Binding {
	return append([]key.Binding{t.keys.Enter, t.keys.Close}, t.keys.Scroll()...)
}

// confirm asks a yes/no question; yes runs its action.
type confirm struct {
	keys     *keys.KeyMap
	st       *styles.Styles
	question []string
	yes      tea.Cmd
	w, h     int
}

func (c *confirm) SetSize(w, h int) { c.w, c.h = w, h }

func (c *confirm) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, c.keys.Yes):
			return tea.Batch(closeOverlay, c.yes)
		case key.Matches(k, c.keys.No):
			return closeOverlay
		}
	}
	return nil
}

func (c *confirm) View(bool) string {
	lines := append([]string{""}, c.question...)
	lines = append(lines, "", c.st.Header.Render("y")+" yes · "+c.st.Header.Render("n")+"/esc no")
	return box(c.st, "Are you sure?", true, c.w, c.h, wrapLines(lines, c.w-2))
}

func (c *confirm) KeyMap() []key.Binding { return []key.Binding{c.keys.Yes, c.keys.No} }
