package tui

import (
	"fmt"
	"math/rand/v2"
	"os"
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

// randomKeys are what the random walk presses: every key of the debug
// screen, the overlays and the prompt, plus the lines a prompt may get
// (good and bad commands and queries), so that the walk reaches the
// overlays, the prompt, errors and the background commands.
var randomKeys = []string{
	"n", "N", "s", "c", "u", "R", "b", "B", "w", "W", "p", "o", "y", ":", "?", "q", "esc", "enter", "tab", "shift+tab",
	"<", ">", "up", "down", "left", "right", "pgup", "pgdown", "home", "end", "g", "G", "H", "L", "z", "/", ".", ",",
	"f", "S", "C", "x", "space", "e", "j", "k", "l", "h", "1", "3", "0", "ctrl+c", "d", "y", "n", "n", "c", ":", ":",
}

var randomLines = []string{
	"key = 'the'", "vlaue > 1", "SELECT * FROM keyed_state LIMIT 3", "key FROM keyed_stat", "break at count when key = 'a' hits > 2",
	"break before count", "break at Source: lines", "state.nosuch > 1", "watch SELECT COUNT(*) FROM keyed_state", "next 7", "back",
	"watermark 2026-03-01T12:00:30Z", "advance 5s", "restore /nonexistent", "open /nonexistent", "help break", "condition 1 hits % 2",
	"delete 1", "disable 2", "unwatch 1", "SELECT", "((", "'", `"`, "a", "~/x", "🙂", "",
}

var headerRe = regexp.MustCompile(`^ streamdbg · ([a-z-]+) · record ([0-9,]+) · wm `)

// TestRandomKeys feeds each example job a few thousand random keys (a fixed
// seed per job; STREAMDBG_SEED replays another) and asserts after every
// key: no panic, a screen of the terminal's size, and a header that names
// the job and, when no command runs, the session's position.
func TestRandomKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("a few thousand keys per job")
	}
	// The walk types paths for p, o and restore: they go to a temporary
	// directory, never into the package.
	work := t.TempDir()
	t.Chdir(work)
	t.Setenv("HOME", work)
	defer func() {
		if entries, _ := os.ReadDir(work); len(entries) > 0 {
			t.Logf("the walk wrote %d entries in its working directory (removed)", len(entries))
		}
	}()
	keys := 3000
	if raceEnabled {
		keys = 400
	}
	// Progress ticks answer at once: the walk runs every command to its end.
	defer func(d time.Duration) { progressRate = d }(progressRate)
	progressRate = time.Microsecond
	if n, err := strconv.Atoi(os.Getenv("STREAMDBG_RANDOM_KEYS")); err == nil {
		keys = n
	}
	for i, ex := range fixtures.Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			seed := uint64(1600 + i)
			if s, err := strconv.ParseUint(os.Getenv("STREAMDBG_SEED"), 10, 64); err == nil {
				seed = s
			}
			j, err := fixtures.Build(ex.Name, fixtures.Config{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := session.New(j, session.Options{Options: runtime.Options{Trace: true}, CheckpointInterval: 50})
			if err != nil {
				// A job that cannot start (keyed-puzzle): its screen takes
				// the keys instead.
				randomFailure(t, err, seed, keys)
				return
			}
			defer s.Close()
			s.SetFailAt(int64(40 + i*7)) // a failure to recover from, on the way
			m := New(s, Options{NoColor: true})
			rng := rand.New(rand.NewPCG(seed, 16))
			sizes := [][2]int{{120, 40}, {80, 24}, {100, 30}, {60, 16}}
			w, h := 120, 40
			// What the walk reached, so that a walk stuck somewhere fails.
			var maxPos int64
			stops, errs, quits := 0, 0, 0
			overlays := map[string]bool{}
			for n := range keys {
				var msg tea.Msg
				switch r := rng.IntN(100); {
				case r < 2:
					sz := sizes[rng.IntN(len(sizes))]
					w, h = sz[0], sz[1]
					msg = tea.WindowSizeMsg{Width: w, Height: h}
				case r < 5:
					msg = tea.MouseClickMsg{X: rng.IntN(w), Y: rng.IntN(h), Button: tea.MouseLeft}
				case r < 8:
					b := tea.MouseWheelUp
					if rng.IntN(2) == 0 {
						b = tea.MouseWheelDown
					}
					msg = tea.MouseWheelMsg{X: rng.IntN(w), Y: rng.IntN(h), Button: b}
				case r < 40 && m.prompt.active():
					for _, r := range randomLines[rng.IntN(len(randomLines))] {
						m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
					}
					msg = keyMsg("enter")
				default:
					msg = keyMsg(randomKeys[rng.IntN(len(randomKeys))])
				}
				before := m.view.Stop
				quit := stepModel(t, m, msg)
				if m.view.Stop != before {
					stops++
				}
				if m.statusErr {
					errs++
				}
				if m.overlay != nil {
					overlays[reflectType(m.overlay)] = true
				}
				maxPos = max(maxPos, m.view.Position)
				if m.panics > 0 {
					t.Fatalf("seed %d, key %d (%v): a panic was recovered: %s", seed, n, msg, m.lastPanic)
				}
				checkFrame(t, m, ex.Name, w, h, fmt.Sprintf("seed %d, key %d (%v)", seed, n, msg))
				if quit {
					// q (answered y) or ctrl+c quit: go on as a new user would
					// after opening it again, with the same session.
					quits++
					m = New(s, Options{NoColor: true})
					m.SetSize(w, h)
				}
			}
			t.Logf("seed %d: %d keys, %d stops, record %d at most, %d errors shown, %d quits, overlays %v", seed, keys, stops, maxPos, errs, quits, overlays)
			if keys >= 1000 && (stops < 50 || maxPos < 5 || errs == 0 || len(overlays) < 3) {
				t.Fatalf("the walk did not get around: %d stops, record %d, %d errors, overlays %v", stops, maxPos, errs, overlays)
			}
		})
	}
}

