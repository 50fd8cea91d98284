package tui

import (
	"cmp"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"streamdbg/internal/numfmt"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// The debugger habits of issue 16 and its smaller defects, at the level of
// the model (the tmux test drives the same through the binary).

// 1. A watch whose query fails at run time is an error with a caret, not
// a crash.
func TestFailingWatchIsAnError(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n", "n", "w")
	typeText(t, m, "key FROM keyed_stat")
	press(t, m, "enter")
	if m.panics != 0 {
		t.Fatalf("panic: %s", m.lastPanic)
	}
	got := screen(m.View())
	contains(t, got, "  watch SELECT key FROM keyed_stat", "                        ^", `unknown table "keyed_stat"`)
	if len(m.view.Watches) != 0 {
		t.Fatal("the failing watch was added")
	}
}

// 2. 900N is one stop: the header and the status say 900 records, and u
// goes back to where it began.
func TestLongNextIsOneStop(t *testing.T) {
	m := newJobModel(t, "orders", 120, 40)
	press(t, m, "9", "0", "0", "N")
	got := screen(m.View())
	contains(t, got, "record 900 ·", "stopped: next · 900 records")
	press(t, m, "u")
	if m.view.Position != 0 {
		t.Fatalf("u after 900N went to record %d", m.view.Position)
	}
}

// 3. n after a breakpoint in the middle of a record finishes the record
// with its changes marked.
func TestNextAfterBreakpointMarksChanges(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "break at count when key = 'the'")
	press(t, m, "c")
	command(t, m, "disable 1")
	press(t, m, "n")
	if m.view.Position != 1 {
		t.Fatalf("n from the breakpoint went to record %d", m.view.Position)
	}
	contains(t, screen(m.View()), "the   2  ← 1")
}

// 4. > to an operator without keyed state says so and shows its operator
// state; < brings the keyed table back with its rows.
func TestPickOperator(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n", "n")
	if op, _ := m.state.operator(); op.Name != "count" {
		t.Fatalf("starts on %s, want count", op.Name)
	}
	press(t, m, ">")
	if op, _ := m.state.operator(); op.Name != "out" || m.state.tab != tabOperator {
		t.Fatalf("> gave %s on tab %d", op.Name, m.state.tab)
	}
	if !strings.Contains(m.status, "not keyed") {
		t.Fatalf("> to out says nothing of keyed state: %q", m.status)
	}
	contains(t, screen(m.View()), "State · out ‹op 2/2› [0/2]", "out declares no state")
	press(t, m, "<")
	if op, _ := m.state.operator(); op.Name != "count" || m.state.tab != tabKeyed || len(m.state.page()) == 0 {
		t.Fatalf("< gave %s on tab %d with %d rows", op.Name, m.state.tab, len(m.state.page()))
	}
	// The source task shows its offsets.
	m.focus = panePlan
	press(t, m, "g")
	if op, _ := m.state.operator(); op.Name != "Source: lines" || m.state.tab != tabOperator {
		t.Fatalf("the source task shows %s on tab %d", op.Name, m.state.tab)
	}
	if page := m.state.page(); len(page) == 0 || page[0].cells[0] != "offsets" {
		t.Fatalf("no source offsets: %+v", page)
	}
}

// 5, 6. Back takes the undone future's outputs off the output pane, whose
// title counts what the sinks wrote.
func TestOutputFollowsBack(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 25")
	at25 := m.view.OutputTotal
	command(t, m, "next 182")
	if !strings.Contains(screen(m.View()), fmt.Sprintf("Output · %s records", numfmt.Commas(m.view.OutputTotal))) {
		t.Fatal("the output title does not count the sinks' records")
	}
	press(t, m, "u")
	if m.view.OutputTotal != at25 {
		t.Fatalf("after u %d outputs, want %d", m.view.OutputTotal, at25)
	}
	for _, l := range m.output.raw {
		var seq int64
		fmt.Sscanf(l, "#%d", &seq)
		if seq > at25 {
			t.Fatalf("output %q of the undone future is still shown", l)
		}
	}
}

