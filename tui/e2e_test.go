package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTerminal runs the built binary in a real terminal (tmux) at 120×40:
// steps, a query, help, quit, and checks the screens and the exit status.
func TestTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	bin := filepath.Join(t.TempDir(), "streamdbg")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	status := filepath.Join(t.TempDir(), "status")
	sess := "streamdbg-e2e-" + strings.ReplaceAll(filepath.Base(t.TempDir()), " ", "")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sess}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", sess, "-x", "120", "-y", "40", "env", "HOME="+t.TempDir(), "sh", "-c", bin+"; echo $? > "+status+"; sleep 5")
	t.Cleanup(func() { exec.Command("tmux", "-L", sess, "kill-server").Run() })
	capture := func() string { return tmux("capture-pane", "-p", "-t", sess) }
	waitFor := func(what string, want ...string) string {
		t.Helper()
		var s string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			s = capture()
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				return s
			}
		}
		t.Fatalf("%s: screen lacks %q:\n%s", what, want, s)
		return s
	}
	waitFor("start", "record 0")
	for range 8 {
		tmux("send-keys", "-t", sess, "n")
		time.Sleep(50 * time.Millisecond)
	}
	waitFor("8×n", "record 8", "tokenize", "count")
	tmux("send-keys", "-t", sess, ":")
	tmux("send-keys", "-t", sess, "-l", "SELECT key, value FROM keyed_state ORDER BY value DESC LIMIT 3")
	tmux("send-keys", "-t", sess, "Enter")
	waitFor("query", "Query · 3 rows", "value")
	tmux("send-keys", "-t", sess, "Escape")
	time.Sleep(200 * time.Millisecond)
	tmux("send-keys", "-t", sess, "?")
	waitFor("help", "Help", "quit")
	tmux("send-keys", "-t", sess, "Escape")
	time.Sleep(200 * time.Millisecond)
	tmux("send-keys", "-t", sess, "q")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(status); err == nil {
			if got := strings.TrimSpace(string(b)); got != "0" {
				t.Fatalf("exit status %s, want 0", got)
			}
			return
		}
	}
	t.Fatalf("streamdbg did not exit after q:\n%s", capture())
}
