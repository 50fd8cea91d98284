package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

func newJobSession(t *testing.T, job string, o session.Options) *session.Session {
	t.Helper()
	o.Trace = true
	s := openSession(t, buildJob(t, job), o)
	t.Cleanup(func() { s.Close() })
	return s
}

func exec(t *testing.T, s *session.Session, ctx context.Context, line string) session.Result {
	t.Helper()
	r, err := s.Execute(ctx, line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

// A long next reported to a Progress is still one command: one stop (the
// session's last), one point Back returns to, one evaluation of the
// watches, diffed against where the command began.
func TestLongRunIsOneStop(t *testing.T) {
	s := newJobSession(t, "orders", session.Options{})
	ctx := session.WithProgress(context.Background(), &session.Progress{})
	exec(t, s, ctx, "watch SELECT COUNT(*) AS n FROM keyed_state WHERE state_name = 'total'")
	exec(t, s, ctx, "next 50")
	r := exec(t, s, ctx, "next 900")
	st := r.Stop
	if st.Position != 950 || st.Message != "900 records" || st.Records != 900 {
		t.Fatalf("next 900 stopped at %d: %q (%d records)", st.Position, st.Message, st.Records)
	}
	if s.Last() != st {
		t.Fatalf("the session's last stop is %q, not the command's", s.Last().Message)
	}
	w := st.Watches[0]
	if len(w.Removed) != 1 || len(w.Added) != 1 {
		t.Fatalf("watch diff %+v", w)
	}
	// The removed row is the count at record 50, where the command began.
	at50 := countAt(t, "orders", 50)
	if w.Removed[0][0] != at50 {
		t.Fatalf("watch diffed against %v keys, want the %v at record 50", w.Removed[0][0], at50)
	}
	// Change markers survive the run: every customer written is listed.
	if st.ChangesDropped != 0 || len(st.Changes) < 100 {
		t.Fatalf("%d changes kept, %d dropped", len(st.Changes), st.ChangesDropped)
	}
	r = exec(t, s, ctx, "back")
	if r.Stop.Position != 50 {
		t.Fatalf("back after next 900 went to %d, want 50", r.Stop.Position)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func countAt(t *testing.T, job string, pos int) any {
	t.Helper()
	s := newJobSession(t, job, session.Options{})
	exec(t, s, context.Background(), "next "+itoa(pos))
	rows := exec(t, s, context.Background(), "SELECT COUNT(*) AS n FROM keyed_state WHERE state_name = 'total'").Rows
	for r, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		return r[0]
	}
	t.Fatal("no count")
	return nil
}

// next from a stop in the middle of a record (a breakpoint) finishes that
// record: its changes are the stop's, and the session stays at it.
func TestNextFinishesTheRecordInFlight(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{})
	ctx := session.WithProgress(context.Background(), &session.Progress{})
	exec(t, s, ctx, "break at count when key = 'the'")
	exec(t, s, ctx, "watch SELECT key, value FROM keyed_state WHERE key = 'the'")
	r := exec(t, s, ctx, "continue")
	if r.Stop.Reason != session.ReasonBreakpoint || r.Stop.Position != 1 {
		t.Fatalf("continue: %s at %d", r.Stop.Reason, r.Stop.Position)
	}
	exec(t, s, ctx, "disable 1")
	r = exec(t, s, ctx, "next")
	st := r.Stop
	if st.Position != 1 {
		t.Fatalf("next from the breakpoint went on to record %d; want to finish record 1", st.Position)
	}
	ch, ok := st.Changes[session.Entry("count", 0, "count", "the", nil, nil)]
	if !ok || !ch.HadOld || ch.Old != int64(1) || ch.New != int64(2) {
		t.Fatalf("the rest of record 1 changed the: %+v (%v); want 1 → 2", ch, ok)
	}
	w := st.Watches[0]
	if len(w.Added) != 1 || len(w.Removed) != 1 || w.Added[0][1] != int64(2) || w.Removed[0][1] != int64(1) {
		t.Fatalf("watch: +%v −%v; want the 2 for the 1", w.Added, w.Removed)
	}
}

// Back, restart and restore take the outputs of the undone future off the
// output buffer, and the count of sink records goes back with them.
func TestOutputsFollowBackRestartRestore(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{CheckpointInterval: 10})
	ctx := context.Background()
	exec(t, s, ctx, "next 25")
	at25 := s.OutputTotal()
	exec(t, s, ctx, "next 182")
	if s.OutputTotal() <= at25 {
		t.Fatal("no outputs after record 25")
	}
	exec(t, s, ctx, "back")
	if s.Position() != 25 || s.OutputTotal() != at25 {
		t.Fatalf("back: at %d with %d outputs, want 25 and %d", s.Position(), s.OutputTotal(), at25)
	}
	for _, o := range s.Outputs() {
		if o.Position > 25 || o.Seq > at25 {
			t.Fatalf("output %+v of the undone future is still there", o)
		}
	}
	if last := s.Outputs()[len(s.Outputs())-1]; last.Seq != at25 {
		t.Fatalf("the last output is #%d, want #%d", last.Seq, at25)
	}
	// A savepoint at 25, more records, then restore: outputs start over.
	dir := filepath.Join(t.TempDir(), "sp")
	exec(t, s, ctx, "savepoint "+dir)
	exec(t, s, ctx, "next 30")
	exec(t, s, ctx, "restore "+dir)
	if s.Position() != 25 || s.OutputTotal() != 0 || len(s.Outputs()) != 0 {
		t.Fatalf("restore: at %d with %d outputs kept of %d", s.Position(), len(s.Outputs()), s.OutputTotal())
	}
}

func TestRestartDropsOutputsAfterTheCheckpoint(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{CheckpointInterval: 20})
	s.SetFailAt(45)
	ctx := context.Background()
	exec(t, s, ctx, "next 30")
	total30 := s.OutputTotal()
	r := exec(t, s, ctx, "continue")
	if r.Stop.Reason != session.ReasonFailure {
		t.Fatalf("want the injected failure, got %s", r.Stop.Reason)
	}
	// A failed job says what can be done.
	_, err := s.Execute(ctx, "next")
	if err == nil || !strings.Contains(err.Error(), "(R)") || !strings.Contains(err.Error(), "(u)") {
		t.Fatalf("next after a failure: %v; want the restart and back hints", err)
	}
	cpPos := s.LatestCheckpoint().Info().Position
	exec(t, s, ctx, "restart")
	if s.Position() != cpPos {
		t.Fatalf("restart went to %d, want checkpoint position %d", s.Position(), cpPos)
	}
	for _, o := range s.Outputs() {
		if o.Position > cpPos {
			t.Fatalf("output %+v after the checkpoint survived the restart", o)
		}
	}
	if cpPos == 40 && s.OutputTotal() < total30 {
		t.Fatalf("restart lost outputs before the checkpoint: %d < %d", s.OutputTotal(), total30)
	}
}

