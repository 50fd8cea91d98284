package tui

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"streamdbg/runtime/session"
)

// pageRow is one row of a paged table.
type pageRow struct {
	kg    int
	cells []string
	row   session.Row
	// changed: the last stop wrote the entry (cleared: and removed it).
	changed bool
	cleared bool
}

// rowSource yields the rows of a table in key-group order, those of key
// groups from to to (inclusive). It must read nothing outside them
// (catalog scans restricted to key groups), so moving a page costs at most
// one key group's rows, and counting one key group's rows reads that key
// group only.
type rowSource interface {
	rows(from, to int) iter.Seq2[pageRow, error]
	// first and last are the lowest and highest key groups the source may
	// have rows in.
	first() int
	last() int
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
	after pageRow // the row after the page, when more
	err   error
}

// clone is a copy of the pager that moves without touching p (its page
// is its own): what a move in the background reads into.
func (p *pager) clone() *pager {
	c := *p
	c.page = slices.Clone(p.page)
	return &c
}

// stopCheck ends a source's reading when its context is done: a source
// that filters rows checks it as it reads, not only when it yields one.
type stopCheck struct {
	ctx context.Context
	n   int
}

// check is errStopped once the context is done (looked at every 1024
// rows); the zero stopCheck never stops.
func (c *stopCheck) check() error {
	if c.ctx == nil {
		return nil
	}
	if c.n++; c.n&1023 == 0 && c.ctx.Err() != nil {
		return errStopped
	}
	return nil
}

// withContext is src reading until ctx is done: a source's own copy when
// it can stop while it filters, else src checked at each row it yields.
func withContext(src rowSource, ctx context.Context) rowSource {
	if s, ok := src.(interface {
		withContext(context.Context) rowSource
	}); ok {
		return s.withContext(ctx)
	}
	return ctxSource{src, ctx}
}

// ctxSource stops yielding rows once ctx is done.
type ctxSource struct {
	rowSource
	ctx context.Context
}

func (s ctxSource) rows(from, to int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		stop := stopCheck{ctx: s.ctx}
		for r, err := range s.rowSource.rows(from, to) {
			if err == nil {
				err = stop.check()
			}
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
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
		p.fill()
	}
}

// load reads the page at the cursor (size+1 rows, to know whether more follow).
func (p *pager) load() {
	p.page, p.more, p.err = p.page[:0], false, nil
	skip := p.skip
	for r, err := range p.src.rows(p.kg, p.src.last()) {
		if err != nil {
			p.err = err
			break
		}
		if skip > 0 && r.kg == p.kg {
			skip--
			continue
		}
		if len(p.page) == p.size {
			p.more, p.after = true, r
			break
		}
		p.page = append(p.page, r)
	}
}

// fill moves up when the page is the last one and not full, so the end of
// a table shows a full page, not its last row alone.
func (p *pager) fill() {
	if !p.more && len(p.page) < p.size && p.index > 0 {
		p.up(p.size - len(p.page))
	}
}

