package tui

import (
	"fmt"
	"iter"
	"strconv"

	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"streamdbg/query"
	"streamdbg/state"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// stateTabs are the state pane's tabs.
var stateTabs = [...]string{"keyed", "operator", "timers", "windows"}

// statePane shows one operator's state in one subtask as a paged table.
type statePane struct {
	keys    *keys.KeyMap
	tab     int
	ref     subtaskRef
	cat     state.Catalog
	changes map[string]change
	filter  string
	cond    *query.Compiled
	pager   *pager
	cols    []column
	// chosen is the operator picked with < and > in each task (by name),
	// kept while the selection moves between subtasks and tasks.
	chosen map[string]string
	w, h   int
}

func (p *statePane) SetSize(w, h int) {
	p.w, p.h = w, h
	if p.pager != nil {
		p.pager.resize(p.pageSize())
	}
}

func (p *statePane) pageSize() int { return max(1, p.h-3) }

// setSource points the pane at a subtask of a (new) live catalog; it keeps
// the scroll position when the operator, subtask and tab stay the same.
func (p *statePane) setSource(cat state.Catalog, ref subtaskRef, changes map[string]change) {
	if id, ok := p.chosen[ref.task]; ok {
		for _, op := range ref.operators {
			if op.ID == id {
				ref.operator = op
			}
		}
	}
	same := p.pager != nil && p.ref.operator == ref.operator && p.ref.index == ref.index && p.ref.task == ref.task
	p.cat, p.ref, p.changes = cat, ref, changes
	p.rebuild(same)
}

// setFilter compiles a `/` expression over the row's columns ("" clears).
func (p *statePane) setFilter(text string) error {
	c, err := compileFilter(text)
	if err != nil {
		return err
	}
	p.filter, p.cond = text, c
	p.rebuild(false)
	return nil
}

func (p *statePane) rebuild(keep bool) {
	if p.cat == nil || p.ref.operator == nil {
		p.pager = nil
		return
	}
	var src rowSource
	op := p.ref.operator
	switch stateTabs[p.tab] {
	case "keyed", "windows":
		src = &keyedSource{cat: p.cat, opID: op.ID, opName: op.Name, subtask: p.ref.index, groups: p.ref.groups,
			windows: p.tab == 3, cond: p.cond, changes: p.changes}
		p.cols = []column{{"state", 6, 1}, {"key", 6, 3}, {"namespace", 9, 2}, {"user key", 8, 2}, {"value", 8, 4}}
	case "operator":
		src = &operatorSource{cat: p.cat, opID: op.ID, subtask: p.ref.index, cond: p.cond}
		p.cols = []column{{"state", 8, 1}, {"mode", 6, 0}, {"position", 8, 0}, {"key", 5, 2}, {"value", 8, 4}}
	case "timers":
		src = &timerSource{cat: p.cat, opID: op.ID, subtask: p.ref.index, groups: p.ref.groups, cond: p.cond}
		p.cols = []column{{"domain", 10, 0}, {"timestamp", 24, 0}, {"key", 6, 2}, {"namespace", 9, 2}}
	}
	if keep && p.pager != nil {
		old := p.pager
		p.pager = &pager{src: src, size: p.pageSize(), kg: old.kg, skip: old.skip, index: old.index}
		p.pager.load()
		if len(p.pager.page) == 0 && p.pager.index > 0 {
			p.pager.top()
		}
		return
	}
	p.pager = newPager(src, p.pageSize())
}

// Update handles tabs and scrolling; it reads at most one page and one key
// group from the catalog.
func (p *statePane) Update(msg tea.Msg) {
	if p.pager == nil {
		return
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.NextTab):
			p.tab = (p.tab + 1) % len(stateTabs)
			p.rebuild(false)
		case key.Matches(msg, p.keys.PrevTab):
			p.tab = (p.tab + len(stateTabs) - 1) % len(stateTabs)
			p.rebuild(false)
		case key.Matches(msg, p.keys.NextOp):
			p.pickOperator(1)
		case key.Matches(msg, p.keys.PrevOp):
			p.pickOperator(-1)
		default:
			p.pager.scroll(msg, p.keys, p.pageSize())
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.pager.up(3)
		} else if msg.Button == tea.MouseWheelDown {
			p.pager.down(3)
		}
	}
}