// stepModel sends one message and runs what it returns, as the program
// does (background commands to their end); it reports a quit.
func stepModel(t *testing.T, m *Model, msg tea.Msg) (quit bool) {
	t.Helper()
	_, cmd := m.Update(msg)
	return runCmds(t, m, cmd, 0)
}

func runCmds(t *testing.T, m *Model, cmd tea.Cmd, depth int) bool {
	if cmd == nil || depth > 20 {
		return false
	}
	switch msg := runWithin(cmd).(type) {
	case nil, tickMsg:
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		quit := false
		for _, c := range msg {
			quit = runCmds(t, m, c, depth+1) || quit
		}
		return quit
	default:
		if strings.HasPrefix(reflectType(msg), "tui.") || strings.HasPrefix(reflectType(msg), "tea.") {
			_, next := m.Update(msg)
			return runCmds(t, m, next, depth+1)
		}
	}
	return false
}

// runWithin runs a command; one that does not answer within a minute (a
// timer of bubbles') is dropped.
func runWithin(cmd tea.Cmd) tea.Msg {
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	select {
	case msg := <-ch:
		return msg
	case <-time.After(time.Minute):
		return nil
	}
}

// checkFrame asserts what holds of every screen.
func checkFrame(t *testing.T, m *Model, job string, w, h int, where string) {
	t.Helper()
	got := ansi.Strip(m.View().Content)
	lines := strings.Split(got, "\n")
	if len(lines) != h {
		t.Fatalf("%s: %d lines on a %d-line terminal:\n%s", where, len(lines), h, got)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Fatalf("%s: a line of %d cells on a %d-cell terminal: %q", where, ansi.StringWidth(l), w, l)
		}
	}
	if m.browser != nil {
		if !strings.HasPrefix(lines[0], " streamdbg · ") {
			t.Fatalf("%s: browser header %q", where, lines[0])
		}
		return
	}
	hm := headerRe.FindStringSubmatch(lines[0])
	if hm == nil || hm[1] != job {
		t.Fatalf("%s: header %q does not name %s with its record", where, lines[0], job)
	}
	if m.busy == nil {
		if pos, _ := strconv.ParseInt(strings.ReplaceAll(hm[2], ",", ""), 10, 64); pos != m.view.Position || pos != m.s.Position() {
			t.Fatalf("%s: header says record %d, the session is at %d", where, pos, m.s.Position())
		}
	}
}

func randomFailure(t *testing.T, err error, seed uint64, keys int) {
	m := newFailureModel(err, Options{NoColor: true})
	rng := rand.New(rand.NewPCG(seed, 16))
	for range keys {
		m.Update(keyMsg(randomKeys[rng.IntN(len(randomKeys))]))
		got := ansi.Strip(m.View().Content)
		if !strings.HasPrefix(got, " streamdbg · failed to start") || len(strings.Split(got, "\n")) != m.h {
			t.Fatalf("failure screen:\n%s", got)
		}
	}
}