// down moves the first row k rows down: at most to the page's last row
// (a page down keeps one row of context; a page of one row moves to the
// next), and never past a full last page.
func (p *pager) down(k int) {
	if k <= 0 || len(p.page) == 0 || !p.more {
		return
	}
	rows := append(p.page[:len(p.page):len(p.page)], p.after)
	k = max(1, min(k, len(p.page)-1))
	r := rows[k]
	skip := 0
	if r.kg == p.kg {
		skip = p.skip
	}
	for _, q := range rows[:k] {
		if q.kg == r.kg {
			skip++
		}
	}
	p.kg, p.skip = r.kg, skip
	p.index += k
	p.load()
	p.fill()
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

// bottom goes to the last full page; total is the number of rows when
// known (≥ 0), else the rows are counted.
func (p *pager) bottom(total int) {
	var counted map[int]int
	if total < 0 {
		// One reading of every key group, kept for the walk back.
		total, counted = 0, map[int]int{}
		for r, err := range p.src.rows(p.src.first(), p.src.last()) {
			if err != nil {
				p.err = err
				return
			}
			counted[r.kg]++
			total++
		}
	}
	// Walk back from the last key group until a page of rows is behind.
	need := p.size
	kg := p.src.last()
	for ; kg >= p.src.first(); kg-- {
		n := counted[kg]
		if counted == nil {
			n = p.count(kg)
		}
		if n >= need {
			p.kg, p.skip = kg, n-need
			p.index = max(0, total-p.size)
			p.load()
			return
		}
		need -= n
	}
	p.top()
}

// count is the number of rows in one key group.
func (p *pager) count(kg int) int {
	n := 0
	for r, err := range p.src.rows(kg, kg) {
		if err != nil || r.kg != kg {
			break
		}
		n++
	}
	return n
}

// seek puts the row at absolute index i (in key group kg, the skip-th of
// it) first.
func (p *pager) seek(kg, skip, index int) {
	p.kg, p.skip, p.index = kg, skip, index
	p.load()
}

// place is where a row is: its key group, its rank in it, its index.
type place struct{ kg, skip, index int }

// findRow finds the row after index at (dir > 0) or before it (dir < 0)
// that match accepts, wrapping around; index -1: none. It reads the rows
// in key-group order from the start, at most searchLimit of them; limited
// says that it stopped there, before the end of the table.
func findRow(src rowSource, at, dir int, match func(pageRow) bool) (pl place, limited bool, err error) {
	none := place{index: -1}
	first, before, after := none, none, none
	kg, skip, index := -1, 0, 0
	for r, err := range src.rows(src.first(), src.last()) {
		if err != nil {
			return none, false, err
		}
		if index >= searchLimit {
			limited = true
			break
		}
		if r.kg != kg {
			kg, skip = r.kg, 0
		} else {
			skip++
		}
		if match(r) {
			pl := place{kg, skip, index}
			if first.index < 0 {
				first = pl
			}
			if index < at {
				before = pl
			}
			if index > at && after.index < 0 {
				after = pl
				if dir > 0 {
					break
				}
			}
		}
		index++
	}
	switch {
	case dir > 0 && after.index >= 0:
		return after, limited, nil
	case dir > 0:
		return first, limited, nil // wrap around
	case before.index >= 0:
		return before, limited, nil
	}
	// Back from before the first match: wrap to the last one (which is
	// after at, when there is one, or the first).
	last := none
	if after.index >= 0 || first.index >= 0 {
		kg, skip, index = -1, 0, 0
		for r, err := range src.rows(src.first(), src.last()) {
			if err != nil || index >= searchLimit {
				break
			}
			if r.kg != kg {
				kg, skip = r.kg, 0
			} else {
				skip++
			}
			if match(r) {
				last = place{kg, skip, index}
			}
			index++
		}
	}
	return last, limited, nil
}

// anyCellHas reports whether a cell contains lower, a lower-cased search
// text: what / matches in every table.
func anyCellHas(cells []string, lower string) bool {
	for _, c := range cells {
		if strings.Contains(strings.ToLower(c), lower) {
			return true
		}
	}
	return false
}

// find searches the pager's rows from index at for text (findRow, dir as
// there) and, when it finds one, moves the pager to the match (the first
// row of its page). msg is the status line; what and whats name a row in
// it ("entry", "entries").
func (p *pager) find(at, dir int, text, what, whats string) (msg string, found bool) {
	lower := strings.ToLower(text)
	pick, limited, err := findRow(p.src, at, dir, func(r pageRow) bool { return anyCellHas(r.cells, lower) })
	if err != nil {
		return err.Error(), false
	}
	if pick.index < 0 {
		return notFound(what, whats, text, limited), false
	}
	p.seek(pick.kg, pick.skip, pick.index)
	return fmt.Sprintf("%q: %s %d (. next, , previous)", text, what, pick.index+1), true
}

// notFound is the message of a search that found nothing: within the
// rows it read when it stopped at searchLimit, with the way to find a row
// anywhere (a filter reads only the key groups its keys pin).
func notFound(what, whats, text string, limited bool) string {
	if limited {
		return fmt.Sprintf("no %s with %q in the first %s (a search reads no more; f filters the whole table, e.g. key = '…')", what, text, plural(int64(searchLimit), what, whats))
	}
	return fmt.Sprintf("no %s with %q", what, text)
}
