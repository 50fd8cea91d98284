// Package keys holds the TUI's key bindings: one KeyMap whose groups feed
// the help, so the help shown is always the keys that work where the user
// is. It must not import any other streamdbg package.
package keys

import "charm.land/bubbles/v2/key"

// KeyMap is every binding of the debugger and the browser.
type KeyMap struct {
	// Debugger commands (the debug screen, whatever pane has the focus).
	Next     key.Binding
	NextMany key.Binding
	Step     key.Binding
	// StepInput1 and StepInput2 step into an element of input 1 or 2 of
	// the selected two-input subtask.
	StepInput1  key.Binding
	StepInput2  key.Binding
	Continue    key.Binding
	Back        key.Binding
	Restart     key.Binding
	Break       key.Binding
	Breakpoints key.Binding
	Watch       key.Binding
	Watches     key.Binding
	Savepoint   key.Binding
	Open        key.Binding
	Why         key.Binding
	Command     key.Binding
	NextPane    key.Binding
	PrevPane    key.Binding
	NextOp      key.Binding
	PrevOp      key.Binding
	Help        key.Binding
	Quit        key.Binding
	Interrupt   key.Binding

	// Moving in a pane or an overlay.
	Up         key.Binding
	Down       key.Binding
	PageUp     key.Binding
	PageDown   key.Binding
	Top        key.Binding
	Bottom     key.Binding
	Left       key.Binding // horizontal scroll
	Right      key.Binding
	Wrap       key.Binding
	Search     key.Binding
	SearchNext key.Binding
	SearchPrev key.Binding
	Enter      key.Binding
	Close      key.Binding

	// Tables of state.
	NextTab     key.Binding
	PrevTab     key.Binding
	Filter      key.Binding
	Sort        key.Binding
	ChangedOnly key.Binding

	// Lists (breakpoints, watches) and questions.
	Toggle key.Binding
	Delete key.Binding
	Yes    key.Binding
	No     key.Binding

	// The savepoint browser's diff against another savepoint.
	Diff key.Binding
}

// Default is the key map of DESIGN 8: terminal habits (vim, less, delve,
// k9s, lazygit), vim and arrow keys.
func Default() KeyMap {
	b := func(keys []string, k, help string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, help))
	}
	return KeyMap{
		Next:        b([]string{"n"}, "n", "next record"),
		NextMany:    b([]string{"N"}, "[count]N", "next 100 records (or count)"),
		Step:        b([]string{"s"}, "s", "step into one operator"),
		StepInput1:  b([]string{"["}, "[", "step into input 1 of the selected two-input subtask"),
		StepInput2:  b([]string{"]"}, "]", "step into input 2 of the selected two-input subtask"),
		Continue:    b([]string{"c"}, "c", "continue to a breakpoint or the end"),
		Back:        b([]string{"u"}, "u", "back: undo the last command"),
		Restart:     b([]string{"R"}, "R", "restart from the latest checkpoint"),
		Break:       b([]string{"b"}, "b", "set a breakpoint"),
		Breakpoints: b([]string{"B"}, "B", "list breakpoints"),
		Watch:       b([]string{"w"}, "w", "add a watch query"),
		Watches:     b([]string{"W"}, "W", "watches / output"),
		Savepoint:   b([]string{"p"}, "p", "take a savepoint"),
		Open:        b([]string{"o"}, "o", "open a savepoint"),
		Why:         b([]string{"y"}, "y", "why has the shown operator's window or timer not fired?"),
		Command:     b([]string{":"}, ":", "command or query"),
		NextPane:    b([]string{"tab"}, "tab", "next pane"),
		PrevPane:    b([]string{"shift+tab"}, "shift+tab", "previous pane"),
		NextOp:      b([]string{">"}, ">", "next operator of the chain"),
		PrevOp:      b([]string{"<"}, "<", "previous operator of the chain"),
		Help:        b([]string{"?"}, "?", "help"),
		Quit:        b([]string{"q", "ctrl+c"}, "q", "quit"),
		Interrupt:   b([]string{"ctrl+c", "esc"}, "esc/ctrl+c", "interrupt a run"),

		Up:         b([]string{"up", "k"}, "↑/k", "up"),
		Down:       b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:     b([]string{"pgup", "ctrl+b", "ctrl+u"}, "pgup", "page up"),
		PageDown:   b([]string{"pgdown", "ctrl+f", "ctrl+d", "space"}, "pgdn", "page down"),
		Top:        b([]string{"home", "g"}, "g/home", "top"),
		Bottom:     b([]string{"end", "G"}, "G/end", "bottom"),
		Left:       b([]string{"shift+left", "H"}, "H/shift+←", "scroll left"),
		Right:      b([]string{"shift+right", "L"}, "L/shift+→", "scroll right"),
		Wrap:       b([]string{"z"}, "z", "wrap long lines / full-width columns"),
		Search:     b([]string{"/"}, "/", "search"),
		SearchNext: b([]string{"."}, ".", "next match"),
		SearchPrev: b([]string{","}, ",", "previous match"),
		Enter:      b([]string{"enter"}, "enter", "details of the row"),
		Close:      b([]string{"esc", "q"}, "esc/q", "close"),

		NextTab:     b([]string{"right", "l", "]"}, "→/l", "next tab"),
		PrevTab:     b([]string{"left", "h", "["}, "←/h", "previous tab"),
		Filter:      b([]string{"f"}, "f", "filter rows (expression)"),
		Sort:        b([]string{"S"}, "S", "sort: key, value, changed first, none"),
		ChangedOnly: b([]string{"C"}, "C", "changed rows only"),

		Toggle: b([]string{"space", "e"}, "space/e", "enable / disable"),
		Delete: b([]string{"x", "delete"}, "x", "delete"),
		Yes:    b([]string{"y", "Y"}, "y", "yes"),
		No:     b([]string{"n", "N", "esc", "q"}, "n/esc", "no"),

		Diff: b([]string{"d"}, "d", "diff against another savepoint"),
	}
}

