package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/internal/numfmt"
	"streamdbg/runtime/session"
)

func (m *Model) bodyHeight() int { return max(4, m.h-3) }

// SetSize lays the panes out for a w×h terminal: the plan and the record
// on the left, the state and the output on the right. Narrow terminals
// get a narrower plan column (half the width below 36 columns); short ones
// a smaller output pane.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	bodyH := m.bodyHeight()
	leftW := max(26, min(46, w*35/100))
	if w-leftW < 10 {
		// Narrower than the two columns at their least (26 and 10): they
		// share it, so that no line is wider than the terminal.
		leftW = w / 2
	}
	rightW := w - leftW
	planH := max(3, bodyH*45/100)
	stateH := max(3, bodyH*60/100)
	m.rects = [paneCount]rect{
		panePlan:   {0, 1, leftW, planH},
		paneRecord: {0, 1 + planH, leftW, bodyH - planH},
		paneState:  {leftW, 1, rightW, stateH},
		paneOutput: {leftW, 1 + stateH, rightW, bodyH - stateH},
	}
	m.plan.SetSize(leftW, planH)
	m.record.SetSize(leftW, bodyH-planH)
	m.state.SetSize(rightW, stateH)
	m.output.SetSize(rightW, bodyH-stateH)
	m.watches.SetSize(rightW, bodyH-stateH)
	m.help.SetWidth(w)
	m.prompt.SetWidth(w)
	if m.overlay != nil {
		m.overlay.SetSize(w, bodyH)
	}
	if m.browser != nil {
		m.browser.SetSize(w, h)
	}
}

// View draws the screen from the last view and the panes' pages only.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// The least terminal the screen is laid out for (at 8 lines every pane
// still has its box, if only its borders): below it, render says so (the
// boxes would not fit, and their lines would run past the terminal's edge
// or bottom). The keys work as ever (ctrl+c quits).
const minWidth, minHeight = 16, 8

func (m *Model) render() string {
	if m.browser != nil {
		return m.browser.render() // its own least size
	}
	if m.w < minWidth || m.h < minHeight {
		return tooSmallFor(m.w, m.h, minWidth, minHeight)
	}
	var b strings.Builder
	b.WriteString(fit(m.header(), m.w))
	b.WriteByte('\n')
	if m.overlay != nil {
		b.WriteString(m.overlay.View(true))
	} else {
		left := m.plan.View(m.focus == panePlan) + "\n" + m.record.View(m.focus == paneRecord)
		right := m.state.View(m.focus == paneState) + "\n" + m.pane(paneOutput).View(m.focus == paneOutput)
		b.WriteString(joinColumns(left, right))
	}
	b.WriteByte('\n')
	b.WriteString(fit(m.statusLine(), m.w))
	b.WriteByte('\n')
	if m.overlay != nil {
		b.WriteString(fit(m.prompt.helpLine(" "+m.st.Status.Render("esc/q close · ↑↓ g G scroll · / search · enter details · : command · ? keys")), m.w))
	} else {
		b.WriteString(fit(m.prompt.helpLine(m.help.ShortHelpView(m.keys.ShortHelp())), m.w))
	}
	return b.String()
}

// tooSmallFor is the screen of a w×h terminal below the least one a
// screen needs (minW×minH): h lines, none wider than w.
func tooSmallFor(w, h, minW, minH int) string {
	lines := make([]string, max(h, 1))
	lines[0] = fit("streamdbg: terminal too small", w)
	if len(lines) > 1 {
		lines[1] = fit(fmt.Sprintf("%d×%d; needs %d×%d", w, h, minW, minH), w)
	}
	if len(lines) > 2 {
		lines[2] = fit("ctrl+c quits", w)
	}
	return strings.Join(lines, "\n")
}

// header is the top line. Its fields depend on the terminal's width only
// (never on what they hold), so they do not come and go between stops;
// the state of the run comes last and is cut at a word.
func (m *Model) header() string {
	v := m.view
	narrow := m.w < 100
	pos := v.Position
	var state string
	switch {
	case m.busy != nil:
		p := m.busy.progress
		pos = max(pos, p.Position())
		state = fmt.Sprintf("running: %s · %s read · %s records/s", m.busy.line, numfmt.Commas(p.Records()), numfmt.Commas(int64(p.Rate())))
	case v.Failure != nil:
		state = fmt.Sprintf("failed: in %s[%d] (R restarts, u goes back)", v.Failure.Operator, v.Failure.Subtask)
	case v.Finished:
		state = "finished: " + why(v.Stop)
	default:
		state = "stopped: " + why(v.Stop)
	}
	if narrow && v.Stop != nil && v.Stop.Reason == session.ReasonNext && m.busy == nil {
		state = "stopped: " + v.Stop.Message
	}
	parts := []string{m.st.Header.Render("streamdbg"), v.Job, fmt.Sprintf("record %s", numfmt.Commas(pos)), "wm " + dateClock(v.Watermark, narrow)}
	if m.w >= 90 {
		parts = append(parts, "proc "+clock(v.ProcessingTime))
	}
	if m.w >= 110 {
		parts = append(parts, v.Backend)
	}
	h := " " + strings.Join(parts, " · ") + " · "
	room := m.w - ansi.StringWidth(h)
	word, rest, _ := strings.Cut(state, ":")
	styled := m.st.HeaderState.Render(word)
	if v.Failure != nil && m.busy == nil {
		styled = m.st.Failed.Render(word)
	}
	return h + styled + cutWords(":"+rest, max(1, room-ansi.StringWidth(word)))
}

// why says why the session stopped.
func why(st *session.StopView) string {
	if st == nil {
		return "at the start"
	}
	msg := st.Message
	switch st.Reason {
	case session.ReasonEnd, session.ReasonBack, session.ReasonBreakpoint, session.ReasonInterrupted:
		if msg != "" {
			return msg
		}
	}
	if msg == "" || msg == string(st.Reason) || strings.HasPrefix(msg, string(st.Reason)) {
		return orDefault(msg, string(st.Reason))
	}
	return string(st.Reason) + " · " + msg
}

func (m *Model) statusLine() string {
	switch {
	case m.prompt.active():
		return m.prompt.View()
	case m.busy != nil:
		// What a key pressed meanwhile says (queued, dropped,
		// interrupting…) takes the place of the interrupt hint, which it
		// repeats.
		p := m.busy.progress
		tail := "esc/ctrl+c interrupts"
		if m.status != "" {
			tail = m.status
		}
		return m.st.Status.Render(fmt.Sprintf(" %s · record %s · %s read · %s records/s · %s · %s",
			m.busy.line, numfmt.Commas(p.Position()), numfmt.Commas(p.Records()), numfmt.Commas(int64(p.Rate())), time.Since(m.busy.started).Round(100*time.Millisecond), tail))
	case m.count != "":
		return " count " + m.count + " (N runs next " + m.count + ")"
	case m.statusErr:
		return " " + m.st.Failed.Render(m.status)
	}
	return " " + m.st.Status.Render(m.status)
}
