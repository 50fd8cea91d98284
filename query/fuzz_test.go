package query

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedQueries are the queries and expressions of the datadriven files.
func seedQueries(f *testing.F, cmd string) {
	files, _ := filepath.Glob("testdata/query/*")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, block := range strings.Split(string(b), "\n\n") {
			lines := strings.Split(strings.TrimLeft(block, "\n"), "\n")
			for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
				lines = lines[1:]
			}
			if len(lines) < 2 || !strings.HasPrefix(lines[0], cmd) {
				continue
			}
			var in []string
			for _, l := range lines[1:] {
				if l == "----" {
					break
				}
				in = append(in, l)
			}
			f.Add(strings.Join(in, "\n"))
		}
	}
}

func FuzzParse(f *testing.F) {
	seedQueries(f, "query")
	cat := newTestCatalog()
	f.Fuzz(func(t *testing.T, text string) {
		q, err := Parse(text)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q): error %T is not *Error: %v", text, err, err)
			}
			return
		}
		rows, err := Run(context.Background(), cat, q)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Run(%q): error %T is not *Error: %v", text, err, err)
			}
			return
		}
		for _, format := range Formats {
			rows, _ := Run(context.Background(), cat, q)
			if err := Format(io.Discard, rows, format); err != nil {
				t.Fatalf("Format(%q, %s): %v", text, format, err)
			}
		}
		_ = rows.Close()
	})
}

// FuzzEval parses, compiles and evaluates arbitrary expressions against
// testEnv. Every error is an *Error with a position; a value is one of the
// language's types; evaluation is deterministic; EvalBool agrees with Eval;
// and the expression printed back (as EXPLAIN and column names print it)
// parses to one that evaluates to the same value.
func FuzzEval(f *testing.F) {
	seedQueries(f, "expr")
	f.Add("value.items[0] + 1 BETWEEN -1 AND 3.5 OR key LIKE '%_' OR record.ts < '2024'")
	f.Add("9223372036854775807 + count")
	f.Add("-(-9223372036854775807 - 1)")
	f.Fuzz(func(t *testing.T, text string) {
		e, err := ParseExpr(text)
		if err != nil {
			checkQueryError(t, "ParseExpr", text, err)
			return
		}
		c, err := CompileExpr(e, nil)
		if err != nil {
			checkQueryError(t, "CompileExpr", text, err)
			return
		}
		v, err := c.Eval(testEnv)
		if err != nil {
			checkQueryError(t, "Eval", text, err)
			if _, err2 := c.Eval(testEnv); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Eval(%q): %v, then %v", text, err, err2)
			}
			return
		}
		if typeName(v) == "unknown" {
			t.Fatalf("Eval(%q) = %#v: not a value of the language", text, v)
		}
		want := typeName(v) + ": " + formatText(v)
		if v2, err := c.Eval(testEnv); err != nil || typeName(v2)+": "+formatText(v2) != want {
			t.Fatalf("Eval(%q) = %s, then %v (%v)", text, want, v2, err)
		}
		b, err := c.EvalBool(testEnv)
		switch x := v.(type) {
		case nil:
			if b || err != nil {
				t.Fatalf("EvalBool(%q) of NULL = %v, %v", text, b, err)
			}
		case bool:
			if b != x || err != nil {
				t.Fatalf("EvalBool(%q) of %v = %v, %v", text, x, b, err)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), "want bool") {
				t.Fatalf("EvalBool(%q) of %s = %v, %v", text, typeName(v), b, err)
			}
		}
		x, err := lowerExpr(e)
		if err != nil {
			t.Fatal(err)
		}
		printed := x.String()
		e2, err := ParseExpr(printed)
		if err != nil {
			if len(printed) > maxText || strings.Contains(err.Error(), "nested more than") {
				return // printing adds parentheses: past the bounds
			}
			t.Fatalf("%q printed as %q, which does not parse: %v", text, printed, err)
		}
		v2, err := Eval(e2, testEnv)
		if err != nil || typeName(v2)+": "+formatText(v2) != want {
			t.Fatalf("%q = %s, but printed as %q it is %v (%v)", text, want, printed, v2, err)
		}
	})
}

// checkQueryError asserts what every error of the language is: an *Error
// with a message, at a position (line 1 and up) inside or just past text.
func checkQueryError(t *testing.T, what, text string, err error) {
	t.Helper()
	qe, ok := err.(*Error)
	if !ok {
		t.Fatalf("%s(%q): error %T is not *Error: %v", what, text, err, err)
	}
	if qe.Msg == "" {
		t.Fatalf("%s(%q): error without a message: %#v", what, text, qe)
	}
	if qe.Pos.Line < 1 || qe.Pos.Line > strings.Count(text, "\n")+1 {
		t.Fatalf("%s(%q): error at line %d: %v", what, text, qe.Pos.Line, err)
	}
}
