package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// promptMsg is a line the prompt took (enter).
type promptMsg struct {
	mode string
	line string
}

// promptHistory bounds the lines remembered per prompt mode.
const promptHistory = 200

// prompt is the command, filter and search bar: ↑/↓ walk its history (one
// per mode), Tab completes commands, operators, states, tables and columns
// (again: the next candidate; shift+tab the previous one).
type prompt struct {
	input   textinput.Model
	mode    string // "", "command", "filter", "search"
	history map[string][]string
	hpos    int    // position in the history while walking it
	draft   string // what was typed before walking the history
	vocab   vocabulary

	// offered says the line is one the prompt opened with for the user to
	// take or change (offer: the current filter, the browser's query),
	// which the first character typed replaces, as a selected text field's
	// does; any other first key (an arrow, backspace, enter) keeps it.
	offered bool

	// completion in progress: the line up to the word, its candidates.
	compBase string
	cands    []string
	ci       int
	hint     string

	w int // the screen's width
}

func newPrompt() *prompt {
	in := textinput.New()
	// A steady cursor: a blinking one is a timer message every half
	// second for nothing.
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	return &prompt{input: in, history: map[string][]string{}}
}

func (p *prompt) active() bool { return p.mode != "" }

func (p *prompt) open(mode, value string) tea.Cmd {
	p.mode = mode
	switch mode {
	case "filter":
		p.setLabel("filter: ")
	case "search":
		p.setLabel("/")
	default:
		p.setLabel(":")
	}
	p.input.SetValue(value)
	p.input.CursorEnd()
	p.hpos, p.draft = len(p.history[mode]), ""
	p.resetCompletion()
	return p.input.Focus()
}

// offerHint says what the first key does to an offered line.
const offerHint = "typing replaces this line · ← → edit it · enter takes it"

// offer opens the prompt with a line to take or change: the first
// character typed replaces it (see prompt.offered).
func (p *prompt) offer(mode, value string) tea.Cmd {
	cmd := p.open(mode, value)
	if value != "" {
		p.offered, p.hint = true, offerHint
	}
	return cmd
}

func (p *prompt) close() {
	p.offered = false
	p.mode = ""
	p.input.Blur()
	p.resetCompletion()
}

func (p *prompt) resetCompletion() { p.cands, p.compBase, p.hint, p.ci = nil, "", "", 0 }

func (p *prompt) SetWidth(w int) {
	p.w = w
	p.setLabel(p.input.Prompt)
}

// setLabel sets what the line starts with and fits the input to the rest
// of the screen: the label, the text and the cursor after it are one line
// as wide as the screen at most (a line cut at the screen's edge hid the
// end of a long filter, where the cursor was). A label longer than half
// the screen keeps its end.
func (p *prompt) setLabel(label string) {
	if lw := ansi.StringWidth(label); lw > p.w/2 && p.w > 0 {
		label = "…" + ansi.Cut(label, lw-p.w/2+1, lw)
	}
	p.input.Prompt = label
	p.input.SetWidth(max(1, p.w-ansi.StringWidth(label)-1))
}

// Update handles a key while the prompt is open; enter gives the line
// taken back at once (not as a command: a key typed right after it must
// find its effect done).
func (p *prompt) Update(k tea.KeyPressMsg) (tea.Cmd, *promptMsg) {
	if p.offered {
		p.offered = false
		if p.hint == offerHint {
			p.hint = ""
		}
		if k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModMeta|tea.ModSuper) == 0 {
			p.input.SetValue("")
		}
	}
	switch k.String() {
	case "esc", "ctrl+c": // ctrl+c drops the line, as a shell's prompt does
		p.close()
		return nil, nil
	case "enter":
		mode, line := p.mode, strings.TrimSpace(p.input.Value())
		if line != "" {
			h := p.history[mode]
			if len(h) == 0 || h[len(h)-1] != line {
				h = append(h, line)
				if len(h) > promptHistory {
					h = h[1:]
				}
				p.history[mode] = h
			}
		}
		p.close()
		return nil, &promptMsg{mode: mode, line: line}
	case "up":
		p.walk(-1)
		return nil, nil
	case "down":
		p.walk(1)
		return nil, nil
	case "tab":
		p.complete(1)
		return nil, nil
	case "shift+tab":
		p.complete(-1)
		return nil, nil
	}
	p.resetCompletion()
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(k)
	return cmd, nil
}

// walk moves through the mode's history; past the newest line it gives
// back what was being typed.
func (p *prompt) walk(d int) {
	h := p.history[p.mode]
	if len(h) == 0 {
		return
	}
	if p.hpos == len(h) {
		p.draft = p.input.Value()
	}
	p.hpos = max(0, min(len(h), p.hpos+d))
	if p.hpos == len(h) {
		p.input.SetValue(p.draft)
	} else {
		p.input.SetValue(h[p.hpos])
	}
	p.input.CursorEnd()
	p.resetCompletion()
}

// complete completes the word at the end of the line: one candidate is
// taken; several complete their common prefix and are listed, and Tab
// again cycles through them.
func (p *prompt) complete(d int) {
	if p.cands != nil {
		p.ci = (p.ci + d + len(p.cands)) % len(p.cands)
		p.input.SetValue(p.compBase + p.cands[p.ci])
		p.input.CursorEnd()
		return
	}
	line := p.input.Value()
	start, cands := p.vocab.complete(line, p.mode)
	switch len(cands) {
	case 0:
		p.hint = "nothing to complete"
	case 1:
		p.input.SetValue(line[:start] + cands[0] + suffixAfter(cands[0]))
		p.input.CursorEnd()
		p.hint = ""
	default:
		cp := commonPrefix(cands)
		if len(cp) > len(line)-start {
			p.input.SetValue(line[:start] + cp)
			p.input.CursorEnd()
		} else {
			p.compBase, p.cands, p.ci = line[:start], cands, -1
			if d < 0 {
				p.ci = 0
			}
			p.complete(d)
		}
		p.hint = strings.Join(cands[:min(len(cands), 12)], "  ")
		if len(cands) > 12 {
			p.hint += "  …"
		}
	}
}

// suffixAfter is what follows a completed word: a blank, except after a
// path to a directory or an open call.
func suffixAfter(c string) string {
	if strings.HasSuffix(c, "/") || strings.HasSuffix(c, "(") || strings.HasSuffix(c, ".") {
		return ""
	}
	return " "
}

// View is the prompt's line: the input, as wide as the screen.
func (p *prompt) View() string { return p.input.View() }

// helpLine is the line below the prompt: its hint (completion candidates,
// what typing does to an offered line) while it is open and has one, the
// screen's key help otherwise. (Beside the input, which takes the width,
// the hint was cut off.)
func (p *prompt) helpLine(keys string) string {
	if p.active() && p.hint != "" {
		return " " + p.hint
	}
	return keys
}
