package tui

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/internal/numfmt"
	"streamdbg/query"
	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// stateTabs are the state pane's tabs; keyedTabs need a keyed operator.
var stateTabs = [...]string{"keyed", "operator", "timers", "windows"}

const (
	tabKeyed = iota
	tabOperator
	tabTimers
	tabWindows
)

// Sort orders of the state table (S cycles them).
const (
	sortNone = iota
	sortKey
	sortValue
	sortChanged
	sortModes
)

var sortNames = [...]string{"", "key", "value", "changed first"}

// Bounds of the work a state table does for the whole table: sorting holds
// every row (so at most sortLimit), a search reads at most searchLimit rows,
// and a total counts at most countBudget rows (a larger table says it has
// at least that many; the counts of key groups a stop did not write are
// kept, so a stop recounts only what it changed).
// countBudget, sortLimit and searchLimit are variables for tests only.
var (
	countBudget = 20_000
	sortLimit   = 100_000
	searchLimit = 1_000_000
)

// statePane shows one operator's state in one subtask as a paged table.
type statePane struct {
	keys    *keys.KeyMap
	st      *styles.Styles
	reader  session.StateReader
	ready   bool
	ref     subtaskRef
	op      int // index of the shown operator in ref.operators
	tab     int
	changes map[session.EntryID]session.Change
	dropped int // changes the stop did not list

	filter string
	cond   *query.Compiled
	sort   int
	only   bool // changed rows only
	full   bool // columns at full width (z), scrolled with H and L
	hoff   int
	query  string // the last search

	pager  *pager
	sorted []pageRow // sort != sortNone: every row, in order
	soff   int       // first row of the page in sorted
	cur    int       // cursor row on the page
	cols   []column
	note   string // why the table shows what it shows

	// chosen is the operator picked with < and > in each task, and tabs
	// the tab last shown for each operator, kept while the selection moves.
	chosen map[string]string
	tabs   map[string]int

	// pin is the key where execution stopped (a breakpoint, a step) in
	// the shown operator: its rows show first, above the table.
	pin        any
	hasPin     bool
	pinned     []pageRow
	pinNote    string
	counts     countCache
	totalN     int
	totalExact bool
	// frozen: a command owns the session; nothing is read until the next
	// stop (which rebuilds the table).
	frozen bool
	w, h   int
}

// countCache counts a table's rows per key group, kept while the stops
// do not write to the key group. large: counting went past its budget
// once, so the table is only said to have at least the rows counted, and
// later stops do not count again (a stop's cost must not grow with the
// state).
type countCache struct {
	sig   string
	perKG map[int]int
	large bool
}

func (p *statePane) SetSize(w, h int) {
	p.w, p.h = w, h
	if p.pager != nil && !p.frozen {
		p.pager.resize(p.pageSize())
	}
	p.cur = max(0, min(p.cur, p.pageSize()-1))
}

func (p *statePane) pageSize() int { return max(1, p.h-4-p.pinRows()) }

// pinRowsOf is the pinned rows shown.
func (p *statePane) pinRowsOf() int { return min(3, len(p.pinned)) }

// pinRows is the lines the pinned key takes: its rows (at most 3) or a
// note.
func (p *statePane) pinRows() int {
	switch {
	case len(p.pinned) > 0:
		return min(3, len(p.pinned))
	case p.pinNote != "":
		return 1
	}
	return 0
}

// setPin pins the key where execution stopped (hasPin false: none).
func (p *statePane) setPin(key any, has bool) { p.pin, p.hasPin = key, has }

// loadPin reads the pinned key's rows: one key group, one key.
func (p *statePane) loadPin() {
	p.pinned, p.pinNote = nil, ""
	op, ok := p.operator()
	if !p.hasPin || !ok || !op.Keyed || p.tab != tabKeyed {
		return
	}
	kg, ok := p.reader.KeyGroupOf(op.ID, op.KeyType, p.pin)
	if !ok || kg < p.ref.groups.Start || kg > p.ref.groups.End {
		return
	}
	for r, err := range p.reader.Keyed(op.ID, "", []int{kg}, []any{p.pin}) {
		if err != nil {
			p.pinNote = err.Error()
			return
		}
		if r.Subtask != p.ref.index || show(r.Key) != show(p.pin) || timerState(r.State) {
			continue
		}
		row := pageRow{kg: kg, row: r, cells: []string{r.State, show(r.Key), show(r.Namespace), show(r.UserKey), show(r.Value)}}
		if c, changed := p.changes[r.ID()]; changed {
			row.changed = true
			row.cells[4] += changeNote(c)
		}
		p.pinned = append(p.pinned, row)
	}
	if len(p.pinned) == 0 {
		p.pinNote = fmt.Sprintf("▶ %s: no entry yet", show(p.pin))
	}
}