// 8. After a breakpoint the Record pane pins where it stopped and opens on
// the stop, G and g go to its ends.
func TestPinnedLocation(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "break at count when key = 'rest'")
	press(t, m, "c")
	if !strings.HasPrefix(m.record.pinned[0], "▶ #1 after count") {
		t.Fatalf("pinned line %q", m.record.pinned[0])
	}
	if l := m.record.raw[m.record.cursor]; !strings.HasPrefix(l, "▶ count[") {
		t.Fatalf("the cursor is on %q, not the stopped step", l)
	}
	got := screen(m.View())
	contains(t, got, "▶ #1 after count", "▶ count[")
	// The state pane shows the stopped key first, whatever its page.
	if len(m.state.pinned) != 1 || m.state.pinned[0].row.Key != "rest" {
		t.Fatalf("pinned rows %+v", m.state.pinned)
	}
	if !regexp.MustCompile(`│▶ count +rest +1 `).MatchString(got) {
		t.Fatalf("the state pane does not pin the key rest:\n%s", got)
	}
	m.focus = paneRecord
	press(t, m, "G")
	if m.record.cursor != len(m.record.raw)-1 {
		t.Fatal("G did not go to the end")
	}
	press(t, m, "g")
	if m.record.cursor != 0 || m.record.offset != 0 {
		t.Fatal("g did not go to the start")
	}
}

// Enter opens a row in full with its history in this session.
func TestDetailsWithHistory(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 3")
	press(t, m, "f")
	typeText(t, m, "key = 'a'")
	press(t, m, "enter")
	m.focus = paneState
	press(t, m, "enter")
	tl, ok := m.overlay.(*textList)
	if !ok {
		t.Fatalf("enter opened %T", m.overlay)
	}
	got := strings.Join(tl.raw, "\n")
	for _, want := range []string{"state      count", "key        a", "key group", "value:", "  4", "history in this session:", "record 3", "4  ← 3", "(new)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("details lack %q:\n%s", want, got)
		}
	}
	press(t, m, "q")
	if m.overlay != nil {
		t.Fatal("q did not close the details")
	}
}

// An entry without revisions: once the session has forgotten some
// entries' histories, the details say the entry's may be one of them, not
// that it never changed.
func TestDetailsHistoryForgotten(t *testing.T) {
	id := &session.EntryID{Operator: "count", State: "count", Key: "w1"}
	never := strings.Join(detail{entry: id}.lines(nil, 0), "\n")
	if !strings.Contains(never, "no change since the session started") || strings.Contains(never, "forgot") {
		t.Fatalf("nothing forgotten:\n%s", never)
	}
	maybe := strings.Join(detail{entry: id, forgottenEntries: 150_000}.lines(nil, 0), "\n")
	for _, want := range []string{"none kept", "only the 50,000 entries", "forgotten 150,000 histories", "this entry's may be one of them"} {
		if !strings.Contains(maybe, want) {
			t.Fatalf("with 150,000 histories forgotten, the details lack %q:\n%s", want, maybe)
		}
	}
	if strings.Contains(maybe, "no change since") {
		t.Fatalf("with histories forgotten, the details still say no change:\n%s", maybe)
	}
	kept := strings.Join(detail{entry: id, forgottenEntries: 150_000}.lines([]session.Revision{{Position: 7, New: int64(3)}}, 0), "\n")
	if !strings.Contains(kept, "record 7") || strings.Contains(kept, "none kept") {
		t.Fatalf("an entry with revisions:\n%s", kept)
	}
}

