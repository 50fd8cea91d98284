package session

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
)

// lightScenario is a list of commands run on a traced session.
type lightScenario struct {
	name     string
	interval int // checkpoint interval
	keep     int // checkpoints kept
	outLimit int
	failAt   int64
	cmds     []string // "c", "n N", "s" (step into), "u" (back), "R" (restart)
}

var lightScenarios = []lightScenario{
	{name: "continue", interval: 10, keep: 4, cmds: []string{"c", "u"}},
	// Kept checkpoints reach back less far than the events a stop keeps:
	// the anchor is pinned past its trimming.
	{name: "pinned", interval: 3, keep: 1, outLimit: 7, cmds: []string{"n 40", "c", "u", "u"}},
	// A command that starts in the middle of a record.
	{name: "mid-record", interval: 5, keep: 2, cmds: []string{"n 3", "s", "s", "n 60", "c"}},
	// A short command (no checkpoint passed: traced throughout), then a
	// long one, and back twice.
	{name: "short-long", interval: 50, keep: 3, cmds: []string{"n 2", "n 500", "u", "u", "c"}},
	{name: "failure", interval: 7, keep: 2, failAt: 150, cmds: []string{"c", "u", "c"}},
	// Back to a checkpoint the stop's replay took again (the sink records
	// after it go, and come back once).
	{name: "back-into-replay", interval: 7, keep: 3, cmds: []string{"n 500", "n 1", "u", "n 3", "u", "u"}},
	// Recovery from a checkpoint the stop's replay took again: the
	// records after it are emitted once.
	{name: "recover", interval: 7, keep: 3, failAt: 400, cmds: []string{"c", "R", "c", "u"}},
}

// lightResult is what one command showed: the session's view (the stop,
// outputs, plan, checkpoint), the history of every entry it changed and
// the whole live state.
type lightResult struct {
	view    View
	buffer  []Output // the outputs buffer, beyond what the view shows
	history map[EntryID][]Revision
	state   string
}

func runLightScenario(t *testing.T, job, backend string, sc lightScenario, full bool) ([]lightResult, int) {
	t.Helper()
	j, err := fixtures.Build(job, fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(j, Options{Options: runtime.Options{Output: io.Discard, Trace: true, Backend: backend}, CheckpointInterval: sc.interval,
		KeepCheckpoints: sc.keep, OutputLimit: sc.outLimit})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.fullTrace = full
	if sc.failAt > 0 {
		s.SetFailAt(sc.failAt)
	}
	var out []lightResult
	for _, cmd := range sc.cmds {
		var st *Stop
		st, err = runCommand(s, cmd)
		if err != nil {
			// A failed job refuses commands: that is part of the
			// transcript too.
			out = append(out, lightResult{state: "error: " + err.Error()})
			continue
		}
		v := s.View()
		if v.Failure != nil {
			v.Failure.Stack = ""
		}
		if v.Stop != nil && v.Stop.Failure != nil {
			v.Stop.Failure.Stack = ""
		}
		r := lightResult{view: *v, buffer: append([]Output(nil), s.output...), history: map[EntryID][]Revision{}}
		for id := range st.Changes {
			revs, forgotten := s.History(id)
			r.history[id] = append(revs, Revision{Position: int64(-forgotten)})
		}
		rows, err := s.Query(context.Background(), "SELECT * FROM keyed_state")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for row, err := range rows.All() {
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, row)
		}
		r.state = b.String()
		out = append(out, r)
	}
	return out, s.lightRuns
}

// TestLightRunsMatchFullTrace runs every example job through command
// scenarios twice, traced throughout and with light runs, and requires the
// same view after every command (heap and pebble): the stop (events, truncation, changes,
// position, failure), the outputs and their count, the latest checkpoint,
// the history of every changed entry, and the live state; and that the
// light runs happened.
func TestLightRunsMatchFullTrace(t *testing.T) {
	lightRuns := 0
	for _, ex := range fixtures.Examples() {
		if ex.Name == "keyed-puzzle" {
			continue // fails at open
		}
		for i, sc := range lightScenarios {
			// Heap (light entries found by their tags) for the even
			// scenarios, pebble (found by their bytes) for the odd ones.
			backend := "heap"
			if i%2 == 1 {
				backend = "pebble"
			}
			t.Run(ex.Name+"/"+sc.name+"/"+backend, func(t *testing.T) {
				full, n := runLightScenario(t, ex.Name, backend, sc, true)
				if n != 0 {
					t.Fatalf("a fully traced session made %d light runs", n)
				}
				light, n := runLightScenario(t, ex.Name, backend, sc, false)
				lightRuns += n
				for i := range full {
					f, l := full[i], light[i]
					if f.state != l.state {
						t.Errorf("command %d (%s): state differs:\nfull:\n%s\nlight:\n%s", i, sc.cmds[i], f.state, l.state)
					}
					for id, fr := range f.history {
						if lr, ok := l.history[id]; !ok || !reflect.DeepEqual(fr, lr) {
							t.Errorf("command %d (%s): history of %v differs:\nfull:  %v\nlight: %v", i, sc.cmds[i], id, fr, lr)
							break
						}
					}
					if len(f.history) != len(l.history) {
						t.Errorf("command %d (%s): %d entries changed, %d with light runs", i, sc.cmds[i], len(f.history), len(l.history))
					}
					if !reflect.DeepEqual(f.buffer, l.buffer) {
						t.Errorf("command %d (%s): outputs buffer differs:\nfull:  %.800v\nlight: %.800v", i, sc.cmds[i], f.buffer, l.buffer)
					}
					if !reflect.DeepEqual(f.view, l.view) {
						t.Errorf("command %d (%s): view differs:\n%s", i, sc.cmds[i], viewDiff(f.view, l.view))
					}
				}
			})
		}
	}
	if lightRuns < 10 {
		t.Fatalf("only %d light runs: the scenarios do not exercise them", lightRuns)
	}
}

// viewDiff names the fields of two views that differ.
func viewDiff(a, b View) string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name := va.Type().Field(i).Name
			if name == "Stop" && a.Stop != nil && b.Stop != nil {
				sa, sb := reflect.ValueOf(*a.Stop), reflect.ValueOf(*b.Stop)
				for j := range sa.NumField() {
					if !reflect.DeepEqual(sa.Field(j).Interface(), sb.Field(j).Interface()) {
						fa, fb := fmt.Sprint(sa.Field(j).Interface()), fmt.Sprint(sb.Field(j).Interface())
						out = append(out, fmt.Sprintf("Stop.%s:\n  full:  %.600s\n  light: %.600s", sa.Type().Field(j).Name, fa, fb))
					}
				}
				continue
			}
			out = append(out, fmt.Sprintf("%s:\n  full:  %.600v\n  light: %.600v", name, va.Field(i).Interface(), vb.Field(i).Interface()))
		}
	}
	return strings.Join(out, "\n")
}

// runCommand runs one command of a test script: c, s, u (back), R
// (restart) or "n N".
func runCommand(s *Session, cmd string) (*Stop, error) {
	switch {
	case cmd == "c":
		return s.Continue(context.Background())
	case cmd == "s":
		return s.StepInto()
	case cmd == "u":
		return s.Back()
	case cmd == "R":
		return s.Restart()
	case strings.HasPrefix(cmd, "n "):
		var n int
		fmt.Sscanf(cmd, "n %d", &n)
		return s.NextN(context.Background(), n)
	}
	return nil, fmt.Errorf("unknown test command %q", cmd)
}
