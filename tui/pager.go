package tui

import (
	"iter"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/tui/keys"
)

// pageRow is one row of a paged table.
type pageRow struct {
	kg    int
	cells []string
	// old is the value before the last step, for entries it changed.
	changed bool
	old     string
}

// rowSource yields the rows of a table in key-group order, starting at key
// group from. It must read nothing before from (catalog scans restricted to
// key groups), so moving a page costs at most one key group's rows.
type rowSource interface {
	rows(from int) iter.Seq2[pageRow, error]
	// first is the lowest key group the source has rows in.
	first() int
}

// pager holds one page of a rowSource. Its cursor is (key group, rows to
// skip in it), so paging reads the rows of the page and of one key group at
// most, never everything before it: memory and time do not grow with the
// size of the state.
type pager struct {
	src   rowSource
	size  int // rows per page
	kg    int // INVARIANT: skip < number of rows of src in kg
	skip  int
	index int // absolute index of the first row, for "rows a–b"
	page  []pageRow
	more  bool
	err   error
}

func newPager(src rowSource, size int) *pager {
	p := &pager{src: src, size: max(1, size)}
	p.top()
	return p
}

// top goes to the first row.
func (p *pager) top() {
	p.kg, p.skip, p.index = p.src.first(), 0, 0
	p.load()
}

// resize keeps the position and reads a page of n rows.
func (p *pager) resize(n int) {
	if n = max(1, n); n != p.size {
		p.size = n
		p.load()
	}
}

// load reads the page at the cursor (size+1 rows, to know whether more follow).
func (p *pager) load() {
	p.page, p.more, p.err = p.page[:0], false, nil
	skip := p.skip
	for r, err := range p.src.rows(p.kg) {
		if err != nil {
			p.err = err
			break
		}
		if skip > 0 && r.kg == p.kg {
			skip--
			continue
		}
		if len(p.page) == p.size {
			p.more = true
			break
		}
		p.page = append(p.page, r)
	}
}

// down moves the first row k rows down, at most to the last row.
func (p *pager) down(k int) {
	if k <= 0 || len(p.page) == 0 {
		return
	}
	if k >= len(p.page) {
		if !p.more {
			k = len(p.page) - 1
		} else {
			k = len(p.page) - 1 // the page ends here; move to its last row and read on
		}
	}
	if k == 0 {
		return
	}
	r := p.page[k]
	skip := 0
	if r.kg == p.kg {
		skip = p.skip
	}
	for _, q := range p.page[:k] {
		if q.kg == r.kg {
			skip++
		}
	}
	p.kg, p.skip = r.kg, skip
	p.index += k
	p.load()
}

// up moves the first row k rows up, reading earlier key groups one at a time.
func (p *pager) up(k int) {
	moved := false
	for ; k > 0 && p.index > 0; k-- {
		if p.skip > 0 {
			p.skip--
			p.index--
			moved = true
			continue
		}
		kg, n := p.kg-1, 0
		for ; kg >= p.src.first(); kg-- {
			n = p.count(kg)
			if n > 0 {
				break
			}
		}
		if n == 0 {
			break
		}
		p.kg, p.skip = kg, n-1
		p.index--
		moved = true
	}
	if moved {
		p.load()
	}
}

// count is the number of rows in one key group.
func (p *pager) count(kg int) int {
	n := 0
	for r, err := range p.src.rows(kg) {
		if err != nil || r.kg != kg {
			break
		}
		n++
	}
	return n
}

// scroll moves the pager for a scrolling key (up, down, page up, page
// down, top) with pages of page rows; other keys do nothing.
func (p *pager) scroll(k tea.KeyPressMsg, km *keys.KeyMap, page int) {
	switch {
	case key.Matches(k, km.Up):
		p.up(1)
	case key.Matches(k, km.Down):
		p.down(1)
	case key.Matches(k, km.PageUp):
		p.up(page)
	case key.Matches(k, km.PageDown):
		p.down(page)
	case key.Matches(k, km.Top):
		p.top()
	}
}
