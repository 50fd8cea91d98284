package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"streamdbg/tui/styles"
)

// box draws a bordered pane of exactly w×h cells with its title in the top
// border. Lines beyond the inner height are dropped; each line is cut or
// padded to the inner width.
func box(st *styles.Styles, title string, focused bool, w, h int, lines []string) string {
	if w < 4 || h < 2 {
		return ""
	}
	border := st.Pane.GetBorderTopForeground()
	bs := st.Pane
	ts := st.Title
	if focused {
		border = st.PaneFocused.GetBorderTopForeground()
		bs = st.PaneFocused
		ts = st.TitleFocus
	}
	edge := bs.UnsetBorderStyle().UnsetPadding().Foreground(border)
	inner := w - 2
	t := ""
	if title != "" {
		t = " " + ansi.Truncate(title, inner-3, "…") + " "
	}
	top := edge.Render("┌") + ts.Render(t) + edge.Render(strings.Repeat("─", max(0, inner-ansi.StringWidth(t)))+"┐")
	var b strings.Builder
	b.WriteString(top)
	side := edge.Render("│")
	for i := 0; i < h-2; i++ {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		b.WriteByte('\n')
		b.WriteString(side)
		b.WriteString(fit(l, inner))
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(edge.Render("└" + strings.Repeat("─", inner) + "┘"))
	return b.String()
}

// column is a table column: a header and a share of the free width.
type column struct {
	title string
	min   int // at least this wide
	grow  int // share of the remaining width
}

// table renders a header and rows to width w. Cells are plain strings;
// style(i, j, s) may style cell j of row i after it was cut to width.
func table(st *styles.Styles, cols []column, rows [][]string, w int, style func(i, j int, s string) string) []string {
	widths := colWidths(cols, w)
	out := make([]string, 0, len(rows)+1)
	var hb strings.Builder
	for j, c := range cols {
		hb.WriteString(st.Column.Render(fit(c.title, widths[j])))
		if j < len(cols)-1 {
			hb.WriteByte(' ')
		}
	}
	out = append(out, hb.String())
	for i, r := range rows {
		var b strings.Builder
		for j := range cols {
			cell := ""
			if j < len(r) {
				cell = oneLine(r[j])
			}
			cell = fit(cell, widths[j])
			if style != nil {
				cell = style(i, j, cell)
			}
			b.WriteString(cell)
			if j < len(cols)-1 {
				b.WriteByte(' ')
			}
		}
		out = append(out, b.String())
	}
	return out
}

func colWidths(cols []column, w int) []int {
	widths := make([]int, len(cols))
	used, grow := len(cols)-1, 0
	for j, c := range cols {
		widths[j] = c.min
		used += c.min
		grow += c.grow
	}
	free := w - used
	if free > 0 && grow > 0 {
		given := 0
		last := -1
		for j, c := range cols {
			if c.grow == 0 {
				continue
			}
			add := free * c.grow / grow
			widths[j] += add
			given += add
			last = j
		}
		if last >= 0 {
			widths[last] += free - given
		}
	}
	return widths
}