// compareValues orders dynamic values as the state table sorts them,
// written plainly (each comparison prints what is not a number): the
// reference sortRows is checked against.
func compareValues(a, b any) int {
	fa, oka := number(a)
	fb, okb := number(b)
	switch {
	case oka && okb:
		return cmp.Compare(fa, fb)
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(show(a), show(b))
}

// sortRows orders as a stable sort with compareValues at every
// comparison does (numbers by value before the rest by their text, ties
// by the first cells, changed rows first), over keys and values of mixed
// kinds with many ties.
func TestSortRowsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	value := func() any {
		switch rng.IntN(6) {
		case 0:
			return int64(rng.IntN(20) - 10)
		case 1:
			return float64(rng.IntN(40)) / 4
		case 2:
			return nil
		case 3:
			return fmt.Sprintf("k%d", rng.IntN(15))
		case 4:
			return []any{int64(rng.IntN(3)), "x"}
		}
		return rng.IntN(2) == 0
	}
	rows := make([]pageRow, 3000)
	for i := range rows {
		k, v := value(), value()
		rows[i] = pageRow{cells: []string{"count", show(k), fmt.Sprint(rng.IntN(3)), show(v)}, row: session.Row{Key: k, Value: v}, changed: rng.IntN(3) == 0}
	}
	keyOf := func(r pageRow) string { return strings.Join(r.cells[:min(4, len(r.cells))], "\x00") }
	refs := map[int]func(a, b pageRow) int{
		sortKey: func(a, b pageRow) int {
			return cmp.Or(compareValues(a.row.Key, b.row.Key), strings.Compare(keyOf(a), keyOf(b)))
		},
		sortValue: func(a, b pageRow) int { return compareValues(b.row.Value, a.row.Value) },
		sortChanged: func(a, b pageRow) int {
			return cmp.Or(boolRank(b.changed)-boolRank(a.changed), compareValues(a.row.Key, b.row.Key))
		},
	}
	for by, ref := range refs {
		want := slices.Clone(rows)
		slices.SortStableFunc(want, ref)
		got := sortRows(rows, by)
		if len(got) != len(want) {
			t.Fatalf("sort %s: %d rows, want %d", sortNames[by], len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("sort %s: row %d is %v, want %v", sortNames[by], i, got[i].cells, want[i].cells)
			}
		}
	}
}

// A stop that changed more than MaxChanges entries says how many writes
// it did not mark, as writes (the count is of writes, not entries).
func TestStateDroppedChangesSaid(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 3")
	m.state.dropped = 1_464_381
	got := m.state.statusText()
	if !strings.Contains(got, "1,464,381 writes beyond 20,000 entries not marked") {
		t.Fatalf("status %q does not say the writes left unmarked", got)
	}
}

// A filter sees each kind of row's columns, and only those, with their
// values (key_group, subtask and position as int64).
func TestRowEnvColumns(t *testing.T) {
	r := session.Row{OperatorID: "id", OperatorName: "count", Subtask: 1, KeyGroup: 77, State: "n", Kind: "value",
		Key: "k", Namespace: int64(5), UserKey: "u", Value: int64(9), Position: 3, Domain: "event", Timestamp: 1234}
	want := map[rowKind]map[string]any{
		keyedRow: {"operator_name": "count", "subtask": int64(1), "key_group": int64(77), "state_name": "n", "kind": "value",
			"key": "k", "namespace": int64(5), "user_key": "u", "value": int64(9)},
		operatorRow: {"operator_name": "count", "subtask": int64(1), "state_name": "n", "mode": "value", "position": int64(3),
			"key": "k", "value": int64(9)},
		timerRow: {"operator_name": "count", "subtask": int64(1), "key_group": int64(77), "state_name": "n", "key": "k", "namespace": int64(5),
			"domain": "event", "timestamp": int64(1234)},
	}
	for kind, cols := range want {
		env := &rowEnv{r: r, kind: kind}
		for _, name := range filterNames {
			got, ok := env.Lookup(name)
			w, wok := cols[name]
			if ok != wok || got != w {
				t.Errorf("kind %d, %s: %v (%v), want %v (%v)", kind, name, got, ok, w, wok)
			}
		}
		if names := env.Names(); len(names) != len(cols) {
			t.Errorf("kind %d: names %v, want the %d columns", kind, names, len(cols))
		}
	}
	c, err := compileFilter("value > 8 AND key_group = 77 AND key = 'k'")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := passes(c, r, keyedRow); !ok || err != nil {
		t.Fatalf("the filter does not keep its row: %v %v", ok, err)
	}
	r.Value = int64(8)
	if ok, err := passes(c, r, keyedRow); ok || err != nil {
		t.Fatalf("the filter keeps a row it should not: %v %v", ok, err)
	}
}

