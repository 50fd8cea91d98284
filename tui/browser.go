package tui

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/internal/numfmt"
	"streamdbg/query"
	"streamdbg/runtime/session"
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

// browserItem is a line of the browser's list: a state, or a gap (what
// the savepoint has but cannot be read, with the reason).
type browserItem struct {
	meta session.StateMeta
	gap  string
	op   session.OperatorInfo
}

// browser is the savepoint browser: StateMeta on top, operators and their
// states on the left (gaps listed, never hidden), the entries of the
// chosen state on the right (one page read at a time), a skew chart, and
// the query bar.
type browser struct {
	sp     *session.Savepoint
	st     *styles.Styles
	keys   *keys.KeyMap
	help   help.Model
	nested bool // opened from the debugger: q and esc go back

	items   []browserItem
	ops     map[string]session.OperatorInfo
	nstates int
	sel     int // selected item
	focus   int // 0 states, 1 entries
	entries *pager
	cur     int
	filter  string
	cond    *query.Compiled
	pins    map[string][]any // what the filter pins (query.Pinned)
	query   string

	prompt  *prompt
	overlay component
	status  string
	busy    context.CancelFunc
	// busyWhat says what runs while busy ("" a query).
	busyWhat string
	w, h     int
}

// pageMsg is a move of the entries that went on in the background: the
// pager it read, what depends on it, and whether esc stopped it.
type pageMsg struct {
	p           *pager
	finish      func(*browser)
	interrupted bool
	keep        bool // show p even when interrupted (its error says so)
}

// pageWait is how long a key waits for the entries it moves to be read
// before the reading goes on in the background (esc stops it), so that
// no key freezes the screen, whatever the state and the filter. A
// variable for tests.
var pageWait = 150 * time.Millisecond

// errStopped is the error of a reading esc stopped.
var errStopped = errors.New("reading stopped (esc)")

// move runs op on a copy of the entries' pager: at once when it is done
// within pageWait, else in the background with the browser busy (esc
// stops it, the entries stay as they were until it is done). finish,
// which op returns, then sets what depends on the new entries. keep: an
// interrupted move still replaces the entries (a new filter's pager,
// which says that its reading stopped).
func (b *browser) move(what string, keep bool, op func(p *pager) (finish func(*browser))) tea.Cmd {
	if b.entries == nil || b.busy != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := b.entries.clone()
	src := p.src
	p.src = withContext(src, ctx)
	done := make(chan pageMsg, 1)
	go func() {
		finish := op(p)
		p.src = src
		done <- pageMsg{p: p, finish: finish, interrupted: ctx.Err() != nil, keep: keep}
	}()
	timer := time.NewTimer(pageWait)
	defer timer.Stop()
	select {
	case msg := <-done:
		cancel()
		b.applyPage(msg)
		return nil
	case <-timer.C:
	}
	b.busy, b.busyWhat = cancel, what
	return func() tea.Msg {
		msg := <-done
		cancel()
		return msg
	}
}

// applyPage takes the pager a move read.
func (b *browser) applyPage(msg pageMsg) {
	b.busy, b.busyWhat = nil, ""
	if msg.interrupted {
		b.status = "stopped (esc): the entries stay as they were"
		if !msg.keep {
			return
		}
		b.status = ""
	}
	b.entries = msg.p
	if msg.finish != nil {
		msg.finish(b)
	}
	if n := b.entryRows(); b.entries.size != n {
		b.entries.resize(n) // the terminal changed meanwhile
	}
	b.cur = max(0, min(b.cur, len(b.entries.page)-1))
}

func openBrowser(dir string, st *styles.Styles, k *keys.KeyMap, nested bool) (*browser, error) {
	sp, err := session.OpenSavepoint(dir)
	if err != nil {
		return nil, err
	}
	return newBrowser(sp, st, k, nested), nil
}

