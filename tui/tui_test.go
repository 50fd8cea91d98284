package tui

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func newSession(t testing.TB, job string, o runtime.Options) *session.Session {
	t.Helper()
	j, err := fixtures.Build(job, fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	o.Trace = true
	s, err := session.New(j, session.Options{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newModel(t testing.TB, w, h int) *Model {
	m := New(newSession(t, "wordcount", runtime.Options{}), Options{NoColor: true})
	m.SetSize(w, h)
	return m
}

// press sends keys (one string per key, as tea names them) and runs the
// commands they return to completion, feeding their messages back.
func press(t testing.TB, m tea.Model, ks ...string) tea.Model {
	t.Helper()
	for _, k := range ks {
		m = send(t, m, keyMsg(k))
	}
	return m
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	}
	r := []rune(k)[0]
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + 'a' - 'A', Text: k, Mod: tea.ModShift}
	}
	return tea.KeyPressMsg{Code: r, Text: k}
}

// typeText sends each rune of s as a key press.
func typeText(t testing.TB, m tea.Model, s string) tea.Model {
	for _, r := range s {
		m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)}) // only cursor blinks come back
	}
	return m
}

func send(t testing.TB, m tea.Model, msg tea.Msg) tea.Model {
	t.Helper()
	m, cmd := m.Update(msg)
	return drain(t, m, cmd)
}

// drain runs a command and what follows from it, except quitting. A
// command that does not answer within 300ms is a timer (progress tick,
// cursor blink) and is dropped; background commands answer sooner here.
func drain(t testing.TB, m tea.Model, cmd tea.Cmd) tea.Model {
	if cmd == nil {
		return m
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(300 * time.Millisecond):
		return m
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			m = drain(t, m, c)
		}
	case tickMsg, nil, tea.QuitMsg:
	default:
		if !strings.HasPrefix(reflectType(msg), "tui.") && !strings.HasPrefix(reflectType(msg), "tea.") {
			return m // bubbles' own timers (cursor blink)
		}
		m2, next := m.Update(msg)
		m = drain(t, m2, next)
	}
	return m
}

var (
	durations = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	// A duration in a title changes the length of the border after it.
	titleRule = regexp.MustCompile(`T ─+`)
)

// screen is a view as a person sees it: no ANSI, durations masked.
func screen(v tea.View) string {
	s := ansi.Strip(v.Content)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(titleRule.ReplaceAllString(durations.ReplaceAllString(l, "T"), "T ─"), " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from %s (go test ./tui -update rewrites it):\n%s", name, path, got)
	}
}

func TestDebugScreenGolden(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		w, h := size[0], size[1]
		m := newModel(t, w, h)
		for range 8 {
			press(t, m, "n")
		}
		got := screen(m.View())
		if len(strings.Split(strings.TrimSuffix(got, "\n"), "\n")) != h {
			t.Errorf("%dx%d: view has %d lines", w, h, strings.Count(got, "\n"))
		}
		for _, l := range strings.Split(got, "\n") {
			if ansi.StringWidth(l) > w {
				t.Errorf("%dx%d: line wider than the terminal: %q", w, h, l)
			}
		}
		golden(t, "debug_"+sizeName(w, h), got)
	}
}

func sizeName(w, h int) string {
	return strings.ReplaceAll(strings.TrimSpace(strings.Join([]string{itoa(w), itoa(h)}, "x")), " ", "")
}

func TestQueryHelpErrorGolden(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n", "n", "n")
	press(t, m, ":")
	typeText(t, m, "SELECT key, value FROM keyed_state ORDER BY value DESC LIMIT 3")
	press(t, m, "enter")
	if m.overlay == nil || m.overlay.cols == nil || len(m.overlay.rows) != 3 {
		t.Fatalf("want a query overlay with 3 rows, got %+v", m.overlay)
	}
	golden(t, "query_120x40", screen(m.View()))
	press(t, m, "esc")
	if m.overlay != nil {
		t.Fatal("esc did not close the overlay")
	}
	press(t, m, "?")
	got := screen(m.View())
	if !strings.Contains(got, "quit") {
		t.Fatal("help does not mention quit")
	}
	golden(t, "help_120x40", got)
	press(t, m, "esc", ":")
	typeText(t, m, "SELECT vlaue FROM keyed_state")
	press(t, m, "enter")
	got = screen(m.View())
	if !strings.Contains(got, "         ^") || !strings.Contains(got, `did you mean "value"`) {
		t.Fatalf("want a caret under vlaue:\n%s", got)
	}
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
	for _, want := range []string{"filter", "KeyBy", "operator  filter"} {
		if !strings.Contains(got, want) {
			t.Errorf("failure screen lacks %q", want)
		}
	}
	golden(t, "failure_80x24", got)
	if _, cmd := m.Update(keyMsg("q")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit the failure screen")
	}
}