// S sorts, C keeps the changed rows; the last line has the total.
func TestSortChangedTotals(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 5")
	m.focus = paneState
	total := m.state.totalN
	if !strings.Contains(screen(m.View()), fmt.Sprintf("%d rows · 1–", total)) || total < 10 {
		t.Fatalf("no total in the state pane (%d):\n%s", total, screen(m.View()))
	}
	press(t, m, "S") // by key
	page := m.state.page()
	for i := 1; i < len(page); i++ {
		if compareValues(page[i-1].row.Key, page[i].row.Key) > 0 {
			t.Fatalf("sorted by key: %v before %v", page[i-1].row.Key, page[i].row.Key)
		}
	}
	press(t, m, "S") // by value, largest first
	page = m.state.page()
	for i := 1; i < len(page); i++ {
		if compareValues(page[i-1].row.Value, page[i].row.Value) < 0 {
			t.Fatalf("sorted by value: %v before %v", page[i-1].row.Value, page[i].row.Value)
		}
	}
	press(t, m, "S", "S") // changed first, then none
	press(t, m, "C")
	page = m.state.page()
	if len(page) == 0 || len(page) >= total {
		t.Fatalf("changed only: %d rows of %d", len(page), total)
	}
	for _, r := range page {
		if !r.changed {
			t.Fatalf("row %v was not changed by the last stop", r.cells)
		}
	}
	if n := changedIn(m.view.Stop, "count", 0); m.state.totalN != n || !m.state.totalExact {
		t.Fatalf("changed only counts %d rows, the stop changed %d in count[0]", m.state.totalN, n)
	}
}

// TestSortTooLargeSaysWhy: S on a table of more rows than a sort holds
// says so on the status line (before: it said "state: unsorted", and the
// reason, below a full page, was cut off).
func TestSortTooLargeSaysWhy(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 5")
	m.focus = paneState
	old := sortLimit
	t.Cleanup(func() { sortLimit = old })
	sortLimit = 5
	press(t, m, "S")
	got := screen(m.View())
	contains(t, got, "sorting needs every row in memory: this table has more than 5")
	if strings.Contains(got, "unsorted") || strings.Contains(got, "sorted by") {
		t.Fatalf("a sort that did not happen is said to have:\n%s", got)
	}
}

