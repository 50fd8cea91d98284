package tui

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

func TestDebugScreenGolden(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		w, h := size[0], size[1]
		m := newModel(t, w, h)
		for range 8 {
			press(t, m, "n")
		}
		got := screen(m.View())
		checkScreen(t, got, w, h)
		golden(t, "debug_"+sizeName(w, h), got)
	}
}

func TestQueryHelpErrorGolden(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n", "n", "n")
	command(t, m, "SELECT key, value FROM keyed_state ORDER BY value DESC LIMIT 3")
	tv, ok := m.overlay.(*tableView)
	if !ok || len(tv.q.rows) != 3 {
		t.Fatalf("want a query result with 3 rows, got %T", m.overlay)
	}
	golden(t, "query_120x40", screen(m.View()))
	press(t, m, "esc")
	if m.overlay != nil {
		t.Fatal("esc did not close the overlay")
	}
	press(t, m, "?")
	got := screen(m.View())
	contains(t, got, "Help", "Keys of State pane:")
	golden(t, "help_120x40", got)
	press(t, m, "esc")
	command(t, m, "SELECT vlaue FROM keyed_state")
	got = screen(m.View())
	contains(t, got, "  SELECT vlaue FROM keyed_state", "         ^", `did you mean "value"`)
	golden(t, "error_120x40", got)
}

