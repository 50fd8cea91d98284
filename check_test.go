package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func TestSavepointCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	if code := run([]string{"run", "wordcount", "--steps", "30", "--savepoint", dir, "--query", "SELECT COUNT(*) FROM keyed_state"}, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("run exited %d", code)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
		want    []string
	}{
		{args: []string{dir, "wordcount"}, want: []string{"ok      count", "restorable: yes"}},
		{args: []string{dir, "orders"}, wantErr: "missing count.count",
			want: []string{"✗ missing  count", "new        sum", "restorable: no", "--allow-non-restored-state"}},
		{args: []string{dir, "orders", "--allow-non-restored-state"}, want: []string{"missing (dropped)", "restorable: yes"}},
		{args: []string{dir, "wordcount", "--max-parallelism", "64"}, wantErr: "max parallelism 128, the job 64",
			want: []string{"✗ max parallelism"}},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			var c cli
			var out bytes.Buffer
			e := &env{stdout: &out, stderr: io.Discard, log: slog.New(slog.DiscardHandler)}
			parser, err := kong.New(&c, kong.Name("streamdbg"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, err := parser.Parse(append([]string{"savepoint", "check"}, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			err = ctx.Run(e)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestRestoreTakesTheSavepointsMaxParallelism: a savepoint written with
// --max-parallelism 4 restores and checks without the flag, as Flink takes
// the restored state's max parallelism when the job sets none (before:
// exit 1, "the snapshot has max parallelism 4, the job 128"); another
// max parallelism named is still refused.
func TestRestoreTakesTheSavepointsMaxParallelism(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	if code, _, errs := cmd(t, "run", "wordcount", "--max-parallelism", "4", "--parallelism", "3", "--steps", "30", "--savepoint", dir); code != exitOK {
		t.Fatalf("run exited %d: %s", code, errs)
	}
	code, out, errs := cmd(t, "run", "wordcount", "--from-savepoint", dir, "--steps", "1", "--query", "SELECT max(key_group) AS kg, sum(value) AS n FROM \"count\".\"count\"", "--format", "csv")
	if code != exitOK || !strings.Contains(errs, "max parallelism from the savepoint") {
		t.Fatalf("restore without --max-parallelism exited %d: %s", code, errs)
	}
	var kg, n int
	if _, err := fmt.Sscanf(strings.Split(out, "\n")[1], "%d,%d", &kg, &n); err != nil || kg >= 4 || n == 0 {
		t.Fatalf("restored state: %q (%v)", out, err)
	}
	if code, out, _ := cmd(t, "savepoint", "check", dir, "wordcount"); code != exitOK || !strings.Contains(out, "restorable: yes") {
		t.Fatalf("check exited %d:\n%s", code, out)
	}
	if code, _, errs := cmd(t, "run", "wordcount", "--from-savepoint", dir, "--max-parallelism", "8", "--steps", "1"); code == exitOK || !strings.Contains(errs, "max parallelism 4, the job 8") {
		t.Fatalf("restore with --max-parallelism 8 exited %d: %s", code, errs)
	}
}