// TestTotalAfterReadingEveryRow: a table larger than the count budget is
// said to have at least the rows counted, never fewer than the rows
// shown; G and a sort read every row, and the total is exact after them
// (before: G showed the last rows under "≥ 20,243 rows (not all
// counted)", a total below the row numbers beside it).
func TestTotalAfterReadingEveryRow(t *testing.T) {
	old := countBudget
	t.Cleanup(func() { countBudget = old })
	countBudget = 5
	statusOf := func(m *Model) string {
		for _, l := range strings.Split(screen(m.View()), "\n") {
			if i := strings.Index(l, "rows"); i >= 0 && strings.Contains(l, " · ") && strings.Contains(l, "││") {
				return strings.TrimRight(l[strings.LastIndex(l, "││")+len("││"):], "│ ")
			}
		}
		return ""
	}
	m := newModel(t, 120, 40)
	command(t, m, "next 5")
	m.focus = paneState
	n := changedIn(m.view.Stop, "count", 0) // every key of count[0] is new
	if got := statusOf(m); !strings.HasPrefix(got, "≥ ") || !strings.Contains(got, "(not all counted)") {
		t.Fatalf("a table over the budget: %q", got)
	}
	press(t, m, "G")
	if got, want := statusOf(m), fmt.Sprintf("%d rows · ", n); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, fmt.Sprintf("–%d", n)) {
		t.Fatalf("after G: %q, want %q…–%d\n%s", got, want, n, screen(m.View()))
	}
	press(t, m, "g")
	if got, want := statusOf(m), fmt.Sprintf("%d rows · 1–", n); !strings.HasPrefix(got, want) {
		t.Fatalf("after G, g: %q, want %q…", got, want)
	}

	m = newModel(t, 120, 40)
	command(t, m, "next 5")
	m.focus = paneState
	press(t, m, "S", "S", "S", "S") // key, value, changed first, none
	if got, want := statusOf(m), fmt.Sprintf("%d rows · 1–", n); !strings.HasPrefix(got, want) {
		t.Fatalf("sorted, then unsorted: %q, want %q…", got, want)
	}
}

func changedIn(st *session.StopView, op string, sub int) int {
	n := 0
	for id := range st.Changes {
		if id.Operator == op && id.Subtask == sub {
			n++
		}
	}
	return n
}

// / searches the focused pane; . and , go to the next and previous match.
func TestSearch(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 20")
	m.focus = paneState
	press(t, m, "/")
	typeText(t, m, "o")
	press(t, m, "enter")
	page := m.state.page()
	if len(page) == 0 || !strings.Contains(page[m.state.cur].cells[1], "o") {
		t.Fatalf("search in state: cursor on %v (%s)", page, m.status)
	}
	first := m.state.firstIndex() + m.state.cur
	press(t, m, ".")
	second := m.state.firstIndex() + m.state.cur
	press(t, m, ",")
	if back := m.state.firstIndex() + m.state.cur; back != first || second == first {
		t.Fatalf("matches at %d, . %d, , %d", first, second, back)
	}
	m.focus = paneOutput
	press(t, m, "/")
	typeText(t, m, `"count":3`)
	press(t, m, "enter")
	if !strings.Contains(m.output.raw[m.output.cursor], `"count":3`) || !strings.Contains(m.status, "match") {
		t.Fatalf("search in output: %q (%s)", m.output.raw[m.output.cursor], m.status)
	}
}

// ↑ and ↓ walk the prompt's history; Tab completes commands, operators,
// states, tables and columns.
func TestPromptHistoryAndCompletion(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 2")
	command(t, m, "help break")
	press(t, m, "esc", ":", "up")
	if v := m.prompt.input.Value(); v != "help break" {
		t.Fatalf("↑: %q", v)
	}
	press(t, m, "up")
	if v := m.prompt.input.Value(); v != "next 2" {
		t.Fatalf("↑↑: %q", v)
	}
	press(t, m, "down", "down")
	if v := m.prompt.input.Value(); v != "" {
		t.Fatalf("↓↓: %q", v)
	}
	for _, c := range []struct{ typed, want string }{
		{"conti", "continue "},
		{"brea", "break"}, // break and breakpoints
		{"break at Sou", `break at "Source: lines" `},
		{"break at count when state.co", "break at count when state.count "},
		{"SELECT * FROM keyed_st", "SELECT * FROM keyed_state "},
		{"SELECT * FROM \"co", `SELECT * FROM "count" `},
		{`SELECT * FROM "count".`, `SELECT * FROM "count"."count" `},
		{"SELECT operator_na", "SELECT operator_name "},
		{"restore ~/nonexistent-dir-of-the-test/x", "restore ~/nonexistent-dir-of-the-test/x"},
	} {
		m.prompt.input.SetValue(c.typed)
		m.prompt.input.CursorEnd()
		m.prompt.resetCompletion()
		press(t, m, "tab")
		if v := m.prompt.input.Value(); v != c.want {
			t.Errorf("Tab after %q: %q, want %q", c.typed, v, c.want)
		}
	}
	// Several candidates: the first Tab lists them, the next ones cycle.
	m.prompt.input.SetValue("SELECT key_")
	m.prompt.resetCompletion()
	press(t, m, "tab")
	if !strings.Contains(m.prompt.hint, "key_group") || !strings.Contains(m.prompt.hint, "key_type") {
		t.Fatalf("candidates of key_: %q", m.prompt.hint)
	}
}

