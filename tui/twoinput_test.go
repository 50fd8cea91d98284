package tui

import (
	"strings"
	"testing"
)

// TestTwoInputPlanAndStep: the plan shows both inputs of enrich's
// two-input task (numbered, with partitioning and their sources) and each
// input's watermark per subtask; ] on a selected subtask of it steps input
// 2: the rules source is read although a click is due.
func TestTwoInputPlanAndStep(t *testing.T) {
	m := newJobModel(t, "enrich", 120, 40)
	press(t, m, "n", "n")
	got := screen(m.View())
	contains(t, got, "1: hash(user) from Source: clicks", "2: broadcast from Source: rules", "in1 ", "in2 ")
	m.focus = panePlan
	press(t, m, "j", "j")
	if !m.state.ref.twoInputs || m.state.ref.task != "enrich -> out" {
		t.Fatalf("selected %q (two inputs %v), want a subtask of enrich -> out", m.state.ref.task, m.state.ref.twoInputs)
	}
	press(t, m, "]")
	st := m.s.Last()
	if st == nil || st.Last.Operator != "Source: rules" {
		t.Fatalf("] stepped %+v, want the rules source", st)
	}
	got = screen(m.View())
	contains(t, got, "rules.jsonl:1")
	// [ on a one-input subtask says what the keys are for
	m.focus = panePlan
	press(t, m, "g", "[")
	if !strings.Contains(m.status, "two-input") {
		t.Fatalf("status %q, want a hint on two-input operators", m.status)
	}
}

// TestStepInputStaysOnTheOperator: ] that reads the source feeding input 2
// keeps the two-input subtask selected, so a second ] steps that input
// again (before: the selection went to the source, and the second ] said
// to select a two-input subtask).
func TestStepInputStaysOnTheOperator(t *testing.T) {
	m := newJobModel(t, "payments", 120, 40)
	press(t, m, "n", "n", "n", "n", "n", "n")
	m.focus = panePlan
	press(t, m, "g", "j", "j") // join[0]
	if m.state.ref.task != "join -> out" || m.state.ref.index != 0 {
		t.Fatalf("selected %s[%d], want join -> out [0]", m.state.ref.task, m.state.ref.index)
	}
	press(t, m, "]")
	if st := m.s.Last(); st == nil || st.Last.Operator != "Source: payments" {
		t.Fatalf("] stepped %+v, want the payments source", st)
	}
	contains(t, screen(m.View()), "State · join ‹op 1/2› [0/2]")
	press(t, m, "]")
	if m.statusErr {
		t.Fatalf("the second ]: %s", m.status)
	}
	if st := m.s.Last(); st == nil || st.Last.Operator != "join" && st.Last.Operator != "Source: payments" {
		t.Fatalf("the second ] stepped %+v, want join or the payments source", st)
	}
}
