package tui

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func itoa(n int) string { return strconv.Itoa(n) }

func reflectType(v any) string { return reflect.TypeOf(v).String() }

func newSession(t testing.TB, job string, o runtime.Options) *session.Session {
	t.Helper()
	return newSessionOpts(t, job, session.Options{Options: o})
}

func newSessionOpts(t testing.TB, job string, o session.Options) *session.Session {
	t.Helper()
	j, err := fixtures.Build(job, fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	o.Trace = true
	s, err := session.New(j, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newModel(t testing.TB, w, h int) *Model {
	return newJobModel(t, "wordcount", w, h)
}

func newJobModel(t testing.TB, job string, w, h int) *Model {
	m := New(newSession(t, job, runtime.Options{}), Options{NoColor: true})
	m.SetSize(w, h)
	return m
}

// press sends keys (one string per key, as tea names them) and runs the
// commands they return to completion, feeding their messages back.
func press(t testing.TB, m tea.Model, ks ...string) tea.Model {
	t.Helper()
	for _, k := range ks {
		m = send(t, m, keyMsg(k))
	}
	return m
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "space", " ":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	r := []rune(k)[0]
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + 'a' - 'A', Text: k, Mod: tea.ModShift}
	}
	return tea.KeyPressMsg{Code: r, Text: k}
}

// typeText sends each rune of s as a key press.
func typeText(t testing.TB, m tea.Model, s string) tea.Model {
	for _, r := range s {
		m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)}) // only cursor blinks come back
	}
	return m
}

// command types a line at the : prompt and runs it.
func command(t testing.TB, m tea.Model, line string) tea.Model {
	t.Helper()
	press(t, m, ":")
	typeText(t, m, line)
	return press(t, m, "enter")
}

func send(t testing.TB, m tea.Model, msg tea.Msg) tea.Model {
	t.Helper()
	m, cmd := m.Update(msg)
	return drain(t, m, cmd)
}

// drain runs a command and what follows from it, except quitting. A
// command that does not answer within a while is a timer (progress tick,
// cursor blink) and is dropped; background commands answer sooner here.
func drain(t testing.TB, m tea.Model, cmd tea.Cmd) tea.Model {
	if cmd == nil {
		return m
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(drainWait):
		return m
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			m = drain(t, m, c)
		}
	case tickMsg, nil, tea.QuitMsg:
	default:
		if !strings.HasPrefix(reflectType(msg), "tui.") && !strings.HasPrefix(reflectType(msg), "tea.") {
			return m // bubbles' own timers (cursor blink)
		}
		m2, next := m.Update(msg)
		m = drain(t, m2, next)
	}
	return m
}

// drainWait is how long drain waits for a command: a progress tick comes
// after 100ms (and is dropped); the commands of the tests' small jobs
// answer well within, even on a loaded machine.
const drainWait = 5 * time.Second

var (
	durations = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	// A duration in a title changes the length of the border after it,
	// wherever in the title it is: the rule after a masked duration is
	// masked too.
	titleRule = regexp.MustCompile(`T( [^─]*)? ─+`)
)

// screen is a view as a person sees it: no ANSI, durations masked.
func screen(v tea.View) string {
	s := ansi.Strip(v.Content)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(titleRule.ReplaceAllString(durations.ReplaceAllString(l, "T"), "T$1 ─"), " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from %s (go test ./tui -update rewrites it):\n%s", name, path, got)
	}
}

func sizeName(w, h int) string { return itoa(w) + "x" + itoa(h) }

// checkScreen asserts what holds of every screen: h lines, none wider
// than w.
func checkScreen(t testing.TB, got string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != h {
		t.Errorf("%dx%d: view has %d lines", w, h, len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Errorf("%dx%d: line wider than the terminal: %q", w, h, l)
		}
	}
}

func contains(t testing.TB, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("screen lacks %q:\n%s", w, got)
		}
	}
}