// z wraps long lines (or shows columns at full width); H and L scroll.
func TestWrapAndHorizontalScroll(t *testing.T) {
	m := newJobModel(t, "clicks", 80, 24)
	command(t, m, "next 10")
	m.focus = paneRecord
	long := ""
	for _, l := range m.record.lines {
		if len(l) > len(long) {
			long = l
		}
	}
	if !strings.Contains(screen(m.View()), "…") {
		t.Fatal("no cut line to scroll")
	}
	press(t, m, "L")
	if m.record.hoff == 0 {
		t.Fatal("L did not scroll")
	}
	press(t, m, "H")
	if m.record.hoff != 0 {
		t.Fatal("H did not scroll back")
	}
	press(t, m, "z")
	if !m.record.wrap || len(m.record.lines) <= len(m.record.raw) {
		t.Fatalf("z did not wrap: %d lines for %d", len(m.record.lines), len(m.record.raw))
	}
	// The output pane wraps by default: a window's bounds are whole.
	contains(t, screen(m.View()), `"window_end":"2026-03-01T12:00:10Z"`)
}

// q and esc close overlays; q with breakpoints or watches asks once; R
// asks before it discards records.
func TestQuitAndRestartAsk(t *testing.T) {
	m := newModel(t, 120, 40)
	for _, open := range []func(){
		func() { press(t, m, "?") },
		func() { command(t, m, "SELECT * FROM keyed_state") },
		func() { press(t, m, "B") },
	} {
		open()
		if m.overlay == nil {
			t.Fatal("no overlay")
		}
		_, cmd := m.Update(keyMsg("q"))
		if cmd != nil {
			if _, quit := cmd().(tea.QuitMsg); quit {
				t.Fatal("q in an overlay quit")
			}
		}
		if m.overlay != nil {
			t.Fatalf("q did not close %T", m.overlay)
		}
	}
	command(t, m, "break at count")
	press(t, m, "q")
	if c, ok := m.overlay.(*confirm); !ok || !strings.Contains(strings.Join(c.question, " "), "1 breakpoint goes with it") {
		t.Fatalf("q with a breakpoint did not ask: %T", m.overlay)
	}
	press(t, m, "n")
	if m.overlay != nil {
		t.Fatal("n did not answer no")
	}
	press(t, m, "q")
	if _, cmd := m.Update(keyMsg("y")); cmd == nil || !quits(cmd) {
		t.Fatal("y did not quit")
	}
	// R asks when it would discard records.
	m = newModel(t, 120, 40)
	command(t, m, "next 5")
	press(t, m, "R")
	if c, ok := m.overlay.(*confirm); !ok || !strings.Contains(strings.Join(c.question, " "), "what the 5 records after it did is undone") {
		t.Fatalf("R did not ask: %T", m.overlay)
	}
	press(t, m, "y")
	if m.view.Position != 0 || m.view.Stop.Reason != session.ReasonRestarted {
		t.Fatalf("y: at %d (%s)", m.view.Position, m.view.Stop.Reason)
	}
}

func quits(cmd tea.Cmd) bool {
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && quits(c) {
				return true
			}
		}
	}
	return false
}

