package session_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
)

// TestSavepointsAcrossBackends: a savepoint taken on one backend restores on
// the other at another parallelism and finishes with the state of an
// uninterrupted run, for every example job with state (windows and timers
// included). Jobs without event time also give the uninterrupted run's
// outputs; event-time jobs give those of the same savepoint restored on
// heap at parallelism 1: as in Flink, a restored job's event time starts
// over at MinWatermark, so records late in the uninterrupted run may be in
// time after a restore.
func TestSavepointsAcrossBackends(t *testing.T) {
	rng := seeded(t)
	jobs := []string{"wordcount", "orders", "clicks", "sessions"}
	eventTime := map[string]bool{"clicks": true, "sessions": true}
	refs := map[string]reference{}
	for _, j := range jobs {
		refs[j] = referenceRun(t, j)
	}
	refOut := map[string]string{}
	for _, j := range jobs {
		var out bytes.Buffer
		s := openSession(t, buildJob(t, j), session.Options{Options: runtime.Options{Output: &out}})
		runToEnd(t, s, session.RunOptions{})
		s.Close()
		refOut[j] = sortedLines(out.String())
	}
	n := trials(t, 8)
	for i := range n {
		name := jobs[i%len(jobs)]
		from, to := "heap", "pebble"
		if i%2 == 1 {
			from, to = to, from
		}
		ref := refs[name]
		stop := rng.Int64N(ref.records + 1)
		p1, p2 := 1+rng.IntN(4), 1+rng.IntN(4)
		var out bytes.Buffer
		s := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: p1, Backend: from, Output: &out}})
		if _, err := s.Run(context.Background(), session.RunOptions{Steps: stop}); err != nil {
			t.Fatal(err)
		}
		fs := vfs.NewMem()
		if err := s.Savepoint(fs, "/sp"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		sp, err := savepoint.Open(fs, "/sp")
		if err != nil {
			t.Fatal(err)
		}
		want := refOut[name]
		if eventTime[name] {
			refRestored := bytes.NewBuffer(bytes.Clone(out.Bytes()))
			rr := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: 1, Backend: "heap", Output: refRestored}, Restore: runtime.FromSavepoint(sp)})
			runToEnd(t, rr, session.RunOptions{})
			rr.Close()
			want = sortedLines(refRestored.String())
		}
		r := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: p2, Backend: to, Output: &out}, Restore: runtime.FromSavepoint(sp)})
		runToEnd(t, r, session.RunOptions{})
		// Windows fire and clean up by the end, so the final state says
		// little: the outputs before and after the savepoint must be the
		// reference's (as multisets: parallelism reorders them).
		if got := sortedLines(out.String()); got != want {
			t.Errorf("%s: %s savepoint at record %d (parallelism %d) restored on %s at parallelism %d: outputs differ: %s",
				name, from, stop, p1, to, p2, firstDiff(got, want))
		}
		if got := stateDump(t, r); got != ref.dump {
			t.Errorf("%s: %s savepoint at record %d (parallelism %d) restored on %s at parallelism %d: %s",
				name, from, stop, p1, to, p2, firstDiff(got, ref.dump))
		}
		r.Close()
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestPebbleOutputsEqualHeap: the same job and input give byte-identical
// sink output on both backends (the backend never changes scheduling).
func TestPebbleOutputsEqualHeap(t *testing.T) {
	for _, name := range []string{"wordcount", "orders", "clicks", "sessions"} {
		var outs [2]bytes.Buffer
		for i, backend := range []string{"heap", "pebble"} {
			job, err := fixtures.Build(name, fixtures.Config{})
			if err != nil {
				t.Fatal(err)
			}
			s := openSession(t, job, session.Options{Options: runtime.Options{Backend: backend, Parallelism: 3, Output: &outs[i]}})
			runToEnd(t, s, session.RunOptions{})
			s.Close()
		}
		if outs[0].Len() == 0 || !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
			t.Errorf("%s: heap wrote %d bytes, pebble %d; outputs differ", name, outs[0].Len(), outs[1].Len())
		}
	}
}

