package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/runtime/session"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// Panes of the debug screen, in tab order.
const (
	panePlan = iota
	paneRecord
	paneState
	paneOutput
	paneCount
)

// Model is the debug screen's root model: it lays out the panes, routes
// messages to the focused one, and runs commands in the background.
type Model struct {
	s       *session.Session
	st      styles.Styles
	keys    keys.KeyMap
	help    help.Model
	noColor bool
	w, h    int

	snap   *snapshot
	plan   planPane
	record textPane
	state  statePane
	output textPane
	// watches shares the output pane's place: W switches between them.
	watches     watchPane
	showWatches bool
	// fresh are first results of watches added since the last stop.
	fresh map[int]*session.WatchResult
	focus int

	prompt     textinput.Model
	promptMode string // "", "command", "filter"
	overlay    *overlay
	bpList     bool // the overlay is the breakpoint list
	browser    *browser
	busy       *background
	count      string // a count typed before N
	selected   bool   // the first keyed subtask was selected
	status     string
	statusErr  bool
}

// background is a command running in a tea.Cmd goroutine; it owns the
// session until its doneMsg arrives.
type background struct {
	line     string
	cancel   context.CancelFunc
	progress *session.Progress
	started  time.Time
}

// doneMsg is a background command's result.
type doneMsg struct {
	line  string
	res   session.Result
	query *queryResult
	watch *session.WatchResult // a new watch's first rows
	err   error
}

// tickMsg refreshes the progress line while a command runs.
type tickMsg struct{}

// progressRate bounds how often a running command refreshes the screen.
const progressRate = 100 * time.Millisecond

func tick() tea.Cmd { return tea.Tick(progressRate, func(time.Time) tea.Msg { return tickMsg{} }) }

// New builds the debug screen over a session.
func New(s *session.Session, o Options) *Model {
	m := &Model{s: s, keys: keys.Default(), help: help.New(), noColor: o.noColor()}
	m.st = styles.New(true, m.noColor)
	m.plan = planPane{keys: &m.keys}
	m.record = textPane{keys: &m.keys, title: "Record", style: recordStyle, wrap: true}
	m.output = textPane{keys: &m.keys, title: "Output", tail: true, style: func(st *styles.Styles, l string) string { return st.Output.Render(l) }}
	m.state = statePane{keys: &m.keys}
	m.watches = watchPane{keys: &m.keys}
	m.prompt = textinput.New()
	m.focus = paneState
	m.refresh()
	m.SetSize(120, 40)
	return m
}

func recordStyle(st *styles.Styles, l string) string {
	switch {
	case strings.Contains(l, " ⇒ "):
		return st.Output.Render(l)
	case strings.Contains(l, " → "):
		return st.Emitted.Render(l)
	case strings.Contains(l, " ← "), strings.Contains(l, " = "):
		return st.Changed.Render(l)
	case strings.HasPrefix(l, "●"):
		return st.Header.Render(l)
	}
	return l
}

// refresh takes a snapshot of the session; it must only run while no
// command owns the session.
func (m *Model) refresh() {
	m.snap = takeSnapshot(m.s)
	m.plan.setLines(m.snap.plan, len(m.snap.subtasks))
	if !m.selected {
		m.selected = true
		// Start on the first subtask with keyed state.
		for i, ref := range m.snap.subtasks {
			if ref.operator != nil && ref.operator.Keyed {
				m.plan.sel = i
				break
			}
		}
	}
	lines := eventLines(m.snap.stop)
	if m.snap.failure != nil {
		lines = append(failureLines(m.snap.failure, nil), append([]string{""}, lines...)...)
	}
	m.record.setLines(lines)
	m.record.title = fmt.Sprintf("Record %d", m.snap.position)
	m.output.setLines(m.snap.outputs)
	views := watchViews(m.s.Watches(), m.snap.watches, m.fresh)
	m.watches.setWatches(views)
	m.output.title = "Output"
	if sum := m.watches.summary(views); sum != "" {
		m.output.title += " · " + sum + " (W)"
	}
	m.selectSubtask()
}

func (m *Model) selectSubtask() {
	if m.plan.sel < len(m.snap.subtasks) {
		m.state.setSource(m.s.Catalog(), m.snap.subtasks[m.plan.sel], m.snap.changes)
	}
}