func TestFailureGolden(t *testing.T) {
	j, err := fixtures.Build("keyed-puzzle", fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = session.New(j, session.Options{})
	if err == nil {
		t.Fatal("keyed-puzzle started")
	}
	m := newFailureModel(err, Options{NoColor: true})
	m.setSize(80, 24)
	got := screen(m.View())
	contains(t, got, "filter", "KeyBy", "operator  filter")
	golden(t, "failure_80x24", got)
	if _, cmd := m.Update(keyMsg("q")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit the failure screen")
	}
}

func ordersSavepoint(t *testing.T) string {
	t.Helper()
	s := newSession(t, "orders", runtime.Options{})
	if _, err := s.Execute(t.Context(), "next 200"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if _, err := s.Execute(t.Context(), "savepoint "+dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newTestBrowser(t *testing.T, dir string) (*browser, *browserModel) {
	t.Helper()
	st, k := styles.New(true, true), keys.Default()
	b, err := openBrowser(dir, &st, &k, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.sp.Close() })
	return b, &browserModel{b: b, st: &st, noColor: true}
}

func TestBrowserGolden(t *testing.T) {
	b, bm := newTestBrowser(t, ordersSavepoint(t))
	b.sp.Dir = "orders-200" // the golden does not hold a temporary path
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		b.SetSize(size[0], size[1])
		got := screen(bm.View())
		checkScreen(t, got, size[0], size[1])
		golden(t, "browser_"+sizeName(size[0], size[1]), got)
	}
	// Paging reads the next page, and back up gives the first one again.
	b.SetSize(120, 40)
	b.focus = 1
	first := b.entries.page[0].cells
	press(t, bm, "pgdown")
	if b.entries.index == 0 || b.entries.page[0].cells[2] == first[2] {
		t.Fatal("pgdown did not move")
	}
	press(t, bm, "pgup")
	if b.entries.index != 0 || b.entries.page[0].cells[2] != first[2] {
		t.Fatalf("pgup did not come back: index %d", b.entries.index)
	}
	press(t, bm, ":")
	b.prompt.input.SetValue("SELECT COUNT(*) AS n FROM keyed_state")
	press(t, bm, "enter")
	if tv, ok := b.overlay.(*tableView); !ok || len(tv.q.rows) != 1 {
		t.Fatal("no query result in the browser")
	}
}

func TestKeys(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n")
	if m.view.Position != 1 {
		t.Fatalf("n: position %d", m.view.Position)
	}
	press(t, m, "3", "N")
	if m.view.Position != 4 {
		t.Fatalf("3N: position %d", m.view.Position)
	}
	press(t, m, "u") // back undoes the last command: 3N
	if m.view.Position != 1 {
		t.Fatalf("u: position %d", m.view.Position)
	}
	press(t, m, "s")
	if m.view.Stop == nil || m.view.Stop.Steps != 1 {
		t.Fatal("s: no single step")
	}
	// The state pane follows the step (the source read line 2) ...
	if op, _ := m.state.operator(); op.Name != "Source: lines" {
		t.Fatalf("after s the state pane shows %s, not the source that stepped", op.Name)
	}
	// ... and b opens the command bar on the shown operator.
	press(t, m, "b")
	if m.prompt.mode != "command" || m.prompt.input.Value() != `break at "Source: lines" when ` {
		t.Fatalf("b: prompt %q %q", m.prompt.mode, m.prompt.input.Value())
	}
	m.prompt.input.SetValue("break at count when ")
	typeText(t, m, "key = 'the'")
	press(t, m, "enter")
	if len(m.view.Breakpoints) != 1 {
		t.Fatalf("no breakpoint: %s", m.status)
	}
	press(t, m, "c")
	if m.view.Stop.Reason != session.ReasonBreakpoint || !strings.Contains(screen(m.View()), "breakpoint #1") {
		t.Fatalf("c: %s", m.view.Stop.Reason)
	}
	// B lists breakpoints; space disables, x deletes.
	press(t, m, "B")
	if !m.bpList || !strings.Contains(screen(m.View()), "#1  on") {
		t.Fatal("B: no list")
	}
	press(t, m, "space")
	if m.view.Breakpoints[0].Enabled {
		t.Fatal("space did not disable")
	}
	press(t, m, "x")
	if len(m.view.Breakpoints) != 0 {
		t.Fatal("x did not delete")
	}
	press(t, m, "esc")
	// f filters the state table.
	press(t, m, "f")
	typeText(t, m, "key = 'the'")
	press(t, m, "enter")
	if page := m.state.page(); len(page) != 1 || page[0].cells[1] != "the" {
		t.Fatalf("filter: %d rows", len(page))
	}
	press(t, m, "f")
	m.prompt.input.SetValue("")
	press(t, m, "enter")
	if len(m.state.page()) < 2 {
		t.Fatal("clearing the filter did not bring rows back")
	}
	// tab moves the focus; tabs switch with → and ←.
	f := m.focus
	press(t, m, "tab")
	if m.focus == f {
		t.Fatal("tab did not move the focus")
	}
	m.focus = paneState
	press(t, m, "l")
	if m.state.tab != tabOperator {
		t.Fatal("→ did not switch tabs")
	}
	// q quits without breakpoints or watches; ctrl+c too when nothing runs.
	if _, cmd := m.Update(keyMsg("q")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit")
	}
	if _, cmd := m.Update(keyMsg("ctrl+c")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("ctrl+c does not quit")
	}
}

// A run in the background is interrupted by esc without quitting; other
// keys are queued (type-ahead, which esc drops) and say so, and the header
// follows the run's progress.
func TestInterrupt(t *testing.T) {
	m := newModel(t, 120, 40)
	_, cmd := m.Update(keyMsg("c"))
	if m.busy == nil {
		t.Fatal("c did not start a run")
	}
	if !strings.Contains(screen(m.View()), "running: continue") {
		t.Fatal("no running state in the header")
	}
	if _, c := m.Update(keyMsg("n")); c != nil {
		t.Fatal("n started a second command while running")
	}
	if got := screen(m.View()); !strings.Contains(got, "1 key queued: continue is running") {
		t.Fatalf("a key while running gives no feedback on the screen:\n%s", got)
	}
	_, c := m.Update(keyMsg("esc"))
	if c != nil {
		t.Fatal("esc while running returned a command (quit?)")
	}
	drain(t, m, cmd)
	if m.busy != nil || m.view.Stop.Reason != session.ReasonInterrupted {
		t.Fatalf("want an interrupted stop, got %v", m.view.Stop.Reason)
	}
}

func TestResize(t *testing.T) {
	m := newModel(t, 120, 40)
	send(t, m, tea.WindowSizeMsg{Width: 60, Height: 16})
	checkScreen(t, screen(m.View()), 60, 16)
}

// On a terminal narrower than the plan column's least width and the
// right column's, the two share it: both columns' boxes are whole on the
// screen (the right one was cut off beyond the terminal's edge).
func TestNarrowTerminal(t *testing.T) {
	m := newModel(t, 120, 40)
	for _, w := range []int{minWidth, 20, 24, 30, 35, 36, 40, 60} {
		send(t, m, tea.WindowSizeMsg{Width: w, Height: 12})
		got := screen(m.View())
		checkScreen(t, got, w, 12)
		lines := strings.Split(got, "\n")
		if l := lines[1]; ansi.StringWidth(l) != w || strings.Count(l, "┌") != 2 || !strings.HasSuffix(l, "┐") {
			t.Errorf("%d wide: line 1 is not the plan's and the state's box tops across the screen: %q", w, l)
		}
		if l := lines[m.rects[paneOutput].y]; ansi.StringWidth(l) != w || strings.Count(l, "┌") != 1 || !strings.HasSuffix(l, "┐") {
			t.Errorf("%d wide: the output's box top does not end at the screen's edge: %q", w, l)
		}
	}
}

// Below minWidth×minHeight the screen says the terminal is too small, in
// as many lines as the terminal has, none wider than it; back at a size
// it fits, the panes are there again.
func TestTinyTerminal(t *testing.T) {
	m := newModel(t, 120, 40)
	for _, sz := range [][2]int{{1, 1}, {5, 3}, {15, 40}, {40, 6}, {minWidth - 1, minHeight}, {minWidth, minHeight - 1}, {200, 2}} {
		w, h := sz[0], sz[1]
		send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
		got := screen(m.View())
		checkScreen(t, got, w, h)
		if first := strings.SplitN(got, "\n", 2)[0]; !strings.HasPrefix("streamdbg: terminal too small", strings.TrimSuffix(strings.TrimRight(first, " "), "…")) {
			t.Errorf("%dx%d: first line %q, want the too-small notice", w, h, first)
		}
		if h >= 2 && !strings.Contains(got, fmt.Sprint(w)) && w >= 10 {
			t.Errorf("%dx%d: the notice does not give the size:\n%s", w, h, got)
		}
	}
	send(t, m, tea.WindowSizeMsg{Width: minWidth, Height: minHeight})
	got := screen(m.View())
	checkScreen(t, got, minWidth, minHeight)
	if strings.Contains(got, "too small") || !strings.Contains(got, "┌") {
		t.Fatalf("at %dx%d: no panes:\n%s", minWidth, minHeight, got)
	}
}

// : in an overlay (here the error of a query) opens the command bar, the
// overlay closed: the next command is typed there, not lost in the
// overlay.
func TestCommandFromOverlay(t *testing.T) {
	m := newModel(t, 100, 30)
	press(t, m, "n", "n")
	command(t, m, "SELECT nope FROM count WHERE")
	if m.overlay == nil || !strings.Contains(screen(m.View()), "unexpected end of input") {
		t.Fatalf("no error overlay after a bad query:\n%s", screen(m.View()))
	}
	command(t, m, "SELECT key, value FROM count WHERE key = 'the'")
	got := screen(m.View())
	if !strings.Contains(got, "┌ Query · 1 row") || strings.Contains(got, "unexpected end of input") {
		t.Fatalf("the query typed at the error overlay did not run:\n%s", got)
	}
}

// The savepoint browser fits a narrow terminal as the debugger does (its
// entries box ran past the edge below 36 columns), and below its least
// size it says the terminal is too small.
func TestBrowserNarrowAndTiny(t *testing.T) {
	b, bm := newTestBrowser(t, ordersSavepoint(t))
	for _, w := range []int{minWidth, 24, 30, 36, 50} {
		b.SetSize(w, 20)
		got := screen(bm.View())
		checkScreen(t, got, w, 20)
		lines := strings.Split(got, "\n")
		metaH, _, _ := b.layout()
		if l := lines[1+metaH]; ansi.StringWidth(l) != w || strings.Count(l, "┌") != 2 || !strings.HasSuffix(l, "┐") {
			t.Errorf("%d wide: the states' and entries' box tops are not across the screen: %q", w, l)
		}
	}
	for _, sz := range [][2]int{{minWidth - 1, 30}, {80, browserMinHeight - 1}, {3, 2}} {
		b.SetSize(sz[0], sz[1])
		got := screen(bm.View())
		checkScreen(t, got, sz[0], sz[1])
		if sz[0] >= 10 && !strings.HasPrefix(got, "streamdbg: te") {
			t.Errorf("%dx%d: not the too-small notice:\n%s", sz[0], sz[1], got)
		}
	}
	b.SetSize(minWidth, browserMinHeight)
	checkScreen(t, screen(bm.View()), minWidth, browserMinHeight)
}

func TestChainParts(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"count", []string{"count"}},
		{"Source: lines -> tokenize", []string{"Source: lines ->", " tokenize"}},
		{"count -> (out, wrap late -> late)", []string{"count ->", " (out,", " wrap late ->", " late)"}},
	} {
		got := chainParts(c.name)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("chainParts(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	lines := layoutPlan([]planLine{{parts: []string{"▸ count ->", " (out,", " wrap late ->", " late)", "  ×2"}, cont: "    ", sub: -1},
		{parts: []string{"  [1] kg 64–127", "  wm 12:00:40.000", "  queued 0"}, cont: "      ", firstFit: true, sub: 1}}, 26)
	var got []string
	for _, l := range lines {
		got = append(got, l.text)
	}
	want := []string{"▸ count -> (out,", "    wrap late -> late)  ×2", "  [1] kg 64–127  queued 0", "      wm 12:00:40.000"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layoutPlan at 26:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if lines[3].sub != 1 {
		t.Error("a continuation line does not select its subtask")
	}
}

// Watches have their own place, sharing the output pane's: each query with
// its rows and what changed at the last stop; x deletes one, W switches.
func TestWatches(t *testing.T) {
	m := newModel(t, 80, 24)
	press(t, m, "n", "n", "n")
	press(t, m, "w")
	typeText(t, m, "key, value FROM keyed_state WHERE key = 'a' OR key = 'the'")
	press(t, m, "enter")
	if !m.showWatches || m.focus != paneOutput {
		t.Fatal("a new watch does not show the watches pane")
	}
	// Its rows show at once, before the next stop.
	contains(t, screen(m.View()), "#1 · 2 rows · SELECT key, value", "    key  value", "    a    4", "    the  2")
	press(t, m, "n")
	got := screen(m.View())
	contains(t, got, "#1 · 2 rows · +1 −1 · SELECT", "  + a    5", "  − a    4", "    the  2")
	if !strings.Contains(strings.Join(m.record.raw, "\n"), "watch #1 changed: +1 −1") {
		t.Fatalf("the record pane does not say the watch changed: %q", m.record.raw)
	}
	golden(t, "watches_80x24", got)

	command(t, m, "watch SELECT COUNT(*) AS n FROM keyed_state")
	contains(t, screen(m.View()), "#2 · 1 row · SELECT COUNT(*)") // not "1 rows"
	if len(m.watches.ids) != 2 || m.watches.sel != 1 {
		t.Fatalf("second watch: ids %v sel %d", m.watches.ids, m.watches.sel)
	}
	press(t, m, "g")
	if m.watches.sel != 0 {
		t.Fatal("g did not select the first watch")
	}
	press(t, m, "j", "x")
	if ws := m.s.Watches(); len(ws) != 1 || ws[0].ID != 1 {
		t.Fatalf("x did not delete watch #2: %v", m.watches.ids)
	}
	press(t, m, "W")
	if m.showWatches || !strings.Contains(screen(m.View()), "1 watch +1 −1 (W)") {
		t.Fatalf("W did not switch to the output:\n%s", screen(m.View()))
	}
	press(t, m, "l")
	if !m.showWatches {
		t.Fatal("→ on the output pane does not switch to the watches")
	}
	press(t, m, "x")
	if len(m.s.Watches()) != 0 {
		t.Fatal("x did not delete the last watch")
	}
	contains(t, screen(m.View()), "no watches: w adds one")
}

func TestFormatAttrs(t *testing.T) {
	for _, tc := range []struct {
		attrs []any
		want  string
	}{
		{nil, ""},
		{[]any{"values", 1}, "values=1"},
		{[]any{"window", "w1", "values", int64(3)}, "window=w1 values=3"},
		{[]any{"odd"}, "odd"},
	} {
		if got := formatAttrs(tc.attrs); got != tc.want {
			t.Errorf("formatAttrs(%v) = %q, want %q", tc.attrs, got, tc.want)
		}
	}
}

// TestBrowserUnknownFigures: a figure the reader does not know (the bytes
// of a changelog checkpoint's entries) shows as "-", never as a 0 that
// reads as empty; known ones show as they are.
func TestBrowserUnknownFigures(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "flink-savepoints", "datastream", "new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sample absent under CI: %v", err)
		}
		t.Skip("sample absent")
	}
	b, bm := newTestBrowser(t, dir)
	b.SetSize(160, 40)
	got := screen(bm.View())
	pane := got[:strings.Index(got, "Operators & states")] // the StateMeta pane only
	var source, replayed, timers int
	for _, l := range strings.Split(pane, "\n") {
		f := strings.Fields(strings.Trim(l, "│"))
		if len(f) < 4 {
			continue
		}
		last2 := strings.Join(f[len(f)-2:], " ")
		switch {
		case strings.Contains(l, "source-state") && strings.Contains(l, "union_list") && last2 == "4 94":
			source++ // operator state: entries and their bytes known
		case strings.Contains(l, " state-name ") && last2 == "4 -":
			replayed++ // replayed from the change log: entries, not bytes
		case strings.Contains(l, "_timer_state/") && last2 == "4 -":
			timers++
		}
	}
	if source != 1 || replayed != 2 || timers < 2 {
		t.Fatalf("StateMeta pane: source-state 4 94 ×%d (want 1), changelog value states 4 - ×%d (want 2), timers 4 - ×%d (want ≥ 2):\n%s", source, replayed, timers, pane)
	}
	if strings.Contains(pane, " 0    │") {
		t.Errorf("a figure shows as 0:\n%s", pane)
	}
}

