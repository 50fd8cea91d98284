package tui

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"streamdbg/internal/numfmt"
	"streamdbg/query"
	"streamdbg/runtime/session"
)

// show prints a dynamic value for a table cell: · for none, times short
// (see shortTime), windows as [start, end), everything else as the query
// language prints it.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "·"
	case string:
		return oneLine(x)
	case time.Time:
		return shortTime(x)
	case map[string]any:
		if w, ok := window(x); ok {
			return w
		}
	case fmt.Stringer:
		return oneLine(x.String())
	case int, int8, int16, int32, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	}
	return query.FormatValue(v)
}

// window prints a window namespace {start, end} as [start, end), the end
// without the date when it is the start's.
func window(m map[string]any) (string, bool) {
	if len(m) != 2 {
		return "", false
	}
	s, ok1 := m["start"]
	e, ok2 := m["end"]
	if !ok1 || !ok2 {
		return "", false
	}
	st, ok1 := s.(time.Time)
	et, ok2 := e.(time.Time)
	if !ok1 || !ok2 {
		return fmt.Sprintf("[%s, %s)", show(s), show(e)), true
	}
	end := shortTime(et)
	if st.UTC().Format(time.DateOnly) == et.UTC().Format(time.DateOnly) {
		end = et.UTC().Format(clockLayout(et))
	}
	return "[" + shortTime(st) + ", " + end + ")", true
}

// shortTime prints a time as date and time of day, milliseconds only when
// it has some: 2026-03-01 12:00:10 (UTC).
func shortTime(t time.Time) string {
	t = t.UTC()
	return t.Format("2006-01-02 " + clockLayout(t))
}

func clockLayout(t time.Time) string {
	if t.Nanosecond() == 0 {
		return "15:04:05"
	}
	return "15:04:05.000"
}

// showRecord prints a record: strings quoted, structures as JSON in their
// fields' order when the record says it.
func showRecord(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case nil:
		return "·"
	case interface{ AppendJSON([]byte) []byte }:
		return string(x.AppendJSON(nil))
	case map[string]any, []any:
		return query.FormatJSON(x, false)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return show(v)
}

// pretty prints a value in full for the detail view: JSON indented, a
// string as it is (newlines kept).
func pretty(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "NULL"
	case interface{ AppendJSON([]byte) []byte }:
		var anyv any
		if err := json.Unmarshal(x.AppendJSON(nil), &anyv); err == nil {
			if b, err := json.MarshalIndent(anyv, "", "  "); err == nil {
				return string(b)
			}
		}
		return string(x.AppendJSON(nil))
	case map[string]any, []any:
		if flat := query.FormatJSON(x, false); len(flat) <= 60 {
			return flat
		}
		return query.FormatJSON(x, true)
	}
	if b, err := json.MarshalIndent(v, "", "  "); err == nil && strings.HasPrefix(string(b), "{") {
		return string(b)
	}
	return show(v)
}

// clock prints event or processing time for the plan: time of day, or the
// sentinels (—: no watermark yet).
func clock(ms int64) string {
	if ms == math.MinInt64 {
		return "—"
	}
	if s, ok := session.Sentinel(ms); ok {
		return s
	}
	t := time.UnixMilli(ms).UTC()
	return t.Format(clockLayout(t))
}

// dateClock prints a time with its date (the header's watermark): the
// date goes when narrow says so.
func dateClock(ms int64, narrow bool) string {
	if ms == math.MinInt64 {
		return "—"
	}
	if s, ok := session.Sentinel(ms); ok {
		return s
	}
	t := time.UnixMilli(ms).UTC()
	if narrow {
		return t.Format("01-02 " + clockLayout(t))
	}
	return t.Format("2006-01-02 " + clockLayout(t))
}

// timestamp prints a timer's time in full: a date, or a sentinel.
func timestamp(ms int64) string {
	if s, ok := session.Sentinel(ms); ok {
		return s
	}
	return shortTime(time.UnixMilli(ms))
}

// fit cuts or pads a styled string to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// cutWords cuts a plain string to w cells at a word boundary, with … when
// something went.
func cutWords(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return "…"
	}
	cut := ansi.Truncate(s, w-1, "")
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:·") + "…"
}

// oneLine flattens newlines so a value stays on its row.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.NewReplacer("\n", "⏎", "\r", "", "\t", " ").Replace(s)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return numfmt.Commas(n) + " " + many
}

// hscroll drops the first off cells of a line (horizontal scrolling).
func hscroll(s string, off int) string {
	if off <= 0 {
		return s
	}
	return ansi.Cut(s, off, ansi.StringWidth(s))
}

// wrapLines wraps each line to w cells (not at ':', which would split
// times of day).
func wrapLines(lines []string, w int) []string {
	if w < 1 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, w, " ,;/"), "\n")...)
	}
	return out
}

// wrapHanging wraps one line to w cells, its continuation lines indented
// as the line is (help's descriptions, details' nested values), unless the
// indent takes more than half the width.
func wrapHanging(l string, w int) []string {
	ind := len(l) - len(strings.TrimLeft(l, " "))
	if ind == 0 || ind > w/2 {
		return wrapLines([]string{l}, w)
	}
	parts := wrapLines([]string{l[ind:]}, w-ind)
	for i := range parts {
		parts[i] = l[:ind] + parts[i]
	}
	return parts
}

func ansiStrip(s string) string { return ansi.Strip(s) }