// SetSize lays the panes out for a w×h terminal. Narrow terminals get a
// narrower plan column; short ones a smaller output pane.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	bodyH := max(4, h-3)
	leftW := max(26, min(46, w*35/100))
	rightW := max(10, w-leftW)
	planH := max(3, bodyH*55/100)
	stateH := max(3, bodyH*60/100)
	m.plan.SetSize(leftW, planH)
	m.record.SetSize(leftW, bodyH-planH)
	m.state.SetSize(rightW, stateH)
	m.output.SetSize(rightW, bodyH-stateH)
	m.watches.SetSize(rightW, bodyH-stateH)
	m.help.SetWidth(w)
	m.prompt.SetWidth(max(10, w-4))
	if m.overlay != nil {
		m.overlay.SetSize(w, bodyH)
	}
	if m.browser != nil {
		m.browser.SetSize(w, h)
	}
}

func (m *Model) Init() tea.Cmd { return tea.RequestBackgroundColor }

// Update routes: sizes to everyone, background results to the model, keys
// to the prompt, the overlay, the browser or the focused pane.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		return m, nil
	case tea.BackgroundColorMsg:
		m.st = styles.New(msg.IsDark(), m.noColor)
		return m, nil
	case tickMsg:
		if m.busy != nil {
			return m, tick()
		}
		return m, nil
	case doneMsg:
		return m, m.done(msg)
	case closeBrowserMsg:
		m.browser = nil
		return m, nil
	case unwatchMsg:
		return m, m.run(fmt.Sprintf("unwatch %d", msg.id))
	}
	if m.browser != nil {
		return m, m.browser.Update(msg)
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		return m, m.key(k)
	}
	if mm, ok := msg.(tea.MouseMsg); ok {
		m.mouse(mm)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case m.busy != nil:
		if key.Matches(k, m.keys.Interrupt) {
			m.busy.cancel()
			m.setStatus("interrupting…", false)
		}
		return nil
	case m.promptMode != "":
		return m.promptKey(k)
	case key.Matches(k, m.keys.Close):
		m.overlay, m.bpList, m.count = nil, false, ""
		return nil
	case m.overlay != nil && m.bpList && key.Matches(k, m.keys.Toggle, m.keys.Delete):
		return m.breakpointKey(k)
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	}
	if s := k.String(); len(s) == 1 && s[0] >= '0' && s[0] <= '9' && (m.count != "" || s != "0") {
		m.count += s
		return nil
	}
	count := m.count
	m.count = ""
	switch {
	case key.Matches(k, m.keys.Next):
		return m.run("next " + orDefault(count, "1"))
	case key.Matches(k, m.keys.NextMany):
		return m.run("next " + orDefault(count, "100"))
	case key.Matches(k, m.keys.Step):
		return m.run("step")
	case key.Matches(k, m.keys.Continue):
		return m.run("continue")
	case key.Matches(k, m.keys.Back):
		return m.run("back")
	case key.Matches(k, m.keys.Restart):
		return m.run("restart")
	case key.Matches(k, m.keys.Command):
		return m.openPrompt("command", "")
	case key.Matches(k, m.keys.Filter):
		return m.openPrompt("filter", m.state.filter)
	case key.Matches(k, m.keys.Break):
		return m.openPrompt("command", "break at ")
	case key.Matches(k, m.keys.Watch):
		return m.openPrompt("command", "watch SELECT ")
	case key.Matches(k, m.keys.Savepoint):
		return m.openPrompt("command", "savepoint ")
	case key.Matches(k, m.keys.Open):
		return m.openPrompt("command", "open ")
	case key.Matches(k, m.keys.Why):
		// Why the selected operator's earliest window or timer has not
		// fired (the first with timers when it has none).
		if op := m.state.ref.operator; op != nil && op.Keyed {
			return m.run("why at " + op.UID)
		}
		return m.run("why")
	case key.Matches(k, m.keys.Watches):
		m.overlay, m.bpList = nil, false
		m.showWatches = !m.showWatches
		if m.showWatches {
			m.focus = paneOutput
		}
	case key.Matches(k, m.keys.Breakpoints):
		m.showBreakpoints()
	case key.Matches(k, m.keys.Help):
		m.showHelp()
	case m.overlay != nil:
		m.overlay.Update(k)
	case key.Matches(k, m.keys.NextOp, m.keys.PrevOp):
		// The state pane shows the selected subtask's operator whichever
		// pane has the focus (the plan, usually, while choosing).
		m.state.Update(k)
	case key.Matches(k, m.keys.NextPane):
		m.focus = (m.focus + 1) % paneCount
	case key.Matches(k, m.keys.PrevPane):
		m.focus = (m.focus + paneCount - 1) % paneCount
	default:
		return m.toPane(m.focus, k)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// toPane hands a key or mouse message to a pane.
func (m *Model) toPane(p int, msg tea.Msg) tea.Cmd {
	switch p {
	case panePlan:
		if m.plan.Update(msg) {
			m.selectSubtask()
		}
	case paneRecord:
		m.record.Update(msg)
	case paneState:
		m.state.Update(msg)
	case paneOutput:
		if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, m.keys.NextTab, m.keys.PrevTab) && (m.showWatches || len(m.watches.ids) > 0) {
			m.showWatches = !m.showWatches
			return nil
		}
		if m.showWatches {
			return m.watches.Update(msg)
		}
		m.output.Update(msg)
	}
	return nil
}

