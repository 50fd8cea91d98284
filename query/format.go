package query

import (
	"bufio"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"streamdbg/state"
)

// Formats are the names Format accepts.
var Formats = []string{"table", "json", "csv"}

// Format writes rows to w and closes them. table aligns columns for people
// and ends with a row count (it holds the first tableWindow rows to
// measure them, then streams with those widths); json
// writes one object per row, keys in column order, numbers as numbers,
// times as RFC 3339 strings and bytes as "0x..." strings; csv writes a
// header row then one record per row, NULL as an empty field. json and csv
// stream too.
func Format(w io.Writer, rows *Rows, format string) error {
	defer rows.Close()
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "table":
		err = formatTable(bw, rows)
	case "json":
		err = formatJSON(bw, rows)
	case "csv":
		err = formatCSV(bw, rows)
	default:
		return fmt.Errorf("query: unknown format %q (want table, json or csv)", format)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func formatJSON(w *bufio.Writer, rows *Rows) error {
	keys := make([][]byte, len(rows.Columns()))
	for i, c := range rows.Columns() {
		keys[i] = appendJSONString(nil, c)
	}
	var buf []byte
	for row, err := range rows.All() {
		if err != nil {
			return err
		}
		buf = append(buf[:0], '{')
		for i, v := range row {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, keys[i]...)
			buf = append(buf, ':')
			buf = appendJSON(buf, v)
		}
		buf = append(buf, '}', '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

func formatCSV(w *bufio.Writer, rows *Rows) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(rows.Columns()); err != nil {
		return err
	}
	rec := make([]string, len(rows.Columns()))
	for row, err := range rows.All() {
		if err != nil {
			return err
		}
		for i, v := range row {
			if v == nil {
				rec[i] = ""
			} else {
				rec[i] = formatText(v)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// tableWindow is how many rows the table format reads before it fixes the
// column widths and starts writing: results up to this size are aligned
// exactly; longer ones stream with the widths of their first rows (a wider
// cell later just pushes its line out), so memory does not grow with the
// result.
const tableWindow = 1000

func formatTable(w *bufio.Writer, rows *Rows) error {
	cols := rows.Columns()
	widths := make([]int, len(cols))
	numeric := make([]bool, len(cols))
	for i, c := range cols {
		widths[i] = utf8.RuneCountInString(c)
		numeric[i] = true
	}
	var cells [][]string
	writeLine := func(line []string) {
		var b strings.Builder
		for i, s := range line {
			pad := strings.Repeat(" ", max(0, widths[i]-utf8.RuneCountInString(s)))
			if i > 0 {
				b.WriteString("  ")
			}
			if numeric[i] {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s)
				if i < len(line)-1 {
					b.WriteString(pad)
				}
			}
		}
		w.WriteString(strings.TrimRight(b.String(), " "))
		w.WriteByte('\n')
	}
	started := false
	start := func() {
		started = true
		header := slices.Clone(cols)
		for i := range header {
			header[i] = cellText(header[i])
		}
		writeLine(header)
		rule := make([]string, len(cols))
		for i := range rule {
			rule[i] = strings.Repeat("-", widths[i])
		}
		writeLine(rule)
		for _, line := range cells {
			writeLine(line)
		}
	}
	n := 0
	var line []string
	for row, err := range rows.All() {
		if err != nil {
			return err
		}
		n++
		if started {
			line = line[:0]
			for _, v := range row {
				line = append(line, tableCell(v))
			}
			writeLine(line)
			continue
		}
		line := make([]string, len(row))
		for i, v := range row {
			line[i] = tableCell(v)
			widths[i] = max(widths[i], utf8.RuneCountInString(line[i]))
			switch v.(type) {
			case int64, float64, nil:
			default:
				numeric[i] = false
			}
		}
		cells = append(cells, line)
		if len(cells) == tableWindow {
			start()
			cells = nil
		}
	}
	if !started {
		start()
	}
	if n == 1 {
		_, err := w.WriteString("(1 row)\n")
		return err
	}
	_, err := fmt.Fprintf(w, "(%d rows)\n", n)
	return err
}

// maxTableCell is the most characters a cell of the table format shows:
// a longer value (a list of 20,000 elements, a 1 MB string) is cut, with
// its length, so that one value does not widen every line of its column
// (csv and json print values whole).
const maxTableCell = 200

// tableCell is cellText cut to maxTableCell characters.
func tableCell(v any) string {
	s := cellText(v)
	if len(s) <= maxTableCell {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= maxTableCell {
		return s
	}
	keep := maxTableCell - 24
	i := 0
	for range keep {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + fmt.Sprintf("… (%d chars)", n)
}

// cellText is formatText with control characters escaped, so one row stays
// one line.
func cellText(v any) string {
	s := formatText(v)
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// appendJSON appends a dynamic value as JSON. Map keys are sorted, as
// encoding/json sorts them; NaN and infinities, which JSON lacks, are null.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		return appendJSONString(b, x)
	case time.Time:
		return appendJSONString(b, formatTime(x))
	case []byte:
		return appendJSONString(b, "0x"+hex.EncodeToString(x))
	case state.Hex:
		return appendJSONString(b, "0x"+hex.EncodeToString(x))
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case state.Decimal:
		return append(b, x...)
	case *state.Row:
		return appendRowJSON(b, x)
	case state.Pairs:
		return appendPairsJSON(b, x)
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x[k])
		}
		return append(b, '}')
	}
	return appendJSONString(b, fmt.Sprint(v))
}

// appendRowJSON writes a row as an object of its fields in their order:
// a tagged record starts with its "type", a RowData whose kind is not
// +I with its "$kind".
func appendRowJSON(b []byte, r *state.Row) []byte {
	b = append(b, '{')
	n := 0
	sep := func() {
		if n > 0 {
			b = append(b, ',')
		}
		n++
	}
	if t := r.Type(); t != "" {
		sep()
		b = append(b, `"type":`...)
		b = appendJSONString(b, t)
	}
	if r.Kind != state.NotRowData && r.Kind != state.Insert {
		sep()
		b = append(b, `"$kind":`...)
		b = appendJSONString(b, r.Kind.String())
	}
	for i, v := range r.Values {
		sep()
		b = appendJSONString(b, r.FieldName(i))
		b = append(b, ':')
		b = appendJSON(b, v)
	}
	return append(b, '}')
}

// appendPairsJSON writes a map as an object when every key is a string or
// a number, in stored order, and as an array of [key, value] pairs when
// keys are structured (rows, lists).
func appendPairsJSON(b []byte, p state.Pairs) []byte {
	scalarKeys := true
	for _, e := range p {
		switch e.Key.(type) {
		case string, int64, float64, bool, state.Decimal:
		default:
			scalarKeys = false
		}
	}
	if scalarKeys {
		b = append(b, '{')
		for i, e := range p {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, formatText(e.Key))
			b = append(b, ':')
			b = appendJSON(b, e.Value)
		}
		return append(b, '}')
	}
	b = append(b, '[')
	for i, e := range p {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendJSON(b, e.Key)
		b = append(b, ',')
		b = appendJSON(b, e.Value)
		b = append(b, ']')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
// It escapes what JSON must (the quote, the backslash, control characters)
// and U+2028 and U+2029 (which JavaScript does not take in a string), not
// < > & (the output is not for HTML). Runs of bytes that need no escape are
// copied whole.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // s[start:i] is waiting to be copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = utf8.AppendRune(b, utf8.RuneError)
		case r == 0x2028 || r == 0x2029:
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