func newBrowser(sp *session.Savepoint, st *styles.Styles, k *keys.KeyMap, nested bool) *browser {
	b := &browser{sp: sp, st: st, keys: k, help: help.New(), nested: nested, ops: map[string]session.OperatorInfo{}, prompt: newPrompt()}
	var order []string
	for _, o := range sp.Operators() {
		b.ops[o.ID] = o
		order = append(order, o.ID)
	}
	byOp := map[string][]session.StateMeta{}
	for _, m := range sp.States() {
		byOp[m.OperatorID] = append(byOp[m.OperatorID], m)
		if _, ok := b.ops[m.OperatorID]; !ok {
			b.ops[m.OperatorID] = session.OperatorInfo{ID: m.OperatorID, Name: m.OperatorName}
			order = append(order, m.OperatorID)
		}
	}
	vocab := vocabulary{states: map[string][]string{}}
	for _, id := range order {
		op := b.ops[id]
		listed := map[string]bool{}
		vocab.operators = append(vocab.operators, op.Name)
		for _, m := range byOp[id] {
			it := browserItem{meta: m, op: op}
			if m.Status != "" && m.Status != "ok" {
				it.gap = m.Name + ": " + m.Status
				if strings.HasPrefix(m.Name, "(") {
					// A placeholder for what cannot be listed: the
					// operator's own list of gaps says it again.
					it.gap = m.Status
					listed[strings.Trim(m.Name, "()")] = true
				}
				listed[m.Status] = true
			}
			b.items = append(b.items, it)
			vocab.states[op.Name] = append(vocab.states[op.Name], m.Name)
			b.nstates++
		}
		for _, g := range op.Gaps {
			if listed[g] || listed["keyed state"] && strings.HasPrefix(g, "keyed state") || listed["raw keyed state"] && strings.HasPrefix(g, "raw") {
				continue // a state's status says it already
			}
			b.items = append(b.items, browserItem{gap: g, op: op, meta: session.StateMeta{OperatorID: id, OperatorName: op.Name}})
		}
	}
	b.prompt.vocab = vocab
	b.SetSize(120, 40)
	if cmd := b.choose(); cmd != nil {
		b.Update(cmd()) // the first page, whatever it takes: no screen yet
	}
	return b
}

// stateQuery is the query the browser's bar offers for a state: its
// entries, and for a timer state its timers (in the timers table: the
// "operator"."state" shorthand reads keyed and operator state only).
func stateQuery(m session.StateMeta) string {
	if m.Kind != "timers" {
		return fmt.Sprintf("SELECT key, value FROM %q.%q LIMIT 100", m.OperatorName, m.Name)
	}
	return fmt.Sprintf("SELECT key, namespace, timestamp FROM timers WHERE operator_id = '%s' AND state_name = '%s' LIMIT 100",
		m.OperatorID, strings.ReplaceAll(m.Name, "'", "''"))
}

func (b *browser) layout() (metaH, leftW, bodyH int) {
	metaH = min(len(b.items)+3, max(4, b.h/4))
	bodyH = max(4, b.h-metaH-3)
	leftW = max(26, min(44, b.w*32/100))
	if b.w-leftW < 10 {
		leftW = b.w / 2 // as the debugger's columns (Model.SetSize)
	}
	return
}

// browserMinHeight is the least terminal height the browser lays out for:
// the StateMeta box (4 lines at least), the states and entries (4) and
// the header, status and help lines.
const browserMinHeight = 11

func (b *browser) SetSize(w, h int) {
	b.w, b.h = w, h
	b.help.SetWidth(w)
	b.prompt.SetWidth(w)
	if b.entries != nil {
		b.entries.resize(b.entryRows())
	}
	if b.overlay != nil {
		b.overlay.SetSize(w, h-3)
	}
}

func (b *browser) entryRows() int {
	_, _, bodyH := b.layout()
	return max(1, bodyH-4)
}