// mouse focuses the pane under a click and scrolls the one under the wheel.
func (m *Model) mouse(msg tea.MouseMsg) {
	if m.busy != nil {
		return
	}
	if m.overlay != nil {
		m.overlay.Update(msg)
		return
	}
	mo := msg.Mouse()
	p := m.paneAt(mo.X, mo.Y)
	if p < 0 {
		return
	}
	switch msg.(type) {
	case tea.MouseClickMsg:
		m.focus = p
	case tea.MouseWheelMsg:
		_ = m.toPane(p, msg) // the wheel only scrolls
	}
}

func (m *Model) paneAt(x, y int) int {
	y-- // header
	if y < 0 || y >= m.h-3 {
		return -1
	}
	if x < m.plan.w {
		if y < m.plan.h {
			return panePlan
		}
		return paneRecord
	}
	if y < m.state.h {
		return paneState
	}
	return paneOutput
}

func (m *Model) setStatus(s string, isErr bool) { m.status, m.statusErr = s, isErr }

// run starts a command line in the background. The session belongs to
// the goroutine until doneMsg; the UI renders the snapshot meanwhile.
func (m *Model) run(line string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	p := &session.Progress{}
	ctx = session.WithProgress(ctx, p)
	m.busy = &background{line: line, cancel: cancel, progress: p, started: time.Now()}
	m.setStatus("", false)
	s := m.s
	return tea.Batch(func() tea.Msg {
		defer cancel()
		start := time.Now()
		res, err := s.Execute(ctx, line)
		d := doneMsg{line: line, res: res, err: err}
		if err == nil && res.Rows != nil {
			d.query, d.err = readRows(queryText(line), res.Rows, start)
		}
		if c, args, _ := session.ParseLine(line); err == nil && c.Name == "watch" && args != "" {
			d.watch = firstRun(ctx, s)
		}
		return d
	}, tick())
}

// queryText is the query of a command line, for the error caret.
func queryText(line string) string {
	c, args, err := session.ParseLine(line)
	if err != nil || c.Name != "query" {
		return ""
	}
	return args
}