// operator is the operator shown.
func (p *statePane) operator() (session.OperatorView, bool) {
	if p.op < len(p.ref.operators) {
		return p.ref.operators[p.op], true
	}
	return session.OperatorView{}, false
}

// setSource points the pane at a subtask after a stop (or another
// subtask): it keeps the operator chosen in the task, the tab chosen for
// the operator, and the scroll position when all of them stay.
func (p *statePane) setSource(reader session.StateReader, ref subtaskRef, changes map[session.EntryID]session.Change, dropped int) {
	same := p.ready && p.ref.task == ref.task && p.ref.index == ref.index
	prevOp := ""
	if op, ok := p.operator(); ok {
		prevOp = op.ID
	}
	p.reader, p.ref, p.changes, p.dropped, p.ready = reader, ref, changes, dropped, true
	p.op = ref.defaultOperator()
	if id, ok := p.chosen[ref.task]; ok {
		for i, op := range ref.operators {
			if op.ID == id {
				p.op = i
			}
		}
	}
	op, _ := p.operator()
	p.setTab(op)
	p.rebuild(same && op.ID == prevOp)
}

// setTab picks the tab of the shown operator: the one last shown for it,
// else keyed state for a keyed operator and operator state for others.
func (p *statePane) setTab(op session.OperatorView) {
	if t, ok := p.tabs[op.ID]; ok {
		p.tab = t
		return
	}
	p.tab = tabKeyed
	if !op.Keyed {
		p.tab = tabOperator
	}
}

func (p *statePane) available(tab int) bool {
	op, _ := p.operator()
	return tab == tabOperator || op.Keyed
}

// setFilter compiles an `f` expression over the row's columns ("" clears).
func (p *statePane) setFilter(text string) error {
	c, err := compileFilter(text)
	if err != nil {
		return err
	}
	p.filter, p.cond = text, c
	p.rebuild(false)
	return nil
}

// source is the row source of the table shown.
func (p *statePane) source() rowSource {
	op, _ := p.operator()
	g := p.ref.groups
	switch p.tab {
	case tabKeyed, tabWindows:
		return &keyedSource{r: p.reader, op: op, subtask: p.ref.index, groups: g, windows: p.tab == tabWindows,
			cond: p.cond, changes: p.changes, only: p.only}
	case tabTimers:
		return &timerSource{r: p.reader, opID: op.ID, subtask: p.ref.index, groups: g, cond: p.cond}
	}
	return &operatorSource{r: p.reader, opID: op.ID, subtask: p.ref.index, cond: p.cond}
}

func (p *statePane) rebuild(keep bool) {
	p.note = ""
	op, ok := p.operator()
	if !ok || !p.ready {
		p.pager, p.sorted = nil, nil
		return
	}
	switch p.tab {
	case tabKeyed, tabWindows:
		p.cols = []column{{"state", 5}, {"key", 6}, {"namespace", 9}, {"user key", 6}, {"value", 12}}
	case tabTimers:
		p.cols = []column{{"domain", 6}, {"timestamp", 19}, {"key", 6}, {"namespace", 9}}
	default:
		p.cols = []column{{"state", 6}, {"mode", 5}, {"position", 3}, {"key", 5}, {"value", 12}}
	}
	switch {
	case !op.Keyed && p.tab != tabOperator:
		p.note = fmt.Sprintf("%s is not keyed (its input is not keyed): it has operator state only", op.Label)
	case len(op.States) == 0:
		p.note = fmt.Sprintf("%s declares no state", op.Label)
	}
	p.loadPin()
	src := p.source()
	old := p.pager
	p.sorted = nil
	if p.sort != sortNone {
		if rows, err := p.readAll(src); err != nil {
			p.note = err.Error()
			p.sort = sortNone
		} else {
			// The sorted rows replace the pager: an old one would read a
			// catalog of a past stop.
			p.sorted, p.pager = rows, nil
			p.learnCounts(src, rows)
			if !keep {
				p.soff, p.cur = 0, 0
			}
			p.soff = max(0, min(p.soff, len(rows)-p.pageSize()))
			p.cur = max(0, min(p.cur, len(p.page())-1))
			p.recount()
			return
		}
	}
	if keep && old != nil {
		p.pager = &pager{src: src, size: p.pageSize(), kg: old.kg, skip: old.skip, index: old.index}
		p.pager.load()
		if len(p.pager.page) == 0 && p.pager.index > 0 {
			p.pager.top()
		}
		p.pager.fill()
	} else {
		p.pager = newPager(src, p.pageSize())
		p.cur = 0
	}
	p.cur = max(0, min(p.cur, len(p.page())-1))
	p.recount()
}

