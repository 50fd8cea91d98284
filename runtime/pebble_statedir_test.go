package runtime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
)

// deadPID is the PID of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A run on pebble with a state directory removes what runs killed before
// (SIGKILL) left there, and nothing of a process that lives. Before, a
// killed `streamdbg run --backend pebble --state-dir DIR` left
// DIR/wordcount-PID-1 with its databases (5.4 MB after 3 s of a 1M-line
// input) for good, one more per killed run.
func TestStateDirOfAKilledRunIsRemoved(t *testing.T) {
	stateDir := t.TempDir()
	mk := func(name string) string {
		dir := filepath.Join(stateDir, name, "count-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"LOCK", "000002.log"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Dir(dir)
	}
	stale := mk("wordcount-" + strconv.Itoa(deadPID(t)) + "-1")
	live := mk("wordcount-" + strconv.Itoa(os.Getppid()) + "-1") // the go command: alive
	other := mk("orders-" + strconv.Itoa(deadPID(t)) + "-1")     // another job's
	notOurs := mk("wordcount-notes")

	job, err := fixtures.Build("wordcount", fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.NewExecutor(job, runtime.Options{Backend: "pebble", StateDir: stateDir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Next(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s of a dead process: still there (%v)", stale, err)
	}
	for _, d := range []string{live, other, notOurs} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v, want it kept", d, err)
		}
	}
}
