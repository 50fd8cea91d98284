package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMECaptureMatchesGolden keeps the README's capture of the debug
// screen true: its lines are the golden view's lines, in order (a copy may
// leave lines out, never change one). (It had drifted from the view.)
func TestREADMECaptureMatchesGolden(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("tui/testdata/debug_120x40.golden")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(golden), "\n", 2)[0]
	i := strings.Index(string(readme), "```\n"+first+"\n")
	if i < 0 {
		t.Fatalf("README.md has no capture starting with the golden's first line %q", first)
	}
	block := string(readme)[i+4:]
	block = block[:strings.Index(block, "```")]
	want := strings.Split(strings.TrimRight(string(golden), "\n"), "\n")
	got := strings.Split(strings.TrimRight(block, "\n"), "\n")
	if len(got) < 20 {
		t.Fatalf("README capture has %d lines", len(got))
	}
	j := 0
	for n, l := range got {
		for j < len(want) && want[j] != l {
			j++
		}
		if j == len(want) {
			t.Fatalf("README capture line %d is not the golden's (in order):\n%s\nregenerate it from tui/testdata/debug_120x40.golden", n+1, l)
		}
		j++
	}
}
