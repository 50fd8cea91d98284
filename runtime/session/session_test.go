package session_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdbg/fixtures"
	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/state"
)

// TestSessionTranscripts drives example jobs step by step through the
// session and prints what every stop reports and what state holds.
func TestSessionTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/transcripts", func(t *testing.T, path string) {
		var s *session.Session
		defer func() {
			if s != nil {
				s.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "open":
				if s != nil {
					s.Close()
				}
				var job, file string
				par, interval := 0, 0
				d.ScanArgs(t, "job", &job)
				file = "input.txt"
				d.MaybeScanArgs(t, "file", &file)
				d.MaybeScanArgs(t, "parallelism", &par)
				d.MaybeScanArgs(t, "interval", &interval)
				in, err := fixtures.Parse(file, []byte(d.Input))
				if err != nil {
					return "error: " + err.Error()
				}
				j, err := fixtures.Build(job, fixtures.Config{Input: in})
				if err != nil {
					return "error: " + err.Error()
				}
				s, err = session.New(j, session.Options{Options: runtime.Options{Parallelism: par, Trace: true}, CheckpointInterval: interval})
				if err != nil {
					s = nil
					return "error: " + err.Error()
				}
				return s.Plan().String()
			case "next":
				n := 1
				d.MaybeScanArgs(t, "n", &n)
				st, err := s.NextN(context.Background(), n)
				return printStop(st, err, d.HasArg("quiet"))
			case "step":
				st, err := s.StepInto()
				return printStop(st, err, false)
			case "continue":
				st, err := s.Continue(context.Background())
				return printStop(st, err, d.HasArg("quiet"))
			case "back":
				st, err := s.Back()
				return printStop(st, err, false)
			case "break":
				var at, when string
				d.MaybeScanArgs(t, "at", &at)
				when = strings.TrimSpace(d.Input)
				bp, err := s.AddBreakpoint(at, when)
				if err != nil {
					return "error: " + err.Error()
				}
				return fmt.Sprintf("breakpoint #%d %s", bp.ID, bp.Describe())
			case "watermark":
				var at string
				d.ScanArgs(t, "to", &at)
				ms, err := strconv.ParseInt(at, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				st, err := s.AdvanceWatermark(ms)
				return printStop(st, err, false)
			case "query":
				rows, err := s.Query(context.Background(), d.Input)
				if err != nil {
					return "error: " + err.Error()
				}
				var b bytes.Buffer
				if err := query.Format(&b, rows, "table"); err != nil {
					return "error: " + err.Error()
				}
				return b.String()
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

func printStop(st *session.Stop, err error, quiet bool) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stopped: %s (%s) at record %d after %d steps\n", st.Reason, st.Message, st.Position, st.Steps)
	if quiet {
		return b.String()
	}
	for _, e := range st.Events {
		switch e.Kind {
		case runtime.TraceStep:
			i := e.Info
			switch i.Kind {
			case "source", "end of input":
				fmt.Fprintf(&b, "  %s[%d] %s %s\n", i.Operator, i.Subtask, i.Kind, i.Where)
			case "record":
				fmt.Fprintf(&b, "  %s[%d] record %s key=%v\n", i.Operator, i.Subtask, show(i.Record), show(i.Key))
			default:
				fmt.Fprintf(&b, "  %s[%d] %s\n", i.Operator, i.Subtask, i.Kind)
			}
		case runtime.TraceStateWrite:
			old := "∅"
			if e.HadOld {
				old = show(e.Old)
			}
			if e.Cleared {
				fmt.Fprintf(&b, "    state %s[%d].%s key=%s cleared\n", e.Operator, e.Subtask, e.State, show(e.Key))
			} else {
				uk := ""
				if e.UserKey != nil {
					uk = "[" + show(e.UserKey) + "]"
				}
				fmt.Fprintf(&b, "    state %s[%d].%s key=%s%s: %s → %s (kg %d)\n", e.Operator, e.Subtask, e.State, show(e.Key), uk, old, show(e.New), e.KeyGroup)
			}
		case runtime.TraceOutput:
			fmt.Fprintf(&b, "    output %s[%d] %s\n", e.Operator, e.Subtask, show(e.Value))
		case runtime.TraceWatermark:
			fmt.Fprintf(&b, "    watermark %s[%d] %s → %s\n", e.Operator, e.Subtask, state.FormatMillis(e.From), state.FormatMillis(e.To))
		case runtime.TraceTimerSet, runtime.TraceTimerFired, runtime.TraceTimerDeleted:
			fmt.Fprintf(&b, "    %s %s[%d] %s %s key=%s\n", e.Kind, e.Operator, e.Subtask, e.Domain, state.FormatMillis(e.Timestamp), show(e.Key))
		case runtime.TraceNote:
			fmt.Fprintf(&b, "    %s[%d] %s %v\n", e.Operator, e.Subtask, e.What, e.Attrs)
		}
	}
	if st.Failure != nil {
		fmt.Fprintf(&b, "failure: %v\n", st.Failure)
	}
	return b.String()
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case runtime.JSONAppender:
		return string(x.AppendJSON(nil))
	}
	return fmt.Sprint(v)
}