// choose opens the selected state's entries: the first page is read with
// move (a filter may read much to fill it).
func (b *browser) choose() tea.Cmd {
	b.entries, b.cur = nil, 0
	if len(b.items) == 0 || b.items[b.sel].gap != "" {
		return nil
	}
	m := b.items[b.sel].meta
	op := b.ops[m.OperatorID]
	var src rowSource
	switch {
	case m.Kind == "timers":
		src = &savepointTimers{sp: b.sp, meta: m, maxKG: max(1, op.MaxParallelism) - 1, cond: b.cond}
	case m.Scope == "keyed":
		src = &savepointKeyed{sp: b.sp, meta: m, maxKG: max(1, op.MaxParallelism) - 1, cond: b.cond}
		src.(*savepointKeyed).pin(b.pins)
	default:
		src = &savepointOperator{sp: b.sp, meta: m, cond: b.cond}
	}
	b.entries = &pager{src: src, size: b.entryRows()}
	return b.move("reading the entries", true, func(p *pager) func(*browser) {
		p.top()
		return nil
	})
}

func (b *browser) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		b.SetSize(msg.Width, msg.Height)
	case pageMsg:
		b.applyPage(msg)
	case browserQueryMsg:
		b.busy = nil
		if errors.Is(msg.err, context.Canceled) {
			b.status = "stopped (esc): " + msg.text // the user's doing, not an error
			return nil
		}
		if msg.err != nil {
			b.showError(msg.text, msg.err)
		} else {
			tv := newTableView(b.keys, b.st, msg.q)
			if msg.diff {
				tv.title = "Diff · " + msg.text + " · " + strings.TrimPrefix(tv.title, "Query · ")
			}
			b.showOverlay(tv)
		}
	case promptMsg:
		return b.submit(msg)
	case statusMsg:
		b.status = msg.text
	case detailMsg:
		b.showOverlay(textOverlay(b.keys, b.st, "Details · "+msg.d.title, msg.d.lines(nil, 0)))
	case closeMsg:
		b.overlay = nil
	case tea.KeyPressMsg:
		return b.key(msg)
	case tea.MouseMsg:
		ev := pointer(msg, msg.Mouse().X, msg.Mouse().Y)
		if b.overlay != nil {
			return settle(b.overlay.Update(ev), b.Update)
		}
		if w, ok := ev.(wheelMsg); ok && b.entries != nil {
			return b.move("reading", false, func(p *pager) func(*browser) {
				if w.up {
					p.up(3)
				} else {
					p.down(3)
				}
				return nil
			})
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

func (b *browser) showOverlay(c component) {
	b.overlay = c
	c.SetSize(b.w, b.h-3)
}

func (b *browser) showError(text string, err error) {
	b.status = oneLine(err.Error())
	b.showOverlay(textOverlay(b.keys, b.st, "Error", append(errorLines(text, err), "", "esc closes")))
}

func (b *browser) keyMap() []key.Binding {
	k := b.keys
	if b.focus == 0 {
		return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.Enter}
	}
	return append([]key.Binding{k.Enter, k.Filter}, k.Scroll()...)
}

func (b *browser) key(k tea.KeyPressMsg) tea.Cmd {
	if b.busy != nil {
		if key.Matches(k, b.keys.Interrupt) {
			b.busy()
		}
		return nil
	}
	if b.prompt.active() {
		cmd, line := b.prompt.Update(k)
		if line != nil {
			return b.submit(*line)
		}
		return cmd
	}
	km := b.keys
	if b.overlay != nil {
		switch {
		case key.Matches(k, km.Close):
			b.overlay = nil
			return nil
		case key.Matches(k, km.Search):
			if _, ok := b.overlay.(searcher); ok {
				return b.prompt.open("search", "")
			}
		case key.Matches(k, km.Help):
			b.showHelp(b.overlay.KeyMap(), "this view")
			return nil
		}
		return settle(b.overlay.Update(k), b.Update)
	}
	switch {
	case key.Matches(k, km.Close) && k.String() == "esc":
		if b.nested {
			return b.quit()
		}
	case key.Matches(k, km.Quit):
		if k.String() == "ctrl+c" {
			return tea.Quit
		}
		return b.quit()
	case key.Matches(k, km.Help):
		where := "the states list"
		if b.focus == 1 {
			where = "the entries"
		}
		b.showHelp(b.keyMap(), where)
	case key.Matches(k, km.Command):
		v := "SELECT * FROM keyed_state LIMIT 100"
		if len(b.items) > 0 {
			v = stateQuery(b.items[b.sel].meta)
		}
		return b.prompt.offer("command", v)
	case key.Matches(k, km.Filter):
		return b.prompt.offer("filter", b.filter)
	case key.Matches(k, km.Diff):
		b.prompt.open("diff", "")
		b.prompt.setLabel("diff " + b.sp.Dir + " against: ")
		return nil
	case key.Matches(k, km.Search):
		b.focus = 1
		return b.prompt.open("search", "")
	case key.Matches(k, km.NextPane, km.PrevPane):
		b.focus = 1 - b.focus
	case b.focus == 0 && key.Matches(k, km.Up, km.Down, km.Top, km.Bottom):
		switch {
		case key.Matches(k, km.Up):
			b.sel = max(0, b.sel-1)
		case key.Matches(k, km.Down):
			b.sel = min(len(b.items)-1, b.sel+1)
		case key.Matches(k, km.Top):
			b.sel = 0
		default:
			b.sel = len(b.items) - 1
		}
		// A filter belongs to the entries of the state it was typed for.
		b.filter, b.cond, b.pins = "", nil, nil
		return b.choose()
	case b.focus == 0 && key.Matches(k, km.Enter):
		b.focus = 1
	case key.Matches(k, km.Enter):
		return settle(b.details(), b.Update)
	case key.Matches(k, km.SearchNext):
		return b.find(b.query, 1)
	case key.Matches(k, km.SearchPrev):
		return b.find(b.query, -1)
	case b.entries != nil:
		return b.scroll(k)
	}
	return nil
}

