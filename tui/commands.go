package tui

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/runtime/session"
)

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
	err   error
}

// tickMsg refreshes the progress line while a command runs.
type tickMsg struct{}

// progressRate bounds how often a running command refreshes the screen.
var progressRate = 100 * time.Millisecond

func tick() tea.Cmd { return tea.Tick(progressRate, func(time.Time) tea.Msg { return tickMsg{} }) }

// debuggerKey handles the debugger's own keys (those that work in every
// pane); ok is false for other keys.
func (m *Model) debuggerKey(k tea.KeyPressMsg, count string) (tea.Cmd, bool) {
	km := &m.keys
	switch {
	case key.Matches(k, km.Quit):
		return m.quit(), true
	case key.Matches(k, km.Next):
		return m.start("next " + orDefault(count, "1")), true
	case key.Matches(k, km.NextMany):
		return m.start("next " + orDefault(count, "100")), true
	case key.Matches(k, km.Step):
		return m.start("step"), true
	case key.Matches(k, km.StepInput1), key.Matches(k, km.StepInput2):
		input := "1"
		if key.Matches(k, km.StepInput2) {
			input = "2"
		}
		ref := m.state.ref
		if !ref.twoInputs || len(ref.operators) == 0 {
			m.setStatus("[ and ] step either input of a two-input operator: select one of its subtasks in the plan", true)
			return nil, true
		}
		return m.start(fmt.Sprintf("step %s %s[%d]", input, quoteAll([]string{ref.operators[0].UID})[0], ref.index)), true
	case key.Matches(k, km.Continue):
		return m.start("continue"), true
	case key.Matches(k, km.Back):
		return m.start("back"), true
	case key.Matches(k, km.Restart):
		return m.restart(), true
	case key.Matches(k, km.Command):
		return m.prompt.open("command", ""), true
	case key.Matches(k, km.Break):
		at := "break at "
		if op, ok := m.state.operator(); ok {
			at += quoteAll([]string{op.Name})[0] + " when "
		}
		return m.prompt.open("command", at), true
	case key.Matches(k, km.Watch):
		return m.prompt.open("command", "watch SELECT "), true
	case key.Matches(k, km.Savepoint):
		return m.prompt.open("command", "savepoint "), true
	case key.Matches(k, km.Open):
		return m.prompt.open("command", "open "), true
	case key.Matches(k, km.Why):
		// Why the shown operator's earliest window or timer has not fired
		// (the first operator with timers when it has none).
		if op, ok := m.state.operator(); ok && op.Keyed {
			return m.start("why at " + op.UID), true
		}
		return m.start("why"), true
	case key.Matches(k, km.Watches):
		m.showWatches = !m.showWatches
		if m.showWatches {
			m.focus = paneOutput
		}
		return nil, true
	case key.Matches(k, km.Breakpoints):
		m.showBreakpoints()
		return nil, true
	case key.Matches(k, km.Help):
		m.showHelp()
		return nil, true
	}
	return nil, false
}

// quit asks once before the breakpoints and watches of the session go.
func (m *Model) quit() tea.Cmd {
	nb, nw := len(m.view.Breakpoints), len(m.view.Watches)
	if nb+nw == 0 {
		return tea.Quit
	}
	var what []string
	if nb > 0 {
		what = append(what, plural(int64(nb), "breakpoint", "breakpoints"))
	}
	if nw > 0 {
		what = append(what, plural(int64(nw), "watch", "watches"))
	}
	verb := " go with it."
	if nb+nw == 1 {
		verb = " goes with it."
	}
	m.showOverlay(&confirm{keys: &m.keys, st: &m.st, yes: tea.Quit,
		question: []string{"Quit streamdbg? The session's " + strings.Join(what, " and ") + verb}})
	return nil
}

