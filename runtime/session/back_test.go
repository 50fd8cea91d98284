package session_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
)

// stateBytes is the executor's whole state as savepoint files written with a
// fixed checkpoint id: keyed and operator state, timers, source positions,
// position and processing time. The executor must be idle.
func stateBytes(t testing.TB, s *session.Session) map[string][]byte {
	t.Helper()
	snap, err := s.Executor().SavepointSnapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMem()
	if err := savepoint.Write(fs, "/sp", snap); err != nil {
		t.Fatal(err)
	}
	return vfstest.Files(t, fs, "/sp")
}

// sameFiles describes the first difference between two savepoints.
func sameFiles(got, want map[string][]byte) string {
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		g, okg := got[n]
		w, okw := want[n]
		switch {
		case !okg:
			return fmt.Sprintf("file %s missing", n)
		case !okw:
			return fmt.Sprintf("unexpected file %s", n)
		case !bytes.Equal(g, w):
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			return fmt.Sprintf("file %s differs at byte %d (%d vs %d bytes)", n, i, len(g), len(w))
		}
	}
	return ""
}

// op is one debugger command of a random walk.
type op struct {
	kind string // next, step, watermark, proctime
	arg  int64
}

// randomOps makes a walk of n commands: mostly next and step into, some
// watermark and processing-time moves.
func randomOps(rng *rand.Rand, n int) []op {
	wm := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	ops := make([]op, n)
	for i := range ops {
		switch r := rng.IntN(10); {
		case r < 5:
			ops[i] = op{kind: "next"}
		case r < 8:
			ops[i] = op{kind: "step"}
		case r < 9:
			wm += 1 + rng.Int64N(20_000)
			ops[i] = op{kind: "watermark", arg: wm}
		default:
			ops[i] = op{kind: "proctime", arg: 1 + rng.Int64N(60_000)}
		}
	}
	return ops
}

func apply(t testing.TB, s *session.Session, o op) {
	t.Helper()
	var err error
	switch o.kind {
	case "next":
		_, err = s.Next()
	case "step":
		_, err = s.StepInto()
	case "watermark":
		_, err = s.AdvanceWatermark(o.arg)
	case "proctime":
		_, err = s.AdvanceProcessingTime(time.Duration(o.arg) * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("%s %d: %v", o.kind, o.arg, err)
	}
}

var backJobs = []string{"wordcount", "orders", "clicks", "sessions"}

// TestBackByteIdentical walks each job forward with random next, step
// into, watermark and processing-time commands, remembering the state bytes
// before each source event, then goes back to the start one Back at a time:
// every Back gives the state of the original pass byte for byte.
func TestBackByteIdentical(t *testing.T) {
	rng := seeded(t)
	n := trials(t, 8)
	for i := range n {
		name := backJobs[i%len(backJobs)]
		interval := 1 + rng.IntN(12)
		p := 1 + rng.IntN(4)
		ops := randomOps(rng, 20+rng.IntN(60))
		what := fmt.Sprintf("trial %d: %s, parallelism %d, checkpoint interval %d", i, name, p, interval)
		s := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: p, Trace: true}, CheckpointInterval: interval})
		want := map[int64]map[string][]byte{}
		for _, o := range ops {
			if s.Finished() {
				break
			}
			if s.Executor().Idle() && (o.kind == "next" || o.kind == "step") {
				want[s.Position()] = stateBytes(t, s)
			}
			apply(t, s, o)
		}
		if s.Executor().Idle() {
			want[s.Position()] = stateBytes(t, s)
		}
		backs := 0
		for s.Position() > 0 {
			from, idle := s.Position(), s.Executor().Idle()
			st, err := s.Back()
			if err != nil {
				t.Fatalf("%s: back from record %d: %v", what, from, err)
			}
			backs++
			// Back from the middle of an event returns to where it began:
			// record from-1, or record from itself when the event was the
			// end of the input (which is not a record).
			if st.Reason != session.ReasonBack || s.Position() != from-1 && (idle || s.Position() != from) {
				t.Fatalf("%s: back from record %d stopped at %d (%s: %s)", what, from, s.Position(), st.Reason, st.Message)
			}
			w, ok := want[s.Position()]
			if !ok {
				t.Fatalf("%s: no state recorded at record %d", what, s.Position())
			}
			if d := sameFiles(stateBytes(t, s), w); d != "" {
				t.Fatalf("%s: after back to record %d, state differs from the original pass: %s", what, s.Position(), d)
			}
		}
		if _, err := s.Back(); err == nil || !strings.HasPrefix(err.Error(), "session: cannot go back before record ") {
			t.Errorf("%s: back before the start: %v", what, err)
		}
		if backs == 0 {
			t.Errorf("%s: the walk read no record", what)
		}
		s.Close()
	}
}

// TestSavepointsByteIdentical: two sessions of the same job driven by the
// same commands write byte-identical savepoints, and so does a session that
// went further and came back.
func TestSavepointsByteIdentical(t *testing.T) {
	rng := seeded(t)
	for i, name := range backJobs {
		ops := randomOps(rng, 10+rng.IntN(60))
		opts := session.Options{Options: runtime.Options{Parallelism: 1 + rng.IntN(4)}, CheckpointInterval: 1 + rng.IntN(12)}
		var files []map[string][]byte
		for range 2 {
			s := openSession(t, buildJob(t, name), opts)
			for _, o := range ops {
				apply(t, s, o)
			}
			fs := vfs.NewMem()
			if err := s.Savepoint(fs, "/sp"); err != nil {
				t.Fatal(err)
			}
			files = append(files, vfstest.Files(t, fs, "/sp"))
			s.Close()
		}
		if len(files[0]) < 2 {
			t.Fatalf("%s: savepoint has %d files", name, len(files[0]))
		}
		if d := sameFiles(files[1], files[0]); d != "" {
			t.Errorf("trial %d (%s): two savepoints at the same point differ: %s", i, name, d)
		}
	}
}
