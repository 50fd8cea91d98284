package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// textList is a scrollable list of lines with a cursor: the record pane,
// the output pane, help, details, errors. Long lines are cut (H and L
// scroll them) or wrapped (z toggles); / searches, . and , go to the next
// and previous match; G and g go to the end and the start.
type textList struct {
	keys  *keys.KeyMap
	st    *styles.Styles
	title string
	// pinned lines stay above the scrolled ones (the current location).
	pinned []string
	raw    []string
	// style styles raw line i (after it was cut to width).
	style func(i int, s string) string
	// onEnter opens the details of raw line i (nil: Enter does nothing).
	onEnter func(i int) tea.Cmd
	// tail follows the newest line until the user scrolls up.
	tail bool
	wrap bool
	// noCursor: the list only scrolls (help, details).
	noCursor bool

	lines  []string // laid out: raw lines wrapped (or not)
	src    []int    // raw index of each laid-out line
	offset int      // first laid-out line shown
	cursor int      // raw index of the cursor
	hoff   int      // horizontal scroll
	query  string   // the last search
	// match is the raw index + 1 of the line the last search went to (0:
	// none): a list without a cursor searches on from it while it is on
	// screen (its view cannot scroll past the last page, so the view's
	// top does not say which match was the last one).
	match int
	w, h  int
}

func newTextList(k *keys.KeyMap, st *styles.Styles, title string) *textList {
	return &textList{keys: k, st: st, title: title}
}

func (p *textList) SetSize(w, h int) {
	p.w, p.h = w, h
	p.layout()
}

// setLines replaces the lines; the cursor goes to raw line at (-1: the
// last line when following the tail, else the first).
func (p *textList) setLines(raw []string, at int) {
	p.raw, p.match = raw, 0
	p.layout()
	switch {
	case at >= 0:
		p.cursor = min(at, max(0, len(raw)-1))
		p.offset = p.lineOf(p.cursor)
	case p.tail:
		p.cursor = max(0, len(raw)-1)
		p.offset = p.maxOffset()
	default:
		p.cursor, p.offset = 0, 0
	}
	p.clamp()
}

// keepLines replaces the lines and keeps the cursor and the scroll
// position (the same lines, refreshed after a command that did not stop).
func (p *textList) keepLines(raw []string) {
	p.raw = raw
	p.layout()
	p.clamp()
}

func (p *textList) layout() {
	p.lines, p.src = p.lines[:0], p.src[:0]
	width := p.w - 2
	for i, l := range p.raw {
		if p.wrap && width > 0 {
			for _, part := range wrapHanging(l, width) {
				p.lines, p.src = append(p.lines, part), append(p.src, i)
			}
			continue
		}
		p.lines, p.src = append(p.lines, oneLine(l)), append(p.src, i)
	}
}

func (p *textList) inner() int { return max(1, p.h-2-len(p.pinned)) }

func (p *textList) maxOffset() int { return max(0, len(p.lines)-p.inner()) }

// lineOf is the first laid-out line of raw line i.
func (p *textList) lineOf(i int) int {
	for j, s := range p.src {
		if s >= i {
			return j
		}
	}
	return max(0, len(p.src)-1)
}

func (p *textList) clamp() {
	p.cursor = max(0, min(p.cursor, len(p.raw)-1))
	p.offset = max(0, min(p.offset, p.maxOffset()))
	if p.noCursor || len(p.raw) == 0 {
		return
	}
	first := p.lineOf(p.cursor)
	last := first
	for last+1 < len(p.src) && p.src[last+1] == p.cursor {
		last++
	}
	if first < p.offset {
		p.offset = first
	}
	if last >= p.offset+p.inner() {
		p.offset = min(first, last-p.inner()+1)
	}
}

// move moves the cursor (or, without one, the view) by d lines.
func (p *textList) move(d int) {
	if p.noCursor {
		p.offset += d
	} else {
		p.cursor += d
	}
	p.clamp()
}