func (b *browser) scroll(k tea.KeyPressMsg) tea.Cmd {
	km := b.keys
	n := len(b.entries.page)
	size := b.entryRows()
	moved := func(f func(p *pager)) tea.Cmd {
		return b.move("reading", false, func(p *pager) func(*browser) { f(p); return nil })
	}
	switch {
	case key.Matches(k, km.Up):
		if b.cur > 0 {
			b.cur--
			return nil
		}
		return moved(func(p *pager) { p.up(1) })
	case key.Matches(k, km.Down):
		if b.cur < n-1 {
			b.cur++
			return nil
		}
		return b.move("reading", false, func(p *pager) func(*browser) {
			p.down(1)
			return func(b *browser) {
				if p.more || n == size {
					b.cur = len(p.page) - 1
				}
			}
		})
	case key.Matches(k, km.PageUp):
		return moved(func(p *pager) { p.up(size - 1) })
	case key.Matches(k, km.PageDown):
		return moved(func(p *pager) { p.down(size - 1) })
	case key.Matches(k, km.Top):
		return b.move("reading", false, func(p *pager) func(*browser) {
			p.top()
			return func(b *browser) { b.cur = 0 }
		})
	case key.Matches(k, km.Bottom):
		total := -1
		if m := b.items[b.sel].meta; b.filter == "" && m.Entries > 0 {
			total = int(m.Entries)
		}
		what := "reading"
		if total < 0 {
			what = "counting the entries that pass the filter"
		}
		return b.move(what, false, func(p *pager) func(*browser) {
			p.bottom(total)
			return func(b *browser) { b.cur = len(p.page) - 1 }
		})
	}
	return nil
}

func (b *browser) showHelp(local []key.Binding, where string) {
	lines := helpLines(b.keys.BrowserHelp(), where, local, b.keys.BrowserGlobal(), false)
	lines = append(lines, "In the browser: tab switches between the states and their entries; f filters the chosen state's entries",
		"(e.g. value > 50 AND key LIKE 'key_1%'); / searches them; : runs a query on the savepoint (Tab completes).")
	b.showOverlay(textOverlay(b.keys, b.st, "Help", lines))
}

