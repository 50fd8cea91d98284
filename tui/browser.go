package tui

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/query"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// closeBrowserMsg returns from a browser opened inside the debugger.
type closeBrowserMsg struct{}

// browserQueryMsg is a query on the savepoint that finished.
type browserQueryMsg struct {
	text string
	q    *queryResult
	err  error
	diff bool // a diff against another savepoint, not a query
}

// browser is the savepoint browser: StateMeta on top, operators and their
// states on the left, the entries of the chosen state on the right (one
// page read at a time), a skew chart, and the query bar.
type browser struct {
	cat    state.Catalog
	name   string
	st     *styles.Styles
	keys   *keys.KeyMap
	help   help.Model
	nested bool // opened from the debugger: q and esc go back

	states  []state.StateMeta
	ops     map[string]state.OperatorInfo
	sel     int // selected state
	focus   int // 0 states, 1 entries
	entries *pager
	skew    []int64 // entries per subtask (or key group) of the operator
	skewBy  string
	filter  string // the `/` expression over the chosen state's entries
	cond    *query.Compiled

	prompt     textinput.Model
	promptMode string
	overlay    *overlay
	status     string
	busy       context.CancelFunc
	w, h       int
}

// openCatalog opens a savepoint directory, ours or Apache Flink's.
func openCatalog(dir string) (state.Catalog, error) {
	if flink.IsFlink(dir) {
		return flink.Open(dir)
	}
	return savepoint.Open(vfs.Default, dir)
}

func openBrowser(dir string, st *styles.Styles, k *keys.KeyMap, nested bool) (*browser, error) {
	cat, err := openCatalog(dir)
	if err != nil {
		return nil, err
	}
	return newBrowser(cat, dir, st, k, nested), nil
}

func newBrowser(cat state.Catalog, name string, st *styles.Styles, k *keys.KeyMap, nested bool) *browser {
	b := &browser{cat: cat, name: name, st: st, keys: k, help: help.New(), nested: nested, ops: map[string]state.OperatorInfo{}}
	for _, o := range cat.Operators() {
		b.ops[o.ID] = o
	}
	for _, m := range cat.States() {
		if m.Scope == state.ScopeKeyed || m.Scope == state.ScopeOperator {
			b.states = append(b.states, m)
		}
	}
	b.prompt = textinput.New()
	b.SetSize(120, 40)
	b.choose()
	return b
}

func (b *browser) layout() (metaH, leftW, bodyH int) {
	metaH = min(len(b.states)+3, max(4, b.h/4))
	bodyH = max(4, b.h-metaH-3)
	leftW = max(26, min(44, b.w*32/100))
	return
}

func (b *browser) SetSize(w, h int) {
	b.w, b.h = w, h
	b.help.SetWidth(w)
	b.prompt.SetWidth(max(10, w-4))
	if b.entries != nil {
		b.entries.resize(b.entryRows())
	}
	if b.overlay != nil {
		b.overlay.SetSize(w, h-3)
	}
}

func (b *browser) entryRows() int {
	_, _, bodyH := b.layout()
	return max(1, bodyH-3)
}

// choose opens the selected state's entries and its skew chart.
func (b *browser) choose() {
	if len(b.states) == 0 {
		return
	}
	m := b.states[b.sel]
	op := b.ops[m.OperatorID]
	var src rowSource
	if m.Scope == state.ScopeKeyed {
		src = &savepointKeyed{cat: b.cat, meta: m, maxKG: max(1, op.MaxParallelism) - 1, cond: b.cond}
	} else {
		src = &savepointOperator{cat: b.cat, meta: m, cond: b.cond}
	}
	b.entries = newPager(src, b.entryRows())
	b.skew, b.skewBy = skewOf(b.cat, m)
}

// skewOf reads entries per subtask from a savepoint's metadata (no state is
// read); for other catalogs it has nothing to say.
func skewOf(cat state.Catalog, m state.StateMeta) ([]int64, string) {
	sp, ok := cat.(interface{ Meta() *savepoint.Metadata })
	if !ok {
		return nil, ""
	}
	for _, op := range sp.Meta().Operators {
		if op.ID != m.OperatorID {
			continue
		}
		var out []int64
		for _, sub := range op.Subtasks {
			var n int64
			if sub.Keyed != nil {
				for _, s := range sub.Keyed.Sections {
					n += s.Entries
				}
			}
			out = append(out, n)
		}
		return out, "entries per subtask (all keyed states of the operator)"
	}
	return nil, ""
}

