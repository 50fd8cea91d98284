package tui

import (
	"fmt"
	"runtime/debug"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/internal/numfmt"
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

var paneNames = [paneCount]string{"Plan", "Record", "State", "Output"}

// Model is the debug screen's root model: it lays the panes out, routes
// keys to the prompt, the overlay or the focused pane, and runs commands
// in the background. It is the only part of the screen that calls the
// session, and only while no command runs.
type Model struct {
	s       *session.Session
	st      styles.Styles
	keys    keys.KeyMap
	help    help.Model
	noColor bool
	w, h    int
	rects   [paneCount]rect

	view    *session.View
	plan    *planPane
	record  *textList
	state   *statePane
	output  *textList
	watches *watchPane
	// showWatches: the watches take the output pane's place (W).
	showWatches bool
	focus       int
	selected    bool // the first subtask was chosen
	events      []int

	prompt  *prompt
	overlay component
	// overlayFocus is the pane that had the focus when the overlay opened.
	overlayFocus int
	bpList       bool // the overlay is the breakpoint list
	browser      *browser
	busy         *background
	ahead        []tea.KeyPressMsg // keys typed while busy, run after it (type-ahead)
	count        string            // a count typed before N
	status       string
	statusErr    bool
	// panics counts panics recovered in Update (a bug: tests assert none);
	// lastPanic is the last one with its stack.
	panics    int
	lastPanic string
}

// rect is where a pane is on the screen.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool { return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h }

// New builds the debug screen over a session.
func New(s *session.Session, o Options) *Model {
	m := &Model{s: s, keys: keys.Default(), help: help.New(), noColor: o.noColor(), focus: paneState}
	m.st = styles.New(true, m.noColor)
	m.plan = &planPane{keys: &m.keys, st: &m.st}
	m.record = newTextList(&m.keys, &m.st, "Record")
	m.record.style = func(i int, l string) string { return recordStyle(&m.st, l) }
	m.record.onEnter = m.recordDetail
	m.output = newTextList(&m.keys, &m.st, "Output")
	m.output.tail, m.output.wrap = true, true
	m.output.style = func(i int, l string) string { return m.st.Output.Render(l) }
	m.output.onEnter = m.outputDetail
	m.state = &statePane{keys: &m.keys, st: &m.st}
	m.watches = &watchPane{keys: &m.keys, st: &m.st}
	m.prompt = newPrompt()
	m.SetSize(120, 40)
	m.refresh(true, "")
	return m
}

func (m *Model) Init() tea.Cmd { return tea.RequestBackgroundColor }

// pane is the component in a pane's place.
func (m *Model) pane(p int) component {
	switch p {
	case panePlan:
		return m.plan
	case paneRecord:
		return m.record
	case paneState:
		return m.state
	}
	if m.showWatches {
		return m.watches
	}
	return m.output
}

// Update routes: sizes to every pane, results of background commands and
// of components to the root, keys to the prompt, the overlay, the browser
// or the focused pane. A panic is a bug: it is recovered and shown.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer m.recoverPanic(&cmd)
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
	case statusMsg:
		m.setStatus(msg.text, msg.err)
		return m, nil
	case runMsg:
		return m, m.start(msg.line)
	case detailMsg:
		m.openDetail(msg.d)
		return m, nil
	case closeMsg:
		m.closeOverlay()
		return m, nil
	case promptMsg:
		return m, m.submit(msg)
	case closeBrowserMsg:
		m.browser = nil
		return m, nil
	}
	if m.browser != nil {
		return m, m.browser.Update(msg)
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.MouseMsg:
		return m, m.mouse(msg)
	}
	return m, nil
}

// maxAhead bounds the keys typed ahead while a command runs.
const maxAhead = 32

