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
	cat, err := openCatalog(a)
	if err != nil {
		t.Fatal(err)
	}
	st, k := styles.New(true, true), keys.Default()
	br := newBrowser(cat, a, &st, &k, false)
	bm := &browserModel{b: br, st: &st, noColor: true}
	br.SetSize(120, 40)
	press(t, bm, "d")
	if br.promptMode != "diff" {
		t.Fatalf("d opened %q", br.promptMode)
	}
	typeText(t, bm, b+" state_name = 'total'")
	press(t, bm, "enter")
	if br.overlay == nil || br.overlay.cols == nil {
		t.Fatalf("no diff overlay: %+v", br.overlay)
	}
	got := screen(bm.View())
	for _, want := range []string{"Diff · " + b, "change", "old_value", "added"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q not on screen:\n%s", want, got)
		}
	}
	kinds := map[string]int{}
	for _, r := range br.overlay.rows {
		if r[2] != "total" && r[0] != "summary" {
			t.Fatalf("row of another state despite the filter: %v", r)
		}
		kinds[r[0]]++
	}
	if kinds["changed"] == 0 || kinds["added"] == 0 || kinds["summary"] != 1 {
		t.Fatalf("rows by change: %v", kinds)
	}
}
