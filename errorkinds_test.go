package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// TestSkipUnreadableRocksDBBlock: one corrupt data block in a RocksDB
// native savepoint fails a query of every keyed state, naming the file
// and offset and --skip-unreadable; with it, the query reads every other
// state, warns once for the broken one and exits 0. (Before, the query
// failed with --skip-unreadable too: only states the catalog lists as
// unreadable were skipped, not one that fails while it is read.)
func TestSkipUnreadableRocksDBBlock(t *testing.T) {
	sp := copyTree(t, filepath.Join("..", "shared", "flink-savepoints", "udf-flink1.20-rocksdb-savepoint-native"))
	const q = "SELECT operator_id, state_name, COUNT(*) AS n FROM keyed_state GROUP BY operator_id, state_name"
	code, whole, errs := cmd(t, "query", sp, q, "--format", "csv")
	if code != 0 {
		t.Fatalf("intact: exit %d, %s", code, errs)
	}
	// Corrupt the first data block of the first table (by name) that has
	// RocksDB's magic number at its end.
	names, err := os.ReadDir(sp)
	if err != nil {
		t.Fatal(err)
	}
	var sst string
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(sp, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 100 && bytes.Equal(b[len(b)-8:], []byte{0xf7, 0xcf, 0xf4, 0x85, 0xb7, 0x41, 0xe2, 0x88}) {
			sst = n.Name()
			b[5] ^= 0xff
			if err := os.WriteFile(filepath.Join(sp, sst), b, 0o644); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if sst == "" {
		t.Fatal("no RocksDB table in the sample")
	}
	code, _, errs = cmd(t, "query", sp, q, "--format", "csv")
	if code != 1 || !strings.Contains(errs, sst) || !strings.Contains(errs, "checksum mismatch") || !strings.Contains(errs, "--skip-unreadable") {
		t.Fatalf("corrupt block: exit %d, stderr %q", code, errs)
	}
	code, out, errs := cmd(t, "query", sp, q, "--format", "csv", "--skip-unreadable")
	if code != 0 || strings.Count(errs, "warning: skipped") != 1 || !strings.Contains(errs, sst) {
		t.Fatalf("--skip-unreadable: exit %d, stderr %q", code, errs)
	}
	// Every row of the result is a row of the intact result but one (the
	// broken state, whole or partly read), and only that one is missing
	// or smaller.
	wholeRows := strings.Split(strings.TrimSpace(whole), "\n")
	gotRows := strings.Split(strings.TrimSpace(out), "\n")
	missing := 0
	for _, r := range wholeRows {
		if !slices.Contains(gotRows, r) {
			missing++
		}
	}
	if missing != 1 || len(gotRows) > len(wholeRows) || len(wholeRows) < 4 {
		t.Errorf("--skip-unreadable gave\n%s\nwant the intact result but one state:\n%s", out, whole)
	}
}
