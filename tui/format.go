package tui

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"streamdbg/state"
)

// show prints a dynamic value for a table cell.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "·"
	case string:
		return x
	case []byte:
		return state.Hex(x).String()
	case fmt.Stringer:
		return x.String()
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.000Z")
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// showRecord prints a record: strings quoted, structures as JSON.
func showRecord(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case nil:
		return "·"
	case interface{ AppendJSON([]byte) []byte }:
		// The record as the job's sink writes it, fields in its order.
		return string(x.AppendJSON(nil))
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	if b, err := json.Marshal(state.ToDynamic(v)); err == nil {
		return string(b)
	}
	return show(v)
}

// clock prints event or processing time for the header and plan: the time
// of day when it is today-ish, — before the first watermark.
func clock(ms int64) string {
	switch ms {
	case math.MinInt64:
		return "—"
	case math.MaxInt64:
		return "+∞"
	}
	return time.UnixMilli(ms).UTC().Format("15:04:05.000")
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
	return fmt.Sprintf("%d %s", n, many)
}
