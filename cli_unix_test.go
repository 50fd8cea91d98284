//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// within runs a command and fails the test when it has not returned
// after 20 s (it blocks).
func within(t *testing.T, what string, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb strings.Builder
		c := run(args, &out, &errb)
		done <- result{c, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still blocked after 20 s", what)
		return 0, "", ""
	}
}

// Special files in a savepoint directory (ours or Flink's) are refused at
// once, naming the file: a FIFO as _metadata would block forever, a symlink
// could read a file outside the directory. (Before: inspect, query and
// --from-savepoint hung on a FIFO; symlinks were followed and errors told
// the target's size and checksum.)
func TestSpecialFilesInSavepoints(t *testing.T) {
	ours := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "20", "--savepoint", ours); code != 0 {
		t.Fatal(errs)
	}
	meta := filepath.Join(ours, "_metadata")
	_ = os.Remove(meta)
	if err := syscall.Mkfifo(meta, 0o644); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	for _, args := range [][]string{{"savepoint", "inspect", ours}, {"query", ours, "SELECT COUNT(*) FROM keyed_state"}, {"run", "--from-savepoint", ours}, {"savepoint", "check", ours}} {
		code, _, errs := within(t, strings.Join(args, " "), args...)
		if code != 1 || !strings.Contains(errs, meta+" is not a regular file") {
			t.Fatalf("%v with a FIFO _metadata: exit %d: %s", args, code, errs)
		}
	}

	src := filepath.Join("..", "shared", "flink-savepoints", "udf-flink1.20-hashmap-savepoint")
	if _, err := os.Stat(src); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s absent under CI", src)
		}
		t.Skipf("%s absent", src)
	}
	fl := filepath.Join(t.TempDir(), "flink")
	copyDir(t, src, fl)
	files, _ := filepath.Glob(filepath.Join(fl, "*"))
	var state string
	for _, f := range files {
		if filepath.Base(f) != "_metadata" {
			state = f
		}
	}
	outside := filepath.Join(t.TempDir(), "elsewhere")
	b, _ := os.ReadFile(state)
	if err := os.WriteFile(outside, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(state)
	if err := os.Symlink(outside, state); err != nil {
		t.Fatal(err)
	}
	code, _, errs := within(t, "query with a symlinked state file", "query", fl, "SELECT COUNT(*) FROM keyed_state")
	if code != 1 || !strings.Contains(errs, state+" is a symbolic link") {
		t.Fatalf("symlinked Flink state file: exit %d: %s", code, errs)
	}
	fmeta := filepath.Join(fl, "_metadata")
	_ = os.Remove(fmeta)
	if err := syscall.Mkfifo(fmeta, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = within(t, "inspect with a FIFO _metadata", "savepoint", "inspect", fl)
	if code != 1 || !strings.Contains(errs, fmeta+" is not a regular file") {
		t.Fatalf("Flink FIFO _metadata: exit %d: %s", code, errs)
	}
}

// A pebble run over 250,000 keys finishes: the wait for room before a
// commit never waits for a flush pebble does not start. (A first version
// of that wait hung this run.)
func TestPebbleManyKeysFinishes(t *testing.T) {
	var b strings.Builder
	for i := range 10_000 {
		for j := range 25 {
			b.WriteString(" w")
			b.WriteString(strconv.Itoa(i))
			b.WriteString("x")
			b.WriteString(strconv.Itoa(j))
		}
		b.WriteByte('\n')
	}
	input := writeFile(t, "unique.txt", b.String())
	code, out, errs := within(t, "pebble over 250,000 keys", "run", "wordcount", "--input", input, "--backend", "pebble",
		"--state-dir", t.TempDir(), "--query", "SELECT COUNT(*) FROM keyed_state", "--format", "csv")
	if code != 0 || !strings.Contains(out, "250000") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
}