// pickOperator moves to the next (+1) or previous (-1) operator of the
// selected subtask's chain, wrapping around.
func (p *statePane) pickOperator(d int) {
	ops := p.ref.operators
	if len(ops) < 2 {
		return
	}
	i := p.opIndex()
	op := ops[(i+d+len(ops))%len(ops)]
	if p.chosen == nil {
		p.chosen = map[string]string{}
	}
	p.chosen[p.ref.task] = op.ID
	p.ref.operator = op
	if !op.Keyed && stateTabs[p.tab] != "operator" {
		p.tab = 1 // an operator without keys has operator state only
	}
	p.rebuild(false)
}

// opIndex is the position of the shown operator in its chain.
func (p *statePane) opIndex() int {
	for i, op := range p.ref.operators {
		if op == p.ref.operator {
			return i
		}
	}
	return 0
}

// title names the operator (its place in the chain when there are several),
// the subtask, its key groups and the tabs. A narrow pane gets the active
// tab only, with its place among the tabs.
func (p *statePane) title(st *styles.Styles) string {
	if p.ref.operator == nil {
		return "State"
	}
	t := "State · " + p.ref.operator.Name
	if n := len(p.ref.operators); n > 1 {
		t += fmt.Sprintf(" ‹op %d/%d›", p.opIndex()+1, n)
	}
	t += fmt.Sprintf(" [%d/%d]", p.ref.index, p.ref.parallel)
	kg := fmt.Sprintf(" · kg %d–%d ·", p.ref.groups.Start, p.ref.groups.End)
	tabs := ""
	for i, name := range stateTabs {
		if i == p.tab {
			tabs += " " + st.TabActive.Render(name)
		} else {
			tabs += " " + st.Tab.Render(name)
		}
	}
	if ansi.StringWidth(t+kg+tabs) <= p.w-5 {
		return t + kg + tabs
	}
	short := fmt.Sprintf(" · %s %d/%d", st.TabActive.Render(stateTabs[p.tab]), p.tab+1, len(stateTabs))
	if ansi.StringWidth(t+kg+short) <= p.w-5 {
		return t + kg + short
	}
	return t + short
}

func (p *statePane) View(st *styles.Styles, focused bool) string {
	if p.pager == nil {
		return box(st, "State", focused, p.w, p.h, []string{st.Dim.Render("no state")})
	}
	pg := p.pager
	rows := make([][]string, len(pg.page))
	for i, r := range pg.page {
		rows[i] = r.cells
	}
	// Columns no row of the page uses are dropped, so narrow panes keep
	// the key and the value.
	cols, idx := p.usedColumns(rows)
	vis := make([][]string, len(rows))
	for i, r := range rows {
		v := make([]string, len(idx))
		for j, c := range idx {
			if c < len(r) {
				v[j] = r[c]
			}
		}
		vis[i] = v
	}
	lines := table(st, cols, vis, p.w-2, func(i, j int, s string) string {
		if pg.page[i].changed {
			return st.Changed.Render(s)
		}
		return s
	})
	switch {
	case pg.err != nil:
		lines = append(lines, st.Failed.Render(pg.err.Error()))
	case len(pg.page) == 0:
		lines = append(lines, st.Dim.Render("no entries"))
	}
	status := ""
	if len(pg.page) > 0 {
		status = fmt.Sprintf("rows %d–%d", pg.index+1, pg.index+len(pg.page))
		if pg.more {
			status += " · more ↓"
		}
	}
	if p.filter != "" {
		status += " · filter: " + p.filter
	}
	for len(lines) < p.h-3 {
		lines = append(lines, "")
	}
	lines = append(lines[:min(len(lines), p.h-3)], st.Dim.Render(status))
	return box(st, p.title(st), focused, p.w, p.h, lines)
}