// restart asks before discarding what happened after the checkpoint.
func (m *Model) restart() tea.Cmd {
	cp := m.view.Checkpoint
	if m.view.Position <= cp.Position && m.view.Failure == nil {
		return m.start("restart")
	}
	q := fmt.Sprintf("Restart from checkpoint %d at record %d? The job goes back to that record:", cp.ID, cp.Position)
	lost := m.view.Position - cp.Position
	m.showOverlay(&confirm{keys: &m.keys, st: &m.st, yes: runLine("restart"),
		question: []string{q, fmt.Sprintf("what the %s after it did is undone (they are read again as you go on).", plural(lost, "record", "records"))}})
	return nil
}

// start runs a command line in the background. The session belongs to
// the goroutine until doneMsg; the UI renders the last view meanwhile.
func (m *Model) start(line string) tea.Cmd {
	if m.busy != nil {
		return status(line+" waits: "+m.busy.line+" is running", false)
	}
	if c, _, err := session.ParseLine(line); err == nil && !c.Runs && c.Name != "watch" && c.Name != "query" {
		// Commands that only set something (break, delete, enable, help)
		// run at once: a key typed right after them finds them done.
		res, err := m.s.Execute(context.Background(), line)
		return m.done(doneMsg{line: line, res: res, err: err})
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &session.Progress{}
	ctx = session.WithProgress(ctx, p)
	m.busy = &background{line: line, cancel: cancel, progress: p, started: time.Now()}
	m.state.frozen = true
	m.setStatus("", false)
	s := m.s
	return tea.Batch(func() (msg tea.Msg) {
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				msg = doneMsg{line: line, err: fmt.Errorf("internal error (a bug in streamdbg, please report it): %v\n%s", r, debug.Stack())}
			}
		}()
		start := time.Now()
		res, err := s.Execute(ctx, line)
		d := doneMsg{line: line, res: res, err: err}
		if err == nil && res.Rows != nil {
			d.query, d.err = readRows(queryText(line), res.Rows, start)
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

// done takes a background command's result and the session back, then
// runs the keys typed meanwhile, until one starts a command again. A
// command that failed (or a job that failed) drops them: what they meant
// to do no longer follows.
func (m *Model) done(d doneMsg) tea.Cmd {
	cmd := m.result(d)
	if len(m.ahead) == 0 {
		return cmd
	}
	if d.err != nil || m.view.Stop.Failure != nil {
		n := len(m.ahead)
		m.ahead = nil
		m.setStatus(m.status+fmt.Sprintf(" (%s typed meanwhile dropped)", plural(int64(n), "key", "keys")), true)
		return cmd
	}
	cmds := []tea.Cmd{cmd}
	for len(m.ahead) > 0 && m.busy == nil {
		k := m.ahead[0]
		m.ahead = m.ahead[1:]
		cmds = append(cmds, m.key(k))
	}
	return tea.Batch(cmds...)
}

// result takes a background command's result and the session back.
func (m *Model) result(d doneMsg) tea.Cmd {
	m.busy = nil
	m.state.frozen = false
	m.refresh(d.res.Stop != nil, d.line)
	c, args, _ := session.ParseLine(d.line)
	switch {
	case d.err != nil:
		m.showError(queryText(d.line), d.err)
	case d.query != nil:
		m.showOverlay(newTableView(&m.keys, &m.st, d.query))
		m.setStatus(fmt.Sprintf("%s in %s", plural(int64(d.query.total), "row", "rows"), d.query.elapsed.Round(10*time.Microsecond)), false)
	case d.res.Open != "":
		b, err := openBrowser(d.res.Open, &m.st, &m.keys, true)
		if err != nil {
			m.showError("", err)
			return nil
		}
		m.browser = b
		m.browser.SetSize(m.w, m.h)
	case d.res.Text != "":
		if strings.Contains(d.res.Text, "\n") {
			m.showOverlay(textOverlay(&m.keys, &m.st, d.line, strings.Split(d.res.Text, "\n")))
		} else {
			m.setStatus(d.res.Text, false)
		}
	case d.res.Stop != nil:
		st := m.view.Stop
		m.setStatus(fmt.Sprintf("%s: %s", st.Reason, st.Message), st.Failure != nil)
	}
	if d.err == nil && c.Name == "watch" && args != "" {
		// A new watch: its rows show at once.
		m.showWatches, m.focus = true, paneOutput
		m.watches.selectWatch(len(m.view.Watches) - 1)
	}
	if m.bpList {
		m.showBreakpoints()
	}
	return nil
}

// showError puts an error on the status line; one at a column (a query's,
// a condition's) or too long for the line opens in full with its caret.
func (m *Model) showError(text string, err error) {
	m.setStatus(oneLine(err.Error()), true)
	var le *session.LineError
	lines := errorLines(text, err)
	if errors.As(err, &le) || len(lines) > 1 || ansi.StringWidth(err.Error()) > m.w-2 {
		m.showOverlay(textOverlay(&m.keys, &m.st, "Error", append(lines, "", "esc closes")))
		m.overlay.(*textList).style = func(i int, l string) string { return m.st.Failed.Render(l) }
	}
}

// submit takes a line from the prompt.
func (m *Model) submit(p promptMsg) tea.Cmd {
	switch p.mode {
	case "search":
		target := m.pane(m.focus)
		if m.overlay != nil {
			target = m.overlay
		}
		if s, ok := target.(searcher); ok && p.line != "" {
			m.setStatus(s.search(p.line), false)
		}
		return nil
	case "filter":
		if err := m.state.setFilter(p.line); err != nil {
			m.showError(p.line, err)
			return nil
		}
		m.setStatus("", false)
		if p.line != "" {
			m.setStatus("state filtered by "+p.line+" (f then enter on an empty line clears it)", false)
		}
		return nil
	}
	line := p.line
	switch strings.ToLower(line) {
	case "":
		return nil
	case "q", "quit", "exit":
		return m.quit()
	}
	m.closeOverlay()
	return m.start(line)
}

// showBreakpoints opens (or refreshes) the breakpoint list.
func (m *Model) showBreakpoints() {
	var lines []string
	for _, b := range m.view.Breakpoints {
		on := "on "
		if !b.Enabled {
			on = "off"
		}
		lines = append(lines, fmt.Sprintf("#%d  %s  hits %d  %s", b.ID, on, b.Hits, b.Describe()))
	}
	cursor := 0
	if old, ok := m.overlay.(*bpOverlay); ok && m.bpList {
		cursor = old.list.cursor
	}
	if len(lines) == 0 {
		lines = []string{"no breakpoints: b sets one (break at OPERATOR when EXPR, break before OPERATOR …)"}
	}
	o := &bpOverlay{bps: m.view.Breakpoints,
		list: newTextList(&m.keys, &m.st, "Breakpoints · space enable/disable · x delete · esc closes")}
	o.list.setLines(lines, cursor)
	o.list.noCursor = len(m.view.Breakpoints) == 0
	m.showOverlay(o)
	m.bpList = true
}

// bpOverlay is the breakpoint list: space enables or disables the one
// under the cursor, x deletes it.
type bpOverlay struct {
	bps  []session.Breakpoint
	list *textList
}

func (o *bpOverlay) SetSize(w, h int)         { o.list.SetSize(w, h) }
func (o *bpOverlay) View(focused bool) string { return o.list.View(true) }
func (o *bpOverlay) KeyMap() []key.Binding {
	return append([]key.Binding{o.list.keys.Toggle, o.list.keys.Delete}, o.list.KeyMap()...)
}

func (o *bpOverlay) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || len(o.bps) == 0 {
		return o.list.Update(msg)
	}
	b := o.bps[min(o.list.cursor, len(o.bps)-1)]
	id := strconv.Itoa(b.ID)
	switch {
	case key.Matches(k, o.list.keys.Delete):
		return runLine("delete " + id)
	case key.Matches(k, o.list.keys.Toggle):
		if b.Enabled {
			return runLine("disable " + id)
		}
		return runLine("enable " + id)
	}
	return o.list.Update(msg)
}