func (b *browser) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		b.SetSize(msg.Width, msg.Height)
	case browserQueryMsg:
		b.busy = nil
		if msg.err != nil {
			b.overlay = errorOverlay(b.keys, msg.text, msg.err)
		} else {
			b.overlay = queryOverlay(b.keys, msg.q)
			if msg.diff {
				b.overlay.title = "Diff · " + msg.text + " · " + strings.TrimPrefix(b.overlay.title, "Query · ")
			}
		}
		b.overlay.SetSize(b.w, b.h-3)
	case tea.KeyPressMsg:
		return b.key(msg)
	case tea.MouseWheelMsg:
		if b.overlay != nil {
			b.overlay.Update(msg)
		} else if msg.Button == tea.MouseWheelDown {
			b.entries.down(3)
		} else if msg.Button == tea.MouseWheelUp {
			b.entries.up(3)
		}
	}
	return nil
}

func (b *browser) quit() tea.Cmd {
	if b.nested {
		return func() tea.Msg { return closeBrowserMsg{} }
	}
	return tea.Quit
}

func (b *browser) key(k tea.KeyPressMsg) tea.Cmd {
	if b.busy != nil {
		if key.Matches(k, b.keys.Interrupt) {
			b.busy()
		}
		return nil
	}
	if b.promptMode != "" {
		switch k.String() {
		case "esc":
			b.promptMode = ""
			return nil
		case "enter":
			mode := b.promptMode
			b.promptMode = ""
			if mode == "filter" {
				b.setFilter(strings.TrimSpace(b.prompt.Value()))
				return nil
			}
			if mode == "diff" {
				return b.runDiff(strings.TrimSpace(b.prompt.Value()))
			}
			return b.runQuery(strings.TrimSpace(b.prompt.Value()))
		}
		var cmd tea.Cmd
		b.prompt, cmd = b.prompt.Update(k)
		return cmd
	}
	switch {
	case key.Matches(k, b.keys.Close):
		if b.overlay != nil {
			b.overlay = nil
			return nil
		}
		if b.nested {
			return b.quit()
		}
	case key.Matches(k, b.keys.Quit):
		if k.String() == "ctrl+c" {
			return tea.Quit
		}
		return b.quit()
	case key.Matches(k, b.keys.Help):
		lines := strings.Split(b.help.FullHelpView(b.keys.FullHelp()), "\n")
		b.overlay = &overlay{keys: b.keys, title: "Help · esc closes", text: append(lines, "", "In the browser: tab switches states/entries, / filters the chosen state's entries (e.g. value > 50 AND key LIKE 'key_1%'), : runs a query on the savepoint")}
		b.overlay.SetSize(b.w, b.h-3)
	case key.Matches(k, b.keys.Command):
		b.promptMode = "query"
		b.prompt.Prompt = ":"
		b.prompt.SetValue("SELECT * FROM keyed_state LIMIT 100")
		if len(b.states) > 0 {
			m := b.states[b.sel]
			b.prompt.SetValue(fmt.Sprintf("SELECT key, value FROM %q.%q LIMIT 100", b.ops[m.OperatorID].Name, m.StateName))
		}
		b.prompt.CursorEnd()
		return b.prompt.Focus()
	case key.Matches(k, b.keys.Filter) && b.overlay == nil:
		b.promptMode = "filter"
		b.prompt.Prompt = "/"
		b.prompt.SetValue(b.filter)
		b.prompt.CursorEnd()
		return b.prompt.Focus()
	case key.Matches(k, b.keys.Diff) && b.overlay == nil:
		b.promptMode = "diff"
		b.prompt.Prompt = "diff " + b.name + " against: "
		b.prompt.SetValue("")
		return b.prompt.Focus()
	case b.overlay != nil:
		b.overlay.Update(k)
	case key.Matches(k, b.keys.NextPane, b.keys.PrevPane):
		b.focus = 1 - b.focus
	case b.focus == 0 && key.Matches(k, b.keys.Up, b.keys.Down, b.keys.Top):
		switch {
		case key.Matches(k, b.keys.Up):
			b.sel = max(0, b.sel-1)
		case key.Matches(k, b.keys.Down):
			b.sel = min(len(b.states)-1, b.sel+1)
		default:
			b.sel = 0
		}
		// A filter belongs to the entries of the state it was typed for.
		b.filter, b.cond = "", nil
		b.choose()
	case key.Matches(k, b.keys.Enter):
		b.focus = 1
	case b.entries != nil:
		b.entries.scroll(k, b.keys, b.entryRows())
	}
	return nil
}

