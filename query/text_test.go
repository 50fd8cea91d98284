package query

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPaths(t *testing.T) {
	e, err := ParseExpr("state.count.total > 1 AND key = 'a' OR value['p3'].x = state.by_product[key]")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Paths(e)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		s := strings.Join(p.Names, ".")
		if p.Indexed {
			s += "[]"
		}
		got = append(got, fmt.Sprintf("%s@%d", s, p.Pos[len(p.Pos)-1].Col))
	}
	want := "state.count.total@13 key@27 value[]@40 state.by_product[]@62 key@73"
	if strings.Join(got, " ") != want {
		t.Fatalf("Paths = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestFormatValue(t *testing.T) {
	tm := time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "NULL"},
		{"a\nb", `a\nb`},
		{int64(-3), "-3"},
		{tm, "2026-03-01T12:00:10Z"},
		{map[string]any{"b": int64(1), "a": []any{"x", true}}, `{"a":["x",true],"b":1}`},
	} {
		if got := FormatValue(c.v); got != c.want {
			t.Errorf("FormatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	got := FormatJSON(map[string]any{"a": int64(1), "b": []any{int64(2)}}, true)
	if want := "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}"; got != want {
		t.Errorf("FormatJSON indented = %q, want %q", got, want)
	}
}