// TestSearchSaysWhereItStopped: a search that reads searchLimit rows
// without a match says it stopped there and how to find a row anywhere,
// never a bare "no entry" about rows it did not read.
func TestSearchSaysWhereItStopped(t *testing.T) {
	b, _ := newTestBrowser(t, ordersSavepoint(t))
	b.SetSize(120, 40)
	b.focus = 1
	if len(b.entries.page) < 12 {
		t.Fatalf("the first state has %d entries, want ≥ 12", len(b.entries.page))
	}
	want := b.entries.page[10].cells[2] // the key of the 11th entry
	old := searchLimit
	t.Cleanup(func() { searchLimit = old })
	searchLimit = 5
	if got := browserFind(b, want, 1); got != fmt.Sprintf("no entry with %q in the first 5 entries (a search reads no more; f filters the whole table, e.g. key = '…')", want) {
		t.Fatalf("search past the limit: %q", got)
	}
	searchLimit = old
	if got := browserFind(b, want, 1); !strings.HasPrefix(got, fmt.Sprintf("%q: entry ", want)) {
		t.Fatalf("search within the limit: %q", got)
	}
	if got := browserFind(b, "no-such-text", 1); got != `no entry with "no-such-text"` {
		t.Fatalf("search of the whole table: %q", got)
	}
}