// recount updates the total (a bounded amount of counting; see total).
func (p *statePane) recount() { p.totalN, p.totalExact = p.total(countBudget) }

// readAll reads the whole table for sorting, refusing tables larger than
// sortLimit.
func (p *statePane) readAll(src rowSource) ([]pageRow, error) {
	var rows []pageRow
	for r, err := range src.rows(src.first(), src.last()) {
		if err != nil {
			return nil, err
		}
		if len(rows) == sortLimit {
			return nil, fmt.Errorf("sorting needs every row in memory: this table has more than %s; filter it first (f) or show changed rows only (C)", numfmt.Commas(int64(sortLimit)))
		}
		rows = append(rows, r)
	}
	return sortRows(rows, p.sort), nil
}

// sortRows returns rows sorted stably by by (sortKey, sortValue or
// sortChanged; rows as they are otherwise). Each row's sort key is made
// once: comparing the values themselves printed a value that is not a
// number at every comparison, and a sort of 100k keys took over a second.
func sortRows(rows []pageRow, by int) []pageRow {
	order := make([]rowOrder, len(rows))
	for i, r := range rows {
		o := rowOrder{i: i}
		switch by {
		case sortKey:
			o.a = orderOf(r.row.Key)
			o.tie = strings.Join(r.cells[:min(4, len(r.cells))], "\x00")
		case sortValue:
			o.a = orderOf(r.row.Value)
		case sortChanged:
			o.changed, o.a = boolRank(r.changed), orderOf(r.row.Key)
		}
		order[i] = o
	}
	// The changed rows first, then a (values largest first), then the
	// tie, then the rows' indexes: the unstable sort, faster, gives the
	// stable order. What a sort does not set is alike in every row.
	desc := by == sortValue
	slices.SortFunc(order, func(x, y rowOrder) int {
		if c := y.changed - x.changed; c != 0 {
			return c
		}
		if c := x.a.compare(y.a); c != 0 {
			if desc {
				return -c
			}
			return c
		}
		return cmp.Or(strings.Compare(x.tie, y.tie), cmp.Compare(x.i, y.i))
	})
	sorted := make([]pageRow, len(rows))
	for i, o := range order {
		sorted[i] = rows[o.i]
	}
	return sorted
}

// rowOrder is what sortRows sorts a row by: its key or value (a), the changed rows first (changed), and the
// row's first cells for keys that print alike (tie); then its index among
// the rows (i).
type rowOrder struct {
	i       int
	changed int
	a       valueOrder
	tie     string
}

// valueOrder is a value as the state table sorts it: numbers by value,
// before the rest by their text.
type valueOrder struct {
	num   float64
	isNum bool
	text  string
}

func orderOf(v any) valueOrder {
	if f, ok := number(v); ok {
		return valueOrder{num: f, isNum: true}
	}
	return valueOrder{text: show(v)}
}