func (p *textList) Update(msg tea.Msg) tea.Cmd {
	page := max(1, p.inner()-1)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := p.keys
		switch {
		case key.Matches(msg, k.Up):
			p.move(-1)
		case key.Matches(msg, k.Down):
			p.move(1)
		case key.Matches(msg, k.PageUp):
			p.move(-page)
		case key.Matches(msg, k.PageDown):
			p.move(page)
		case key.Matches(msg, k.Top):
			p.cursor, p.offset = 0, 0
			p.clamp()
		case key.Matches(msg, k.Bottom):
			p.cursor, p.offset = len(p.raw)-1, p.maxOffset()
			p.clamp()
		case key.Matches(msg, k.Left):
			p.hoff = max(0, p.hoff-max(8, (p.w-2)/2))
		case key.Matches(msg, k.Right):
			if !p.wrap {
				p.hoff += max(8, (p.w-2)/2)
			}
		case key.Matches(msg, k.Wrap):
			p.wrap, p.hoff = !p.wrap, 0
			p.layout()
			p.clamp()
		case key.Matches(msg, k.SearchNext):
			return status(p.find(p.query, 1), false)
		case key.Matches(msg, k.SearchPrev):
			return status(p.find(p.query, -1), false)
		case key.Matches(msg, k.Enter):
			if p.onEnter != nil && len(p.raw) > 0 {
				return p.onEnter(p.cursor)
			}
		}
	case wheelMsg:
		if msg.up {
			p.offset -= 3
		} else {
			p.offset += 3
		}
		p.offset = max(0, min(p.offset, p.maxOffset()))
		if !p.noCursor && len(p.src) > 0 {
			// The cursor stays on screen.
			first, last := p.src[p.offset], p.src[min(len(p.src)-1, p.offset+p.inner()-1)]
			p.cursor = max(first, min(p.cursor, last))
		}
	case clickMsg:
		row := msg.y - 1 - len(p.pinned)
		if row >= 0 && p.offset+row < len(p.src) && !p.noCursor {
			p.cursor = p.src[p.offset+row]
		}
	}
	return nil
}

// search finds text (case-insensitive) from the line after the cursor on.
func (p *textList) search(text string) string {
	p.query = text
	return p.find(text, 1)
}

func (p *textList) find(text string, dir int) string {
	if text == "" {
		return "no search: / searches"
	}
	t := strings.ToLower(text)
	var matches []int
	for i, l := range p.raw {
		if strings.Contains(strings.ToLower(l), t) {
			matches = append(matches, i)
		}
	}
	if len(matches) == 0 {
		return fmt.Sprintf("no match for %q", text)
	}
	from := p.cursor
	if p.noCursor {
		from = p.src[min(p.offset, len(p.src)-1)]
		if at := p.match - 1; at >= 0 && at < len(p.raw) && p.lineOf(at) >= p.offset && p.lineOf(at) < p.offset+p.inner() {
			from = at
		}
	}
	pick := -1
	if dir > 0 {
		for n, i := range matches {
			if i > from {
				pick = n
				break
			}
		}
		if pick < 0 {
			pick = 0 // wrap around
		}
	} else {
		for n := len(matches) - 1; n >= 0; n-- {
			if matches[n] < from {
				pick = n
				break
			}
		}
		if pick < 0 {
			pick = len(matches) - 1
		}
	}
	p.cursor, p.match = matches[pick], matches[pick]+1
	p.offset = p.lineOf(p.cursor)
	if !p.noCursor {
		p.offset -= p.inner() / 3 // show some context above
	}
	p.clamp()
	return fmt.Sprintf("%q: match %d of %d (. next, , previous)", text, pick+1, len(matches))
}

func (p *textList) View(focused bool) string {
	inner := p.inner()
	end := min(len(p.lines), p.offset+inner)
	out := make([]string, 0, p.h)
	for _, l := range p.pinned {
		out = append(out, fit(l, p.w-2))
	}
	q := strings.ToLower(p.query)
	for j := p.offset; j < end; j++ {
		i := p.src[j]
		l := fit(hscroll(p.lines[j], p.hoff), p.w-2)
		if p.style != nil {
			l = p.style(i, l)
		}
		switch {
		case !p.noCursor && i == p.cursor && focused:
			l = p.st.Selected.Render(ansiStrip(l))
		case q != "" && strings.Contains(strings.ToLower(p.raw[i]), q):
			l = p.st.Match.Render(ansiStrip(l))
		}
		out = append(out, l)
	}
	title := p.title
	switch {
	case len(p.lines) <= inner || p.offset >= end:
	case p.noCursor: // text (help, details): its lines on screen
		title += fmt.Sprintf(" · %d–%d of %d", p.offset+1, end, len(p.lines))
	default:
		// Items (records, events) as given, not as wrapped: "12
		// records · 5–12 of 12", not "9–21 of 21".
		title += fmt.Sprintf(" · %d–%d of %d", p.src[p.offset]+1, p.src[end-1]+1, len(p.raw))
	}
	if p.hoff > 0 {
		title += fmt.Sprintf(" · →%d", p.hoff)
	}
	return box(p.st, title, focused, p.w, p.h, out)
}

func (p *textList) KeyMap() []key.Binding {
	ks := p.keys.Scroll()
	if p.onEnter != nil {
		ks = append(ks, p.keys.Enter)
	}
	return ks
}