// key handles a key press: a running command takes interrupts and queues
// the other keys (type-ahead, run when it is done), the
// prompt and overlays come first, then the debugger's keys, then the
// focused pane's.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case m.busy != nil:
		switch {
		case key.Matches(k, m.keys.Interrupt):
			m.busy.cancel()
			m.ahead = nil
			m.setStatus("interrupting…", false)
		case len(m.ahead) < maxAhead:
			// Type-ahead, as a terminal keeps it: n n n typed faster than
			// each next runs is three nexts.
			m.ahead = append(m.ahead, k)
			m.setStatus(fmt.Sprintf("%s queued: %s is running (esc or ctrl+c interrupts it and drops them)", plural(int64(len(m.ahead)), "key", "keys"), m.busy.line), false)
		default:
			m.setStatus(fmt.Sprintf("%q dropped: %d keys are queued while %s runs (esc or ctrl+c interrupts it)", k.String(), maxAhead, m.busy.line), false)
		}
		return nil
	case m.prompt.active():
		cmd, line := m.prompt.Update(k)
		if line != nil {
			return m.submit(*line)
		}
		return cmd
	case m.overlay != nil:
		return m.settle(m.overlayKey(k))
	}
	if s := k.String(); len(s) == 1 && s[0] >= '0' && s[0] <= '9' && (m.count != "" || s != "0") {
		m.count += s
		return nil
	}
	count := m.count
	m.count = ""
	if cmd, ok := m.debuggerKey(k, count); ok {
		return cmd
	}
	switch {
	case key.Matches(k, m.keys.NextPane):
		m.focus = (m.focus + 1) % paneCount
	case key.Matches(k, m.keys.PrevPane):
		m.focus = (m.focus + paneCount - 1) % paneCount
	case key.Matches(k, m.keys.NextOp, m.keys.PrevOp):
		// The state pane shows the selected subtask's operator whichever
		// pane has the focus (the plan, usually, while choosing).
		return m.settle(m.state.Update(k))
	case key.Matches(k, m.keys.Search):
		if _, ok := m.pane(m.focus).(searcher); ok {
			return m.prompt.open("search", "")
		}
		return status("the "+paneNames[m.focus]+" pane has no search", false)
	case key.Matches(k, m.keys.Filter) && m.focus == paneState:
		return m.prompt.offer("filter", m.state.filter)
	case m.focus == paneOutput && key.Matches(k, m.keys.NextTab, m.keys.PrevTab):
		m.showWatches = !m.showWatches
	case key.Matches(k, m.keys.Close):
		m.setStatus("", false)
	default:
		return m.toPane(m.focus, k)
	}
	return nil
}

// toPane hands a message to a pane; the plan's selection picks the state
// pane's subtask.
func (m *Model) toPane(p int, msg tea.Msg) tea.Cmd {
	before := m.plan.sel
	cmd := m.pane(p).Update(msg)
	if p == panePlan && m.plan.sel != before {
		m.selectSubtask()
	}
	return m.settle(cmd)
}

// settle handles at once the messages a component's command carries.
func (m *Model) settle(cmd tea.Cmd) tea.Cmd {
	return settle(cmd, func(msg tea.Msg) tea.Cmd {
		_, next := m.Update(msg)
		return next
	})
}

// overlayKey handles a key while an overlay is open: esc and q close it
// (a question answers itself), / searches it, ? shows its keys, : closes
// it for the command bar.
func (m *Model) overlayKey(k tea.KeyPressMsg) tea.Cmd {
	if _, isQuestion := m.overlay.(*confirm); isQuestion {
		return m.overlay.Update(k)
	}
	switch {
	case key.Matches(k, m.keys.Close):
		m.closeOverlay()
		return nil
	case key.Matches(k, m.keys.Search):
		if _, ok := m.overlay.(searcher); ok {
			return m.prompt.open("search", "")
		}
	case key.Matches(k, m.keys.Help):
		m.showHelp()
		return nil
	case key.Matches(k, m.keys.Command):
		// The next command (after an error, say) without closing this
		// first: what was typed into an overlay was lost.
		m.closeOverlay()
		return m.prompt.open("command", "")
	}
	return m.overlay.Update(k)
}

func (m *Model) closeOverlay() {
	m.overlay, m.bpList = nil, false
}

