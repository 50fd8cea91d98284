package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The end-to-end test runs the built binary in a real terminal (tmux) on
// every example job, at 120×40 and 80×24, heap and pebble, through the
// cases of issue 16, and asserts the screens. STREAMDBG_E2E_BIN runs it
// against another binary (an older build, to see which cases it fails).

// termSeq numbers the tmux servers of a test run.
var termSeq atomic.Int64

// term is one streamdbg in a tmux session.
type term struct {
	t      *testing.T
	sock   string
	status string
	home   string
	w, h   int
}

func e2eBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed")
		}
		t.Skip("tmux not installed")
	}
	if bin := os.Getenv("STREAMDBG_E2E_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "streamdbg-e2e")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "streamdbg")
		if out, err := exec.Command("go", "build", "-o", builtBin, "..").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// The binary is built once for the parallel terminal tests (and removed
// by TestMain).
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// startTerm runs bin with args at w×h, HOME in a temporary directory.
func startTerm(t *testing.T, bin string, w, h int, args ...string) *term {
	t.Helper()
	dir := t.TempDir()
	tm := &term{t: t, sock: fmt.Sprintf("sdbg-e2e-%d-%d", os.Getpid(), termSeq.Add(1)), status: filepath.Join(dir, "status"),
		home: filepath.Join(dir, "home"), w: w, h: h}
	if err := os.Mkdir(tm.home, 0o755); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	script := fmt.Sprintf("cd %s && %s %s; echo $? > %s; sleep 30", tm.home, bin, strings.Join(quoted, " "), tm.status)
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "env", "HOME="+tm.home, "NO_COLOR=1", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *term) screen() string { return tm.tmux("capture-pane", "-p", "-t", "e2e") }

// keys sends tmux key names one by one (letters, Enter, Escape, Tab, …).
func (tm *term) keys(ks ...string) {
	tm.t.Helper()
	for _, k := range ks {
		tm.tmux("send-keys", "-t", "e2e", k)
		if k == "Escape" {
			// A key right after esc would read as alt+key.
			time.Sleep(300 * time.Millisecond)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// keyDrawn sends one key and returns the screen once it differs from the
// screen before the key (or as it is after 5 s, when the key changes
// nothing).
func (tm *term) keyDrawn(k string) string {
	tm.t.Helper()
	before := tm.screen()
	tm.keys(k)
	s := tm.screen()
	for deadline := time.Now().Add(5 * time.Second); s == before && time.Now().Before(deadline); s = tm.screen() {
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// line types a line at the prompt opened by the given key and runs it.
func (tm *term) line(open, text string) {
	tm.t.Helper()
	tm.keys(open)
	tm.tmux("send-keys", "-t", "e2e", "-l", text)
	tm.keys("Enter")
}

// waitFor waits until the screen holds every want; it returns the screen
// after checking that no line is wider than the terminal and that the
// header names the program.
func (tm *term) waitFor(what string, want ...string) string {
	tm.t.Helper()
	var s string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s = tm.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			if !strings.HasPrefix(s, " streamdbg · ") {
				tm.t.Fatalf("%s: the header is not streamdbg's:\n%s", what, s)
			}
			for _, l := range strings.Split(s, "\n") {
				if n := len([]rune(l)); n > tm.w {
					tm.t.Fatalf("%s: a line of %d cells in a %d-cell terminal:\n%s", what, n, tm.w, s)
				}
			}
			return s
		}
		if _, err := os.Stat(tm.status); err == nil {
			b, _ := os.ReadFile(tm.status)
			tm.t.Fatalf("%s: streamdbg exited (status %s) before the screen showed %q:\n%s", what, strings.TrimSpace(string(b)), want, s)
		}
	}
	tm.t.Fatalf("%s: screen lacks %q:\n%s", what, want, s)
	return s
}

// lacks asserts that the screen holds none of the texts.
func (tm *term) lacks(what, s string, texts ...string) {
	tm.t.Helper()
	for _, x := range texts {
		if strings.Contains(s, x) {
			tm.t.Fatalf("%s: the screen shows %q:\n%s", what, x, s)
		}
	}
}

// exited waits for the program to exit and returns its status.
func (tm *term) exited() string {
	tm.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(tm.status); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	tm.t.Fatalf("streamdbg did not exit:\n%s", tm.screen())
	return ""
}

// running asserts the program has not exited (no crash).
func (tm *term) running(what string) {
	tm.t.Helper()
	time.Sleep(150 * time.Millisecond)
	if b, err := os.ReadFile(tm.status); err == nil {
		tm.t.Fatalf("%s: streamdbg exited with status %s:\n%s", what, strings.TrimSpace(string(b)), tm.screen())
	}
}

var recordRe = regexp.MustCompile(`· record ([0-9,]+) ·`)

// header asserts the header's fields for a width: the same fields at every
// stop, whatever they hold.
func (tm *term) header(what, s string) {
	tm.t.Helper()
	head := strings.SplitN(s, "\n", 2)[0]
	want := []string{" streamdbg · ", " · record ", " · wm "}
	if tm.w >= 90 {
		want = append(want, " · proc ")
	}
	for _, w := range want {
		if !strings.Contains(head, w) {
			tm.t.Fatalf("%s: header %q lacks %q", what, head, w)
		}
	}
	if !recordRe.MatchString(head) {
		tm.t.Fatalf("%s: header %q has no record count", what, head)
	}
}

func TestTerminalWordcount(t *testing.T) {
	t.Parallel() // each in its own tmux server; mostly waiting
	bin := e2eBinary(t)
	tm := startTerm(t, bin, 120, 40)
	s := tm.waitFor("start", "record 0", "at the start")
	tm.header("start", s)

	// 1. A watch whose query fails at run time is an error, not a crash.
	tm.line("w", "key FROM keyed_stat")
	tm.running("a failing watch")
	tm.waitFor("failing watch", "Error", "keyed_stat")
	tm.keys("Escape")
	tm.line(":", `watch SELECT * FROM "nosuch"`)
	tm.running("a watch on an unknown operator")
	tm.waitFor("unknown operator watch", "Error", "nosuch")
	tm.keys("Escape")

	// 7. break at an operator with spaces; carets under the condition;
	// unknown states refused.
	tm.line(":", "break at Source: lines when value LIKE '%stream%'")
	tm.waitFor("break at a name with spaces", `breakpoint #1: at "Source: lines" when value LIKE '%stream%'`)
	tm.line(":", "break at count when vlaue > 1")
	s = tm.waitFor("caret", "  break at count when vlaue > 1", "                      ^", `did you mean "value"`)
	tm.keys("q") // 12. q closes the error, it does not quit
	tm.running("q on an error")
	tm.line(":", "break at count when state.nosuch > 1")
	tm.waitFor("unknown state", `operator "count" has no state "nosuch"`)
	tm.keys("Escape")
	tm.line(":", "delete 1")
	tm.waitFor("delete", "breakpoint #1 deleted")

	// 3. A breakpoint in the middle of a record; n finishes the record
	// with its changes (the second "the" of line 1).
	tm.line(":", "break at count when key = 'the'")
	tm.keys("c")
	s = tm.waitFor("breakpoint", "▶ #2 after count[0] (key the) · record 1", "count the 1  (new)")
	tm.header("breakpoint", s)
	tm.line(":", "disable 2")
	tm.keys("n")
	s = tm.waitFor("n after the breakpoint", "record 1 ·", "the   2  ← 1")
	tm.lacks("n after the breakpoint", s, "record 2 ·")

	// 4. > to a keyless operator says so; < brings the keyed state back.
	tm.keys(">")
	tm.waitFor(">", "State · out", "not keyed")
	tm.keys("<")
	s = tm.waitFor("<", "State · count", "[keyed]", "the   2")

	// 2, 5, 6. Long runs are one stop; back returns where they began and
	// takes their sink output off the screen; the count is the sinks'.
	tm.keys("2", "3", "N")
	tm.waitFor("23N", "record 24 ·", "stopped: next · 23 records")
	tm.keys("1", "8", "0", "N")
	s = tm.waitFor("180N", "record 204 ·", "next · 180 records")
	total := outputTotal(t, s)
	tm.keys("u")
	s = tm.waitFor("u", "record 24 ·", "back to record 24")
	if back := outputTotal(t, s); back >= total {
		t.Fatalf("back to record 24 still shows %d outputs (%d at record 204)", back, total)
	}
	tm.lacks("u", s, fmt.Sprintf("#%d ", total))

	// 8. The location is pinned; G goes to the end of a long record pane.
	tm.line(":", "enable 2")
	tm.keys("c")
	tm.waitFor("second breakpoint", "▶ #2 after count")
	tm.keys("Tab", "Tab", "Tab", "G") // the record pane
	tm.waitFor("G", "▶ #2 after count")

	// 11. Help is the command table and the pane's keys, never cut.
	tm.keys("?")
	tm.waitFor("help", "Help", "Keys of Record pane")
	tm.line("/", "every 3rd")
	tm.waitFor("help search", "% 3 at every 3rd")
	tm.keys("q")
	tm.running("q in help")

	// 13. ~ in a savepoint path is the home directory.
	tm.line("p", "~/sp1")
	tm.waitFor("savepoint", "savepoint written to")
	if _, err := os.Stat(filepath.Join(tm.home, "sp1", "_metadata")); err != nil {
		t.Fatalf("p ~/sp1 did not write $HOME/sp1: %v", err)
	}

	// 12. q with breakpoints asks once; n stays, y quits with status 0.
	tm.keys("q")
	tm.waitFor("quit?", "Quit streamdbg?", "breakpoint")
	tm.keys("n")
	tm.running("n on the quit question")
	tm.keys("q")
	tm.waitFor("quit? again", "Quit streamdbg?")
	tm.keys("y")
	if st := tm.exited(); st != "0" {
		t.Fatalf("exit status %s, want 0", st)
	}
}

var outputRe = regexp.MustCompile(`Output · ([0-9,]+) records?`)

func outputTotal(t *testing.T, s string) int {
	t.Helper()
	m := outputRe.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no output count on the screen:\n%s", s)
	}
	var n int
	fmt.Sscan(strings.ReplaceAll(m[1], ",", ""), &n)
	return n
}

func TestTerminalOrdersPebble(t *testing.T) {
	t.Parallel() // each in its own tmux server; mostly waiting
	bin := e2eBinary(t)
	tm := startTerm(t, bin, 80, 24, "debug", "orders", "--backend", "pebble")
	tm.waitFor("start", "record 0")
	// 2. 900N is one stop of 900 records, and u goes back to record 0.
	tm.keys("9", "0", "0", "N")
	s := tm.waitFor("900N", "record 900 ·", "900 records")
	tm.header("900N", s)
	tm.keys("u")
	tm.waitFor("u after 900N", "record 0 ·", "back to record 0")
	// 13. The source's task shows its offsets (operator state).
	tm.keys("3", "N", "Tab", "Tab", "g")
	tm.waitFor("source", "State · Source: orders", "offsets")
	// 6. The output count is what the sink wrote.
	tm.keys("c")
	s = tm.waitFor("continue", "finished", "1,000 records")
	tm.lacks("continue", s, "end of input: end of input")
	tm.keys("q")
	if st := tm.exited(); st != "0" {
		t.Fatalf("exit status %s", st)
	}
}

func TestTerminalClicks(t *testing.T) {
	t.Parallel() // each in its own tmux server; mostly waiting
	bin := e2eBinary(t)
	tm := startTerm(t, bin, 80, 24, "debug", "clicks")
	tm.waitFor("start", "record 0")
	// 9. Windows and timers are readable at 80 columns.
	tm.line(":", "break at count when key = 'u1'")
	tm.keys("c")
	tm.waitFor("breakpoint", "after count[1]")
	tm.keys("l", "l", "l") // windows
	tm.waitFor("windows", "[windows]", "[12:00:00, 12:00:10)", "times on 2026-03-01")
	tm.keys("h") // timers
	tm.waitFor("timers", "[timers]", "12:00:09.999")
	// 13. The watermark has its date; a backward one is ignored.
	tm.line(":", "delete 1")
	tm.keys("5", "N")
	s := tm.waitFor("5N", "wm 03-01 ")
	tm.header("5N", s)
	tm.line(":", "watermark 2020-01-01T00:00:00Z")
	tm.waitFor("backward watermark", "ignored")
	// 11. Restoring a Flink savepoint says what to do instead.
	flinkSP := filepath.Join("..", "..", "shared", "flink-savepoints", "udf-flink1.20-hashmap-savepoint")
	if abs, err := filepath.Abs(flinkSP); err == nil {
		if _, err := os.Stat(abs); err == nil {
			tm.line(":", "restore "+abs)
			tm.waitFor("restore flink", "Apache Flink savepoint", "open ")
			tm.keys("Escape")
		}
	}
	tm.keys("C-c")
	if st := tm.exited(); st != "0" {
		t.Fatalf("exit status %s", st)
	}
}

func TestTerminalSessionsAndFailures(t *testing.T) {
	t.Parallel() // each in its own tmux server; mostly waiting
	bin := e2eBinary(t)
	tm := startTerm(t, bin, 120, 40, "debug", "sessions")
	tm.waitFor("start", "record 0")
	tm.keys("c")
	s := tm.waitFor("continue", "finished: the input ended after record 22")
	tm.lacks("continue", s, "end of input: end of input", "1 records")
	tm.keys("q")
	if st := tm.exited(); st != "0" {
		t.Fatalf("exit status %s", st)
	}

	// 13. A failure says R and u; R asks before it discards progress.
	tm = startTerm(t, bin, 120, 40, "debug", "wordcount", "--fail-at", "30", "--checkpoint-interval", "10")
	tm.waitFor("start", "record 0")
	tm.keys("c")
	tm.waitFor("failure", "failed", "R restarts")
	tm.keys("n")
	tm.waitFor("n after the failure", "(R)", "(u)")
	tm.keys("Escape", "R")
	tm.waitFor("R asks", "Restart from checkpoint", "at record 20")
	tm.keys("y")
	tm.waitFor("restarted", "restarted from checkpoint", "record 20 ·")
	tm.keys("q")
	tm.exited()

	// 13. debug keyed-puzzle shows why it cannot start, and exits 1.
	tm = startTerm(t, bin, 80, 24, "debug", "keyed-puzzle")
	tm.waitFor("puzzle", "failed to start", "KeyBy")
	tm.keys("q")
	if st := tm.exited(); st != "1" {
		t.Fatalf("debug keyed-puzzle exited %s, want 1", st)
	}
}

func TestTerminalFlinkBrowser(t *testing.T) {
	t.Parallel() // each in its own tmux server; mostly waiting
	bin := e2eBinary(t)
	root := filepath.Join("..", "..", "shared", "flink-savepoints")
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the shared Flink savepoints are missing")
		}
		t.Skip("no shared Flink savepoints")
	}
	abs, _ := filepath.Abs(root)
	// 10. Timer states show their timers; Long.MIN_VALUE+10 is readable.
	tm := startTerm(t, bin, 120, 40, "open", filepath.Join(abs, "udf-flink1.20-hashmap-savepoint"))
	tm.waitFor("open", "Apache Flink savepoint", "StateMeta")
	for range 6 {
		// Each j must be drawn before the next is sent: a j sent while the
		// last is still being drawn would step past the timer state.
		s := tm.keyDrawn("j")
		if strings.Contains(s, "event_timer ─") || strings.Contains(s, "_timer_state/event_timer ───") {
			break
		}
	}
	tm.waitFor("timers", "Long.MIN_VALUE+10", "event")
	// 11. The browser's help lists the browser's keys, not the debugger's.
	tm.keys("?")
	s := tm.waitFor("browser help", "Help", "In the browser")
	tm.lacks("browser help", s, "next record", "step into")
	tm.keys("q", "q")
	if st := tm.exited(); st != "0" {
		t.Fatalf("exit status %s", st)
	}
	// 10. What cannot be read is a listed gap, with its reason in full.
	// (The changelog checkpoint that stood here is read since issue 21.)
	tm = startTerm(t, bin, 80, 24, "open", filepath.Join(abs, "typeser-flink1.16-hashmap-savepoint"))
	tm.waitFor("gaps", "⚠", "2 gaps")
	tm.waitFor("gap", "Not read: testState: unknown serializer", "TestSerializerSnapshot")
	tm.keys("q")
	tm.exited()
}

// TestTerminalEveryJob drives every example job (those above in depth, the
// others too) through the cases that apply to any job, at both sizes:
// one stop for a long next and back to where it began (2), a query whose
// columns fit (13), help (11), q closing it (12), a quit that asks once
// with a breakpoint set (12), and a header whose fields stay (13).
func TestTerminalEveryJob(t *testing.T) {
	t.Parallel()
	bin := e2eBinary(t)
	jobs, err := exec.Command(bin, "jobs").Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(jobs)), "\n") {
		job := strings.Fields(line)[0]
		if job == "keyed-puzzle" {
			continue // cannot start: TestTerminalSessionsAndFailures
		}
		w, h := 120, 40
		if i%2 == 1 {
			w, h = 80, 24
		}
		t.Run(job, func(t *testing.T) {
			t.Parallel()
			tm := startTerm(t, bin, w, h, "debug", job)
			s := tm.waitFor("start", "record 0 ·")
			tm.header("start", s)
			tm.keys("5", "N")
			s = tm.waitFor("5N", "record 5 ·")
			tm.header("5N", s)
			tm.keys("u")
			tm.waitFor("u", "record 0 ·", "back to record 0")
			tm.line(":", "SELECT operator_name, state_name, COUNT(*) AS n FROM keyed_state GROUP BY operator_name, state_name")
			tm.waitFor("query", "Query ·", "operator_name")
			tm.keys("q")
			tm.running("q on a query result")
			tm.keys("?")
			tm.waitFor("help", "Help ·", "Keys of")
			tm.keys("Escape")
			tm.line(":", "break when key = 'nokey-at-all'")
			tm.waitFor("break", "breakpoint #1")
			tm.keys("c")
			s = tm.waitFor("continue", "finished")
			tm.header("continue", s)
			tm.keys("q")
			tm.waitFor("quit?", "Quit streamdbg?")
			tm.keys("y")
			if st := tm.exited(); st != "0" {
				t.Fatalf("exit status %s", st)
			}
		})
	}
}
