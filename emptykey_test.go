package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEmptyKeyWindowsOnPebble: a window of key "" fires on the pebble
// backend as on the heap one, at every parallelism. (On pebble the firing
// timer's current key was nil until a longer key had been set in the
// subtask: "window operator "count": current key <nil> is not a string".)
func TestEmptyKeyWindowsOnPebble(t *testing.T) {
	in := filepath.Join(t.TempDir(), "clicks.jsonl")
	if err := os.WriteFile(in, []byte(`{"user":"","page":"","ts":"2026-03-01T12:00:01Z"}
{"user":"u1","page":"","ts":"2026-03-01T12:00:02Z"}
{"user":"","page":"","ts":"2026-03-01T12:00:15Z"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{"clicks", "sessions"} {
		for _, p := range []string{"1", "2", "4"} {
			outs := map[string]string{}
			for _, backend := range []string{"heap", "pebble"} {
				code, out, errs := cmd(t, "run", job, "--input", in, "--backend", backend, "--parallelism", p, "--state-dir", t.TempDir())
				if code != 0 {
					t.Fatalf("%s on %s, parallelism %s: exit %d, %s", job, backend, p, code, errs)
				}
				lines := strings.Split(strings.TrimSpace(out), "\n")
				slices.Sort(lines)
				outs[backend] = strings.Join(lines, "\n")
			}
			if outs["heap"] != outs["pebble"] || !strings.Contains(outs["heap"], `"user":""`) {
				t.Errorf("%s, parallelism %s: heap\n%s\npebble\n%s", job, p, outs["heap"], outs["pebble"])
			}
		}
	}
}
