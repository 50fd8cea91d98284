package main

import (
	"bytes"
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
