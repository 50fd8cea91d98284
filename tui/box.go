package tui

import (
	"regexp"
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
	var b strings.Builder
	b.WriteString(edge.Render("┌") + ts.Render(t) + edge.Render(strings.Repeat("─", max(0, inner-ansi.StringWidth(t)))+"┐"))
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

// column is a table column: a header and the width it needs at least.
type column struct {
	title string
	min   int
}

// colWidths sizes columns to their content: each gets the width of its
// widest cell (header included); when that is too wide for w, the widest
// columns give up width first, down to their minimum, so a narrow column
// (subtask, kg) is never cut next to a wide value. With full, columns keep
// their content width and the line may be wider than w (horizontal
// scrolling shows the rest).
func colWidths(cols []column, rows [][]string, w int, full bool) []int {
	widths := make([]int, len(cols))
	for j, c := range cols {
		widths[j] = max(ansi.StringWidth(c.title), 1)
	}
	for _, r := range rows {
		for j := range min(len(r), len(cols)) {
			widths[j] = max(widths[j], ansi.StringWidth(oneLine(r[j])))
		}
	}
	if full {
		return widths
	}
	total := func() int {
		n := len(cols) - 1
		for _, x := range widths {
			n += x
		}
		return n
	}
	for total() > w {
		// Shrink the widest column that may still give.
		best := -1
		for j := range widths {
			floor := max(cols[j].min, min(ansi.StringWidth(cols[j].title), 8))
			if widths[j] > floor && (best < 0 || widths[j] > widths[best]) {
				best = j
			}
		}
		if best < 0 {
			break
		}
		widths[best]--
	}
	return widths
}

// table renders a header and rows; style(i, j, s) may style cell j of row
// i after it was cut to width.
func table(st *styles.Styles, cols []column, rows [][]string, w int, full bool, style func(i, j int, s string) string) []string {
	widths := colWidths(cols, rows, w, full)
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

// joinColumns puts two blocks of lines side by side.
func joinColumns(left, right string) string {
	l, r := strings.Split(left, "\n"), strings.Split(right, "\n")
	var b strings.Builder
	for i := 0; i < max(len(l), len(r)); i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(l) {
			b.WriteString(l[i])
		}
		if i < len(r) {
			b.WriteString(r[i])
		}
	}
	return b.String()
}

// datePrefix finds the dates show prints (2026-03-01 before a time).
var datePrefix = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})`)

// factorDates takes the date out of the times of a table when they all
// share it (cells "12:00:09.999", the date said once, by the caller), so
// window bounds and timers fit a narrow pane without being cut.
func factorDates(rows [][]string) ([][]string, string) {
	date := ""
	for _, r := range rows {
		for _, c := range r {
			for _, m := range datePrefix.FindAllStringSubmatch(c, -1) {
				if date == "" {
					date = m[1]
				} else if m[1] != date {
					return rows, ""
				}
			}
		}
	}
	if date == "" {
		return rows, ""
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		r2 := make([]string, len(r))
		for j, c := range r {
			r2[j] = datePrefix.ReplaceAllString(c, "$2")
		}
		out[i] = r2
	}
	return out, date
}