func (p *statePane) usedColumns(rows [][]string) ([]column, []int) {
	var cols []column
	var idx []int
	for j, c := range p.cols {
		used := j == 0 || j == len(p.cols)-1 || c.title == "key"
		for _, r := range rows {
			if used {
				break
			}
			used = j < len(r) && r[j] != "·" && r[j] != ""
		}
		if used {
			cols = append(cols, c)
			idx = append(idx, j)
		}
	}
	return cols, idx
}

func (p *statePane) Help() []key.Binding {
	return []key.Binding{p.keys.NextTab, p.keys.NextOp, p.keys.Up, p.keys.Down, p.keys.PageDown, p.keys.Filter}
}

// keyedSource reads one operator's keyed state in one subtask.
type keyedSource struct {
	cat     state.Catalog
	opID    string
	opName  string
	subtask int
	groups  state.KeyGroupRange
	windows bool
	cond    *query.Compiled
	changes map[string]change
}

func (s *keyedSource) first() int { return s.groups.Start }

func (s *keyedSource) rows(from int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		kgs := make([]int, 0, s.groups.End-from+1)
		for kg := max(from, s.groups.Start); kg <= s.groups.End; kg++ {
			kgs = append(kgs, kg)
		}
		if len(kgs) == 0 {
			return
		}
		for r, err := range s.cat.Keyed(state.KeyedScan{OperatorID: s.opID, KeyGroups: kgs}) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if r.Subtask != s.subtask || s.windows && r.Namespace == nil {
				continue
			}
			if ok, err := passes(s.cond, r, keyedEnv); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			row := pageRow{kg: r.KeyGroup, cells: []string{r.StateName, show(r.Key), show(r.Namespace), show(r.UserKey), show(r.Value)}}
			if c, ok := s.changes[changeKey(s.opName, r.Subtask, r.StateName, r.Key, r.Namespace, r.UserKey)]; ok {
				row.changed = true
				if c.hadOld {
					row.old = c.old
					row.cells[4] += "  ← " + c.old
				} else {
					row.cells[4] += "  (new)"
				}
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

// operatorSource reads one operator's operator state in one subtask.
type operatorSource struct {
	cat     state.Catalog
	opID    string
	subtask int
	cond    *query.Compiled
}

func (s *operatorSource) first() int { return 0 }

func (s *operatorSource) rows(from int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		for r, err := range s.cat.OperatorState(state.OperatorScan{OperatorID: s.opID}) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if r.Subtask != s.subtask {
				continue
			}
			if ok, err := passes(s.cond, r, operatorEnv); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{cells: []string{r.StateName, fmt.Sprint(r.Kind), strconv.Itoa(r.Position), show(r.Key), show(r.Value)}}, nil) {
				return
			}
		}
	}
}

// timerSource reads one operator's timers in one subtask.
type timerSource struct {
	cat     state.Catalog
	opID    string
	subtask int
	groups  state.KeyGroupRange
	cond    *query.Compiled
}

func (s *timerSource) first() int { return s.groups.Start }

func (s *timerSource) rows(from int) iter.Seq2[pageRow, error] {
	return func(yield func(pageRow, error) bool) {
		var kgs []int
		for kg := max(from, s.groups.Start); kg <= s.groups.End; kg++ {
			kgs = append(kgs, kg)
		}
		if len(kgs) == 0 {
			return
		}
		for r, err := range s.cat.Timers(state.TimerScan{OperatorID: s.opID, KeyGroups: kgs}) {
			if err != nil {
				yield(pageRow{}, err)
				return
			}
			if r.Subtask != s.subtask {
				continue
			}
			if ok, err := passes(s.cond, r, timerEnv); err != nil {
				yield(pageRow{}, err)
				return
			} else if !ok {
				continue
			}
			if !yield(pageRow{kg: r.KeyGroup, cells: []string{r.Domain, state.FormatMillis(r.Timestamp), show(r.Key), show(r.Namespace)}}, nil) {
				return
			}
		}
	}
}