func TestBrowserGolden(t *testing.T) {
	s := newSession(t, "orders", runtime.Options{})
	if _, err := s.Execute(t.Context(), "next 200"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if _, err := s.Execute(t.Context(), "savepoint "+dir); err != nil {
		t.Fatal(err)
	}
	cat, err := openCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, k := styles.New(true, true), keys.Default()
	b := newBrowser(cat, "orders-200", &st, &k, false)
	bm := &browserModel{b: b, st: &st, noColor: true}
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		b.SetSize(size[0], size[1])
		golden(t, "browser_"+sizeName(size[0], size[1]), screen(bm.View()))
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
	typeText(t, bm, "x")
	bm.b.prompt.SetValue("SELECT COUNT(*) AS n FROM keyed_state")
	press(t, bm, "enter")
	if b.overlay == nil || len(b.overlay.rows) != 1 {
		t.Fatal("no query result in the browser")
	}
}

func TestKeys(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n")
	if m.snap.position != 1 {
		t.Fatalf("n: position %d", m.snap.position)
	}
	press(t, m, "3", "N")
	if m.snap.position != 4 {
		t.Fatalf("3N: position %d", m.snap.position)
	}
	press(t, m, "u") // back undoes the last command: 3N
	if m.snap.position != 1 {
		t.Fatalf("u: position %d", m.snap.position)
	}
	press(t, m, "s")
	if m.snap.stop == nil || m.snap.stop.Steps != 1 {
		t.Fatal("s: no single step")
	}
	// b opens the command bar with "break at "; the breakpoint stops continue.
	press(t, m, "b")
	if m.promptMode != "command" || m.prompt.Value() != "break at " {
		t.Fatalf("b: prompt %q %q", m.promptMode, m.prompt.Value())
	}
	typeText(t, m, "count when key = 'the'")
	press(t, m, "enter")
	if len(m.snap.bps) != 1 {
		t.Fatalf("no breakpoint: %s", m.status)
	}
	press(t, m, "c")
	if m.snap.stop.Reason != session.ReasonBreakpoint || !strings.Contains(screen(m.View()), "breakpoint #1") {
		t.Fatalf("c: %s", m.snap.stop.Reason)
	}
	// B lists breakpoints; space disables, x deletes.
	press(t, m, "B")
	if !m.bpList || !strings.Contains(screen(m.View()), "#1  on") {
		t.Fatal("B: no list")
	}
	press(t, m, " ")
	if m.snap.bps[0].enabled {
		t.Fatal("space did not disable")
	}
	press(t, m, "x")
	if len(m.snap.bps) != 0 {
		t.Fatal("x did not delete")
	}
	press(t, m, "esc")
	// The filter keeps only matching rows of the state table.
	press(t, m, "/")
	typeText(t, m, "key = 'the'")
	press(t, m, "enter")
	if len(m.state.pager.page) != 1 || m.state.pager.page[0].cells[1] != "the" {
		t.Fatalf("filter: %d rows", len(m.state.pager.page))
	}
	press(t, m, "/")
	m.prompt.SetValue("")
	press(t, m, "enter")
	if len(m.state.pager.page) < 2 {
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
	if stateTabs[m.state.tab] != "operator" {
		t.Fatal("→ did not switch tabs")
	}
	// q quits; ctrl+c quits when nothing runs.
	if _, cmd := m.Update(keyMsg("q")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit")
	}
	if _, cmd := m.Update(keyMsg("ctrl+c")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("ctrl+c does not quit")
	}
}

// A run in the background is interrupted by esc without quitting, and the
// UI does not touch the session meanwhile.
func TestInterrupt(t *testing.T) {
	m := newModel(t, 120, 40)
	_, cmd := m.Update(keyMsg("c"))
	if m.busy == nil {
		t.Fatal("c did not start a run")
	}
	if !strings.Contains(screen(m.View()), "running: continue") {
		t.Fatal("no running state in the header")
	}
	// Keys other than interrupt are ignored while running.
	if _, c := m.Update(keyMsg("n")); c != nil {
		t.Fatal("n started a second command while running")
	}
	_, c := m.Update(keyMsg("esc"))
	if c != nil {
		t.Fatal("esc while running returned a command (quit?)")
	}
	drain(t, m, cmd)
	if m.busy != nil || m.snap.stop.Reason != session.ReasonInterrupted {
		t.Fatalf("want an interrupted stop, got %v", m.snap.stop.Reason)
	}
}

func TestResize(t *testing.T) {
	m := newModel(t, 120, 40)
	send(t, m, tea.WindowSizeMsg{Width: 60, Height: 16})
	got := screen(m.View())
	if n := strings.Count(got, "\n"); n != 16 {
		t.Fatalf("60x16: %d lines", n)
	}
}

// < and > pick the operator of the selected chain: the source's operator
// state (its offsets) and the sink of count -> out become browsable.
func TestPickOperator(t *testing.T) {
	m := newModel(t, 120, 40)
	press(t, m, "n", "n")
	if op := m.state.ref.operator.Name; op != "count" {
		t.Fatalf("starts on %s, want count", op)
	}
	press(t, m, ">")
	if op := m.state.ref.operator.Name; op != "out" {
		t.Fatalf("> gave %s, want out", op)
	}
	if got := screen(m.View()); !strings.Contains(got, "State · out ‹op 2/2› [0/2]") {
		t.Fatalf("title does not show the operator:\n%s", got)
	}
	if stateTabs[m.state.tab] != "operator" {
		t.Fatalf("a keyless operator stays on the %s tab", stateTabs[m.state.tab])
	}
	press(t, m, "<")
	if op := m.state.ref.operator.Name; op != "count" {
		t.Fatalf("< gave %s, want count", op)
	}
	// The source task: its first operator holds the read offsets.
	m.focus = panePlan
	press(t, m, "g")
	if op := m.state.ref.operator.Name; op != "Source: lines" {
		t.Fatalf("plan top selects %s", op)
	}
	m.state.tab = 1
	m.state.rebuild(false)
	if len(m.state.pager.page) == 0 || m.state.pager.page[0].cells[0] != "offsets" {
		t.Fatalf("no source offsets: %+v", m.state.pager.page)
	}
	press(t, m, ">")
	if op := m.state.ref.operator.Name; op != "tokenize" {
		t.Fatalf("> in the source chain gave %s", op)
	}
	// The choice is kept per task while the selection moves.
	press(t, m, "j")
	press(t, m, "g")
	if op := m.state.ref.operator.Name; op != "tokenize" {
		t.Fatalf("choice lost: %s", op)
	}
	if got := screen(m.View()); !strings.Contains(got, "‹op 2/2›") {
		t.Fatal("title lacks the operator place")
	}
	m.showHelp()
	if !strings.Contains(screen(m.View()), "next operator") {
		t.Fatal("help lacks the operator keys")
	}
}

// / in the browser filters the chosen state's entries with an expression
// over the row's columns; a bad one shows the caret under its position.
func TestBrowserFilter(t *testing.T) {
	s := newSession(t, "orders", runtime.Options{})
	if _, err := s.Execute(t.Context(), "next 200"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if _, err := s.Execute(t.Context(), "savepoint "+dir); err != nil {
		t.Fatal(err)
	}
	cat, err := openCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, k := styles.New(true, true), keys.Default()
	b := newBrowser(cat, "orders-200", &st, &k, false)
	bm := &browserModel{b: b, st: &st, noColor: true}
	b.SetSize(80, 24)
	press(t, bm, "/")
	if b.promptMode != "filter" {
		t.Fatalf("/ opened %q", b.promptMode)
	}
	typeText(t, bm, "value >= 90 AND user_key LIKE 'p%'")
	press(t, bm, "enter")
	if b.filter == "" || len(b.entries.page) == 0 {
		t.Fatalf("filter gave no rows: %v", b.entries.err)
	}
	matches := func() {
		t.Helper()
		for _, r := range b.entries.page {
			if n, err := strconv.Atoi(r.cells[5]); err != nil || n < 90 {
				t.Fatalf("row %v does not match the filter", r.cells)
			}
		}
	}
	matches()
	if !b.entries.more {
		t.Fatal("want more than a page of matches")
	}
	got := screen(bm.View())
	if !strings.Contains(got, "filter: value >= 90") {
		t.Fatalf("no filter in the status:\n%s", got)
	}
	golden(t, "browser_filter_80x24", got)
	// Paging stays within the matching rows.
	press(t, bm, "pgdown")
	if b.entries.index == 0 {
		t.Fatal("pgdown did not move")
	}
	matches()
	// An error keeps the filter and shows a caret under the bad name.
	press(t, bm, "/")
	b.prompt.SetValue("vlaue > 3")
	press(t, bm, "enter")
	got = screen(bm.View())
	if b.overlay == nil || !strings.Contains(got, "│  vlaue > 3 ") || !strings.Contains(got, "│  ^ ") || !strings.Contains(got, `did you mean "value"`) {
		t.Fatalf("want a caret under vlaue:\n%s", got)
	}
	if b.filter != "value >= 90 AND user_key LIKE 'p%'" || len(b.entries.page) == 0 {
		t.Fatalf("a bad filter replaced the good one: %q", b.filter)
	}
	press(t, bm, "esc", "/")
	b.prompt.SetValue("")
	press(t, bm, "enter")
	if b.filter != "" || b.entries.page[0].cells[5] != "14" {
		t.Fatal("clearing the filter did not bring all rows back")
	}
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
	got := screen(m.View())
	// Its rows show at once, before the next stop.
	for _, want := range []string{"#1 · 2 rows · SELECT key, value", "    key  value", "    a    4", "    the  2"} {
		if !strings.Contains(got, want) {
			t.Fatalf("watches pane lacks %q:\n%s", want, got)
		}
	}
	press(t, m, "n")
	got = screen(m.View())
	for _, want := range []string{"#1 · 2 rows · +1 −1 · SELECT", "  + a    5", "  − a    4", "    the  2"} {
		if !strings.Contains(got, want) {
			t.Fatalf("after n the watches pane lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(strings.Join(m.record.raw, "\n"), "watch #1 changed: +1 −1") {
		t.Fatalf("the record pane does not say the watch changed: %q", m.record.raw)
	}
	golden(t, "watches_80x24", got)

	// A second watch; j selects it, x deletes it (unwatch 2).
	press(t, m, ":")
	typeText(t, m, "watch SELECT COUNT(*) AS n FROM keyed_state")
	press(t, m, "enter")
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
	for _, l := range m.watches.lines {
		if strings.HasPrefix(l.text, "#2") {
			t.Fatal("the deleted watch still shows")
		}
	}
	// W goes back to the output, whose title keeps the watches in view.
	press(t, m, "W")
	got = screen(m.View())
	if m.showWatches || !strings.Contains(got, "Output · 1 watch +1 −1 (W)") {
		t.Fatalf("W did not switch to the output:\n%s", got)
	}
	press(t, m, "l")
	if !m.showWatches {
		t.Fatal("→ on the output pane does not switch to the watches")
	}
	press(t, m, "x")
	if len(m.s.Watches()) != 0 {
		t.Fatal("x did not delete the last watch")
	}
	if got := screen(m.View()); !strings.Contains(got, "no watches: w adds one") {
		t.Fatalf("no empty watches pane:\n%s", got)
	}
	m.showHelp()
	if !strings.Contains(screen(m.View()), "watches/output") {
		t.Fatal("help lacks W")
	}
}

// At 80 columns help keeps every column of keys (two by two), quit included.
func TestHelpNarrow(t *testing.T) {
	m := newModel(t, 80, 24)
	press(t, m, "?")
	for _, want := range []string{"quit", "next operator", "watches/output", "top"} {
		found := false
		for _, l := range m.overlay.text {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("80-column help lacks %q", want)
		}
	}
	golden(t, "help_80x24", screen(m.View()))
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