// Global are the debugger's keys that work in every pane.
func (k KeyMap) Global() []key.Binding {
	return []key.Binding{k.Next, k.NextMany, k.Step, k.StepInput1, k.StepInput2, k.Continue, k.Back, k.Restart, k.Interrupt,
		k.Break, k.Breakpoints, k.Watch, k.Watches, k.Savepoint, k.Open, k.Why, k.Command,
		k.NextPane, k.PrevPane, k.NextOp, k.PrevOp, k.Help, k.Quit}
}

// Scroll are the keys of every scrollable pane and overlay.
func (k KeyMap) Scroll() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Left, k.Right, k.Wrap, k.Search, k.SearchNext, k.SearchPrev}
}

// ShortHelp is the debug screen's last line: the most used keys first, so
// a narrow terminal keeps them, each with a word.
func (k KeyMap) ShortHelp() []key.Binding {
	return short([]key.Binding{k.Help, k.Quit, k.Next, k.Step, k.Continue, k.Back, k.Command, k.Break, k.Watch, k.Search, k.Enter},
		"help", "quit", "next", "step", "continue", "back", "command", "break", "watch", "search", "details")
}

// short gives bindings one-word descriptions for a status line.
func short(bs []key.Binding, words ...string) []key.Binding {
	out := make([]key.Binding, len(bs))
	for i, b := range bs {
		out[i] = b
		out[i].SetHelp(b.Help().Key, words[i])
	}
	return out
}

// BrowserGlobal are the savepoint browser's own keys.
func (k KeyMap) BrowserGlobal() []key.Binding {
	q := k.Quit
	q.SetHelp("q", "quit (back to the debugger when opened from it)")
	return []key.Binding{k.NextPane, k.Command, k.Diff, k.Help, q}
}

// BrowserHelp is the savepoint browser's last line.
func (k KeyMap) BrowserHelp() []key.Binding {
	return short([]key.Binding{k.Help, k.Quit, k.NextPane, k.Enter, k.Search, k.Filter, k.Command, k.Diff},
		"help", "quit", "states/entries", "details", "search", "filter", "query", "diff")
}
