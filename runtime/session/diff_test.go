package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/runtime/session"
)

// TestDiffLiveAgainstSavepoint: `diff DIR` in a session compares the
// savepoint (old) with the live state (new): exactly the words counted since.
func TestDiffLiveAgainstSavepoint(t *testing.T) {
	var lines []string
	for i := range 60 {
		lines = append(lines, fmt.Sprintf("alpha w%d beta", i%7))
	}
	lines = append(lines, "gamma alpha")
	in, err := fixtures.Parse("words.txt", []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := fixtures.Build("wordcount", fixtures.Config{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(job, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Run(ctx, session.RunOptions{Steps: 40}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if err := s.Savepoint(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, session.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(ctx, "diff "+dir+" state_name = 'count'")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var summary []any
	for row, err := range res.Rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		switch row[0] {
		case "summary":
			summary = row
		case "not compared":
			t.Fatalf("gap: %v", row)
		default:
			got[row[3].(string)] = fmt.Sprintf("%s %v->%v", row[0], row[6], row[7])
		}
	}
	// Lines 40..60: alpha and beta 20 times more (alpha 21 with the last
	// line), w(i%7) for i in 40..59, gamma new.
	want := map[string]string{"alpha": "changed 40->61", "beta": "changed 40->60", "gamma": "added <nil>->1"}
	for i := range 7 {
		before, after := 0, 0
		for j := range 60 {
			if j%7 == i {
				after++
				if j < 40 {
					before++
				}
			}
		}
		if after != before {
			want[fmt.Sprintf("w%d", i)] = fmt.Sprintf("changed %d->%d", before, after)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("diff rows\n got %v\nwant %v", got, want)
	}
	if summary == nil || summary[6] != fmt.Sprintf("%d changed, 1 added, 0 removed", len(want)-1) {
		t.Fatalf("summary %v", summary)
	}
	if _, err := s.Execute(ctx, "diff"); err == nil || !strings.Contains(err.Error(), "diff: which savepoint directory?") {
		t.Fatalf("diff without a directory: %v", err)
	}
}
