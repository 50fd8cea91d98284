package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"streamdbg/runtime/session"
)

// helpLines is the help: the screen's most used keys, the keys of where the user is (the focused pane
// or the open overlay), the keys that work everywhere, and the commands of
// the command table with their aliases, arguments and descriptions. The
// overlay wraps and scrolls it: nothing is cut at any width.
func helpLines(most []key.Binding, here string, local, global []key.Binding, commands bool) []string {
	var out []string
	if len(most) > 0 {
		// The screen's own last line, which the overlay's keys replace
		// while it is open: quit and the rest are never a page away.
		words := make([]string, len(most))
		for i, b := range most {
			words[i] = b.Help().Key + " " + b.Help().Desc
		}
		out = append(out, "Most used: "+strings.Join(words, " · "), "")
	}
	section := func(title string, bs []key.Binding) {
		if len(bs) == 0 {
			return
		}
		out = append(out, title)
		w := 0
		for _, b := range bs {
			w = max(w, len([]rune(b.Help().Key)))
		}
		seen := map[string]bool{}
		for _, b := range bs {
			h := b.Help()
			if seen[h.Key] {
				continue
			}
			seen[h.Key] = true
			out = append(out, fmt.Sprintf("  %s%s  %s", h.Key, strings.Repeat(" ", w-len([]rune(h.Key))), h.Desc))
		}
		out = append(out, "")
	}
	section("Keys of "+here+":", local)
	section("Keys everywhere:", global)
	if commands {
		out = append(out, "Commands (: then a command; a line that starts with SELECT or EXPLAIN is a query; Tab completes, ↑/↓ recall):")
		for _, c := range session.Commands() {
			syn := c.Name
			if c.Args != "" {
				syn += " " + c.Args
			}
			if len(c.Aliases) > 0 {
				syn += "   (" + strings.Join(c.Aliases, ", ") + ")"
			}
			out = append(out, "  "+syn, "      "+c.Help)
		}
	}
	return out
}

// showHelp opens the help of the focused pane (or of the overlay).
func (m *Model) showHelp() {
	here, local := paneNames[m.focus]+" pane", m.pane(m.focus).KeyMap()
	if m.overlay != nil {
		here, local = "this view", m.overlay.KeyMap()
	}
	count := key.NewBinding(key.WithKeys(), key.WithHelp("0-9", "a count for N (50N: next 50 records)"))
	global := append(m.keys.Global(), count)
	m.showOverlay(textOverlay(&m.keys, &m.st, "Help", helpLines(m.keys.ShortHelp(), here, local, global, true)))
}