// setFilter filters the chosen state's entries with a `/` expression (""
// clears it); an error shows with a caret under its position.
func (b *browser) setFilter(text string) {
	c, err := compileFilter(text)
	if err != nil {
		b.overlay = errorOverlay(b.keys, text, err)
		b.overlay.SetSize(b.w, b.h-3)
		b.status = err.Error()
		return
	}
	b.filter, b.cond, b.status = text, c, ""
	b.focus = 1
	b.choose()
}

func (b *browser) runQuery(text string) tea.Cmd {
	if text == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.busy = cancel
	cat := b.cat
	return func() tea.Msg {
		defer cancel()
		start := time.Now()
		rows, err := query.RunText(ctx, cat, text)
		if err != nil {
			return browserQueryMsg{text: text, err: err}
		}
		q, err := readRows(text, rows, start)
		return browserQueryMsg{text: text, q: q, err: err}
	}
}

// runDiff compares this savepoint (old) with the one in the directory that
// args starts with (new), keeping the rows of the filter that may follow.
func (b *browser) runDiff(args string) tea.Cmd {
	dir, filter, _ := strings.Cut(args, " ")
	if dir == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.busy = cancel
	cat, name := b.cat, b.name
	return func() tea.Msg {
		defer cancel()
		start := time.Now()
		other, err := session.OpenCatalog(dir)
		if err != nil {
			return browserQueryMsg{text: args, err: err, diff: true}
		}
		rows := session.DiffRows(ctx, cat, other, name, dir, strings.TrimSpace(filter))
		q, err := readRows(filter, rows, start)
		return browserQueryMsg{text: dir, q: q, err: err, diff: true}
	}
}

func (b *browser) render() string {
	st := b.st
	var out strings.Builder
	out.WriteString(fit(fmt.Sprintf(" %s · savepoint %s · %d operators · %d states", st.Header.Render("streamdbg"), b.name, len(b.ops), len(b.states)), b.w))
	out.WriteByte('\n')
	if b.overlay != nil {
		out.WriteString(b.overlay.View(st))
	} else {
		metaH, leftW, bodyH := b.layout()
		out.WriteString(b.metaView(metaH))
		out.WriteByte('\n')
		out.WriteString(joinColumns(b.statesView(leftW, bodyH), b.entriesView(b.w-leftW, bodyH)))
	}
	out.WriteByte('\n')
	switch {
	case b.promptMode != "":
		out.WriteString(fit(b.prompt.View(), b.w))
	case b.busy != nil:
		out.WriteString(fit(" running query · esc interrupts", b.w))
	default:
		out.WriteString(fit(" "+st.Status.Render(b.status), b.w))
	}
	out.WriteByte('\n')
	out.WriteString(fit(b.help.ShortHelpView(b.keys.BrowserHelp()), b.w))
	return out.String()
}

func (b *browser) metaView(h int) string {
	cols := []column{{"operator", 8, 2}, {"state", 6, 2}, {"scope", 8, 0}, {"kind", 11, 0}, {"key", 6, 1}, {"value", 6, 2}, {"entries", 9, 0}, {"bytes", 9, 0}}
	first := max(0, min(b.sel-(h-4), len(b.states)-(h-3)))
	var rows [][]string
	for i := first; i < len(b.states) && len(rows) < h-3; i++ {
		m := b.states[i]
		value := m.ValueType
		if m.Status != "" {
			value = "unreadable: " + m.Status // StateMeta.Status: why the reader cannot read it
		}
		rows = append(rows, []string{m.OperatorName, m.StateName, fmt.Sprint(m.Scope), fmt.Sprint(m.Kind), m.KeyType, value,
			fmt.Sprint(m.Entries), fmt.Sprint(m.Bytes)})
	}
	lines := table(b.st, cols, rows, b.w-2, func(i, j int, s string) string {
		if first+i == b.sel {
			return b.st.Selected.Render(s)
		}
		return s
	})
	return box(b.st, "StateMeta", false, b.w, h, lines)
}

func (b *browser) statesView(w, h int) string {
	var lines []string
	lastOp := ""
	selLine := 0
	for i, m := range b.states {
		if m.OperatorID != lastOp {
			lastOp = m.OperatorID
			o := b.ops[m.OperatorID]
			lines = append(lines, fmt.Sprintf("▸ %s ×%d", o.Name, o.Parallelism))
		}
		l := fit(fmt.Sprintf("   %s  %s", m.StateName, b.st.Dim.Render(fmt.Sprint(m.Kind))), w-2)
		if i == b.sel {
			l = b.st.Selected.Render(fit(fmt.Sprintf("   %s  %s", m.StateName, m.Kind), w-2))
			selLine = len(lines)
		}
		lines = append(lines, l)
	}
	chart := b.skewChart(w - 2)
	room := h - 2 - len(chart)
	if room < 3 {
		chart, room = nil, h-2
	}
	first := max(0, min(selLine-room+1, len(lines)-room))
	lines = lines[first:min(len(lines), first+room)]
	for len(lines) < room {
		lines = append(lines, "")
	}
	return box(b.st, "Operators & states", b.focus == 0, w, h, append(lines, chart...))
}

