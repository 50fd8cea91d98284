package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/runtime"
	"streamdbg/tui/keys"
	"streamdbg/tui/styles"
)

// TestBrowserDiff: d in the savepoint browser asks for another savepoint
// and shows what changed from this one to it, with a summary per state.
func TestBrowserDiff(t *testing.T) {
	s := newSession(t, "orders", runtime.Options{})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, c := range []string{"next 100", "savepoint " + a, "next 100", "savepoint " + b} {
		if _, err := s.Execute(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	st, k := styles.New(true, true), keys.Default()
	br, err := openBrowser(a, &st, &k, false)
	if err != nil {
		t.Fatal(err)
	}
	defer br.sp.Close()
	bm := &browserModel{b: br, st: &st, noColor: true}
	br.SetSize(120, 40)
	press(t, bm, "d")
	if br.prompt.mode != "diff" {
		t.Fatalf("d opened %q", br.prompt.mode)
	}
	typeText(t, bm, b+" state_name = 'total'")
	press(t, bm, "enter")
	tv, ok := br.overlay.(*tableView)
	if !ok {
		t.Fatalf("no diff overlay: %T", br.overlay)
	}
	got := screen(bm.View())
	for _, want := range []string{"Diff · " + b, "change", "old_value", "added"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q not on screen:\n%s", want, got)
		}
	}
	kinds := map[string]int{}
	for _, r := range tv.q.rows {
		if r[2] != "total" && r[0] != "summary" {
			t.Fatalf("row of another state despite the filter: %v", r)
		}
		kinds[r[0]]++
	}
	if kinds["changed"] == 0 || kinds["added"] == 0 || kinds["summary"] != 1 {
		t.Fatalf("rows by change: %v", kinds)
	}
}