// done takes a background command's result and the session back.
func (m *Model) done(d doneMsg) tea.Cmd {
	m.busy = nil
	if d.res.Stop != nil {
		m.fresh = nil // the stop ran every watch
	}
	if d.watch != nil {
		if m.fresh == nil {
			m.fresh = map[int]*session.WatchResult{}
		}
		m.fresh[d.watch.WatchID] = d.watch
		m.showWatches, m.focus = true, paneOutput
		m.watches.sel = len(m.s.Watches()) - 1
	}
	m.refresh()
	switch {
	case d.err != nil:
		if qt := queryText(d.line); qt != "" || strings.HasPrefix(d.line, "break") || strings.HasPrefix(d.line, "watch") {
			if qt == "" {
				_, qt, _ = session.ParseLine(d.line)
				qt = strings.TrimPrefix(strings.TrimPrefix(qt, "at "), "when ")
			}
			m.overlay = errorOverlay(&m.keys, qt, d.err)
			m.overlay.SetSize(m.w, m.h-3)
		}
		m.setStatus(d.err.Error(), true)
	case d.query != nil:
		m.overlay = queryOverlay(&m.keys, d.query)
		m.overlay.SetSize(m.w, m.h-3)
		m.setStatus(fmt.Sprintf("%s in %s", plural(int64(d.query.total), "row", "rows"), d.query.elapsed.Round(10*time.Microsecond)), false)
	case d.res.Open != "":
		b, err := openBrowser(d.res.Open, &m.st, &m.keys, true)
		if err != nil {
			m.setStatus(err.Error(), true)
			return nil
		}
		m.browser = b
		m.browser.SetSize(m.w, m.h)
	case d.res.Text != "":
		if strings.Contains(d.res.Text, "\n") {
			m.overlay = &overlay{keys: &m.keys, title: d.line, text: strings.Split(d.res.Text, "\n")}
			m.overlay.SetSize(m.w, m.h-3)
		} else {
			m.setStatus(d.res.Text, false)
		}
	case d.res.Stop != nil:
		m.setStatus(fmt.Sprintf("%s: %s", d.res.Stop.Reason, d.res.Stop.Message), d.res.Stop.Failure != nil)
	}
	if m.bpList {
		m.showBreakpoints()
	}
	return nil
}

func (m *Model) openPrompt(mode, value string) tea.Cmd {
	m.promptMode = mode
	m.prompt.Prompt = ":"
	if mode == "filter" {
		m.prompt.Prompt = "/"
	}
	m.prompt.SetValue(value)
	m.prompt.CursorEnd()
	return m.prompt.Focus()
}

func (m *Model) promptKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.promptMode = ""
		m.prompt.Blur()
		return nil
	case "enter":
		mode, line := m.promptMode, strings.TrimSpace(m.prompt.Value())
		m.promptMode = ""
		m.prompt.Blur()
		if mode == "filter" {
			if err := m.state.setFilter(line); err != nil {
				m.overlay = errorOverlay(&m.keys, line, err)
				m.overlay.SetSize(m.w, m.h-3)
				m.setStatus(err.Error(), true)
			} else {
				m.setStatus("", false)
			}
			return nil
		}
		if line == "" {
			return nil
		}
		if strings.EqualFold(line, "q") || strings.EqualFold(line, "quit") {
			return tea.Quit
		}
		m.overlay, m.bpList = nil, false
		return m.run(line)
	}
	var cmd tea.Cmd
	m.prompt, cmd = m.prompt.Update(k)
	return cmd
}

func (m *Model) showHelp() {
	// bubbles/help drops the columns that do not fit: a narrow terminal
	// gets them two by two.
	var lines []string
	groups := m.keys.FullHelp()
	unbounded := m.help
	unbounded.SetWidth(0)
	if full := unbounded.FullHelpView(groups); lipgloss.Width(full) <= m.w-2 {
		lines = strings.Split(full, "\n")
	} else {
		for i := 0; i < len(groups); i += 2 {
			if i > 0 {
				lines = append(lines, "")
			}
			lines = append(lines, strings.Split(m.help.FullHelpView(groups[i:min(i+2, len(groups))]), "\n")...)
		}
	}
	lines = append(lines, "", "Commands (type : then a command; a bare SELECT is a query):")
	lines = append(lines, strings.Split(strings.TrimRight(session.Help(""), "\n"), "\n")...)
	m.overlay, m.bpList = &overlay{keys: &m.keys, title: "Help · esc closes", text: lines}, false
	m.overlay.SetSize(m.w, m.h-3)
}