// compare orders the values x and y are of.
func (x valueOrder) compare(y valueOrder) int {
	switch {
	case x.isNum && y.isNum:
		return cmp.Compare(x.num, y.num)
	case x.isNum:
		return -1
	case y.isNum:
		return 1
	}
	return strings.Compare(x.text, y.text)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// page is the rows on screen.
func (p *statePane) page() []pageRow {
	if p.sorted != nil {
		return p.sorted[p.soff:min(len(p.sorted), p.soff+p.pageSize())]
	}
	if p.pager == nil {
		return nil
	}
	return p.pager.page
}

// firstIndex is the absolute index of the page's first row.
func (p *statePane) firstIndex() int {
	if p.sorted != nil {
		return p.soff
	}
	if p.pager == nil {
		return 0
	}
	return p.pager.index
}

// Update handles tabs, operators, sorting and scrolling; it reads at most
// one page and one key group from the state.
func (p *statePane) Update(msg tea.Msg) tea.Cmd {
	if !p.ready {
		return nil
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := p.keys
		switch {
		case key.Matches(msg, k.NextTab):
			return p.switchTab(1)
		case key.Matches(msg, k.PrevTab):
			return p.switchTab(-1)
		case key.Matches(msg, k.NextOp):
			return p.pickOperator(1)
		case key.Matches(msg, k.PrevOp):
			return p.pickOperator(-1)
		case key.Matches(msg, k.Sort):
			want := (p.sort + 1) % sortModes
			p.sort = want
			p.rebuild(false)
			switch {
			case want == sortNone:
				return status("state: unsorted (key-group order)", false)
			case p.sorted == nil:
				// rebuild could not sort (too many rows) and went back to
				// no order: say why, not "unsorted".
				return status(p.note, true)
			}
			return status("state sorted by "+sortNames[p.sort], false)
		case key.Matches(msg, k.ChangedOnly):
			p.only = !p.only
			p.rebuild(false)
			if p.only {
				return status("state: rows the last stop changed only (C shows all)", false)
			}
			return status("state: all rows", false)
		case key.Matches(msg, k.Wrap):
			p.full, p.hoff = !p.full, 0
		case key.Matches(msg, k.Left):
			p.hoff = max(0, p.hoff-max(8, p.w/2))
		case key.Matches(msg, k.Right):
			if p.full {
				p.hoff += max(8, p.w/2)
			} else {
				return status("z shows the columns at full width first; then H and L scroll", false)
			}
		case key.Matches(msg, k.Enter):
			return p.details()
		case key.Matches(msg, k.SearchNext):
			return status(p.find(p.query, 1), false)
		case key.Matches(msg, k.SearchPrev):
			return status(p.find(p.query, -1), false)
		default:
			p.scroll(msg)
		}
	case wheelMsg:
		if msg.up {
			p.moveBy(-3)
		} else {
			p.moveBy(3)
		}
	case clickMsg:
		if row := msg.y - 2; row >= 0 && row < len(p.page()) {
			p.cur = row
		}
	}
	return nil
}

func (p *statePane) scroll(k tea.KeyPressMsg) {
	size := p.pageSize()
	switch {
	case key.Matches(k, p.keys.Up):
		p.moveCursor(-1)
	case key.Matches(k, p.keys.Down):
		p.moveCursor(1)
	case key.Matches(k, p.keys.PageUp):
		p.moveBy(-(size - 1))
	case key.Matches(k, p.keys.PageDown):
		p.moveBy(size - 1)
	case key.Matches(k, p.keys.Top):
		p.cur = 0
		if p.sorted != nil {
			p.soff = 0
		} else if p.pager != nil {
			p.pager.top()
		}
	case key.Matches(k, p.keys.Bottom):
		if p.sorted != nil {
			p.soff = max(0, len(p.sorted)-size)
		} else if p.pager != nil {
			if !p.totalExact {
				// The last page's index needs every row counted: counted
				// into the cache, the total is exact from now on.
				p.counts.large = false
				p.totalN, p.totalExact = p.total(math.MaxInt)
			}
			p.pager.bottom(p.totalN)
		}
		p.cur = max(0, len(p.page())-1)
	}
}

// moveCursor moves the cursor one row, scrolling at the page's edges.
func (p *statePane) moveCursor(d int) {
	n := len(p.page())
	switch {
	case d < 0 && p.cur > 0:
		p.cur--
	case d > 0 && p.cur < n-1:
		p.cur++
	default:
		before := p.firstIndex()
		p.moveBy(d)
		if p.firstIndex() == before {
			return
		}
		if d > 0 {
			p.cur = len(p.page()) - 1
		} else {
			p.cur = 0
		}
	}
}

// moveBy scrolls the page by d rows, the cursor staying in place.
func (p *statePane) moveBy(d int) {
	if p.sorted != nil {
		p.soff = max(0, min(p.soff+d, len(p.sorted)-p.pageSize()))
	} else if p.pager != nil {
		if d > 0 {
			if !p.pager.more {
				p.cur = len(p.pager.page) - 1 // the last page: go to its end
			}
			p.pager.down(d)
		} else {
			if p.pager.index == 0 {
				p.cur = 0
			}
			p.pager.up(-d)
		}
	}
	p.cur = max(0, min(p.cur, len(p.page())-1))
}

func (p *statePane) switchTab(d int) tea.Cmd {
	for range len(stateTabs) {
		p.tab = (p.tab + d + len(stateTabs)) % len(stateTabs)
		if p.available(p.tab) {
			break
		}
	}
	op, _ := p.operator()
	if p.tabs == nil {
		p.tabs = map[string]int{}
	}
	p.tabs[op.ID] = p.tab
	p.rebuild(false)
	if !op.Keyed {
		return status(op.Label+" is not keyed: it has operator state only", false)
	}
	return nil
}

// pickOperator moves to the next (+1) or previous (-1) operator of the
// selected subtask's chain, wrapping around, and says what it shows.
func (p *statePane) pickOperator(d int) tea.Cmd {
	ops := p.ref.operators
	if len(ops) < 2 {
		return status(fmt.Sprintf("%s is the only operator of its chain", p.ref.task), false)
	}
	p.op = (p.op + d + len(ops)) % len(ops)
	op := ops[p.op]
	if p.chosen == nil {
		p.chosen = map[string]string{}
	}
	p.chosen[p.ref.task] = op.ID
	p.setTab(op)
	p.rebuild(false)
	what := "keyed state"
	switch {
	case !op.Keyed:
		what = "operator state (not keyed: no keyed state or timers)"
	case p.tab != tabKeyed:
		what = stateTabs[p.tab]
	}
	return status(fmt.Sprintf("state of %s (%d of %d in the chain): %s", op.Label, p.op+1, len(ops), what), false)
}

// details opens the row under the cursor in full, with its history.
func (p *statePane) details() tea.Cmd {
	page := p.page()
	if p.cur >= len(page) {
		return nil
	}
	r := page[p.cur]
	op, _ := p.operator()
	d := detail{title: fmt.Sprintf("%s · %s[%d]", stateTabs[p.tab], op.Label, r.row.Subtask)}
	switch p.tab {
	case tabKeyed, tabWindows:
		d.fields = [][2]string{{"state", r.row.State}, {"kind", r.row.Kind}, {"key", pretty(r.row.Key)}, {"namespace", pretty(r.row.Namespace)},
			{"user key", pretty(r.row.UserKey)}, {"key group", strconv.Itoa(r.row.KeyGroup)}, {"subtask", strconv.Itoa(r.row.Subtask)}}
		d.value, d.hasValue = r.row.Value, !r.cleared
		id := r.row.ID()
		d.entry = &id
		if c, ok := p.changes[id]; ok {
			d.change = &c
		}
	case tabTimers:
		d.fields = [][2]string{{"state", r.row.State}, {"domain", r.row.Domain}, {"timestamp", timestamp(r.row.Timestamp)}, {"epoch ms", strconv.FormatInt(r.row.Timestamp, 10)},
			{"key", pretty(r.row.Key)}, {"namespace", pretty(r.row.Namespace)}, {"key group", strconv.Itoa(r.row.KeyGroup)}, {"subtask", strconv.Itoa(r.row.Subtask)}}
	default:
		d.fields = [][2]string{{"state", r.row.State}, {"mode", r.row.Kind}, {"position", strconv.Itoa(r.row.Position)}, {"key", pretty(r.row.Key)},
			{"subtask", strconv.Itoa(r.row.Subtask)}}
		d.value, d.hasValue = r.row.Value, true
	}
	return showDetail(d)
}

// search finds the next row (after the cursor) with text in a cell.
func (p *statePane) search(text string) string {
	p.query = text
	return p.find(text, 1)
}

func (p *statePane) find(text string, dir int) string {
	if text == "" {
		return "no search: / searches"
	}
	if !p.ready || p.pager == nil && p.sorted == nil {
		return "no state to search"
	}
	at := p.firstIndex() + p.cur
	if p.sorted != nil {
		t := strings.ToLower(text)
		if len(p.sorted) == 0 {
			return fmt.Sprintf("no row with %q", text)
		}
		for n := 1; n <= len(p.sorted); n++ {
			i := ((at+dir*n)%len(p.sorted) + len(p.sorted)) % len(p.sorted)
			if anyCellHas(p.sorted[i].cells, t) {
				p.soff = max(0, min(i-p.pageSize()/3, len(p.sorted)-p.pageSize()))
				p.cur = i - p.soff
				return fmt.Sprintf("%q: row %d (. next, , previous)", text, i+1)
			}
		}
		return fmt.Sprintf("no row with %q", text)
	}
	msg, found := p.pager.find(at, dir, text, "row", "rows")
	if found {
		p.cur = 0
	}
	return msg
}

// total counts the table's rows, spending at most budget rows of reading
// on key groups not counted yet; exact is false while key groups are left
// to count.
func (p *statePane) total(budget int) (n int, exact bool) {
	if p.sorted != nil {
		return len(p.sorted), true
	}
	if p.pager == nil {
		return 0, true
	}
	if sig := p.countSig(); p.counts.sig != sig {
		p.counts = countCache{sig: sig, perKG: map[int]int{}}
	}
	src := p.pager.src
	exact = true
	for kg := src.first(); kg <= src.last(); kg++ {
		c, ok := p.counts.perKG[kg]
		if !ok {
			if budget <= 0 || p.counts.large {
				exact = false
				continue
			}
			c = p.pager.count(kg)
			budget -= c + 1
			p.counts.perKG[kg] = c
		}
		n += c
	}
	if !exact {
		p.counts.large = true
	}
	return n, exact
}

// countSig names the table the counts are of.
func (p *statePane) countSig() string {
	op, _ := p.operator()
	return fmt.Sprintf("%s\x00%d\x00%d\x00%s\x00%v", op.ID, p.ref.index, p.tab, p.filter, p.only)
}

// learnCounts takes the counts of the table from all of its rows (read
// for a sort), so that the table unsorted has its exact total too.
func (p *statePane) learnCounts(src rowSource, rows []pageRow) {
	c := countCache{sig: p.countSig(), perKG: map[int]int{}}
	for kg := src.first(); kg <= src.last(); kg++ {
		c.perKG[kg] = 0
	}
	for _, r := range rows {
		c.perKG[r.kg]++
	}
	p.counts = c
}

// invalidate forgets the counts of the key groups a stop wrote to: all of
// them when the stop did not list every change, went back or restored, or
// when the table is one the changes do not describe (timers, operator
// state, changed rows).
func (p *statePane) invalidate(st *session.StopView) {
	if st == nil {
		return
	}
	switch {
	case st.ChangesDropped > 0, p.only, p.tab == tabTimers, p.tab == tabOperator,
		st.Reason == session.ReasonBack, st.Reason == session.ReasonRestored, st.Reason == session.ReasonRestarted:
		p.counts = countCache{}
		return
	}
	// A large table is not counted again (see countCache), but its
	// counts of the written key groups go all the same: kept, they made
	// a total that was no longer a lower bound.
	for _, c := range st.Changes {
		delete(p.counts.perKG, c.KeyGroup)
	}
}

// title names the operator (its place in the chain when there are several),
// the subtask, its key groups and the tabs. A narrow pane gets the active
// tab only, with its place among the tabs.
func (p *statePane) title() string {
	op, ok := p.operator()
	if !ok {
		return "State"
	}
	t := "State · " + op.Label
	if n := len(p.ref.operators); n > 1 {
		t += fmt.Sprintf(" ‹op %d/%d›", p.op+1, n)
	}
	t += fmt.Sprintf(" [%d/%d]", p.ref.index, p.ref.parallel)
	kg := fmt.Sprintf(" · kg %d–%d ·", p.ref.groups.Start, p.ref.groups.End)
	tabs := ""
	for i, name := range stateTabs {
		switch {
		case i == p.tab:
			tabs += " " + p.st.TabActive.Render("["+name+"]")
		case !p.available(i):
			tabs += " " + p.st.Dim.Render(strings.Repeat("·", len(name)))
		default:
			tabs += " " + p.st.Tab.Render(name)
		}
	}
	if ansi.StringWidth(t+kg+tabs) <= p.w-5 {
		return t + kg + tabs
	}
	short := fmt.Sprintf(" %s %d/%d", p.st.TabActive.Render("["+stateTabs[p.tab]+"]"), p.tab+1, len(stateTabs))
	if ansi.StringWidth(t+kg+short) <= p.w-5 {
		return t + kg + short
	}
	return t + " ·" + short
}

func (p *statePane) View(focused bool) string {
	if !p.ready || (p.pager == nil && p.sorted == nil) {
		return box(p.st, "State", focused, p.w, p.h, []string{p.st.Dim.Render("no state")})
	}
	page := p.page()
	pins := p.pinned[:p.pinRowsOf()]
	rows := make([][]string, 0, len(pins)+len(page))
	for _, r := range pins {
		// Marked in plain text too: where execution stopped.
		c := append([]string{"▶ " + r.cells[0]}, r.cells[1:]...)
		rows = append(rows, c)
	}
	for _, r := range page {
		rows = append(rows, r.cells)
	}
	cols, idx := p.usedColumns(rows)
	vis := make([][]string, len(rows))
	for i, r := range rows {
		v := make([]string, len(idx))
		for j, c := range idx {
			if c < len(r) {
				v[j] = r[c]
			}
		}
		vis[i] = v
	}
	vis, date := factorDates(vis)
	q := strings.ToLower(p.query)
	lines := table(p.st, cols, vis, p.w-2, p.full, func(i, j int, s string) string {
		if i < len(pins) {
			return p.st.Pinned.Render(s)
		}
		i -= len(pins)
		switch {
		case i == p.cur && focused:
			return p.st.Selected.Render(s)
		case page[i].changed:
			return p.st.Changed.Render(s)
		case q != "" && strings.Contains(strings.ToLower(s), q):
			return p.st.Match.Render(s)
		}
		return s
	})
	if p.pinNote != "" && len(pins) == 0 {
		lines = append(lines[:1], append([]string{p.st.Pinned.Render(p.pinNote)}, lines[1:]...)...)
	}
	if p.hoff > 0 {
		for i := range lines {
			lines[i] = hscroll(lines[i], p.hoff)
		}
	}
	var err error
	if p.pager != nil {
		err = p.pager.err
	}
	switch {
	case err != nil:
		lines = append(lines, wrapLines([]string{p.st.Failed.Render(err.Error())}, p.w-2)...)
	case p.note != "":
		lines = append(lines, wrapLines([]string{p.st.Dim.Render(p.note)}, p.w-2)...)
	case len(page) == 0 && p.only:
		lines = append(lines, p.st.Dim.Render("the last stop changed nothing here (C shows all rows)"))
	case len(page) == 0:
		lines = append(lines, p.st.Dim.Render("no entries"))
	}
	for len(lines) < p.h-3 {
		lines = append(lines, "")
	}
	status := p.statusText()
	if date != "" {
		status = "times on " + date + " · " + status
	}
	lines = append(lines[:min(len(lines), p.h-3)], p.st.Dim.Render(cutWords(status, p.w-2)))
	return box(p.st, p.title(), focused, p.w, p.h, lines)
}

// statusText is the table's last line: the total, the rows shown, and
// what filters or orders them.
func (p *statePane) statusText() string {
	total, exact := p.totalN, p.totalExact
	if page := p.page(); !exact {
		total = max(total, p.firstIndex()+len(page)) // rows shown are rows there
	}
	what := "rows"
	if p.only {
		what = "changed rows"
	}
	s := plural(int64(total), strings.TrimSuffix(what, "s"), what)
	if !exact {
		s = "≥ " + s + " (not all counted)"
	}
	if page := p.page(); len(page) > 0 {
		first := p.firstIndex()
		s += fmt.Sprintf(" · %s–%s", numfmt.Commas(int64(first+1)), numfmt.Commas(int64(first+len(page))))
	}
	if p.sort != sortNone {
		s += " · sorted by " + sortNames[p.sort]
	}
	if p.filter != "" {
		s += " · filter: " + p.filter
	}
	if p.dropped > 0 {
		s += fmt.Sprintf(" · %s writes beyond %s entries not marked", numfmt.Commas(int64(p.dropped)), numfmt.Commas(session.MaxChanges))
	}
	return s
}

// usedColumns drops columns no row of the page uses, so narrow panes keep
// the key and the value.
func (p *statePane) usedColumns(rows [][]string) ([]column, []int) {
	var cols []column
	var idx []int
	for j, c := range p.cols {
		used := j == 0 || j == len(p.cols)-1 || c.title == "key"
		for _, r := range rows {
			if used {
				break
			}
			used = j < len(r) && r[j] != "·" && r[j] != ""
		}
		if used {
			cols = append(cols, c)
			idx = append(idx, j)
		}
	}
	return cols, idx
}

func (p *statePane) KeyMap() []key.Binding {
	k := p.keys
	return append([]key.Binding{k.NextTab, k.PrevTab, k.NextOp, k.PrevOp, k.Enter, k.Filter, k.Sort, k.ChangedOnly}, k.Scroll()...)
}

// keyedSource reads one operator's keyed state in one subtask.
type keyedSource struct {
	r       session.StateReader
	op      session.OperatorView
	subtask int
	groups  session.KeyGroups
	windows bool
	cond    *query.Compiled
	changes map[session.EntryID]session.Change
	only    bool // the changed entries only
}

func (s *keyedSource) first() int { return s.groups.Start }
func (s *keyedSource) last() int  { return s.groups.End }

func (s *keyedSource) rows(from, to int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		var kgs []int
		var keys []any
		if s.only {
			kgs, keys = s.changed(from, to)
		} else {
			for kg := max(from, s.groups.Start); kg <= min(to, s.groups.End); kg++ {
				kgs = append(kgs, kg)
			}
		}
		if len(kgs) == 0 {
			return
		}
		var cleared []pageRow
		flush := func(upTo int) bool {
			// Cleared entries are gone from state: the changed-only table
			// shows them where they were.
			for len(cleared) > 0 && cleared[0].kg <= upTo {
				if !yield(cleared[0], nil) {
					return false
				}
				cleared = cleared[1:]
			}
			return true
		}
		if s.only {
			cleared = s.clearedRows(kgs)
		}
		for r, err := range s.r.Keyed(s.op.ID, "", kgs, keys) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if r.Subtask != s.subtask || s.windows && r.Namespace == nil || timerState(r.State) {
				continue
			}
			if ok, err := passes(s.cond, r, keyedRow); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			var c session.Change
			changed := false
			if len(s.changes) > 0 { // an EntryID to look up costs its key printed
				c, changed = s.changes[r.ID()]
			}
			if s.only && !changed {
				continue
			}
			if !flush(r.KeyGroup - 1) {
				return
			}
			row := pageRow{kg: r.KeyGroup, row: r, changed: changed,
				cells: []string{r.State, show(r.Key), show(r.Namespace), show(r.UserKey), show(r.Value)}}
			if changed {
				row.cells[4] += changeNote(c)
			}
			if !yield(row, nil) {
				return
			}
		}
		flush(s.groups.End)
	}
}

