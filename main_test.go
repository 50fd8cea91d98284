package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cmd runs the CLI in process.
func cmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitStatusesAndMessages(t *testing.T) {
	orders := writeFile(t, "orders.jsonl", `{"customer":"a","product":"p1","amount":3}
{"customer":"b","product":"p1","amount":4}
{"customer": oops
{"customer":"a","product":"p2","amount":5}
`)
	rules := writeFile(t, "rules.jsonl", `{"page":"/a","category":"docs","ts":"2026-03-01T12:00:10Z"}
`)
	clicks := writeFile(t, "clicks.jsonl", `{"user":"u1","page":"/a","ts":"2026-03-01T12:00:05Z"}
{"user":"u2","page":"/a","ts":"2026-03-01T12:00:12Z"}
`)
	words := writeFile(t, "words.txt", "zebra\n")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		noStderr []string
	}{
		{name: "wordcount", args: []string{"run", "wordcount"}, code: 0, stdout: []string{`"word":"flink"`}},
		{name: "puzzle", args: []string{"run", "keyed-puzzle"}, code: 1,
			stderr: []string{`operator "filter"`, `keyed state "filter-state"`, "keyed stream", "KeyBy"}},
		{name: "unknown job", args: []string{"run", "nope"}, code: 2, stderr: []string{`unknown job "nope"`, "wordcount"}},
		{name: "bad flag value", args: []string{"run", "wordcount", "--parallelism", "x"}, code: 2, stderr: []string{"--parallelism"}},
		{name: "unknown flag", args: []string{"run", "--bogus"}, code: 2, stderr: []string{"--bogus"}},
		{name: "bad backend", args: []string{"run", "--backend", "rocks"}, code: 2, stderr: []string{"heap", "pebble"}},
		{name: "missing input", args: []string{"run", "--input", "/nonexistent/x.txt"}, code: 2, stderr: []string{"/nonexistent/x.txt"}},
		{name: "malformed line", args: []string{"run", "orders", "--input", orders}, code: 1,
			stderr: []string{"orders.jsonl:3:", "not an order"}, noStderr: []string{"goroutine", "panic"}},
		{name: "skip malformed line", args: []string{"run", "orders", "--input", orders, "--on-bad-record", "skip"}, code: 0,
			stdout: []string{`{"customer":"a","total":8}`}, stderr: []string{"skipped bad record", "orders.jsonl:3"}},
		{name: "malformed query", args: []string{"run", "orders", "--query", "SELECT key FROM keyed_state WHER key = 'x'"}, code: 2,
			stderr: []string{"1:"}},
		{name: "negative parallelism", args: []string{"run", "--parallelism", "-2"}, code: 2, stderr: []string{"parallelism"}},
		{name: "named inputs", args: []string{"run", "enrich", "--input", "rules=" + rules, "--input", "clicks=" + clicks}, code: 0,
			stdout: []string{`{"user":"u1","page":"/a","ts":"2026-03-01T12:00:05Z","category":null}`, `{"user":"u2","page":"/a","ts":"2026-03-01T12:00:12Z","category":"docs"}`}},
		{name: "one named input", args: []string{"run", "enrich", "--input", "clicks=" + clicks}, code: 0,
			stdout: []string{`{"user":"u1","page":"/a","ts":"2026-03-01T12:00:05Z","category":null}`}},
		{name: "named input of a one-source job", args: []string{"run", "wordcount", "--input", "lines=" + words}, code: 0,
			stdout: []string{`{"word":"zebra","count":1}`}},
		{name: "unnamed input of a two-source job", args: []string{"run", "enrich", "--input", clicks}, code: 2,
			stderr: []string{"rules, clicks", "--input NAME=FILE"}},
		{name: "unknown source", args: []string{"run", "enrich", "--input", "views=" + clicks}, code: 2,
			stderr: []string{`no source "views"`, "rules, clicks"}},
		{name: "input twice", args: []string{"run", "enrich", "--input", "clicks=" + clicks, "--input", "clicks=" + clicks}, code: 2,
			stderr: []string{"clicks has an input already"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cmd(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
			for _, s := range tc.noStderr {
				if strings.Contains(errs, s) {
					t.Errorf("stderr has %q:\n%s", s, errs)
				}
			}
		})
	}
}

func TestRunQueryPrintsRowsInsteadOfOutput(t *testing.T) {
	code, out, errs := cmd(t, "run", "orders", "--query", "SELECT key, value FROM keyed_state WHERE state_name = 'total' AND key = 'key_662'", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one row, got %q", out)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatal(err)
	}
	// The embedded orders fixture: key_662 bought for 17+... (sum computed
	// from the fixture itself).
	want := 0.0
	b, err := os.ReadFile("fixtures/data/orders.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var o struct {
			Customer string
			Amount   float64
		}
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatal(err)
		}
		if o.Customer == "key_662" {
			want += o.Amount
		}
	}
	if row["key"] != "key_662" || row["value"] != want {
		t.Fatalf("row %v, want key_662 = %v", row, want)
	}
}

func TestBackendPrecedence(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("streamdbg.yaml", []byte("state:\n  backend:\n    type: pebble\nparallelism.default: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := cmd(t, "run", "wordcount", "--query", "SELECT DISTINCT_NOT_A_THING FROM state_meta")
	_ = out
	if code != 2 {
		t.Fatalf("a bad query must be a usage error, got %d: %s", code, errs)
	}
	code, out, errs = cmd(t, "run", "wordcount", "--query", "SELECT MAX(subtask) AS top FROM keyed_state", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "backend=pebble") || !strings.Contains(errs, "state.backend.type in streamdbg.yaml") {
		t.Errorf("the config file's backend did not win, or the log does not say why:\n%s", errs)
	}
	if strings.TrimSpace(out) != "top\n2" {
		t.Errorf("parallelism.default 3 from the config file not applied: %q", out)
	}
	code, _, errs = cmd(t, "run", "wordcount", "--backend", "heap", "--steps", "1")
	if code != 0 || !strings.Contains(errs, "backend=heap") || !strings.Contains(errs, "--backend flag") {
		t.Errorf("the flag did not win over the config file (exit %d):\n%s", code, errs)
	}
	if err := os.WriteFile("streamdbg.yaml", []byte("state.backend.typo: pebble\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = cmd(t, "run", "wordcount")
	if code != 2 || !strings.Contains(errs, "state.backend.typo") {
		t.Errorf("an unknown config key must be refused (exit %d):\n%s", code, errs)
	}
}
