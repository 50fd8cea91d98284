package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// component is a pane (or overlay) of a screen. The root model sizes every
// component, routes the keys and mouse events of the focused one to it and
// draws it; a component never reaches the session itself, it asks the root
// with a message (runMsg, detailMsg, statusMsg).
type component interface {
	Update(msg tea.Msg) tea.Cmd
	View(focused bool) string
	SetSize(w, h int)
	// KeyMap is the keys the component handles, for the help.
	KeyMap() []key.Binding
}

// searcher is a component that `/` searches.
type searcher interface {
	// search finds text from the cursor on and says how it went
	// ("match 2 of 17", "no match").
	search(text string) string
}

// clickMsg is a mouse click at a cell of a component (0,0 is the top left
// corner of its border).
type clickMsg struct{ x, y int }

// wheelMsg scrolls the component under the pointer.
type wheelMsg struct{ up bool }

// statusMsg puts a message on the status line.
type statusMsg struct {
	text string
	err  bool
}

func status(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: text, err: isErr} }
}

// runMsg asks the root to run a command line.
type runMsg struct{ line string }

func runLine(line string) tea.Cmd { return func() tea.Msg { return runMsg{line: line} } }

// detailMsg asks the root to open a detail view.
type detailMsg struct{ d detail }

func showDetail(d detail) tea.Cmd { return func() tea.Msg { return detailMsg{d: d} } }

// closeMsg closes the overlay that sent it.
type closeMsg struct{}

func closeOverlay() tea.Msg { return closeMsg{} }

// settle runs at once the commands a component returned: they only carry
// messages for the root (status, run, details, close), and a key pressed
// next must find their effect done, not race them. Other messages (quit)
// go back to the program as commands.
func settle(cmd tea.Cmd, handle func(tea.Msg) tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		out := make([]tea.Cmd, 0, len(msg))
		for _, c := range msg {
			out = append(out, settle(c, handle))
		}
		return tea.Batch(out...)
	case statusMsg, runMsg, detailMsg, closeMsg, promptMsg:
		return handle(msg)
	default:
		return func() tea.Msg { return msg }
	}
}