// The injected failure happens once in a debugger too, as in Run: after
// restart (R) or back (u), the next continue goes on past its record to
// the end, with the state of a run that never failed.
func TestInjectedFailureHappensOnce(t *testing.T) {
	ctx := context.Background()
	clean := newJobSession(t, "orders", session.Options{})
	exec(t, clean, ctx, "continue")
	want := stateDump(t, clean)
	for _, undo := range []string{"restart", "back"} {
		t.Run(undo, func(t *testing.T) {
			s := newJobSession(t, "orders", session.Options{})
			s.SetFailAt(30)
			r := exec(t, s, ctx, "continue")
			if r.Stop.Reason != session.ReasonFailure || !errors.Is(r.Stop.Failure, runtime.ErrInjected) || s.Position() != 30 {
				t.Fatalf("want the injected failure at 30, got %s at %d: %s", r.Stop.Reason, s.Position(), r.Stop.Message)
			}
			exec(t, s, ctx, undo)
			r = exec(t, s, ctx, "continue")
			if r.Stop.Reason != session.ReasonEnd {
				t.Fatalf("continue after %s stopped with %s: %s", undo, r.Stop.Reason, r.Stop.Message)
			}
			if got := stateDump(t, s); got != want {
				t.Fatalf("state after %s and continue: %s", undo, firstDiff(got, want))
			}
		})
	}
}

