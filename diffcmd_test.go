package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffAndModifyCommands drives diff and modify through the CLI: rows as
// JSON lines with the columns, summaries on stderr, a dry run that
// writes nothing, -f with several statements, positioned errors as usage
// errors.
func TestDiffAndModifyCommands(t *testing.T) {
	orders := writeFile(t, "orders.jsonl", `{"customer":"a","product":"p1","amount":3}
{"customer":"b","product":"p1","amount":4}
{"customer":"a","product":"p2","amount":5}
{"customer":"c","product":"p1","amount":6}
`)
	dir := t.TempDir()
	sp2, sp4 := filepath.Join(dir, "sp2"), filepath.Join(dir, "sp4")
	for _, c := range [][]string{
		{"run", "orders", "--input", orders, "--steps", "2", "--savepoint", sp2},
		{"run", "orders", "--input", orders, "--savepoint", sp4},
	} {
		if code, _, stderr := cmd(t, c...); code != 0 {
			t.Fatalf("%v: %d %s", c, code, stderr)
		}
	}
	code, stdout, stderr := cmd(t, "diff", sp2, sp4, "state_name = 'total'", "--format", "json")
	if code != 0 {
		t.Fatalf("diff: %d %s", code, stderr)
	}
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		rows = append(rows, r)
	}
	// a: 3 -> 8 (changed), c: added with 6; b unchanged at 4.
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	want := []string{"change", "operator_name", "state_name", "key", "namespace", "user_key", "old_value", "new_value"}
	for _, r := range rows {
		if len(r) != len(want) {
			t.Fatalf("columns %v", r)
		}
		for _, c := range want {
			if _, ok := r[c]; !ok {
				t.Fatalf("column %s missing: %v", c, r)
			}
		}
		switch r["key"] {
		case "a":
			if r["change"] != "changed" || r["old_value"] != 3.0 || r["new_value"] != 8.0 {
				t.Errorf("a: %v", r)
			}
		case "c":
			if r["change"] != "added" || r["old_value"] != nil || r["new_value"] != 6.0 {
				t.Errorf("c: %v", r)
			}
		default:
			t.Errorf("row %v", r)
		}
	}
	if !strings.Contains(stderr, "# sum.total: 1 changed, 1 added, 0 removed, 1 unchanged") {
		t.Errorf("summary: %s", stderr)
	}

	out := filepath.Join(dir, "modified")
	code, stdout, stderr = cmd(t, "modify", sp4, out, `UPDATE "sum"."total" SET value = value - 1 WHERE key = 'b'`, "--dry-run")
	if code != 0 || !strings.Contains(stdout, "changed  sum") || !strings.Contains(stdout, "(1 row)") {
		t.Fatalf("dry run: %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("dry run wrote the target")
	}
	script := writeFile(t, "fix.sql", "UPDATE \"sum\".\"total\" SET value = value - 1 WHERE key = 'b';\nDELETE FROM \"sum\".\"total\" WHERE key = 'c';\n")
	if code, _, stderr := cmd(t, "modify", sp4, out, "-f", script); code != 0 {
		t.Fatalf("modify -f: %d %s", code, stderr)
	}
	code, stdout, _ = cmd(t, "query", out, `SELECT key, value FROM "sum"."total" ORDER BY key`, "--format", "csv")
	if code != 0 || stdout != "key,value\na,8\nb,3\n" {
		t.Fatalf("after modify: %q", stdout)
	}
	if code, _, stderr := cmd(t, "savepoint", "check", out, "orders"); code != 0 {
		t.Fatalf("check: %s", stderr)
	}
	bad := writeFile(t, "bad.sql", "DELETE FROM \"sum\".\"total\" WHERE key = 'c';\nUPDATE \"sum\".\"total\" SET value = 'x'\n")
	code, _, stderr = cmd(t, "modify", sp4, filepath.Join(dir, "x"), "-f", bad)
	if code != 2 || !strings.Contains(stderr, "bad.sql:2:34: value of sum.total is int64, the expression is string; write an integer") {
		t.Fatalf("bad script: %d %s", code, stderr)
	}
	code, _, stderr = cmd(t, "modify", sp4, sp4, `DELETE FROM "sum"."total"`)
	if code != 1 || !strings.Contains(stderr, "target") {
		t.Fatalf("in place: %d %s", code, stderr)
	}
}

// TestDiffSummaryNamesSharedOperatorNames: the summary line of a state of
// one of several operators with the same name (Flink's two "Flat Map")
// carries the operator's id (before: two "# Flat Map.state-name: …" lines,
// one with the change, and no telling which operator it was).
func TestDiffSummaryNamesSharedOperatorNames(t *testing.T) {
	src := filepath.Join("..", "shared", "flink-savepoints", "udf-flink2.0-rocksdb-savepoint")
	copyTree(t, src) // skips when the samples are absent
	dst := filepath.Join(t.TempDir(), "fixed")
	if code, _, errs := cmd(t, "modify", src, dst, `DELETE FROM "CheckpointingKeyedStateFlatMap1"."state-name" WHERE value = 2`); code != 0 {
		t.Fatalf("modify: %d %s", code, errs)
	}
	code, out, errs := cmd(t, "diff", src, dst)
	if code != 0 {
		t.Fatalf("diff: %d %s", code, errs)
	}
	for _, want := range []string{
		"# Flat Map (d5c8b168c6cbfe8c507a10f88b325243).state-name: 0 changed, 0 added, 1 removed, 3 unchanged",
		"# Flat Map (dab25811652d3d4983a30c6e4afacb1c).state-name: 0 changed, 0 added, 0 removed, 4 unchanged",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
}
