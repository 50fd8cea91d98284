package query

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// The datadriven files under testdata/ are transcripts: `go test ./query
// -rewrite` regenerates their expected output.
//
//	query [format=table|json|csv] [reads]   run the input as a query
//	expr                                     evaluate the input against testEnv
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/query", func(t *testing.T, path string) {
		cat := newTestCatalog()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "query":
				format := "table"
				d.MaybeScanArgs(t, "format", &format)
				cat.resetReads()
				out := runQuery(cat, d.Input, format)
				if d.HasArg("reads") {
					out += "reads:\n"
					for _, r := range cat.reads {
						out += "  " + r + "\n"
					}
					out += fmt.Sprintf("rows read: %d\n", cat.rowsRead)
				}
				return out
			case "expr":
				return evalExpr(d.Input)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func runQuery(cat Catalog, text, format string) string {
	rows, err := RunText(context.Background(), cat, text)
	if err != nil {
		return errorText(text, err)
	}
	var b strings.Builder
	if err := Format(&b, rows, format); err != nil {
		return b.String() + "error: " + err.Error() + "\n"
	}
	return b.String()
}

// errorText prints an error with a caret under its column, as the TUI does.
func errorText(text string, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %v\n", err)
	if qe, ok := err.(*Error); ok && qe.Pos.Line > 0 {
		lines := strings.Split(text, "\n")
		if qe.Pos.Line <= len(lines) {
			fmt.Fprintf(&b, "%s\n%s^\n", lines[qe.Pos.Line-1], strings.Repeat(" ", max(0, qe.Pos.Col-1)))
		}
	}
	return b.String()
}

var testEnv = EnvMap{
	"key":      "u42",
	"value":    map[string]any{"amount": int64(150), "items": []any{"a", "b"}, "price": 2.5},
	"record":   map[string]any{"user": "u42", "ts": time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)},
	"operator": "count",
	"count":    int64(41),
	"nothing":  nil,
}

func evalExpr(text string) string {
	e, err := ParseExpr(text)
	if err != nil {
		return errorText(text, err)
	}
	c, err := CompileExpr(e, testEnv.Names())
	if err != nil {
		return errorText(text, err)
	}
	v, err := c.Eval(testEnv)
	if err != nil {
		return errorText(text, err)
	}
	return fmt.Sprintf("%s: %s\n", typeName(v), formatText(v))
}

var rewriteGrammar = flag.Bool("rewrite-grammar", os.Getenv("REWRITE_GRAMMAR") != "", "rewrite testdata/grammar.ebnf")

// TestGrammar keeps the EBNF of the grammar as a golden file, so that a
// grammar change shows up in review. -rewrite-grammar (or REWRITE_GRAMMAR=1)
// regenerates it.
func TestGrammar(t *testing.T) {
	path := filepath.Join("testdata", "grammar.ebnf")
	got := Grammar() + "\n"
	if *rewriteGrammar {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with REWRITE_GRAMMAR=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("grammar changed; run with REWRITE_GRAMMAR=1 and review the diff\ngot:\n%s", got)
	}
}