// A command that reaches the end says at which record the input ended, and
// how many of them it read when it did not start at the first; counts
// have thousands separators.
func TestEndMessage(t *testing.T) {
	ctx := context.Background()
	s := newJobSession(t, "orders", session.Options{})
	end := exec(t, s, ctx, "continue").Stop.Position
	if got, want := s.Last().Message, "the input ended after record "+commas(end); got != want {
		t.Fatalf("continue from the start: %q, want %q", got, want)
	}
	s = newJobSession(t, "orders", session.Options{})
	exec(t, s, ctx, "next 3")
	got := exec(t, s, ctx, "continue").Stop.Message
	if want := "the input ended after record " + commas(end) + "; this command read " + commas(end-3) + " records"; got != want {
		t.Fatalf("continue from record 3: %q, want %q", got, want)
	}
	if got := exec(t, s, ctx, "next").Stop.Message; got != "the input ended" {
		t.Fatalf("next at the end: %q", got)
	}
	s = openSession(t, buildInput(t, wordLines(1500, 50)), session.Options{Options: runtime.Options{Trace: true}})
	t.Cleanup(func() { s.Close() })
	if got := exec(t, s, ctx, "next 1200").Stop.Message; got != "1,200 records" {
		t.Fatalf("next 1200: %q", got)
	}
}

// buildInput is wordcount over in.
func buildInput(t *testing.T, in *fixtures.Input) *runtime.Job {
	t.Helper()
	job, err := fixtures.Build("wordcount", fixtures.Config{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	return job
}

// commas is a count as the stops print it (by hand, for the tests).
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// The sink count is the number of records the sinks wrote, not the buffer.
func TestOutputTotalCountsEveryRecord(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{OutputLimit: 7})
	exec(t, s, context.Background(), "continue")
	rows := exec(t, s, context.Background(), "SELECT SUM(value) FROM keyed_state").Rows
	var sum int64
	for r := range rows.All() {
		sum = r[0].(int64)
	}
	if s.OutputTotal() != sum || len(s.Outputs()) != 7 {
		t.Fatalf("output total %d (kept %d), want %d records (one per counted word)", s.OutputTotal(), len(s.Outputs()), sum)
	}
}

func TestBreakCommand(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		line, want, wantErr string
		col                 int // of the caret, 0: no LineError
	}{
		{line: "break at Source: lines", want: `at "Source: lines"`},
		{line: `break at "Source: lines" when value LIKE '%flink%'`, want: `at "Source: lines" when value LIKE '%flink%'`},
		{line: `break at 'Source: lines'`, want: `at "Source: lines"`},
		{line: "break before count when key = 'the' hits > 2", want: "before count when key = 'the' hits > 2"},
		{line: "break at count hits % 3", want: "at count hits % 3"},
		{line: "break key = 'a'", want: "when key = 'a'"},
		{line: "break at Source: lnes", wantErr: `did you mean "Source: lines"`},
		{line: "break at count when vlaue > 1", wantErr: `unknown name "vlaue"`, col: 21},
		{line: "break at count when state.nosuch > 1", wantErr: `operator "count" has no state "nosuch"`, col: 27},
		{line: "break at count when state.count.total > 1", wantErr: `state.count is a value of int64: it has no field "total"`, col: 33},
		{line: "break at tokenize when state.count > 1", wantErr: `operator "tokenize" is not keyed`, col: 24},
		{line: "break when state.cuont > 1", wantErr: `did you mean "count"`, col: 18},
		{line: `break at "Source: lines`, wantErr: "not closed"},
		// The TUI's b prefills "break at count when ": a condition typed
		// with its own when.
		{line: "break at count when when key = 'a'", want: "at count when key = 'a'"},
		{line: "break at count when WHEN vlaue > 1", wantErr: `unknown name "vlaue"`, col: 26},
	} {
		s := newJobSession(t, "wordcount", session.Options{})
		r, err := s.Execute(ctx, c.line)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.line, err, c.wantErr)
				continue
			}
			var le *session.LineError
			if c.col > 0 && (!errors.As(err, &le) || le.Col != c.col || le.Line != c.line) {
				t.Errorf("%s: want a caret at column %d, got %+v", c.line, c.col, le)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if !strings.HasSuffix(r.Text, ": "+c.want) {
			t.Errorf("%s: %q, want it to describe %q", c.line, r.Text, c.want)
		}
	}
}