// A click selects the row under it (and focuses its pane); the wheel
// scrolls the pane under the pointer.
func TestMouse(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "next 10")
	r := m.rects[paneState]
	send(t, m, tea.MouseClickMsg{X: r.x + 5, Y: r.y + 4, Button: tea.MouseLeft})
	if m.focus != paneState || m.state.cur != 2 {
		t.Fatalf("click on the third row: focus %d, row %d", m.focus, m.state.cur)
	}
	o := m.rects[paneOutput]
	before := m.output.offset
	send(t, m, tea.MouseWheelMsg{X: o.x + 5, Y: o.y + 3, Button: tea.MouseWheelUp})
	if m.output.offset >= before {
		t.Fatalf("the wheel did not scroll the output: %d → %d", before, m.output.offset)
	}
	p := m.rects[panePlan]
	send(t, m, tea.MouseClickMsg{X: p.x + 3, Y: p.y + 2, Button: tea.MouseLeft})
	if m.focus != panePlan || m.plan.sel != 0 {
		t.Fatalf("click on the source subtask: focus %d, subtask %d", m.focus, m.plan.sel)
	}
}

// break before and hit counts from the command bar.
func TestBreakBeforeAndHits(t *testing.T) {
	m := newModel(t, 120, 40)
	command(t, m, "break before count when key = 'the' hits > 1")
	press(t, m, "c")
	st := m.view.Stop
	if st.Reason != session.ReasonBreakpoint || !st.Before || st.Breakpoint.Hits != 2 {
		t.Fatalf("stop %+v", st)
	}
	got := screen(m.View())
	contains(t, got, "▶ #1 before count[0] (key the)", "▶ next: count[0] handles \"the\"")
	// The state is the one before the update: the is still 1.
	found := false
	for _, r := range m.state.page() {
		found = found || r.row.Key == "the" && r.row.Value == int64(1)
	}
	if !found {
		t.Fatalf("before the second the, the state pane does not show the = 1:\n%s", got)
	}
	press(t, m, "B")
	contains(t, screen(m.View()), "#1  on   hits 2  before count when key = 'the' hits > 1")
}

// 11. Help is generated from the command table and the focused pane's
// keys, whole at any width.
func TestHelpIsWhole(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		m := newModel(t, size[0], size[1])
		m.focus = paneRecord
		press(t, m, "?")
		tl := m.overlay.(*textList)
		all := strings.Join(tl.raw, "\n")
		contains(t, all, "Keys of Record pane:", "Keys everywhere:")
		for _, c := range session.Commands() {
			if !strings.Contains(all, c.Help) {
				t.Fatalf("%dx%d: help lacks the whole help of %s", size[0], size[1], c.Name)
			}
		}
		// Every laid out line fits: nothing is cut, it wraps.
		for _, l := range tl.lines {
			if len([]rune(l)) > size[0]-2 {
				t.Fatalf("%dx%d: help line wider than the overlay: %q", size[0], size[1], l)
			}
		}
		// The first page names the most used keys, quit among them: the
		// overlay's own keys replace the screen's last line meanwhile.
		first := screen(m.View())
		contains(t, first, "Most used: ? help", "q quit", "n next", "c continue")
		// A wrapped description keeps its indent.
		for i, l := range tl.lines {
			if i > 0 && tl.src[i] == tl.src[i-1] && strings.HasPrefix(tl.raw[tl.src[i]], "      ") && !strings.HasPrefix(l, "      ") {
				t.Fatalf("%dx%d: a wrapped help line lost its indent: %q", size[0], size[1], l)
			}
		}
		if size[0] == 80 {
			golden(t, "help_80x24", first)
		}
	}
}

