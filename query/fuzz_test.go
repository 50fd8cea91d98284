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

func FuzzEval(f *testing.F) {
	seedQueries(f, "expr")
	f.Add("value.items[0] + 1 BETWEEN -1 AND 3.5 OR key LIKE '%_' OR record.ts < '2024'")
	f.Fuzz(func(t *testing.T, text string) {
		e, err := ParseExpr(text)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("ParseExpr(%q): error %T is not *Error", text, err)
			}
			return
		}
		c, err := CompileExpr(e, nil)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("CompileExpr(%q): error %T is not *Error", text, err)
			}
			return
		}
		v, err := c.Eval(testEnv)
		if err != nil {
			return
		}
		_ = formatText(v)
		_, _ = c.EvalBool(testEnv)
	})
}