func (b *browser) details() tea.Cmd {
	if b.entries == nil || b.cur >= len(b.entries.page) {
		return nil
	}
	r := b.entries.page[b.cur].row
	m := b.items[b.sel].meta
	d := detail{title: m.OperatorName + "." + m.Name}
	switch {
	case m.Kind == "timers":
		d.fields = [][2]string{{"domain", r.Domain}, {"timestamp", timestamp(r.Timestamp)}, {"epoch ms", strconv.FormatInt(r.Timestamp, 10)},
			{"key", pretty(r.Key)}, {"namespace", pretty(r.Namespace)}, {"key group", strconv.Itoa(r.KeyGroup)}, {"subtask", strconv.Itoa(r.Subtask)}}
	case m.Scope == "keyed":
		d.fields = [][2]string{{"key", pretty(r.Key)}, {"namespace", pretty(r.Namespace)}, {"user key", pretty(r.UserKey)},
			{"key group", strconv.Itoa(r.KeyGroup)}, {"subtask", strconv.Itoa(r.Subtask)}, {"types", m.KeyType + " → " + m.ValueType}}
		d.value, d.hasValue = r.Value, true
	default:
		d.fields = [][2]string{{"subtask", strconv.Itoa(r.Subtask)}, {"position", strconv.Itoa(r.Position)}, {"key", pretty(r.Key)}, {"mode", r.Kind}}
		d.value, d.hasValue = r.Value, true
	}
	return showDetail(d)
}

func (b *browser) search(text string) tea.Cmd {
	b.query = text
	return b.find(text, 1)
}

// find moves to the next (dir > 0) or previous entry with text, with move:
// a search may read up to searchLimit entries.
func (b *browser) find(text string, dir int) tea.Cmd {
	if text == "" || b.entries == nil {
		b.status = "no search: / searches the entries"
		return nil
	}
	at := b.entries.index + b.cur
	return b.move("searching", false, func(p *pager) func(*browser) {
		msg, found := p.find(at, dir, text, "entry", "entries")
		return func(b *browser) {
			b.status = msg
			if found {
				b.cur = 0
			}
		}
	})
}

func (b *browser) submit(p promptMsg) tea.Cmd {
	switch p.mode {
	case "filter":
		c, pins, err := compileFilterPins(p.line)
		if err != nil {
			b.showError(p.line, err)
			return nil
		}
		b.filter, b.cond, b.pins, b.status = p.line, c, pins, ""
		b.focus = 1
		return b.choose()
	case "search":
		if s, ok := b.overlay.(searcher); ok && b.overlay != nil {
			b.status = s.search(p.line)
		} else {
			return b.search(p.line)
		}
	case "diff":
		return b.runDiff(p.line)
	default:
		return b.runQuery(p.line)
	}
	return nil
}

