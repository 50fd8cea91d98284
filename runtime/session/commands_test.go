package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

func newWordcount(t *testing.T) *session.Session {
	t.Helper()
	job, err := fixtures.Build("wordcount", fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(job, session.Options{Options: runtime.Options{Trace: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestExecute(t *testing.T) {
	ctx := context.Background()
	s := newWordcount(t)
	for _, tc := range []struct {
		line    string
		check   func(session.Result) string // "" when fine
		wantErr string
	}{
		{line: "next 3", check: func(r session.Result) string {
			if r.Stop == nil || r.Stop.Position != 3 || r.Stop.Reason != session.ReasonNext {
				return "want a next stop at record 3"
			}
			return ""
		}},
		{line: "n", check: func(r session.Result) string {
			if r.Stop.Position != 4 {
				return "want record 4"
			}
			return ""
		}},
		{line: "u", check: func(r session.Result) string {
			if r.Stop.Reason != session.ReasonBack || r.Stop.Position != 3 {
				return "want back at record 3"
			}
			return ""
		}},
		{line: "step", check: func(r session.Result) string {
			if r.Stop == nil || r.Stop.Steps != 1 {
				return "want one step"
			}
			return ""
		}},
		{line: "break at count when key = 'the'", check: func(r session.Result) string {
			if r.Text != "breakpoint #1: at count when key = 'the'" {
				return "got " + r.Text
			}
			return ""
		}},
		{line: "breakpoints", check: func(r session.Result) string {
			if !strings.Contains(r.Text, "#1 on ") {
				return "got " + r.Text
			}
			return ""
		}},
		{line: "continue", check: func(r session.Result) string {
			if r.Stop.Reason != session.ReasonBreakpoint || r.Stop.Last.Key != "the" {
				return "want a stop at breakpoint #1 on key the, got " + r.Stop.Message
			}
			return ""
		}},
		{line: "disable 1", check: func(r session.Result) string {
			if bp, _ := s.Breakpoint(1); bp.Enabled {
				return "still enabled"
			}
			return ""
		}},
		{line: "enable #1", check: func(r session.Result) string {
			if bp, _ := s.Breakpoint(1); !bp.Enabled {
				return "still disabled"
			}
			return ""
		}},
		{line: "delete 1", check: func(r session.Result) string {
			if len(s.Breakpoints()) != 0 {
				return "not deleted"
			}
			return ""
		}},
		{line: "delete 7", wantErr: "no breakpoint #7"},
		{line: "break at cuont", wantErr: `did you mean "count"`},
		{line: "SELECT key, value FROM keyed_state WHERE key = 'the'", check: func(r session.Result) string {
			if r.Rows == nil || strings.Join(r.Rows.Columns(), ",") != "key,value" {
				return "want rows key,value"
			}
			n := 0
			for row, err := range r.Rows.All() {
				if err != nil || row[0] != "the" {
					return "bad row"
				}
				n++
			}
			if n != 1 {
				return "want one row"
			}
			return ""
		}},
		{line: "explain SELECT * FROM keyed_state WHERE key = 'the'", check: func(r session.Result) string {
			if r.Rows == nil || r.Rows.Columns()[0] != "plan" {
				return "want a plan"
			}
			return ""
		}},
		{line: "SELECT vlaue FROM keyed_state", wantErr: `did you mean "value"`},
		{line: "watch SELECT COUNT(*) FROM keyed_state", check: func(r session.Result) string {
			if len(s.Watches()) != 1 {
				return "no watch"
			}
			return ""
		}},
		{line: "watermark 2026-01-01T00:00:10Z", check: func(r session.Result) string {
			if r.Stop == nil || r.Stop.Reason != session.ReasonTime {
				return "want a time stop"
			}
			return ""
		}},
		{line: "advance 5s", check: func(r session.Result) string {
			if got := s.Executor().ProcessingTime(); got != 5000 {
				return "processing time not advanced"
			}
			return ""
		}},
		{line: "advance soon", wantErr: "positive duration"},
		{line: "open /some/dir", check: func(r session.Result) string {
			if r.Open != "/some/dir" {
				return "want Open"
			}
			return ""
		}},
		{line: "help next", check: func(r session.Result) string {
			if !strings.HasPrefix(r.Text, "next [N] (n)") {
				return "got " + r.Text
			}
			return ""
		}},
		{line: "nxet", wantErr: `unknown command "nxet"; did you mean "next"?`},
		{line: "next -1", wantErr: "positive count"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			r, err := s.Execute(ctx, tc.line)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(r); msg != "" {
				t.Fatal(msg)
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if r, err := s.Execute(ctx, "savepoint "+dir); err != nil || !strings.Contains(r.Text, dir) {
		t.Fatalf("savepoint: %v %q", err, r.Text)
	}
	// In the middle of a record the savepoint finishes it first and says so.
	if _, err := s.Execute(ctx, "step"); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Execute(ctx, "savepoint "+dir+"2"); err != nil || !strings.HasPrefix(r.Text, "record ") || !strings.Contains(r.Text, " finished, savepoint written to "+dir+"2") {
		t.Fatalf("savepoint mid-record: %v %q", err, r.Text)
	}
	if _, err := s.Execute(ctx, "nxet"); !errors.Is(err, session.ErrUnknownCommand) {
		t.Fatalf("want ErrUnknownCommand, got %v", err)
	}
}

func TestProgress(t *testing.T) {
	s := newWordcount(t)
	p := &session.Progress{}
	ctx := session.WithProgress(context.Background(), p)
	r, err := s.Execute(ctx, "next 5")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop.Position != 5 || p.Position() != 5 || p.Records() != 5 {
		t.Fatalf("stop at %d, progress %d/%d; want 5", r.Stop.Position, p.Position(), p.Records())
	}
	if len(r.Stop.Events) == 0 {
		t.Fatal("merged stop lost its events")
	}
	r, err = s.Execute(ctx, "continue")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop.Reason != session.ReasonEnd || p.Position() != s.Position() {
		t.Fatalf("continue: %s at %d, progress %d", r.Stop.Reason, s.Position(), p.Position())
	}
	// A cancelled context interrupts, it is no error.
	s = newWordcount(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r, err = s.Execute(cctx, "continue")
	if err != nil || r.Stop.Reason != session.ReasonInterrupted {
		t.Fatalf("want interrupted, got %v %v", r.Stop, err)
	}
}

func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range session.Commands() {
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if seen[n] {
				t.Errorf("name %q used twice", n)
			}
			seen[n] = true
		}
		if c.Help == "" || c.Run == nil {
			t.Errorf("%s: no help or no func", c.Name)
		}
	}
}
