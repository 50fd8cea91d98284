package session_test

import (
	"context"
	"strings"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

func lastEnriched(t *testing.T, s *session.Session) fixtures.EnrichedClick {
	t.Helper()
	outs := s.Outputs()
	if len(outs) == 0 {
		t.Fatal("no output")
	}
	c, ok := outs[len(outs)-1].Value.(fixtures.EnrichedClick)
	if !ok {
		t.Fatalf("last output %T, want an enriched click", outs[len(outs)-1].Value)
	}
	return c
}

// TestStepIntoInput: step 2 on enrich reads the broadcast input's next
// rule before the click that is due, so the click of /a two records later
// finds the page's category; back replays that choice; after going back
// past it, the rule comes in its turn again.
func TestStepIntoInput(t *testing.T) {
	for _, backend := range runtime.Backends {
		t.Run(backend, func(t *testing.T) {
			s := openSession(t, buildJob(t, "enrich"), session.Options{Options: runtime.Options{Backend: backend, Trace: true}})
			defer s.Close()
			ctx := context.Background()
			res, err := s.Execute(ctx, "step 2")
			if err != nil {
				t.Fatal(err)
			}
			if st := res.Stop; st.Last.Operator != "Source: rules" || st.Last.Kind != "source" {
				t.Fatalf("step 2 stepped %s (%s), want the rules source", st.Last.Operator, st.Last.Kind)
			}
			for range 3 {
				if _, err := s.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if c := lastEnriched(t, s); c.Page != "/a" || c.Category == nil || *c.Category != "docs" {
				t.Fatalf("the click of /a after the rule read ahead: %+v, want category docs", c)
			}
			// back to before the last next: the replay reads the rule first again
			if _, err := s.Back(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
			if c := lastEnriched(t, s); c.Page != "/a" || c.Category == nil || *c.Category != "docs" {
				t.Fatalf("after back and next: %+v, want category docs (the replay must read the rule first)", c)
			}
			// back to the start: the choice is undone
			for s.Position() > 0 {
				if _, err := s.Back(); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				if _, err := s.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if c := lastEnriched(t, s); c.Page != "/a" || c.Category != nil {
				t.Fatalf("the click of /a in its own order: %+v, want no category yet", c)
			}
		})
	}
}

func TestStepInputErrors(t *testing.T) {
	s := openSession(t, buildJob(t, "enrich"), session.Options{})
	defer s.Close()
	for line, want := range map[string]string{
		"step 3":           "want 1 or 2",
		"step 1 out":       `"out" is not a two-input operator (they are: enrich)`,
		"step 2 enrich[5]": "subtasks 0 to 1",
	} {
		if _, err := s.Execute(context.Background(), line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", line, err, want)
		}
	}
	w := openSession(t, buildJob(t, "wordcount"), session.Options{})
	defer w.Close()
	if _, err := w.Execute(context.Background(), "step 1"); err == nil || !strings.Contains(err.Error(), "no two-input operator") {
		t.Errorf("step 1 on wordcount: %v", err)
	}
}