// A breakpoint at a source stops when the source read a record for which
// its condition holds.
func TestBreakAtSource(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{})
	ctx := context.Background()
	exec(t, s, ctx, `break at "Source: lines" when value LIKE '%stream%'`)
	r := exec(t, s, ctx, "continue")
	if r.Stop.Reason != session.ReasonBreakpoint || r.Stop.Position != 3 {
		t.Fatalf("continue: %s at %d, want the breakpoint at record 3 (the first line with stream)", r.Stop.Reason, r.Stop.Position)
	}
}

func TestHitCount(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{})
	ctx := context.Background()
	exec(t, s, ctx, "break at count when key = 'the' hits > 2")
	r := exec(t, s, ctx, "continue")
	// The third 'the' is the first the condition accepts: count is 3.
	rows := exec(t, s, ctx, "SELECT value FROM keyed_state WHERE key = 'the'").Rows
	var v any
	for row := range rows.All() {
		v = row[0]
	}
	if r.Stop.Reason != session.ReasonBreakpoint || r.Stop.Breakpoint.Hits != 3 || v != int64(3) {
		t.Fatalf("stopped %s at hit %d with the=%v; want hit 3, the=3", r.Stop.Reason, r.Stop.Breakpoint.Hits, v)
	}
	exec(t, s, ctx, "condition 1 hits == 5")
	r = exec(t, s, ctx, "continue")
	if r.Stop.Breakpoint == nil || r.Stop.Breakpoint.Hits != 5 {
		t.Fatalf("cond 1 hits == 5: stopped at %+v", r.Stop.Breakpoint)
	}
	bps := s.Breakpoints()
	bps[0].Enabled = false // a copy: the session's breakpoint does not change
	if bp, _ := s.Breakpoint(1); !bp.Enabled {
		t.Fatal("Breakpoints returned the session's own breakpoints, not copies")
	}
}

// break before stops before the operator runs: the state is the one
// before its update; continuing runs that step without stopping again.
func TestBreakBefore(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{})
	ctx := context.Background()
	exec(t, s, ctx, "break before count when key = 'the'")
	value := func() any {
		rows := exec(t, s, ctx, "SELECT value FROM keyed_state WHERE key = 'the'").Rows
		var v any
		for row := range rows.All() {
			v = row[0]
		}
		return v
	}
	r := exec(t, s, ctx, "continue")
	if r.Stop.Reason != session.ReasonBreakpoint || !r.Stop.Before || r.Stop.Last.Operator != "count" || r.Stop.Last.Key != "the" {
		t.Fatalf("continue: %+v", r.Stop)
	}
	if v := value(); v != nil {
		t.Fatalf("before count ran, the = %v; want no entry yet", v)
	}
	r = exec(t, s, ctx, "continue")
	if !r.Stop.Before || value() != int64(1) {
		t.Fatalf("second stop: before=%v the=%v; want before the second the, the=1", r.Stop.Before, value())
	}
	r = exec(t, s, ctx, "step")
	if value() != int64(2) {
		t.Fatalf("step from before the second the: the=%v, want 2", value())
	}
}

func TestWatchThatFails(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{})
	ctx := context.Background()
	for _, q := range []string{"watch SELECT key FROM keyed_stat", `watch SELECT * FROM "nosuch"`} {
		_, err := s.Execute(ctx, q)
		if err == nil {
			t.Fatalf("%s: added", q)
		}
		var le *session.LineError
		if errors.As(err, &le) && le.Col <= len("watch ") {
			t.Errorf("%s: caret at %d, inside the command word", q, le.Col)
		}
	}
	if len(s.Watches()) != 0 {
		t.Fatal("a failing watch was kept")
	}
	// The TUI's w prefills "watch SELECT ": a whole query typed after it
	// is that query, and an error in it still points into it.
	r, err := s.Execute(ctx, "watch SELECT SELECT COUNT(*) FROM keyed_state")
	if err != nil || !strings.HasSuffix(r.Text, ": SELECT COUNT(*) FROM keyed_state") {
		t.Fatalf("watch SELECT SELECT …: %q, %v", r.Text, err)
	}
	line := "watch SELECT  select key FROM keyed_stat"
	_, err = s.Execute(ctx, line)
	var le *session.LineError
	if !errors.As(err, &le) || le.Col != strings.Index(line, "keyed_stat")+1 {
		t.Fatalf("%s: error %v, want a caret under keyed_stat (column %d), got %+v", line, err, strings.Index(line, "keyed_stat")+1, le)
	}
}