// changeNote is the mark after a changed value: its old value, or that it
// is new.
func changeNote(c session.Change) string {
	if c.HadOld {
		return "  ← " + show(c.Old)
	}
	return "  (new)"
}

// changed lists the key groups (from to to) and keys the stop wrote in
// this operator and subtask.
func (s *keyedSource) changed(from, to int) ([]int, []any) {
	kgSet := map[int]bool{}
	var keys []any
	keySet := map[string]bool{}
	for id, c := range s.changes {
		if id.Operator != s.op.Name || id.Subtask != s.subtask || c.KeyGroup < max(from, s.groups.Start) || c.KeyGroup > min(to, s.groups.End) {
			continue
		}
		kgSet[c.KeyGroup] = true
		if !keySet[id.Key] {
			keySet[id.Key] = true
			keys = append(keys, c.Key)
		}
	}
	kgs := make([]int, 0, len(kgSet))
	for kg := range kgSet {
		kgs = append(kgs, kg)
	}
	slices.Sort(kgs)
	return kgs, keys
}

// clearedRows are the entries the stop cleared in the key groups, as rows.
func (s *keyedSource) clearedRows(kgs []int) []pageRow {
	var out []pageRow
	for id, c := range s.changes {
		if !c.Cleared || id.Operator != s.op.Name || id.Subtask != s.subtask || !slices.Contains(kgs, c.KeyGroup) {
			continue
		}
		r := session.Row{OperatorID: s.op.ID, OperatorName: s.op.Name, Subtask: s.subtask, KeyGroup: c.KeyGroup, State: id.State,
			Key: c.Key, Namespace: c.Namespace, UserKey: c.UserKey}
		out = append(out, pageRow{kg: c.KeyGroup, row: r, changed: true, cleared: true,
			cells: []string{id.State, show(c.Key), show(c.Namespace), show(c.UserKey), "(cleared) ← " + show(c.Old)}})
	}
	slices.SortFunc(out, func(a, b pageRow) int {
		return cmp.Or(cmp.Compare(a.kg, b.kg), strings.Compare(strings.Join(a.cells, "\x00"), strings.Join(b.cells, "\x00")))
	})
	return out
}