// skewChart draws one bar per subtask, scaled to the widest.
func (b *browser) skewChart(w int) []string {
	if len(b.skew) == 0 || len(b.skew) > 16 {
		return nil
	}
	var top int64 = 1
	for _, n := range b.skew {
		top = max(top, n)
	}
	out := []string{b.st.Dim.Render(fit("skew: entries per subtask", w))}
	barW := max(1, w-16)
	for i, n := range b.skew {
		bar := strings.Repeat("█", int(int64(barW)*n/top))
		out = append(out, fmt.Sprintf("[%d] %s %d", i, b.st.Bar.Render(bar), n))
	}
	return out
}

func (b *browser) entriesView(w, h int) string {
	if b.entries == nil {
		return box(b.st, "Entries", b.focus == 1, w, h, []string{"no states"})
	}
	m := b.states[b.sel]
	var cols []column
	if m.Scope == state.ScopeKeyed {
		cols = []column{{"kg", 4, 0}, {"subtask", 7, 0}, {"key", 6, 3}, {"namespace", 9, 1}, {"user key", 8, 1}, {"value", 8, 4}}
	} else {
		cols = []column{{"subtask", 7, 0}, {"position", 8, 0}, {"key", 5, 2}, {"value", 8, 4}}
	}
	rows := make([][]string, len(b.entries.page))
	for i, r := range b.entries.page {
		rows[i] = r.cells
	}
	lines := table(b.st, cols, rows, w-2, nil)
	if b.entries.err != nil {
		lines = append(lines, b.st.Failed.Render(b.entries.err.Error()))
	}
	for len(lines) < h-3 {
		lines = append(lines, "")
	}
	status := fmt.Sprintf("rows %d–%d of %d", b.entries.index+1, b.entries.index+len(b.entries.page), m.Entries)
	if b.filter != "" {
		// The metadata counts all entries, not the matching ones.
		status = fmt.Sprintf("rows %d–%d", b.entries.index+1, b.entries.index+len(b.entries.page))
		if len(b.entries.page) == 0 {
			status = "no matching entries"
		} else if b.entries.more {
			status += " · more ↓"
		}
		status += " · filter: " + b.filter
	}
	lines = append(lines[:min(len(lines), h-3)], b.st.Dim.Render(status))
	return box(b.st, fmt.Sprintf("Entries · %s.%s", m.OperatorName, m.StateName), b.focus == 1, w, h, lines)
}

// savepointKeyed reads one keyed state of a savepoint from a key group on.
type savepointKeyed struct {
	cat   state.Catalog
	meta  state.StateMeta
	maxKG int
	cond  *query.Compiled
}

func (s *savepointKeyed) first() int { return 0 }

func (s *savepointKeyed) rows(from int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		kgs := make([]int, 0, s.maxKG-from+1)
		for kg := from; kg <= s.maxKG; kg++ {
			kgs = append(kgs, kg)
		}
		for r, err := range s.cat.Keyed(state.KeyedScan{OperatorID: s.meta.OperatorID, StateName: s.meta.StateName, KeyGroups: kgs}) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if ok, err := passes(s.cond, r, keyedEnv); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{kg: r.KeyGroup, cells: []string{fmt.Sprint(r.KeyGroup), fmt.Sprint(r.Subtask), show(r.Key), show(r.Namespace), show(r.UserKey), show(r.Value)}}, nil) {
				return
			}
		}
	}
}

// savepointOperator reads one operator state of a savepoint.
type savepointOperator struct {
	cat  state.Catalog
	meta state.StateMeta
	cond *query.Compiled
}

func (s *savepointOperator) first() int { return 0 }

func (s *savepointOperator) rows(from int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		for r, err := range s.cat.OperatorState(state.OperatorScan{OperatorID: s.meta.OperatorID, StateName: s.meta.StateName}) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if ok, err := passes(s.cond, r, operatorEnv); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{cells: []string{fmt.Sprint(r.Subtask), fmt.Sprint(r.Position), show(r.Key), show(r.Value)}}, nil) {
				return
			}
		}
	}
}

// closeCatalog closes a catalog that holds files open.
func closeCatalog(cat state.Catalog) {
	if c, ok := cat.(io.Closer); ok {
		c.Close()
	}
}