func (m *Model) showBreakpoints() {
	var lines []string
	for _, b := range m.snap.bps {
		on := "on "
		if !b.enabled {
			on = "off"
		}
		lines = append(lines, fmt.Sprintf("#%d  %s  hits %d  %s", b.id, on, b.hits, b.text))
	}
	sel := 0
	if m.overlay != nil && m.bpList {
		sel = min(m.overlay.sel, max(0, len(lines)-1))
	}
	if len(lines) == 0 {
		lines = []string{"no breakpoints: b sets one"}
	}
	m.overlay = &overlay{keys: &m.keys, title: "Breakpoints · space enable/disable · x delete · esc closes", text: lines, selectable: len(m.snap.bps) > 0, sel: sel}
	m.overlay.SetSize(m.w, m.h-3)
	m.bpList = true
}

func (m *Model) breakpointKey(k tea.KeyPressMsg) tea.Cmd {
	if len(m.snap.bps) == 0 {
		return nil
	}
	b := m.snap.bps[min(m.overlay.sel, len(m.snap.bps)-1)]
	id := strconv.Itoa(b.id)
	switch {
	case key.Matches(k, m.keys.Delete):
		return m.run("delete " + id)
	case b.enabled:
		return m.run("disable " + id)
	default:
		return m.run("enable " + id)
	}
}

// View draws the screen from the snapshot and the panes' pages only.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

func (m *Model) render() string {
	if m.browser != nil {
		return m.browser.render()
	}
	var b strings.Builder
	b.WriteString(fit(m.header(), m.w))
	b.WriteByte('\n')
	if m.overlay != nil {
		b.WriteString(m.overlay.View(&m.st))
	} else {
		left := m.plan.View(&m.st, m.focus == panePlan) + "\n" + m.record.View(&m.st, m.focus == paneRecord)
		bottom := m.output.View(&m.st, m.focus == paneOutput)
		if m.showWatches {
			bottom = m.watches.View(&m.st, m.focus == paneOutput)
		}
		right := m.state.View(&m.st, m.focus == paneState) + "\n" + bottom
		b.WriteString(joinColumns(left, right))
	}
	b.WriteByte('\n')
	b.WriteString(fit(m.statusLine(), m.w))
	b.WriteByte('\n')
	b.WriteString(fit(m.help.ShortHelpView(m.keys.ShortHelp()), m.w))
	return b.String()
}

// joinColumns puts two blocks of lines side by side.
func joinColumns(left, right string) string {
	l, r := strings.Split(left, "\n"), strings.Split(right, "\n")
	var b strings.Builder
	for i := 0; i < max(len(l), len(r)); i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(l) {
			b.WriteString(l[i])
		}
		if i < len(r) {
			b.WriteString(r[i])
		}
	}
	return b.String()
}

func (m *Model) header() string {
	sn := m.snap
	var state string
	switch {
	case m.busy != nil:
		state = m.st.HeaderState.Render("running: " + m.busy.line)
	case sn.failure != nil:
		state = m.st.Failed.Render("failed") + ": " + sn.why()
	default:
		state = m.st.HeaderState.Render(sn.runState()) + ": " + sn.why()
	}
	// Narrow terminals lose the backend, then processing time, before the
	// state of the run is cut.
	for drop := 0; ; drop++ {
		parts := []string{m.st.Header.Render("streamdbg"), sn.job, fmt.Sprintf("record %d", sn.position), "wm " + clock(sn.watermark)}
		if drop < 2 {
			parts = append(parts, "proc "+clock(sn.procTime))
		}
		if drop < 1 {
			parts = append(parts, sn.backend)
		}
		h := " " + strings.Join(append(parts, state), " · ")
		if drop == 2 || ansi.StringWidth(h) <= m.w {
			return h
		}
	}
}

func (m *Model) statusLine() string {
	switch {
	case m.promptMode != "":
		return m.prompt.View()
	case m.busy != nil:
		p := m.busy.progress
		return m.st.Status.Render(fmt.Sprintf(" %s · record %d · %d read · %.0f records/s · %s · esc/ctrl+c interrupts",
			m.busy.line, p.Position(), p.Records(), p.Rate(), time.Since(m.busy.started).Round(100*time.Millisecond)))
	case m.count != "":
		return " count " + m.count + " (n or N runs it)"
	case m.statusErr:
		return " " + m.st.Failed.Render(m.status)
	}
	return " " + m.st.Status.Render(m.status)
}

// errNoSession is returned by Run for a nil session.
var errNoSession = errors.New("tui: no session")
