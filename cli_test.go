package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flipFileByte flips one byte in the middle of a file.
func flipFileByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// `savepoint check` verifies every checksum and the StateMeta counts: a
// flipped byte in a state file or a dropped reference in _metadata is "not
// restorable", exit 1, naming the file. (Before: both said restorable.)
func TestSavepointCheckVerifies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "30", "--savepoint", dir); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	keyed, _ := filepath.Glob(filepath.Join(dir, "*-1.keyed"))
	if len(keyed) != 1 {
		t.Fatalf("keyed files %v", keyed)
	}
	flipFileByte(t, keyed[0])
	code, out, errs := cmd(t, "savepoint", "check", dir, "wordcount")
	if code != 1 || strings.Contains(out, "restorable: yes") || !strings.Contains(errs, "would not restore") ||
		!strings.Contains(errs, keyed[0]) || !strings.Contains(errs, "checksum mismatch") {
		t.Fatalf("flipped byte: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	flipFileByte(t, keyed[0])
	if code, out, errs := cmd(t, "savepoint", "check", dir, "wordcount"); code != 0 || !strings.Contains(out, "restorable: yes") {
		t.Fatalf("restored byte: exit %d\n%s%s", code, out, errs)
	}

	// Drop subtask 1's keyed file from _metadata.
	mp := filepath.Join(dir, "_metadata")
	orig, _ := os.ReadFile(mp)
	var m map[string]any
	if err := json.Unmarshal(orig, &m); err != nil {
		t.Fatal(err)
	}
	for _, op := range m["operators"].([]any) {
		op := op.(map[string]any)
		if op["name"] == "count" {
			delete(op["subtasks"].([]any)[1].(map[string]any), "keyed")
		}
	}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cmd(t, "savepoint", "check", dir, "wordcount")
	if code != 1 || strings.Contains(out, "restorable: yes") || !strings.Contains(errs, "1 of its 2 subtasks have a keyed state file") {
		t.Fatalf("dropped keyed file: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, _, errs = cmd(t, "run", "wordcount", "--from-savepoint", dir)
	if code != 1 || !strings.Contains(errs, "1 of its 2 subtasks have a keyed state file") {
		t.Fatalf("restore of a dropped keyed file: exit %d: %s", code, errs)
	}
}

// A config key given twice, flat and nested, is a usage error naming the
// key, whatever the map order. (Before: accepted, 3 or 1 by map order.)
func TestConfigDuplicateKey(t *testing.T) {
	cfg := writeFile(t, "streamdbg.yaml", "parallelism.default: 3\nparallelism:\n  default: 1\n")
	for range 20 {
		code, _, errs := cmd(t, "run", "wordcount", "--config", cfg, "--steps", "1")
		if code != 2 || !strings.Contains(errs, "config "+cfg) || !strings.Contains(errs, "key parallelism.default is given twice") {
			t.Fatalf("exit %d: %s", code, errs)
		}
	}
	// YAML's own duplicate keys are refused too.
	cfg = writeFile(t, "dup.yaml", "parallelism.default: 3\nparallelism.default: 1\n")
	if code, _, errs := cmd(t, "run", "wordcount", "--config", cfg, "--steps", "1"); code != 2 || !strings.Contains(errs, "already defined") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// Bad flags are usage errors (exit 2) found before the job runs, each
// naming the flag or value. (Before: --max-parallelism 32769 ran to the end
// and then failed to write, 10^8 took 1.15 GB; --parallelism 100000 exited
// 1; an existing --savepoint target was found after the whole run; a bad
// column exited 1 under query and 2 under run --query.)
func TestBadFlagsAreUsageErrors(t *testing.T) {
	existing := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"max parallelism above Flink's", []string{"run", "--max-parallelism", "32769"}, "max parallelism 32769 is more than 32768"},
		{"huge max parallelism", []string{"run", "--max-parallelism", "2000000000"}, "max parallelism 2000000000 is more than 32768"},
		{"parallelism above max", []string{"run", "--parallelism", "100000"}, "parallelism 100000 exceeds max parallelism 128"},
		{"existing savepoint target", []string{"run", "--savepoint", existing}, "--savepoint " + existing + ": the directory exists"},
		{"negative steps", []string{"run", "--steps=-1"}, "--steps and --fail-at must not be negative"},
		{"bad column under run", []string{"run", "--query", "SELECT vlaue FROM keyed_state"}, `unknown column "vlaue"`},
		{"bad column under query", []string{"query", existing, "SELECT vlaue FROM keyed_state"}, `unknown column "vlaue"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(errs, tc.want) || out != "" {
				t.Fatalf("exit %d, want 2 with %q\nstdout: %s\nstderr: %s", code, tc.want, out, errs)
			}
		})
	}
}

// --from-savepoint on an Apache Flink savepoint says what it is and what
// streamdbg can do with it. (Before: "invalid character 'I'".)
func TestFromFlinkSavepoint(t *testing.T) {
	dir := t.TempDir()
	// A Flink _metadata begins with its magic number.
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), []byte{0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := cmd(t, "run", "wordcount", "--from-savepoint", dir)
	if code != 1 || !strings.Contains(errs, dir+" is an Apache Flink savepoint") || !strings.Contains(errs, "streamdbg query "+dir) || strings.Contains(errs, "invalid character") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// --fail-at that cannot fire says so. (Before: ignored without a word.)
func TestFailAtThatCannotFire(t *testing.T) {
	code, _, errs := cmd(t, "run", "wordcount", "--fail-at", "100000")
	if code != 0 || !strings.Contains(errs, "--fail-at is beyond the input: no failure was injected") || !strings.Contains(errs, "fail_at=100000 records=207") {
		t.Fatalf("beyond the input: exit %d: %s", code, errs)
	}
	code, _, errs = cmd(t, "run", "wordcount", "--fail-at", "50", "--steps", "10")
	if code != 0 || !strings.Contains(errs, "--fail-at is beyond the records --steps reads") {
		t.Fatalf("beyond --steps: exit %d: %s", code, errs)
	}
	sp := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "30", "--savepoint", sp); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs = cmd(t, "run", "wordcount", "--from-savepoint", sp, "--fail-at", "30")
	if code != 0 || !strings.Contains(errs, "--fail-at is at or before the restored position") || !strings.Contains(errs, "restored_at=30") {
		t.Fatalf("before the restored position: exit %d: %s", code, errs)
	}
	// One that fires does not warn.
	code, _, errs = cmd(t, "run", "wordcount", "--fail-at", "31", "--checkpoint-interval", "10")
	if code != 0 || strings.Contains(errs, "no failure") || !strings.Contains(errs, "injected failure at record 31") {
		t.Fatalf("a failure that fires: exit %d: %s", code, errs)
	}
}

// TestMain lets a test run the CLI as its own process (for signals):
// STREAMDBG_AS_MAIN=1 runs main's run with the arguments instead of tests.
func TestMain(m *testing.M) {
	if os.Getenv("STREAMDBG_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// bigWords writes n lines of words w0..w(k-1) in a fixed order.
func bigWords(t *testing.T, n, k int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%d w%d w%d\n", i%k, (i*7)%k, (i*13)%k)
	}
	return writeFile(t, "big.txt", b.String())
}

// SIGINT during run says where it stopped, writes the savepoint asked for
// at that point (Flink's stop-with-savepoint) and exits 130; resuming from
// it gives the counts of an uninterrupted run. (Before: "context canceled",
// exit 1, no position, no savepoint.)
func TestInterruptWritesSavepoint(t *testing.T) {
	input := bigWords(t, 400_000, 5000)
	sp := filepath.Join(t.TempDir(), "sp")
	c := exec.Command(os.Args[0], "run", "wordcount", "--input", input, "--savepoint", sp, "--query", "SELECT COUNT(*) FROM keyed_state")
	c.Env = append(os.Environ(), "STREAMDBG_AS_MAIN=1")
	stderrPipe, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The backend is logged once the interrupt is handled: signal then.
	var stderr strings.Builder
	lines := bufio.NewScanner(stderrPipe)
	for lines.Scan() {
		stderr.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "state backend") {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderrPipe)
	stderr.Write(rest)
	out, _ := io.ReadAll(stdout)
	err = c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`interrupted after source record (\d+); the savepoint ` + regexp.QuoteMeta(sp) + ` holds the state at that record`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr: %s", stderr.String())
	}
	pos, _ := strconv.Atoi(m[1])
	if pos <= 0 || pos >= 400_000 {
		t.Fatalf("stopped at record %d (the signal came too late or too early for this test)", pos)
	}
	if !strings.Contains(string(out), "COUNT(*)") {
		t.Fatalf("the query at the stop printed %q", out)
	}
	b, err := os.ReadFile(filepath.Join(sp, "_metadata"))
	if err != nil || !strings.Contains(string(b), fmt.Sprintf(`"position": %d,`, pos)) {
		t.Fatalf("savepoint at %d: %v\n%.300s", pos, err, b)
	}
	// Resume: the final counts are those of one uninterrupted run, counted
	// here from the input's own construction.
	code, res, errs := cmd(t, "run", "wordcount", "--input", input, "--from-savepoint", sp, "--query", "SELECT key, value FROM keyed_state", "--format", "csv")
	if code != 0 {
		t.Fatal(errs)
	}
	want := map[string]int{}
	for i := range 400_000 {
		for _, w := range []int{i % 5000, (i * 7) % 5000, (i * 13) % 5000} {
			want[fmt.Sprintf("w%d", w)]++
		}
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(res), "\n")[1:] {
		k, v, _ := strings.Cut(l, ",")
		got[k], _ = strconv.Atoi(v)
	}
	if len(got) != len(want) {
		t.Fatalf("%d keys after resume, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("%s = %d after interrupt and resume, want %d", k, got[k], n)
		}
	}
}

// Every command that takes a savepoint directory takes its _metadata file
// too, as `flink run -s` does: the same output as for the directory.
// (Before: "lstat …/_metadata/_metadata: not a directory".)
func TestMetadataFileNamesItsSavepoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "30", "--savepoint", dir); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	md := filepath.Join(dir, "_metadata")
	other := filepath.Join(t.TempDir(), "sp2")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "40", "--savepoint", other); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	for _, args := range [][]string{
		{"query", "%s", "SELECT key, value FROM keyed_state ORDER BY key"},
		{"savepoint", "inspect", "%s"},
		{"savepoint", "check", "%s", "wordcount"},
		{"diff", "%s", other},
		{"modify", "%s", "%o", "DELETE FROM \"count\".\"count\" WHERE key = 'flink'", "--dry-run"},
		{"run", "wordcount", "--from-savepoint", "%s", "--steps", "5"},
	} {
		with := func(p string) []string {
			out := make([]string, len(args))
			for i, a := range args {
				switch a {
				case "%s":
					a = p
				case "%o":
					a = filepath.Join(t.TempDir(), "out")
				}
				out[i] = a
			}
			return out
		}
		code, want, errs := cmd(t, with(dir)...)
		if code != 0 || want == "" {
			t.Fatalf("%v: exit %d, stdout %q: %s", with(dir), code, want, errs)
		}
		code, got, errs := cmd(t, with(md)...)
		if code != 0 || got != want {
			t.Errorf("%v: exit %d\n got %q\nwant %q\n%s", with(md), code, got, want, errs)
		}
	}
	// A Flink savepoint's _metadata too.
	flinkSP := filepath.Join("..", "shared", "flink-savepoints", "udf-flink1.20-hashmap-savepoint")
	if _, err := os.Stat(flinkSP); err == nil {
		q := "SELECT count(*) FROM keyed_state"
		_, want, _ := cmd(t, "query", flinkSP, q)
		code, got, errs := cmd(t, "query", filepath.Join(flinkSP, "_metadata"), q)
		if code != 0 || got != want || !strings.Contains(want, "16") {
			t.Errorf("Flink _metadata: exit %d, %q, want %q: %s", code, got, want, errs)
		}
	}
}

// A query pinning an operator or state name that no state has says so on
// stderr, with the nearest name, and still exits 0 with its (empty)
// result: (Before: "(0 rows)" alone, as for an empty state.)
func TestQueryNotesUnknownNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--steps", "30", "--savepoint", dir); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	code, out, errs := cmd(t, "query", dir, "SELECT key, value FROM keyed_state WHERE operator_name = 'Count'")
	if code != 0 || !strings.Contains(out, "(0 rows)") || !strings.Contains(errs, `streamdbg: note: no state has operator_name 'Count'; did you mean "count"?`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, out, errs = cmd(t, "query", dir, "SELECT count(*) FROM keyed_state WHERE operator_name = 'count'")
	if code != 0 || strings.Contains(errs, "note:") || strings.Contains(out, "(0 rows)") {
		t.Fatalf("a name that exists: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
