package tui

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBrowserTimersOfTheirState: a process table function keeps six timer
// states, three of each domain; its one event timer (in the sort buffer of
// its input) shows under that timer state only, and the query the browser
// offers for each timer state finds what its entries pane shows (before:
// the timer showed under all three event timer states).
func TestBrowserTimersOfTheirState(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "flink-savepoints", "sql", "stream-exec-process-table-function_1__process-order-by-restore", "savepoint")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sample absent under CI: %v", err)
		}
		t.Skip("sample absent")
	}
	b, _ := newTestBrowser(t, dir)
	got := map[string][][]string{}
	states := 0
	for i, it := range b.items {
		if it.meta.Kind != "timers" {
			continue
		}
		states++
		b.sel = i
		b.choose()
		var cells [][]string
		for _, r := range b.entries.page {
			if r.row.State != it.meta.Name {
				t.Errorf("%s lists a timer of %s", it.meta.Name, r.row.State)
			}
			cells = append(cells, r.cells)
		}
		if len(cells) > 0 {
			got[it.meta.Name] = cells
		}
		rows, err := b.sp.Query(context.Background(), stateQuery(it.meta))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range rows.All() {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		rows.Close()
		if n != len(cells) {
			t.Errorf("%s: the offered query %q has %d rows, the entries pane %d", it.meta.Name, stateQuery(it.meta), n, len(cells))
		}
	}
	want := map[string][][]string{
		"_timer_state/event_input-sort-buffer-0": {{"88", "0", "event", "1970-01-01 00:00:00.010", "+I['Alice']", "·"}},
	}
	if states != 6 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d timer states with timers %q, want 6 with %q", states, got, want)
	}
}

// TestStatePaneTimerState: a timer row of the state pane knows its timer
// state: a filter on state_name keeps it or not, and its details name it.
func TestStatePaneTimerState(t *testing.T) {
	m := newJobModel(t, "clicks", 120, 40)
	command(t, m, "next 3")
	m.focus = panePlan
	press(t, m, "j") // count[1], which holds u1's and u2's windows
	m.state.tab = tabTimers
	m.state.rebuild(false)
	n := len(m.state.page())
	if n != 4 {
		t.Fatalf("%d timers in count[1], want 4 (two per key)", n)
	}
	for filter, want := range map[string]int{
		"state_name = '_timer_state/event_timers'":      4,
		"state_name = '_timer_state/processing_timers'": 0,
	} {
		if err := m.state.setFilter(filter); err != nil {
			t.Fatal(err)
		}
		if got := len(m.state.page()); got != want {
			t.Errorf("f %s: %d rows, want %d", filter, got, want)
		}
	}
	if err := m.state.setFilter(""); err != nil {
		t.Fatal(err)
	}
	m.focus = paneState
	press(t, m, "enter")
	contains(t, screen(m.View()), "_timer_state/event_timers")
}