func (b *browser) runQuery(text string) tea.Cmd {
	if text == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.busy = cancel
	sp := b.sp
	return func() tea.Msg {
		defer cancel()
		start := time.Now()
		rows, err := sp.Query(ctx, text)
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
	dir, filter, _ := strings.Cut(strings.TrimSpace(args), " ")
	if dir == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.busy = cancel
	sp := b.sp
	return func() tea.Msg {
		defer cancel()
		start := time.Now()
		rows, done, err := sp.Diff(ctx, dir, strings.TrimSpace(filter))
		if err != nil {
			return browserQueryMsg{text: args, err: err, diff: true}
		}
		defer done()
		q, err := readRows(filter, rows, start)
		return browserQueryMsg{text: dir, q: q, err: err, diff: true}
	}
}

func (b *browser) render() string {
	if b.w < minWidth || b.h < browserMinHeight {
		return tooSmallFor(b.w, b.h, minWidth, browserMinHeight)
	}
	st := b.st
	var out strings.Builder
	// The counts go before the path, which a narrow terminal cuts; gaps
	// are what is listed but cannot be read.
	head := fmt.Sprintf(" %s · %d operators · %d states", st.Header.Render("streamdbg"), len(b.ops), b.nstates)
	gaps := 0
	for _, it := range b.items {
		if it.gap != "" {
			gaps++
		}
	}
	if gaps > 0 {
		head += " · " + st.Failed.Render(plural(int64(gaps), "gap", "gaps")+" (⚠: not read)")
	}
	head += " · " + b.sp.String()
	out.WriteString(fit(head, b.w))
	out.WriteByte('\n')
	if b.overlay != nil {
		out.WriteString(b.overlay.View(true))
	} else {
		metaH, leftW, bodyH := b.layout()
		out.WriteString(b.metaView(metaH))
		out.WriteByte('\n')
		out.WriteString(joinColumns(b.statesView(leftW, bodyH), b.entriesView(b.w-leftW, bodyH)))
	}
	out.WriteByte('\n')
	switch {
	case b.prompt.active():
		out.WriteString(fit(b.prompt.View(), b.w))
	case b.busy != nil && b.busyWhat != "":
		out.WriteString(fit(" "+b.busyWhat+"… · esc stops", b.w))
	case b.busy != nil:
		out.WriteString(fit(" running query · esc interrupts", b.w))
	default:
		out.WriteString(fit(" "+st.Status.Render(b.status), b.w))
	}
	out.WriteByte('\n')
	out.WriteString(fit(b.prompt.helpLine(b.help.ShortHelpView(b.keys.BrowserHelp())), b.w))
	return out.String()
}

func (b *browser) metaView(h int) string {
	cols := []column{{"operator", 8}, {"state", 6}, {"scope", 5}, {"kind", 5}, {"key", 5}, {"value", 5}, {"entries", 7}, {"bytes", 5}}
	first := max(0, min(b.sel-(h-4), len(b.items)-(h-3)))
	var rows [][]string
	for i := first; i < len(b.items) && len(rows) < h-3; i++ {
		it := b.items[i]
		m := it.meta
		if it.gap != "" {
			rows = append(rows, []string{m.OperatorName, "⚠ " + it.gap, "", "", "", "", "", ""})
			continue
		}
		rows = append(rows, []string{m.OperatorName, m.Name, m.Scope, m.Kind, m.KeyType, m.ValueType, figure(m.Entries, m.EntriesUnknown), figure(m.Bytes, m.BytesUnknown)})
	}
	lines := table(b.st, cols, rows, b.w-2, false, func(i, j int, s string) string {
		if first+i == b.sel {
			return b.st.Selected.Render(s)
		}
		if b.items[first+i].gap != "" {
			return b.st.Failed.Render(s)
		}
		return s
	})
	return box(b.st, "StateMeta", false, b.w, h, lines)
}

func (b *browser) statesView(w, h int) string {
	var lines []string
	lastOp := ""
	selLine := 0
	for i, it := range b.items {
		if it.meta.OperatorID != lastOp {
			lastOp = it.meta.OperatorID
			o := b.ops[lastOp]
			lines = append(lines, fmt.Sprintf("▸ %s ×%d", o.Name, o.Parallelism))
		}
		text := fmt.Sprintf("   %s  %s", it.meta.Name, it.meta.Kind)
		if it.gap != "" {
			text = "   ⚠ not read: " + it.gap
		}
		l := fit(text, w-2)
		switch {
		case i == b.sel:
			l = b.st.Selected.Render(l)
			selLine = len(lines)
		case it.gap != "":
			l = b.st.Failed.Render(l)
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

// skewChart draws one bar per subtask of the selected state's operator,
// scaled to the widest, when the savepoint's metadata counts them.
func (b *browser) skewChart(w int) []string {
	if len(b.items) == 0 {
		return nil
	}
	skew := b.sp.Skew[b.items[b.sel].meta.OperatorID]
	if len(skew) == 0 || len(skew) > 16 {
		return nil
	}
	var top int64 = 1
	for _, n := range skew {
		top = max(top, n)
	}
	out := []string{b.st.Dim.Render(fit("skew: keyed entries per subtask", w))}
	barW := max(1, w-16)
	for i, n := range skew {
		bar := strings.Repeat("█", int(int64(barW)*n/top))
		out = append(out, fmt.Sprintf("[%d] %s %d", i, b.st.Bar.Render(bar), n))
	}
	return out
}

func (b *browser) entriesView(w, h int) string {
	if len(b.items) == 0 {
		return box(b.st, "Entries", b.focus == 1, w, h, []string{"no states"})
	}
	it := b.items[b.sel]
	title := fmt.Sprintf("Entries · %s.%s", it.meta.OperatorName, it.meta.Name)
	if it.gap != "" {
		lines := wrapLines([]string{b.st.Failed.Render("Not read: " + it.gap), "",
			"This part of the savepoint is listed so that nothing looks empty that is not: streamdbg cannot read it yet."}, w-2)
		return box(b.st, "Entries · "+it.meta.OperatorName, b.focus == 1, w, h, lines)
	}
	m := it.meta
	var cols []column
	switch {
	case m.Kind == "timers":
		cols = []column{{"kg", 2}, {"subtask", 3}, {"domain", 6}, {"timestamp", 19}, {"key", 6}, {"namespace", 9}}
	case m.Scope == "keyed":
		cols = []column{{"kg", 2}, {"subtask", 3}, {"key", 6}, {"namespace", 9}, {"user key", 6}, {"value", 12}}
	default:
		cols = []column{{"subtask", 3}, {"position", 3}, {"key", 5}, {"value", 12}}
	}
	rows := make([][]string, len(b.entries.page))
	for i, r := range b.entries.page {
		rows[i] = r.cells
	}
	rows, date := factorDates(rows)
	q := strings.ToLower(b.query)
	lines := table(b.st, cols, rows, w-2, false, func(i, j int, s string) string {
		switch {
		case i == b.cur && b.focus == 1:
			return b.st.Selected.Render(s)
		case q != "" && strings.Contains(strings.ToLower(s), q):
			return b.st.Match.Render(s)
		}
		return s
	})
	// A page not read yet (a filter's first, read in the background) is
	// not an empty one.
	reading := len(b.entries.page) == 0 && b.entries.err == nil && b.busyWhat != ""
	switch {
	case b.entries.err != nil:
		lines = append(lines, wrapLines([]string{b.st.Failed.Render(b.entries.err.Error())}, w-2)...)
	case reading:
		lines = append(lines, b.st.Dim.Render("reading…"))
	case len(b.entries.page) == 0:
		lines = append(lines, b.st.Dim.Render("no entries"))
	}
	for len(lines) < h-3 {
		lines = append(lines, "")
	}
	status := ""
	if len(b.entries.page) > 0 {
		status = fmt.Sprintf("%s–%s", numfmt.Commas(int64(b.entries.index+1)), numfmt.Commas(int64(b.entries.index+len(b.entries.page))))
	}
	switch {
	case b.filter != "":
		// The metadata counts all entries, not the matching ones.
		if reading {
			status = "reading"
		} else if errors.Is(b.entries.err, errStopped) {
			status = "stopped before a page was read (g reads again)"
		} else if len(b.entries.page) == 0 {
			status = "no matching entries"
		} else if b.entries.more {
			status += " · more ↓"
		}
		status += " · filter: " + b.filter
	case m.Entries > 0:
		status = plural(m.Entries, "entry", "entries") + " · " + status
	case b.entries.more:
		status += " · more ↓"
	}
	if date != "" {
		status = "times on " + date + " · " + status
	}
	lines = append(lines[:min(len(lines), h-3)], b.st.Dim.Render(cutWords(status, w-2)))
	return box(b.st, title, b.focus == 1, w, h, lines)
}

// savepointKeyed reads one keyed state of a savepoint from a key group on.
// A filter that pins keys (key = 'key_662') reads only their key groups,
// looking up those keys there, as a query does; cond still decides.
type savepointKeyed struct {
	sp    *session.Savepoint
	meta  session.StateMeta
	maxKG int
	cond  *query.Compiled
	keys  []any // pinned keys, nil for all
	only  []int // their key groups, sorted; nil for all
	stop  stopCheck
}

func (s *savepointKeyed) withContext(ctx context.Context) rowSource {
	c := *s
	c.stop = stopCheck{ctx: ctx}
	return &c
}

// pin narrows the scan to the filter's pinned keys and key groups, when
// every pinned key maps to a key group of this state's key type (else the
// scan reads everything and the filter alone decides).
func (s *savepointKeyed) pin(pins map[string][]any) {
	groups, keysPinned := s.sp.PinnedKeyGroups(s.meta.OperatorID, s.meta.KeyType, s.maxKG+1, pins)
	s.only = groups
	if keysPinned {
		s.keys = pins["key"]
	}
}

func (s *savepointKeyed) first() int { return 0 }
func (s *savepointKeyed) last() int  { return s.maxKG }

func (s *savepointKeyed) rows(from, to int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		kgs := keyGroupsFrom(from, min(to, s.maxKG))
		if s.only != nil {
			kgs = kgs[:0]
			for _, g := range s.only {
				if g >= from && g <= to {
					kgs = append(kgs, g)
				}
			}
			if len(kgs) == 0 {
				return
			}
		}
		// A page needs a few rows: without a filter the key groups are read
		// one call each, so the scan holds one key group's rows, not the
		// several it reads ahead on all cores (a filter that pins nothing
		// reads on, where reading ahead pays).
		step := len(kgs)
		if s.cond == nil {
			step = 1
		}
		for len(kgs) > 0 {
			batch := kgs[:step]
			kgs = kgs[step:]
			if !s.scan(batch, yield) {
				return
			}
		}
	}
}

// scan yields the rows of some key groups that pass the filter; false:
// stop (the consumer is done, or an error was yielded).
func (s *savepointKeyed) scan(kgs []int, yield func(pageRow, error) bool) bool {
	for r, err := range s.sp.KeyedWhere(s.meta.OperatorID, s.meta.Name, kgs, s.keys, s.cond) {
		if err == nil {
			err = s.stop.check()
		}
		if err != nil {
			yield(pageRow{}, err)
			return false
		}
		if ok, err := passes(s.cond, r, keyedRow); err != nil {
			yield(pageRow{}, err)
			return false
		} else if !ok {
			continue
		}
		if !yield(pageRow{kg: r.KeyGroup, row: r, cells: []string{strconv.Itoa(r.KeyGroup), strconv.Itoa(r.Subtask), show(r.Key), show(r.Namespace), show(r.UserKey), show(r.Value)}}, nil) {
			return false
		}
	}
	return true
}

// figure is a count, or "-" when the reader does not know it (never a 0
// that would read as empty).
func figure(n int64, unknown bool) string {
	if unknown {
		return "-"
	}
	return numfmt.Commas(n)
}

// keyGroupsFrom lists the key groups from..last.
func keyGroupsFrom(from, last int) []int {
	kgs := make([]int, 0, max(last-from+1, 0))
	for kg := from; kg <= last; kg++ {
		kgs = append(kgs, kg)
	}
	return kgs
}

// savepointTimers reads the timers of one timer state of a savepoint.
type savepointTimers struct {
	sp    *session.Savepoint
	meta  session.StateMeta
	maxKG int
	cond  *query.Compiled
	stop  stopCheck
}

func (s *savepointTimers) withContext(ctx context.Context) rowSource {
	c := *s
	c.stop = stopCheck{ctx: ctx}
	return &c
}

func (s *savepointTimers) first() int { return 0 }
func (s *savepointTimers) last() int  { return s.maxKG }

func (s *savepointTimers) rows(from, to int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		kgs := keyGroupsFrom(from, min(to, s.maxKG))
		for r, err := range s.sp.Timers(s.meta.OperatorID, kgs, s.meta.Name) {
			if err == nil {
				err = s.stop.check()
			}
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if ok, err := passes(s.cond, r, timerRow); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{kg: r.KeyGroup, row: r, cells: []string{strconv.Itoa(r.KeyGroup), strconv.Itoa(r.Subtask), r.Domain, timestamp(r.Timestamp), show(r.Key), show(r.Namespace)}}, nil) {
				return
			}
		}
	}
}

// savepointOperator reads one operator state of a savepoint.
type savepointOperator struct {
	sp   *session.Savepoint
	meta session.StateMeta
	cond *query.Compiled
}

func (s *savepointOperator) first() int { return 0 }
func (s *savepointOperator) last() int  { return 0 }

func (s *savepointOperator) rows(from, _ int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		if from > 0 {
			return
		}
		for r, err := range s.sp.OperatorState(s.meta.OperatorID, s.meta.Name) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if ok, err := passes(s.cond, r, operatorRow); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{row: r, cells: []string{strconv.Itoa(r.Subtask), strconv.Itoa(r.Position), show(r.Key), show(r.Value)}}, nil) {
				return
			}
		}
	}
}
