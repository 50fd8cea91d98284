// Package keys holds the TUI's key bindings: one KeyMap that also feeds
// bubbles/help, so the help shown is always the keys that work.
package keys

import "charm.land/bubbles/v2/key"

// KeyMap is every binding of the debugger and the browser.
type KeyMap struct {
	Next        key.Binding
	NextMany    key.Binding
	Step        key.Binding
	Continue    key.Binding
	Back        key.Binding
	Break       key.Binding
	Breakpoints key.Binding
	Watch       key.Binding
	Watches     key.Binding
	Savepoint   key.Binding
	Open        key.Binding
	Restart     key.Binding
	Command     key.Binding
	Filter      key.Binding
	NextPane    key.Binding
	PrevPane    key.Binding
	NextTab     key.Binding
	PrevTab     key.Binding
	NextOp      key.Binding
	PrevOp      key.Binding
	Up          key.Binding
	Down        key.Binding
	PageUp      key.Binding
	PageDown    key.Binding
	Top         key.Binding
	Help        key.Binding
	Close       key.Binding
	Quit        key.Binding
	Interrupt   key.Binding
	Toggle      key.Binding
	Delete      key.Binding
	Enter       key.Binding
	Diff        key.Binding
	Why         key.Binding
}

// Default is the key map of DESIGN 8: terminal habits, vim and arrows.
func Default() KeyMap {
	return KeyMap{
		Next:        key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next")),
		NextMany:    key.NewBinding(key.WithKeys("N"), key.WithHelp("[count]N", "next 100 (or count)")),
		Step:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "step into")),
		Continue:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "continue")),
		Back:        key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "back")),
		Break:       key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "break")),
		Breakpoints: key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "breakpoints")),
		Watch:       key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "watch")),
		Watches:     key.NewBinding(key.WithKeys("W"), key.WithHelp("W", "watches/output")),
		Savepoint:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "savepoint")),
		Open:        key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open savepoint")),
		Restart:     key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "restart from checkpoint")),
		Command:     key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "query/command")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		NextPane:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		NextTab:     key.NewBinding(key.WithKeys("right", "l", "]"), key.WithHelp("→/l", "next tab")),
		PrevTab:     key.NewBinding(key.WithKeys("left", "h", "["), key.WithHelp("←/h", "previous tab")),
		NextOp:      key.NewBinding(key.WithKeys(">"), key.WithHelp(">", "next operator")),
		PrevOp:      key.NewBinding(key.WithKeys("<"), key.WithHelp("<", "prev operator")),
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "space"), key.WithHelp("pgdn", "page down")),
		Top:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Close:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close/interrupt")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Interrupt:   key.NewBinding(key.WithKeys("ctrl+c", "esc"), key.WithHelp("ctrl+c", "interrupt run")),
		Toggle:      key.NewBinding(key.WithKeys("space", "e"), key.WithHelp("space/e", "enable/disable")),
		Delete:      key.NewBinding(key.WithKeys("x", "d", "delete"), key.WithHelp("x", "delete (in B, W)")),
		Enter:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "select")),
		Diff:        key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "diff")),
		Why:         key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "why not fired?")),
	}
}

// ShortHelp is the status line of the debug screen.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Next, k.Step, k.Continue, k.Back, k.Command, k.Help, k.Quit, k.Break, k.Watch, k.Filter, k.Savepoint}
}

// FullHelp is the `?` overlay, by column.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Next, k.NextMany, k.Step, k.Continue, k.Back, k.Restart, k.Interrupt},
		{k.Break, k.Breakpoints, k.Watch, k.Watches, k.Delete, k.Savepoint, k.Open, k.Command, k.Filter, k.Why},
		{k.NextPane, k.PrevPane, k.NextTab, k.PrevTab, k.NextOp, k.PrevOp, k.Up, k.Down, k.PageUp, k.PageDown, k.Top},
		{k.Help, k.Close, k.Quit},
	}
}

// BrowserHelp is the status line of the savepoint browser.
func (k KeyMap) BrowserHelp() []key.Binding {
	return []key.Binding{k.NextPane, k.Up, k.Down, k.PageDown, k.Filter, k.Command, k.Diff, k.Help, k.Quit}
}
