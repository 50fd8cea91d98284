package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/savepoint"
	"streamdbg/savepoint/flink"
)

// copyTree copies a sample into a directory the test may change.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	if _, err := os.Stat(src); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s absent under CI", src)
		}
		t.Skipf("%s absent", src)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestErrorKindsReachTheCLI: the error a command returns for bad savepoint
// bytes keeps its reader's kind through every wrapper (catalog, query,
// command), so errors.Is tells a corrupt savepoint from anything else.
// Before: a query needing a Flink state whose file is missing failed with
// "cannot read state …", a query.UnreadableError that wrapped nothing.
func TestErrorKindsReachTheCLI(t *testing.T) {
	e := newEnv(false, &bytes.Buffer{}, &bytes.Buffer{})

	fl := copyTree(t, filepath.Join("..", "shared", "flink-savepoints", "udf-flink1.20-hashmap-savepoint"))
	// The largest state file is keyed state.
	var victim string
	var size int64
	entries, _ := os.ReadDir(fl)
	for _, d := range entries {
		if fi, err := d.Info(); err == nil && d.Name() != "_metadata" && fi.Size() > size {
			victim, size = d.Name(), fi.Size()
		}
	}
	if err := os.Remove(filepath.Join(fl, victim)); err != nil {
		t.Fatal(err)
	}
	err := (&queryCmd{Target: fl, Query: "SELECT COUNT(*) FROM keyed_state", Format: "table"}).Run(e)
	if !errors.Is(err, flink.ErrCorrupt) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "--skip-unreadable") {
		t.Errorf("query of a Flink savepoint without %s: %v", victim, err)
	}

	ours := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "20", "--savepoint", ours); code != 0 {
		t.Fatal(errs)
	}
	names, _ := filepath.Glob(filepath.Join(ours, "*.keyed"))
	if len(names) == 0 {
		t.Fatal("no keyed file in our savepoint")
	}
	if err := os.Remove(names[0]); err != nil {
		t.Fatal(err)
	}
	for _, c := range []interface{ Run(*env) error }{
		&queryCmd{Target: ours, Query: "SELECT COUNT(*) FROM keyed_state", Format: "table"},
		&inspectCmd{Dir: ours},
	} {
		err := c.Run(e)
		if !errors.Is(err, savepoint.ErrInvalid) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Base(names[0])) {
			t.Errorf("%T of our savepoint without %s: %v", c, filepath.Base(names[0]), err)
		}
	}
}