// timerState says a keyed state holds timers (they show in the timers tab).
func timerState(name string) bool {
	return session.TimerDomain(name) != "" && strings.HasPrefix(name, "_timer_state/")
}

// operatorSource reads one operator's operator state in one subtask.
type operatorSource struct {
	r       session.StateReader
	opID    string
	subtask int
	cond    *query.Compiled
}

func (s *operatorSource) first() int { return 0 }
func (s *operatorSource) last() int  { return 0 }

func (s *operatorSource) rows(from, _ int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		if from > 0 {
			return
		}
		for r, err := range s.r.OperatorState(s.opID, "") {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if r.Subtask != s.subtask {
				continue
			}
			if ok, err := passes(s.cond, r, operatorRow); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{row: r, cells: []string{r.State, r.Kind, strconv.Itoa(r.Position), show(r.Key), show(r.Value)}}, nil) {
				return
			}
		}
	}
}

// timerSource reads one operator's timers in one subtask.
type timerSource struct {
	r       session.StateReader
	opID    string
	subtask int
	groups  session.KeyGroups
	cond    *query.Compiled
}

func (s *timerSource) first() int { return s.groups.Start }
func (s *timerSource) last() int  { return s.groups.End }

func (s *timerSource) rows(from, to int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		var kgs []int
		for kg := max(from, s.groups.Start); kg <= min(to, s.groups.End); kg++ {
			kgs = append(kgs, kg)
		}
		for r, err := range s.r.Timers(s.opID, kgs, "") {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if r.Subtask != s.subtask {
				continue
			}
			if ok, err := passes(s.cond, r, timerRow); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{kg: r.KeyGroup, row: r, cells: []string{r.Domain, timestamp(r.Timestamp), show(r.Key), show(r.Namespace)}}, nil) {
				return
			}
		}
	}
}