func TestBackwardWatermarkIsIgnored(t *testing.T) {
	s := newJobSession(t, "clicks", session.Options{})
	ctx := context.Background()
	exec(t, s, ctx, "next 5")
	r := exec(t, s, ctx, "watermark 2020-01-01T00:00:00Z")
	if !strings.Contains(r.Stop.Message, "ignored") {
		t.Fatalf("a watermark from 2020 was reported as %q", r.Stop.Message)
	}
	r = exec(t, s, ctx, "watermark 2030-01-01T00:00:00Z")
	if strings.Contains(r.Stop.Message, "ignored") {
		t.Fatalf("a watermark from 2030 was ignored: %q", r.Stop.Message)
	}
}

func TestExpandHome(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	for in, want := range map[string]string{"~/sp": filepath.Join(home, "sp"), "~": home, "/tmp/~x": "/tmp/~x", "a~/b": "a~/b"} {
		if got, _ := session.ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRestoreOptionsAndFlink(t *testing.T) {
	s := newJobSession(t, "wordcount", session.Options{})
	ctx := context.Background()
	flinkDir := filepath.Join("..", "..", "..", "shared", "flink-savepoints", "udf-flink1.20-hashmap-savepoint")
	if _, err := os.Stat(flinkDir); err == nil {
		_, err := s.Execute(ctx, "restore "+flinkDir)
		if err == nil || !strings.Contains(err.Error(), "Apache Flink savepoint") || !strings.Contains(err.Error(), "open ") {
			t.Fatalf("restore of a Flink savepoint: %v", err)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("the shared Flink savepoints are missing")
	}
	// A savepoint of orders does not fit wordcount: refused, unless
	// --allow-non-restored-state drops what has no operator here.
	o := newJobSession(t, "orders", session.Options{})
	dir := filepath.Join(t.TempDir(), "osp")
	exec(t, o, ctx, "next 10")
	exec(t, o, ctx, "savepoint "+dir)
	if _, err := s.Execute(ctx, "restore "+dir); err == nil || !strings.Contains(err.Error(), "allow-non-restored-state") {
		t.Fatalf("restore of another job's savepoint: %v", err)
	}
	if _, err := s.Execute(ctx, "restore "+dir+" --allow-non-restored-state"); err != nil {
		t.Fatalf("restore --allow-non-restored-state: %v", err)
	}
}

// A condition on timestamp sees the record's event time (compared with an
// RFC 3339 string) and NULL where a record has none.
func TestBreakOnTimestamp(t *testing.T) {
	s := newJobSession(t, "clicks", session.Options{})
	ctx := context.Background()
	// clicks.jsonl: 12:00:01, 12:00:02, 12:00:04, 12:00:09.500, 12:00:11, ...
	exec(t, s, ctx, "break at count when timestamp >= '2026-03-01T12:00:09Z'")
	r := exec(t, s, ctx, "continue")
	if r.Stop.Reason != session.ReasonBreakpoint || r.Stop.Position != 4 {
		t.Fatalf("continue: %s at record %d, want the breakpoint at record 4 (12:00:09.500)", r.Stop.Reason, r.Stop.Position)
	}
	// wordcount's records carry no timestamp: the condition is NULL, never
	// true, and the run goes to the end.
	w := newJobSession(t, "wordcount", session.Options{})
	exec(t, w, ctx, "break at count when timestamp IS NULL AND key = 'flink'")
	exec(t, w, ctx, "break at count when timestamp > '2000-01-01'")
	r = exec(t, w, ctx, "continue")
	if r.Stop.Reason != session.ReasonBreakpoint || r.Stop.Breakpoint.ID != 1 {
		t.Fatalf("wordcount: stopped %s at %+v, want breakpoint #1 (timestamp IS NULL)", r.Stop.Reason, r.Stop.Breakpoint)
	}
}
