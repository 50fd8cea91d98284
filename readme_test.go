package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"streamdbg/fixtures"
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

// TestREADMERunExamplesWithinInputs keeps the README's run examples of the
// example jobs meaningful: a --steps N stops before the end of the job's
// embedded input and a --fail-at N is a record of it. (The README asked
// wordcount's 207 lines for --steps 777 and --fail-at 1500, which then
// did nothing.)
func TestREADMERunExamplesWithinInputs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, ex := range fixtures.Examples() {
		if ex.Fixture == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("fixtures", "data", ex.Fixture))
		if err != nil {
			t.Fatal(err)
		}
		lines[ex.Name] = bytes.Count(b, []byte("\n"))
	}
	cmd := regexp.MustCompile(`streamdbg (?:run|debug) ([a-z-]+)([^\n#]*)`)
	flag := regexp.MustCompile(`--(steps|fail-at) (\d+)`)
	checked := 0
	for _, m := range cmd.FindAllStringSubmatch(string(readme), -1) {
		job, args := m[1], m[2]
		n, ok := lines[job]
		if !ok || strings.Contains(args, "--input") || strings.Contains(args, "--from-savepoint") {
			continue
		}
		for _, f := range flag.FindAllStringSubmatch(args, -1) {
			v, _ := strconv.Atoi(f[2])
			if v < 1 || v >= n {
				t.Errorf("README: %q: --%s %d, but %s's embedded input has %d records", strings.TrimSpace(m[0]), f[1], v, job, n)
			}
			checked++
		}
	}
	if checked < 3 {
		t.Fatalf("checked %d --steps/--fail-at examples; the README has more", checked)
	}
}