// mouse focuses the pane under a click (and selects the row under it) and
// scrolls the one under the wheel.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	if m.busy != nil || m.prompt.active() {
		return nil
	}
	mo := msg.Mouse()
	if m.overlay != nil {
		r := rect{0, 1, m.w, m.h - 3}
		return m.settle(m.overlay.Update(pointer(msg, mo.X-r.x, mo.Y-r.y)))
	}
	for p, r := range m.rects {
		if r.contains(mo.X, mo.Y) {
			ev := pointer(msg, mo.X-r.x, mo.Y-r.y)
			if ev == nil {
				return nil
			}
			if _, ok := ev.(clickMsg); ok {
				m.focus = p
			}
			return m.toPane(p, ev)
		}
	}
	return nil
}

// pointer turns a mouse message into a component's click or wheel at
// (x, y) of the component.
func pointer(msg tea.MouseMsg, x, y int) tea.Msg {
	switch msg := msg.(type) {
	case tea.MouseClickMsg:
		if msg.Button == tea.MouseLeft {
			return clickMsg{x: x, y: y}
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			return wheelMsg{up: true}
		case tea.MouseWheelDown:
			return wheelMsg{}
		}
	}
	return nil
}

func (m *Model) setStatus(s string, isErr bool) { m.status, m.statusErr = s, isErr }

// refresh takes a view of the session and hands it to the panes; it runs
// only while no command owns the session. stopped says the session
// stopped anew: the screen goes to where it stopped (follow), the record
// pane to the stop's events and the output to its end. After a command
// that did not stop (break, watch, a query) the panes stay where the user
// put them.
func (m *Model) refresh(stopped bool, line string) {
	m.view = m.s.View()
	v := m.view
	m.plan.setTasks(v.Tasks)
	if !m.selected {
		m.selected = true
		// Start on the first subtask with keyed state.
	pick:
		for i, ref := range m.plan.subs {
			for _, op := range ref.operators {
				if op.Keyed {
					m.plan.sel = i
					break pick
				}
			}
		}
	}
	if stopped {
		m.follow(v, line)
	}
	rv := describeStop(v)
	m.record.pinned = []string{rv.pinned}
	m.record.title = fmt.Sprintf("Record %d", v.Position)
	if v.Stop != nil && v.Stop.Records > 1 {
		m.record.title += fmt.Sprintf(" · %s read", numfmt.Commas(v.Stop.Records))
	}
	if stopped {
		m.record.setLines(rv.lines, rv.focus)
		m.record.offset = min(rv.start, m.record.lineOf(rv.focus))
		m.record.clamp()
	} else {
		m.record.keepLines(rv.lines)
	}
	m.events = rv.events
	lines := make([]string, len(v.Outputs))
	for i, o := range v.Outputs {
		lines[i] = fmt.Sprintf("#%d %s[%d] %s", o.Seq, o.Sink, o.Subtask, showRecord(o.Value))
	}
	if stopped {
		m.output.setLines(lines, -1)
	} else {
		m.output.keepLines(lines)
	}
	m.output.title = "Output · " + plural(v.OutputTotal, "record", "records")
	if int64(len(v.Outputs)) < v.OutputTotal {
		m.output.title += fmt.Sprintf(" · the last %s kept", numfmt.Commas(int64(len(v.Outputs))))
	}
	if sum := watchSummary(v.Watches); sum != "" {
		m.output.title += " · " + sum + " (W)"
	}
	m.watches.setWatches(v.Watches)
	m.prompt.vocab = vocabularyOf(v.Tasks)
	if stopped {
		m.state.invalidate(v.Stop)
	}
	if st := v.Stop; st != nil && (st.Reason == session.ReasonBreakpoint || st.Reason == session.ReasonStep) && st.Last.Key != nil {
		m.state.setPin(st.Last.Key, true)
	} else {
		m.state.setPin(nil, false)
	}
	m.selectSubtask()
}

