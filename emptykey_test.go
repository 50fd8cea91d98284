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

// TestEmptyMapKeyFromSavepoint: a map key that is the empty string (an
// order of product "") is stored as no bytes; read back from our
// savepoint it is still "", not NULL, in query, modify's WHERE and
// export. (It read as NULL: a WHERE of user_key equal to the empty
// string found nothing, so a DELETE of it deleted nothing.)
func TestEmptyMapKeyFromSavepoint(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(in, []byte("{\"customer\":\"c1\",\"product\":\"\",\"amount\":7}\n{\"customer\":\"c1\",\"product\":\"p1\",\"amount\":3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "sp")
	if code, _, errs := cmd(t, "run", "orders", "--input", in, "--savepoint", sp); code != 0 {
		t.Fatalf("run: exit %d, %s", code, errs)
	}
	const q = "SELECT user_key, value FROM keyed_state WHERE state_name = 'by_product' ORDER BY value"
	code, out, errs := cmd(t, "query", sp, q, "--format", "json")
	if want := "{\"user_key\":\"p1\",\"value\":3}\n{\"user_key\":\"\",\"value\":7}\n"; code != 0 || out != want {
		t.Fatalf("query: exit %d, %q (%s), want %q", code, out, errs, want)
	}
	fixed := filepath.Join(dir, "fixed")
	code, _, errs = cmd(t, "modify", sp, fixed, `DELETE FROM "sum"."by_product" WHERE user_key = ''`)
	if code != 0 || !strings.Contains(errs, "1 entry deleted") {
		t.Fatalf("modify: exit %d, %s", code, errs)
	}
	code, out, _ = cmd(t, "query", fixed, q, "--format", "csv")
	if want := "user_key,value\np1,3\n"; code != 0 || out != want {
		t.Errorf("after the DELETE: %q, want %q", out, want)
	}
}

// TestEmptyKeyIntoBroadcastOperator: a click of user "" (a key of no
// bytes) is a keyed element of enrich's KeyedBroadcastProcessFunction,
// not a broadcast one. (It failed the job: "keyed state "clicks" used
// while handling a broadcast element, which has no key".)
func TestEmptyKeyIntoBroadcastOperator(t *testing.T) {
	dir := t.TempDir()
	clicks := filepath.Join(dir, "clicks.jsonl")
	if err := os.WriteFile(clicks, []byte(`{"user": "", "page": "/a", "ts": "2026-01-01T00:00:05Z"}
{"user": "u1", "page": "/a", "ts": "2026-01-01T00:00:06Z"}
{"user": "", "page": "/b", "ts": "2026-01-01T00:00:07Z"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := cmd(t, "run", "enrich", "--input", "rules="+filepath.Join("fixtures", "data", "enrich", "rules.jsonl"), "--input", "clicks="+clicks,
		"--query", "SELECT key, value FROM keyed_state WHERE state_name = 'clicks' ORDER BY key", "--format", "csv")
	if want := "key,value\n,2\nu1,1\n"; code != 0 || out != want {
		t.Fatalf("exit %d, %q (%s), want %q", code, out, errs, want)
	}
}
