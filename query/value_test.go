package query

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"streamdbg/state"
)

func TestCompare(t *testing.T) {
	ts := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		a, b any
		want int
		ok   bool
	}{
		{int64(1), int64(2), -1, true},
		{int64(2), 1.5, 1, true},
		{2.0, int64(2), 0, true},
		{"a", "b", -1, true},
		{true, false, 1, true},
		{ts, "2024-05-01T12:00:00Z", 0, true},
		{"2024-05-02", ts, 1, true},
		{ts, "not a time", 0, false},
		{[]byte{1, 2}, state.Hex{1, 2}, 0, true},
		{state.Hex{0xff}, "0xFF", 0, true},
		{"0x00", []byte{1}, -1, true},
		{nil, int64(1), 0, false},
		{int64(1), "1", 0, false}, // a row's string never compares as a number
		{"1", int64(1), 0, false},
		{[]any{}, []any{}, 0, false},
		// A constant that reads as a number: that number against numbers,
		// its text against strings.
		{int64(3), numStr{"3", int64(3)}, 0, true},
		{numStr{"10", int64(10)}, int64(9), 1, true},
		{2.5, numStr{"2.50", 2.5}, 0, true},
		{state.Decimal("12.30"), numStr{"12.3", 12.3}, 0, true},
		{"3", numStr{"3", int64(3)}, 0, true},
		{"3.0", numStr{"3", int64(3)}, 1, true},
		{numStr{"10", int64(10)}, "9", -1, true},
		{true, numStr{"1", int64(1)}, 0, false},
		{nil, numStr{"1", int64(1)}, 0, false},
	} {
		got, ok := compare(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("compare(%#v, %#v) = %d, %v; want %d, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

func TestArith(t *testing.T) {
	for _, tc := range []struct {
		op       string
		a, b     any
		want     any
		overflow bool
	}{
		{"+", int64(1), int64(2), int64(3), false},
		{"/", int64(7), int64(2), int64(3), false},
		{"/", int64(7), 2.0, 3.5, false},
		{"%", int64(7), int64(0), nil, false},
		{"/", 1.0, 0.0, nil, false},
		// int64 results that do not fit are overflows, not wrapped values.
		{"-", int64(math.MinInt64), int64(1), int64(math.MaxInt64), true},
		{"/", int64(math.MinInt64), int64(-1), int64(math.MinInt64), true},
		{"+", int64(math.MaxInt64), int64(1), int64(math.MinInt64), true},
		{"+", int64(math.MaxInt64), int64(-1), int64(math.MaxInt64 - 1), false},
		{"+", int64(math.MinInt64), int64(math.MinInt64), int64(0), true},
		{"-", int64(0), int64(math.MinInt64), int64(math.MinInt64), true},
		{"-", int64(-1), int64(math.MinInt64), int64(math.MaxInt64), false},
		{"*", int64(3037000500), int64(3037000500), int64(-9223372036709301616), true},
		{"*", int64(3037000499), int64(3037000499), int64(9223372030926249001), false},
		{"*", int64(-1), int64(math.MinInt64), int64(math.MinInt64), true},
		{"*", int64(math.MinInt64), int64(-1), int64(math.MinInt64), true},
		{"*", int64(math.MinInt64), int64(1), int64(math.MinInt64), false},
		{"%", int64(math.MinInt64), int64(-1), int64(0), false},
		{"*", "a", int64(1), nil, false},
		{"+", nil, int64(1), nil, false},
	} {
		got, overflow := arith(tc.op, tc.a, tc.b)
		if overflow != tc.overflow || !tc.overflow && got != tc.want {
			t.Errorf("arith(%s, %#v, %#v) = %#v, overflow %v; want %#v, overflow %v", tc.op, tc.a, tc.b, got, overflow, tc.want, tc.overflow)
		}
	}
}

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"key_%", "key_662", true},
		{"key_%", "key", false},
		{`key\_%`, "keyx1", false},
		{`key\_%`, "key_1", true},
		{"%.%", "a.b", true},
		{"%.%", "ab", false},
		{"a%", "a\nb", true},
		{`100\%`, "100%", true},
		{`100\%`, "1000", false},
		{`x\`, `x\`, true},
		{"", "", true},
		{"", "a", false},
		{"%", "", true},
		{"_", "é", true},
		{"_", "ab", false},
		{"%a%b%", "xxaxxbxx", true},
		{"%a%b%", "xxbxxaxx", false},
		{"a%a", "a", false},
		{"a%a", "aa", true},
		{"%ab", "abab", true},
		{"ab%ab", "abab", true},
		{"ab%ab", "aba", false},
		{"_%_", "é", false},
		{"%" + strings.Repeat("%", 60_000) + "z", "abcz", true},
	} {
		m, err := compilePattern(false, tc.pattern)
		if len(tc.pattern) > maxLikePattern {
			m, err = compileLike(tc.pattern), nil
		}
		if err != nil {
			t.Fatalf("compilePattern(%q): %v", tc.pattern, err)
		}
		if got := m.MatchString(tc.s); got != tc.want {
			t.Errorf("%q LIKE %.20q = %v, want %v", tc.s, tc.pattern, got, tc.want)
		}
	}
}

// likeReference translates a LIKE pattern into an anchored regular
// expression: an independent implementation to check compileLike against.
func likeReference(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	escaped := false
	for _, r := range pattern {
		switch {
		case escaped:
			b.WriteString(regexp.QuoteMeta(string(r)))
			escaped = false
		case r == '\\':
			escaped = true
		case r == '%':
			b.WriteString(`.*`)
		case r == '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if escaped {
		b.WriteString(`\\`)
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// compileLike agrees with the regular expression on random patterns and
// strings over a small alphabet (where % and _ interact most).
func TestLikeAgreesWithRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	alpha := []string{"a", "b", "é", "%", "_", `\`}
	pick := func(n int, from []string) string {
		var b strings.Builder
		for range rng.IntN(n) {
			b.WriteString(from[rng.IntN(len(from))])
		}
		return b.String()
	}
	for range 20_000 {
		p, s := pick(8, alpha), pick(8, alpha[:3])
		want := likeReference(p).MatchString(s)
		if got := compileLike(p).MatchString(s); got != want {
			t.Fatalf("%q LIKE %q = %v, want %v", s, p, got, want)
		}
	}
}

// Patterns beyond their bound are refused; within it, the blow-up cases
// are fast. (Before: 60,000 % took 26 s on 2,204 rows; .* x 30,000 10 s.)
func TestPatternBounds(t *testing.T) {
	if _, err := compilePattern(false, strings.Repeat("%", maxLikePattern+1)); err == nil || !strings.Contains(err.Error(), "more than the 4096 a LIKE pattern may have") {
		t.Fatalf("long LIKE: %v", err)
	}
	if _, err := compilePattern(true, strings.Repeat(".*", 513)); err == nil || !strings.Contains(err.Error(), "1026 bytes, more than the 1024 a REGEXP pattern may have") {
		t.Fatalf("long REGEXP: %v", err)
	}
	// Segments longer than one 64-bit word of the automaton.
	long := "%" + strings.Repeat("a", 100) + "_" + strings.Repeat("a", 30) + "b%"
	for s, want := range map[string]bool{
		strings.Repeat("a", 200) + "xb":                                          false,
		strings.Repeat("a", 150) + "é" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + "b!": true,
		"x" + strings.Repeat("a", 100) + "b" + strings.Repeat("a", 30) + "b":     true,
		strings.Repeat("a", 99) + "b" + strings.Repeat("a", 30) + "b":            false,
	} {
		if got := compileLike(long).MatchString(s); got != want || likeReference(long).MatchString(s) != want {
			t.Errorf("long segment on %.20q…: %v, want %v", s, got, want)
		}
	}
	// The largest LIKE of % and one letter: one segment per %a.
	m, err := compilePattern(false, strings.Repeat("%a", maxLikePattern/2))
	if err != nil {
		t.Fatal(err)
	}
	lp := m.(*likePattern)
	if len(lp.segs) != maxLikePattern/2 {
		t.Fatalf("%d segments", len(lp.segs))
	}
	s := strings.Repeat("b", 2000)
	for range 2204 {
		if m.MatchString(s) {
			t.Fatal("matched")
		}
	}
}

func TestNearest(t *testing.T) {
	cols := keyedTable.columnNames()
	for _, tc := range []struct{ name, want string }{
		{"vlaue", "value"},
		{"valu", "value"},
		{"KEY", "key"},
		{"operatr_name", "operator_name"},
		{"statename", "state_name"},
		{"zzzzzz", ""},
		{"x", ""},
	} {
		if got := nearest(tc.name, cols); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, `null`},
		{int64(-3), `-3`},
		{2.5, `2.5`},
		{math.NaN(), `null`},
		{"a\"\n\x01", `"a\"\n\u0001"`},
		{time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), `"2024-05-01T12:00:00Z"`},
		{time.Date(2024, 5, 1, 12, 0, 0, 1_500_000, time.UTC), `"2024-05-01T12:00:00.001Z"`},
		{[]byte{0xca, 0xfe}, `"0xcafe"`},
		{state.Hex{0x01}, `"0x01"`},
		{map[string]any{"b": []any{int64(1), true}, "a": nil}, `{"a":null,"b":[1,true]}`},
		{string([]byte{0xff}), `"` + "\uFFFD" + `"`},
	} {
		if got := string(appendJSON(nil, tc.v)); got != tc.want {
			t.Errorf("appendJSON(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestExprString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a+b*c", "a + b * c"},
		{"(a+b)*c", "(a + b) * c"},
		{"a-(b-c)", "a - (b - c)"},
		{"not a=1 and (b or c)", "NOT a = 1 AND (b OR c)"},
		{`value['p3'].x[0]`, `value['p3'].x[0]`},
		{`"select" in (1, 'it''s', null)`, `"select" IN (1, 'it''s', NULL)`},
		{"count(*) >= 2.0", "count(*) >= 2.0"},
	} {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", tc.in, err)
		}
		x, err := lowerExpr(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.String(); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRowsPullAndClose(t *testing.T) {
	cat := newTestCatalog()
	rows, err := RunText(t.Context(), cat, "SELECT key FROM keyed_state")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() || !rows.Next() {
		t.Fatalf("want two rows, err %v", rows.Err())
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if cat.rowsRead != 2 {
		t.Errorf("read %d rows after two Next and Close, want 2", cat.rowsRead)
	}
	if rows.Next() {
		t.Error("Next after Close returned a row")
	}
}

// TestTableStreams: the table format writes long results as they come
// (after its first tableWindow rows) instead of holding them all, and
// still counts every row.
func TestTableStreams(t *testing.T) {
	var out bytes.Buffer
	const n = 3 * tableWindow
	written := -1
	rows := &Rows{cols: []string{"key", "n"}, run: func(yield func([]any) bool) error {
		for i := range n {
			if i == 2*tableWindow {
				written = out.Len()
			}
			if !yield([]any{fmt.Sprintf("k%d", i), int64(i)}) {
				return nil
			}
		}
		return nil
	}}
	if err := Format(&out, rows, "table"); err != nil {
		t.Fatal(err)
	}
	if written <= 0 {
		t.Fatalf("nothing written after %d of %d rows: the table is buffered", 2*tableWindow, n)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if got, want := len(lines), n+3; got != want {
		t.Fatalf("%d lines, want %d", got, want)
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("(%d rows)", n) {
		t.Fatalf("last line %q", last)
	}
	// Widths come from the first rows; numbers stay right-aligned.
	if got, want := lines[len(lines)-2], fmt.Sprintf("k%d  %d", n-1, n-1); got != want {
		t.Fatalf("last row %q, want %q", got, want)
	}
	if got := lines[2]; got != "k0      0" { // widths of the first rows: 4 and 3
		t.Fatalf("first row %q", got)
	}
}

// TestMayEqual: two pinned constants of one column keep a value when some
// key could equal both (the pushdown intersects them so).
func TestMayEqual(t *testing.T) {
	for _, tc := range []struct {
		v, w any
		want bool
	}{
		{"3", int64(3), true},
		{"3", "3.0", true},
		{" 3", 3.0, true},
		{"3", "4", false},
		{"a", "a", true},
		{"a", "b", false},
		{int64(3), 3.0, true},
		{"x", int64(0), false},
		{"0x10", int64(16), false},
	} {
		if got := mayEqual(tc.v, tc.w); got != tc.want {
			t.Errorf("mayEqual(%#v, %#v) = %v, want %v", tc.v, tc.w, got, tc.want)
		}
	}
}

// TestTableCutsLongCells: a value of a million characters (a RocksDB
// list of 20,000 elements, a 1 MB string) is cut in the table format,
// with its length, so that it does not widen every line of its column:
// before, one such value made a diff's table output 21.8 GB. CSV prints
// it whole.
func TestTableCutsLongCells(t *testing.T) {
	long := strings.Repeat("é", 1<<20)
	mk := func() *Rows {
		return &Rows{cols: []string{"value", "key"}, run: func(yield func([]any) bool) error {
			for i, v := range []any{"short", long, strings.Repeat("x", maxTableCell)} {
				if !yield([]any{v, fmt.Sprintf("k%d", i)}) {
					return nil
				}
			}
			return nil
		}}
	}
	var out bytes.Buffer
	if err := Format(&out, mk(), "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > maxTableCell+10 {
			t.Errorf("a line of %d characters: %.80q…", n, l)
		}
	}
	if !strings.HasPrefix(lines[3], strings.Repeat("é", maxTableCell-24)+"… (1048576 chars)") || !strings.HasSuffix(lines[3], "  k1") {
		t.Errorf("the long value's line: %.300q", lines[3])
	}
	// A value of exactly the limit is shown whole.
	if !strings.HasPrefix(lines[4], strings.Repeat("x", maxTableCell)+"  k2") {
		t.Errorf("a value of %d characters was cut: %.300q", maxTableCell, lines[4])
	}
	out.Reset()
	if err := Format(&out, mk(), "csv"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), long+",k1\n") {
		t.Error("csv cut the long value")
	}
}