// browserFind searches the browser's entries, waiting for a search that
// went on in the background, and returns the status it left.
func browserFind(b *browser, text string, dir int) string {
	if cmd := b.find(text, dir); cmd != nil {
		b.Update(cmd())
	}
	return b.status
}

// TestBrowserFilterReadsPinnedKeyGroups: a filter that pins keys reads
// only their key groups (the browser answers key = 'key_662' on a large
// savepoint at once), with the same rows as reading everything.
func TestBrowserFilterReadsPinnedKeyGroups(t *testing.T) {
	b, _ := newTestBrowser(t, ordersSavepoint(t))
	b.SetSize(120, 40)
	for i, it := range b.items {
		if it.meta.Name == "total" {
			b.sel = i
		}
	}
	if b.items[b.sel].meta.Name != "total" {
		t.Fatal("no state total")
	}
	all := func() []pageRow {
		src := b.entries.src
		var out []pageRow
		for r, err := range src.rows(src.first(), src.last()) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	b.choose()
	every := all()
	if len(every) < 3 {
		t.Fatalf("total has %d entries", len(every))
	}
	k1, k2 := every[0].row.Key.(string), every[len(every)-1].row.Key.(string)
	for _, c := range []struct {
		filter string
		groups int // key groups read; -1: all (nothing pinned)
	}{
		{fmt.Sprintf("key = '%s'", k1), 1},
		{fmt.Sprintf("key IN ('%s', '%s')", k1, k2), len(slices.Compact([]int{every[0].kg, every[len(every)-1].kg}))},
		{fmt.Sprintf("key = '%s' AND value > 0", k2), 1},
		{fmt.Sprintf("key_group = %d", every[0].kg), 1},
		{fmt.Sprintf("key = '%s' AND key_group = %d", k1, every[0].kg), 1},
		{fmt.Sprintf("key = '%s' AND key_group = %d", k1, (every[0].kg+1)%128), 0},
		{"key = 'nosuchkey'", 1},
		{fmt.Sprintf("key = '%s' OR key = '%s'", k1, k2), -1}, // OR pins nothing
		{"value > 0", -1},
	} {
		f := c.filter
		cond, pins, err := compileFilterPins(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b.filter, b.cond, b.pins = f, cond, pins
		b.choose()
		got := all()
		src := b.entries.src.(*savepointKeyed)
		// The reference: every row, the filter applied to each.
		var want []pageRow
		for _, r := range every {
			if ok, err := passes(cond, r.row, keyedRow); err != nil {
				t.Fatal(err)
			} else if ok {
				want = append(want, r)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", f, len(got), len(want))
		}
		for i := range got {
			if got[i].kg != want[i].kg || strings.Join(got[i].cells, "|") != strings.Join(want[i].cells, "|") {
				t.Fatalf("%s: row %d = %v, want %v", f, i, got[i].cells, want[i].cells)
			}
		}
		switch {
		case c.groups < 0 && src.only != nil:
			t.Errorf("%s: reads only key groups %v, want all", f, src.only)
		case c.groups >= 0 && (src.only == nil || len(src.only) != c.groups):
			t.Errorf("%s: reads key groups %v (nil: all), want %d", f, src.only, c.groups)
		}
	}
}

// TestTypeAhead: keys typed while a command runs are kept and run after it,
// in order (n n n typed faster than each next runs is three nexts); an
// interrupt drops them, and so does a command that fails.
func TestTypeAhead(t *testing.T) {
	// runBusy starts n, then types keys while it is running (before its
	// command has run), then lets everything finish.
	runBusy := func(m *Model, keys ...string) {
		t.Helper()
		_, cmd := m.Update(keyMsg("n"))
		if m.busy == nil {
			t.Fatal("n did not start a background command")
		}
		for _, k := range keys {
			m.Update(keyMsg(k))
		}
		drain(t, m, cmd)
	}
	m := newModel(t, 120, 40)
	runBusy(m, "n", "n")
	if m.view.Position != 3 || len(m.ahead) != 0 {
		t.Fatalf("n with n n typed ahead: position %d, %d keys left, want 3 and 0", m.view.Position, len(m.ahead))
	}
	// Type-ahead keeps counts and other keys too: 5 N is next 5.
	runBusy(m, "5", "N")
	if m.view.Position != 9 {
		t.Fatalf("n with 5N typed ahead: position %d, want 9", m.view.Position)
	}

	// An interrupt drops what was typed ahead.
	m = newModel(t, 120, 40)
	_, cmd := m.Update(keyMsg("n"))
	m.Update(keyMsg("n"))
	m.Update(keyMsg("esc"))
	if len(m.ahead) != 0 {
		t.Fatalf("esc left %d keys queued", len(m.ahead))
	}
	drain(t, m, cmd)
	if m.view.Position > 1 { // the first n may have been interrupted too
		t.Fatalf("n, n, esc: position %d, want the queued n dropped", m.view.Position)
	}

	// A queue is bounded.
	m = newModel(t, 120, 40)
	_, cmd = m.Update(keyMsg("n"))
	for range maxAhead + 5 {
		m.Update(keyMsg("n"))
	}
	if len(m.ahead) != maxAhead || !strings.Contains(m.status, "dropped") {
		t.Fatalf("%d keys queued (status %q), want %d and a dropped key said", len(m.ahead), m.status, maxAhead)
	}
	drain(t, m, cmd)
	if m.view.Position != 1+maxAhead {
		t.Fatalf("position %d, want %d", m.view.Position, 1+maxAhead)
	}
}

// TestTypeAheadDroppedAfterAFailure: a job that fails drops the keys typed
// while it ran, and says so.
func TestTypeAheadDroppedAfterAFailure(t *testing.T) {
	m := New(newSession(t, "wordcount", runtime.Options{FailAt: 2}), Options{NoColor: true})
	m.SetSize(120, 40)
	press(t, m, "n")
	_, cmd := m.Update(keyMsg("n")) // reads record 2: the job fails there
	m.Update(keyMsg("n"))
	m.Update(keyMsg("n"))
	drain(t, m, cmd)
	if m.view.Stop.Failure == nil {
		t.Fatalf("no failure at record 2: %+v", m.view.Stop)
	}
	if len(m.ahead) != 0 || !strings.Contains(m.status, "2 keys typed meanwhile dropped") {
		t.Fatalf("after the failure: %d keys queued, status %q", len(m.ahead), m.status)
	}
}

// A line the prompt opens with for the user to take or change (the
// browser's query, the current filter) is replaced by the first character
// typed, and kept by an arrow key, backspace or enter. (Before: a query
// typed after ':' in the browser was appended to the offered one: "… LIMIT
// 100SELECT …", an error.)
func TestOfferedLineIsReplacedByTyping(t *testing.T) {
	b, bm := newTestBrowser(t, ordersSavepoint(t))
	b.SetSize(120, 40)
	press(t, bm, ":")
	offered := b.prompt.input.Value()
	if !strings.HasPrefix(offered, "SELECT ") || !strings.Contains(screen(bm.View()), "typing replaces this line") {
		t.Fatalf("':' offers %q, and the screen says:\n%s", offered, screen(bm.View()))
	}
	typeText(t, bm, "SELECT COUNT(*) AS n FROM keyed_state")
	if got := b.prompt.input.Value(); got != "SELECT COUNT(*) AS n FROM keyed_state" {
		t.Fatalf("typed over the offered query: %q", got)
	}
	press(t, bm, "enter")
	if tv, ok := b.overlay.(*tableView); !ok || len(tv.q.rows) != 1 {
		t.Fatalf("no query result in the browser: %T", b.overlay)
	}
	press(t, bm, "esc")

	// A name that no state has: the result says so above its rows.
	press(t, bm, ":")
	typeText(t, bm, "SELECT key FROM keyed_state WHERE operator_name = 'Sum'")
	press(t, bm, "enter")
	if got := screen(bm.View()); !strings.Contains(got, `note: no state has operator_name 'Sum'; did you mean "sum"?`) {
		t.Fatalf("no note in the result:\n%s", got)
	}
	press(t, bm, "esc")

	// An arrow first: the offered line is edited, not replaced.
	press(t, bm, ":", "end")
	typeText(t, bm, " OFFSET 1")
	if got := b.prompt.input.Value(); got != offered+" OFFSET 1" {
		t.Fatalf("edited the offered query: %q, want %q", got, offered+" OFFSET 1")
	}
	press(t, bm, "esc")

	// The filter: typing replaces the current one; backspace edits it.
	press(t, bm, "f")
	typeText(t, bm, "value > 0")
	press(t, bm, "enter")
	if b.filter != "value > 0" {
		t.Fatalf("filter %q", b.filter)
	}
	press(t, bm, "f")
	typeText(t, bm, "key = 'x'")
	if got := b.prompt.input.Value(); got != "key = 'x'" {
		t.Fatalf("typed over the filter: %q", got)
	}
	press(t, bm, "esc", "f")
	send(t, bm, tea.KeyPressMsg{Code: tea.KeyBackspace})
	if got := b.prompt.input.Value(); got != "value > " {
		t.Fatalf("backspace on the offered filter: %q, want %q", got, "value > ")
	}
	press(t, bm, "esc")

	// Completion candidates are in view, on the line below the prompt
	// (beside the full-width input they were cut off).
	press(t, bm, ":")
	typeText(t, bm, "SELECT * FROM keyed_state WHERE key_")
	press(t, bm, "tab")
	lines := strings.Split(strings.TrimRight(screen(bm.View()), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "key_group") || !strings.Contains(last, "key_type") {
		t.Fatalf("candidates of key_ not on the last line %q", last)
	}
	press(t, bm, "esc")
}

// TestCommandWithoutStopKeepsTheScreen: a command that does not stop the
// session (break, a query) leaves the plan's selection, the state pane's
// operator and the panes' scroll where the user put them; only a new stop
// goes to where it stopped. (Before: every command went back to the last
// step's subtask and scrolled the output to its end.)
func TestCommandWithoutStopKeepsTheScreen(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "N", "s") // next 100, then a step: the source reads a line
	if op, _ := m.state.operator(); op.Name != "Source: lines" {
		t.Fatalf("after s the state pane shows %s, not the source that stepped", op.Name)
	}
	m.focus = panePlan
	press(t, m, "G") // count[1]
	m.focus = paneOutput
	press(t, m, "g") // the output's first records
	before := screen(m.View())
	contains(t, before, "State · count ‹op 1/2› [1/2]", "┌ Output · ", " · 1–")
	command(t, m, "break at count when key = 'nosuch'")
	command(t, m, "SELECT COUNT(*) FROM keyed_state")
	press(t, m, "esc")
	got := screen(m.View())
	contains(t, got, "State · count ‹op 1/2› [1/2]")
	outTitle := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if i := strings.Index(l, "┌ Output"); i >= 0 {
				return l[i:]
			}
		}
		return ""
	}
	if outTitle(got) != outTitle(before) {
		t.Fatalf("the output pane moved: %q, was %q", outTitle(got), outTitle(before))
	}
	// A new stop goes where it stopped again.
	press(t, m, "s")
	contains(t, screen(m.View()), "State · tokenize ‹op 2/2› [0/1]")
}

// TestPromptLineFitsTheScreen: the bar's label, its text and the cursor
// fit the screen whatever the label (filter:, the browser's long diff
// label), so the end of a long line, where one types, shows (before: the
// line ran past the screen's edge by the label's width and was cut there,
// hiding the last characters typed).
func TestPromptLineFitsTheScreen(t *testing.T) {
	barLine := func(s string) string {
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		return lines[len(lines)-2]
	}
	long := "key LIKE 'w1999%' AND value > 0 AND value < 100 AND key != 'abc' AND key != 'XYZ'"
	m := newModel(t, 60, 20)
	command(t, m, "next 3")
	m.focus = paneState
	press(t, m, "f")
	typeText(t, m, long)
	got := screen(m.View())
	checkScreen(t, got, 60, 20)
	if l := barLine(got); !strings.Contains(l, "key != 'XYZ'") || strings.Contains(l, "…") {
		t.Fatalf("the filter bar hides the end of the line typed: %q", l)
	}

	b, bm := newTestBrowser(t, ordersSavepoint(t))
	b.SetSize(60, 20)
	press(t, bm, "d")
	typeText(t, bm, "/tmp/another/savepoint/dir")
	got = screen(bm.View())
	checkScreen(t, got, 60, 20)
	if l := barLine(got); !strings.Contains(l, " against: /tmp/another/savepoint/dir") {
		t.Fatalf("the diff bar: %q", l)
	}
}

// TestBrowserQueryOfTimerState: ':' on a timer state offers a query of the
// timers table, which has its timers (before: the "operator"."state"
// shorthand, which reads keyed and operator state only: 0 rows).
func TestBrowserQueryOfTimerState(t *testing.T) {
	s := newSession(t, "clicks", runtime.Options{})
	if _, err := s.Execute(t.Context(), "next 20"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if _, err := s.Execute(t.Context(), "savepoint "+dir); err != nil {
		t.Fatal(err)
	}
	b, bm := newTestBrowser(t, dir)
	b.SetSize(120, 40)
	found := false
	for i, it := range b.items {
		if it.meta.Kind == "timers" && it.gap == "" {
			b.sel, found = i, true
			break
		}
	}
	if !found {
		t.Fatal("no timer state in the clicks savepoint")
	}
	b.choose()
	entries := len(b.entries.page)
	if entries == 0 {
		t.Fatal("the timer state shows no entries")
	}
	press(t, bm, ":", "enter")
	tv, ok := b.overlay.(*tableView)
	if !ok {
		t.Fatalf("no query result: %T, status %q", b.overlay, b.status)
	}
	if len(tv.q.rows) != entries {
		t.Fatalf("the offered query %q has %d rows, the entries pane %d:\n%s", b.prompt.history["command"], len(tv.q.rows), entries, screen(bm.View()))
	}
}

// TestStartFromASavepoint: a session that starts from a savepoint says
// where it is and that n reads the next record (before: "n reads the first
// record", at record 8).
func TestStartFromASavepoint(t *testing.T) {
	s := newSession(t, "wordcount", runtime.Options{})
	if _, err := s.Execute(t.Context(), "next 8"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if _, err := s.Execute(t.Context(), "savepoint "+dir); err != nil {
		t.Fatal(err)
	}
	sp, err := savepoint.Open(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	m := New(newSessionOpts(t, "wordcount", session.Options{Restore: runtime.FromSavepoint(sp)}), Options{NoColor: true})
	m.SetSize(120, 40)
	got := screen(m.View())
	contains(t, got, "▶ at record 8: n reads record 9")
	if strings.Contains(got, "first record") {
		t.Fatalf("the screen says n reads the first record at record 8:\n%s", got)
	}
}

// TestSearchNextOnTheLastPage: . and , go from match to match in a list
// without a cursor (help) also where the matches are on its last page
// (before: the view, unable to scroll past the last page, stayed, and .
// found the same match again).
func TestSearchNextOnTheLastPage(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "?", "/")
	typeText(t, m, "restore")
	press(t, m, "enter")
	var got []string
	for _, k := range []string{"", ".", ".", ".", ","} {
		if k != "" {
			press(t, m, k)
		}
		got = append(got, strings.SplitN(m.status, " (", 2)[0])
	}
	want := []string{`"restore": match 1 of 3`, `"restore": match 2 of 3`, `"restore": match 3 of 3`, `"restore": match 1 of 3`, `"restore": match 3 of 3`}
	if !slices.Equal(got, want) {
		t.Fatalf("search, . . . ,: %q, want %q", got, want)
	}
	contains(t, screen(m.View()), `"restore": match 3 of 3`)
}

// TestCtrlCClosesTheBar: ctrl+c in the command bar drops the line and
// closes the bar, as esc does and a shell's prompt (before: it did
// nothing, and the bar stayed open).
func TestCtrlCClosesTheBar(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, ":")
	typeText(t, m, "next 5")
	press(t, m, "ctrl+c")
	got := screen(m.View())
	if m.prompt.active() || strings.Contains(got, ":next 5") {
		t.Fatalf("ctrl+c left the bar open:\n%s", got)
	}
	if m.view.Position != 0 {
		t.Fatalf("ctrl+c ran the line: at record %d", m.view.Position)
	}
}

// TestOutputTitleCountsRecords: the output pane's range counts records,
// also when long records wrap over several lines (before: "12 records ·
// 9–21 of 21", lines for records).
func TestOutputTitleCountsRecords(t *testing.T) {
	m := newJobModel(t, "clicks", 120, 40)
	command(t, m, "next 20")
	n := len(m.view.Outputs)
	if len(m.output.lines) <= len(m.output.raw) {
		t.Fatalf("no record wraps: %d lines for %d records", len(m.output.lines), n)
	}
	title := ""
	for _, l := range strings.Split(screen(m.View()), "\n") {
		if i := strings.Index(l, "┌ Output"); i >= 0 {
			title = l[i:]
		}
	}
	if !strings.Contains(title, fmt.Sprintf("–%d of %d ─", n, n)) {
		t.Fatalf("output title %q, want its range to end at record %d of %d", title, n, n)
	}
}

// gatedSource reads its rows only once gate is closed: a state that takes
// long to read.
type gatedSource struct {
	rowSource
	gate chan struct{}
}

func (s gatedSource) rows(from, to int) iter.Seq2[pageRow, error] {
	<-s.gate
	return s.rowSource.rows(from, to)
}

// TestBrowserReadsInTheBackground: a key whose reading takes longer than
// pageWait leaves the screen usable (it says what runs, esc stops it) and
// moves the entries when the reading is done; esc keeps them where they
// were. Before, the reading ran inside the key's Update: at 10M entries G
// with a filter froze the browser for 4.5 to 11 s (every key group read
// to count the matching entries), a filter that matched nothing for 4.6 s,
// with no way to stop it.
func TestBrowserReadsInTheBackground(t *testing.T) {
	old := pageWait
	t.Cleanup(func() { pageWait = old })
	pageWait = 5 * time.Millisecond
	b, bm := newTestBrowser(t, ordersSavepoint(t))
	b.SetSize(120, 40)
	b.focus = 1
	// The filter keeps every entry, so that the end is unknown: G counts.
	if cmd := b.submit(promptMsg{mode: "filter", line: "value IS NOT NULL"}); cmd != nil {
		b.Update(cmd())
	}
	if b.busy != nil || len(b.entries.page) == 0 || b.entries.index != 0 {
		t.Fatalf("after the filter: busy %v, %d rows from %d", b.busy != nil, len(b.entries.page), b.entries.index)
	}
	src := b.entries.src
	for _, interrupt := range []bool{false, true} {
		gate := make(chan struct{})
		var once sync.Once
		open := func() { once.Do(func() { close(gate) }) }
		// A browser that reads inside the key's Update (before) gets
		// its rows after a second, and fails below rather than hang.
		time.AfterFunc(time.Second, open)
		b.entries.src = gatedSource{src, gate}
		cmd := b.key(keyMsg("G"))
		if cmd == nil || b.busy == nil {
			t.Fatalf("G over a state that reads slowly: busy %v, command %v: want it in the background", b.busy != nil, cmd != nil)
		}
		if v := screen(bm.View()); !strings.Contains(v, "counting the entries that pass the filter… · esc stops") {
			t.Fatalf("while G reads, the screen does not say so:\n%s", v)
		}
		if c := b.key(keyMsg("g")); c != nil || b.entries.index != 0 {
			t.Fatalf("g while G reads: moved the entries to %d", b.entries.index)
		}
		if interrupt {
			b.key(keyMsg("esc"))
		}
		open()
		b.Update(cmd())
		if b.busy != nil {
			t.Fatal("still busy after the reading ended")
		}
		switch {
		case interrupt && (b.entries.index != 0 || !strings.Contains(b.status, "stopped")):
			t.Fatalf("esc: entries from %d, status %q: want them where they were and the status to say it stopped", b.entries.index, b.status)
		case !interrupt && (b.entries.index == 0 || b.entries.more || b.cur != len(b.entries.page)-1):
			t.Fatalf("G: entries from %d (more: %v), cursor %d: want the last page, the cursor on its last row", b.entries.index, b.entries.more, b.cur)
		}
		b.entries.src = src
		if !interrupt {
			b.key(keyMsg("g"))
		}
	}
}

// A query esc stopped says so in the status line, not as an error
// overlay reading "context canceled" (before).
func TestBrowserQueryStopped(t *testing.T) {
	b, _ := newTestBrowser(t, ordersSavepoint(t))
	b.SetSize(120, 40)
	cmd := b.runQuery("SELECT * FROM keyed_state")
	if b.busy == nil || cmd == nil {
		t.Fatal("the query does not run in the background")
	}
	b.key(keyMsg("esc"))
	b.Update(cmd())
	if b.overlay != nil || b.busy != nil || !strings.HasPrefix(b.status, "stopped (esc): SELECT") {
		t.Fatalf("after esc: overlay %v, busy %v, status %q", b.overlay != nil, b.busy != nil, b.status)
	}
}