// TestSessionRestore: a savepoint restored into a running session puts the
// job back at the savepoint's record with its state, and it goes on from
// there to the uninterrupted run's final state.
func TestSessionRestore(t *testing.T) {
	ref := referenceRun(t, "orders")
	s := openSession(t, buildJob(t, "orders"), session.Options{Options: runtime.Options{Trace: true}})
	defer s.Close()
	if _, err := s.NextN(context.Background(), 300); err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMem()
	if err := s.Savepoint(fs, "/sp"); err != nil {
		t.Fatal(err)
	}
	at300 := stateDump(t, s)
	if _, err := s.NextN(context.Background(), 200); err != nil {
		t.Fatal(err)
	}
	st, err := s.RestoreDir(fs, "/sp", session.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != session.ReasonRestored || s.Position() != 300 {
		t.Fatalf("restore stopped with %s at record %d", st.Reason, s.Position())
	}
	if got := stateDump(t, s); got != at300 {
		t.Fatalf("state after restore differs from the savepoint's: %s", firstDiff(got, at300))
	}
	if _, err := s.Back(); err == nil || err.Error() != "session: cannot go back before record 300, where the savepoint was restored" {
		t.Fatalf("back before the restored position: %v", err)
	}
	if _, err := s.Execute(context.Background(), "continue"); err != nil {
		t.Fatal(err)
	}
	if got := stateDump(t, s); got != ref.dump {
		t.Fatalf("after restore and continue: %s", firstDiff(got, ref.dump))
	}
	if _, err := s.Execute(context.Background(), "restore /nonexistent"); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "/nonexistent/_metadata") {
		t.Fatalf("restoring a missing savepoint: %v", err)
	}
	// The savepoint's _metadata file names it too.
	if _, err := s.RestoreDir(fs, "/sp/_metadata", session.RestoreOptions{}); err != nil || s.Position() != 300 {
		t.Fatalf("restore from /sp/_metadata: %v, at record %d", err, s.Position())
	}
	if got := stateDump(t, s); got != at300 {
		t.Fatalf("state after restore from /sp/_metadata differs from the savepoint's: %s", firstDiff(got, at300))
	}
}

// TestWatchLast: a watch's last result is there as soon as it is added and
// follows every stop, with what changed.
func TestWatchLast(t *testing.T) {
	s := openSession(t, buildJob(t, "orders"), session.Options{Options: runtime.Options{Trace: true}})
	defer s.Close()
	w, err := s.AddWatch("SELECT key, value FROM keyed_state WHERE state_name = 'total'")
	if err != nil {
		t.Fatal(err)
	}
	if r := w.Last(); r.Err != nil || len(r.Rows) != 0 || len(r.Columns) != 2 {
		t.Fatalf("before any record: %+v", r)
	}
	st, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if r := w.Last(); len(r.Rows) != 1 || len(r.Added) != 1 || len(st.Watches) != 1 || len(st.Watches[0].Rows) != 1 {
		t.Fatalf("after one record: last %+v, stop %+v", r, st.Watches)
	}
}

// OpenSavepoint takes a savepoint's _metadata file for its directory: the
// browser's header then names the directory.
func TestOpenSavepointByMetadata(t *testing.T) {
	s := openSession(t, buildJob(t, "wordcount"), session.Options{})
	defer s.Close()
	if _, err := s.NextN(context.Background(), 20); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if err := s.Savepoint(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "_metadata")} {
		sp, err := session.OpenSavepoint(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if sp.Dir != dir {
			t.Errorf("OpenSavepoint(%s).Dir = %s, want %s", p, sp.Dir, dir)
		}
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSavepointMidRecordKeepsOutputs: a savepoint taken in the middle of a
// record finishes that record first; what the rest of the record emitted
// is in the output buffer, as after next. (It was dropped: the output pane
// missed those sink records.)
func TestSavepointMidRecordKeepsOutputs(t *testing.T) {
	run := func(finish func(s *session.Session)) []session.Output {
		s := openSession(t, buildJob(t, "wordcount"), session.Options{Options: runtime.Options{Trace: true}})
		defer s.Close()
		if _, err := s.NextN(context.Background(), 8); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := s.StepInto(); err != nil {
				t.Fatal(err)
			}
		}
		finish(s)
		return s.Outputs()
	}
	want := run(func(s *session.Session) {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	})
	got := run(func(s *session.Session) {
		if err := s.Savepoint(vfs.NewMem(), "/sp"); err != nil {
			t.Fatal(err)
		}
	})
	if len(want) < 90 {
		t.Fatalf("next gave %d outputs", len(want))
	}
	if len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Fatalf("after a savepoint mid-record: %d outputs, last %+v; after next: %d, last %+v", len(got), got[len(got)-1], len(want), want[len(want)-1])
	}
}