// follow selects where execution stopped, as a debugger switches to the
// thread that hit a breakpoint: after a breakpoint, a step or a failure the
// plan selects that subtask and the state pane shows that operator. A step
// of a two-input operator's input (line: step INPUT OP[i], what [ and ]
// run) that read the source feeding it stays on the operator's subtask,
// where the next [ or ] goes on.
func (m *Model) follow(v *session.View, line string) {
	st := v.Stop
	if st == nil {
		return
	}
	task, sub, op := st.Last.Task, st.Last.Subtask, st.Last.Operator
	switch {
	case v.Failure != nil:
		task, sub, op = v.Failure.Task, v.Failure.Subtask, v.Failure.Operator
	case st.Reason != session.ReasonBreakpoint && st.Reason != session.ReasonStep:
		return
	case st.Reason == session.ReasonStep && st.Last.Kind == "source" && stepsInput(line):
		return
	}
	for i, ref := range m.plan.subs {
		if ref.task != task || ref.index != sub {
			continue
		}
		m.plan.sel = i
		for _, o := range ref.operators {
			if o.Name == op {
				if m.state.chosen == nil {
					m.state.chosen = map[string]string{}
				}
				m.state.chosen[task] = o.ID
			}
		}
		return
	}
}

// stepsInput says a command line steps into one input of a two-input
// operator (step 1 …, step 2 …).
func stepsInput(line string) bool {
	c, args, err := session.ParseLine(line)
	return err == nil && c.Name == "step" && strings.TrimSpace(args) != ""
}

func (m *Model) selectSubtask() {
	ref, ok := m.plan.selected()
	if !ok {
		return
	}
	var changes map[session.EntryID]session.Change
	dropped := 0
	if st := m.view.Stop; st != nil {
		changes, dropped = st.Changes, st.ChangesDropped
	}
	m.state.setSource(m.s.State(), ref, changes, dropped)
}

// recordDetail opens the event of a record pane line.
func (m *Model) recordDetail(i int) tea.Cmd {
	if i >= len(m.events) || m.events[i] < 0 || m.view.Stop == nil {
		return status("this line is no event: enter on an event shows it in full", false)
	}
	return showDetail(eventDetail(m.view.Stop.Events[m.events[i]]))
}

// outputDetail opens a sink record in full.
func (m *Model) outputDetail(i int) tea.Cmd {
	if i >= len(m.view.Outputs) {
		return nil
	}
	o := m.view.Outputs[i]
	return showDetail(detail{title: fmt.Sprintf("output #%d · %s[%d]", o.Seq, o.Sink, o.Subtask),
		fields: [][2]string{{"sink", o.Sink}, {"subtask", fmt.Sprint(o.Subtask)}, {"record", fmt.Sprintf("#%d of the sinks' output", o.Seq)},
			{"source position", fmt.Sprintf("written while record %d ran", o.Position)}},
		value: o.Value, hasValue: true})
}

// openDetail shows a detail over the body, with the entry's history.
func (m *Model) openDetail(d detail) {
	var revs []session.Revision
	forgotten := 0
	if d.entry != nil && m.busy == nil {
		revs, forgotten = m.s.History(*d.entry)
		d.forgottenEntries = m.s.HistoryForgotten()
	}
	m.showOverlay(textOverlay(&m.keys, &m.st, "Details · "+d.title, d.lines(revs, forgotten)))
}

func (m *Model) showOverlay(c component) {
	if m.overlay == nil {
		m.overlayFocus = m.focus
	}
	m.overlay, m.bpList = c, false
	c.SetSize(m.w, m.bodyHeight())
}

// recoverPanic turns a panic in Update into an error on the screen: the
// session stays usable and the user sees what happened.
func (m *Model) recoverPanic(cmd *tea.Cmd) {
	r := recover()
	if r == nil {
		return
	}
	m.panics++
	m.lastPanic = fmt.Sprintf("%v\n%s", r, debug.Stack())
	m.busy, m.state.frozen = nil, false
	m.prompt.close()
	msg := fmt.Sprintf("internal error (a bug in streamdbg, please report it): %v", r)
	m.showOverlay(textOverlay(&m.keys, &m.st, "Internal error", append([]string{msg, ""}, strings.Split(m.lastPanic, "\n")...)))
	m.setStatus(msg, true)
	*cmd = nil
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
