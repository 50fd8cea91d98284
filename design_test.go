package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// importRules are DESIGN.md section 2's import rules: for each package (by
// path prefix), the streamdbg packages it may import. Imports flow one way:
// state <- savepoint <- runtime <- runtime/session <- tui <- main; query
// depends only on state.
var importRules = []struct {
	pkg     string
	allowed []string
}{
	{"state", nil},
	// Benchmarks' CPU time, for tests of every package.
	{"internal/cputime", nil},
	// Test helpers over vfs.FS, for tests of the packages that write savepoints.
	{"internal/vfstest", nil},
	// Numbers for people (2,318), shared by the session's stop messages
	// and the TUI's panes: a leaf, importing nothing.
	{"internal/numfmt", nil},
	{"state/heapstate", []string{"state"}},
	{"state/pebblestate", []string{"state"}},
	{"state/statetest", []string{"state"}},
	{"query", []string{"state"}},
	{"savepoint", []string{"state"}},
	{"savepoint/flink", []string{"state", "savepoint/flink/rocksdb"}},
	// The RocksDB reader knows files, blocks and keys, nothing of Flink.
	{"savepoint/flink/rocksdb", nil},
	{"savepoint/flink/rocksdb/rocksdbtest", nil},
	// diff, modify and export read any catalog (ours, Flink's, live) and
	// use the query language for filters and statements.
	{"savepoint/diff", []string{"state", "savepoint", "savepoint/flink", "query"}},
	{"savepoint/modify", []string{"state", "savepoint", "savepoint/flink", "query", "internal/numfmt"}},
	{"export", []string{"state", "savepoint", "query"}},
	{"runtime", []string{"state", "state/heapstate", "state/pebblestate", "savepoint"}},
	{"runtime/window", []string{"state", "runtime"}},
	{"runtime/internal/optest", []string{"state", "runtime"}},
	{"runtime/session", []string{"state", "savepoint", "savepoint/flink", "savepoint/diff", "runtime", "query", "internal/numfmt"}},
	{"fixtures", []string{"state", "runtime", "runtime/window"}},
	// The test driver is a client of the session, as the TUI is, and opens
	// the TUI on the session for Debug.
	{"streamdbgtest", []string{"state", "savepoint", "runtime", "runtime/session", "tui"}},
	{"tui", []string{"runtime/session", "query", "tui/styles", "tui/keys", "internal/numfmt"}},
	{"tui/styles", nil},
	{"tui/keys", nil},
	{"query/querytest", []string{"state", "query", "savepoint", "runtime", "runtime/session", "fixtures"}},
}

func TestImportRules(t *testing.T) {
	rules := map[string][]string{}
	for _, r := range importRules {
		rules[r.pkg] = r.allowed
	}
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			return nil // main wires everything together
		}
		allowed, ok := rules[dir]
		if !ok {
			t.Errorf("package %s has no import rule in design_test.go: add one", dir)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		isTest := strings.HasSuffix(path, "_test.go")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "runtime" && !isTest && strings.HasPrefix(dir, "runtime") && (imp.Name == nil || imp.Name.Name != "goruntime") {
				t.Errorf("%s imports the standard library's runtime without naming it goruntime", path)
			}
			local, ok := strings.CutPrefix(p, "streamdbg/")
			if !ok || local == dir {
				continue
			}
			checked++
			// Tests may use fixtures and other test helpers of packages
			// downstream, but never the TUI from the core.
			if isTest && local != "tui" {
				continue
			}
			if !contains(allowed, local) {
				t.Errorf("%s imports streamdbg/%s; package %s may import only %v (DESIGN.md section 2)", path, local, dir, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no streamdbg imports found: the walk is broken")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestTUITalksOnlyToSession: the terminal UI reaches the runtime and
// savepoints through runtime/session alone (plain view values, as delve's
// terminal uses its service API), and formats with query. Its non-test
// files import no runtime, savepoint, state or backend package.
func TestTUITalksOnlyToSession(t *testing.T) {
	forbidden := []string{"runtime", "runtime/window", "savepoint", "savepoint/flink", "savepoint/flink/rocksdb", "savepoint/modify",
		"state", "state/heapstate", "state/pebblestate", "fixtures"}
	fset := token.NewFileSet()
	files, err := filepath.Glob("tui/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tui files: %v", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if local, ok := strings.CutPrefix(p, "streamdbg/"); ok && contains(forbidden, local) {
				t.Errorf("%s imports %s: the TUI must go through runtime/session", path, p)
			}
		}
	}
}