// 13. Smaller ones.
func TestHeaderFieldsDependOnWidthOnly(t *testing.T) {
	for _, w := range []int{120, 80} {
		m := newJobModel(t, "clicks", w, 24)
		fields := func() string {
			h := strings.Split(screen(m.View()), "\n")[0]
			var names []string
			for _, f := range strings.Split(h, " · ") {
				name, _, _ := strings.Cut(strings.TrimSpace(f), " ")
				names = append(names, name)
			}
			return strings.Join(names[:len(names)-1], ",")
		}
		start := fields()
		command(t, m, "next 3")
		command(t, m, "break at count when key = 'u4'")
		press(t, m, "c")
		if got := fields(); got != start {
			t.Fatalf("%d columns: header fields %q at the start, %q at a breakpoint", w, start, got)
		}
		head := strings.Split(screen(m.View()), "\n")[0]
		if !strings.Contains(head, "wm 2026-03-01 ") && !strings.Contains(head, "wm 03-01 ") {
			t.Fatalf("%d columns: the watermark has no date: %q", w, head)
		}
	}
}

func TestPlurals(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n")
	contains(t, screen(m.View()), "stopped: next · 1 record")
	command(t, m, "continue")
	got := screen(m.View())
	if strings.Contains(got, "end of input: end of input") || strings.Contains(got, "1 records") {
		t.Fatalf("doubled or wrong plural:\n%s", got)
	}
}

func TestPageDownNeverLeavesOneRow(t *testing.T) {
	src := &countSource{n: 25}
	p := newPager(src, 10)
	for range 5 {
		p.down(9)
	}
	if len(p.page) != 10 || p.index != 15 {
		t.Fatalf("after page downs: %d rows from %d, want the last 10 from 15", len(p.page), p.index)
	}
	p.bottom(-1)
	if len(p.page) != 10 || p.index != 15 || p.page[9].cells[0] != "24" {
		t.Fatalf("bottom: %d rows from %d", len(p.page), p.index)
	}
}

// countSource is n rows, three per key group.
type countSource struct{ n int }

func (s *countSource) first() int { return 0 }
func (s *countSource) last() int  { return (s.n - 1) / 3 }
func (s *countSource) rows(from, to int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		for i := from * 3; i < min(s.n, 3*(to+1)); i++ {
			if !yield(pageRow{kg: i / 3, cells: []string{fmt.Sprint(i)}}, nil) {
				return
			}
		}
	}
}

func TestColumnsSizedByContent(t *testing.T) {
	cols := []column{{"subtask", 3}, {"key", 3}, {"value", 5}}
	rows := [][]string{{"0", "key_662", `{"total":17,"items":["p3","p4"]}`}, {"1", "key_7", "3"}}
	w := colWidths(cols, rows, 60, false)
	if w[0] != len("subtask") || w[1] != len("key_662") || w[2] != len(rows[0][2]) {
		t.Fatalf("widths %v for content widths 7, 7, %d", w, len(rows[0][2]))
	}
	// Too narrow: the wide value gives, the narrow columns keep their width.
	w = colWidths(cols, rows, 30, false)
	if w[0] != 7 || w[1] != 7 || w[0]+w[1]+w[2]+2 != 30 {
		t.Fatalf("widths at 30: %v", w)
	}
}

// Operators of the same name are told apart by their uid.
func TestSameNamedOperators(t *testing.T) {
	job := runtime.NewJob("maps")
	src := runtime.FromSlice(job, "src", []int64{1, 2, 3}, runtime.WatermarkStrategy[int64]{}, runtime.UID("src"))
	inc := func(v int64) (int64, error) { return v + 1, nil }
	a := runtime.Map(src, "Map", inc, runtime.UID("map-a"))
	b := runtime.Map(a, "Map", inc, runtime.UID("map-b"))
	c := runtime.Map(b, "Map", inc, runtime.UID("map-c"))
	runtime.JSONSink(c, "out", runtime.UID("out"))
	s, err := session.New(job, session.Options{Options: runtime.Options{Trace: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := New(s, Options{NoColor: true})
	press(t, m, ">")
	contains(t, screen(m.View()), "State · Map [map-a] ‹op 2/5›")
}
