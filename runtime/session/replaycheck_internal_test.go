package session

import (
	"context"
	"errors"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
)

// A back that replays positions whose digests were dropped for age
// replays them unchecked: they are not "emitted nothing the first time"
// (before: after a continue of more than 100,000 traced records, a back
// to before the kept checkpoints failed with "replaying record 1,
// operator "Source: lines" ... emitted other records than the first time
// (0 then, 1 now)", on wordcount, which keeps no state outside its
// declared state).
func TestBackOverDroppedDigests(t *testing.T) {
	defer func(n int64) { maxDigestPositions = n }(maxDigestPositions)
	maxDigestPositions = 20
	job, err := fixtures.Build("wordcount", fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// One checkpoint, the first: a back replays from record 0.
	s, err := New(job, Options{Options: runtime.Options{Trace: true}, CheckpointInterval: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// "savepoints" is read at records 6, 11, 36 and 37 (words.txt).
	for _, cmd := range []string{"break at count when key = 'savepoints'", "continue", "continue", "continue", "continue"} {
		if _, err := s.Execute(ctx, cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	if s.replays.dropped == 0 {
		t.Fatalf("no digest dropped (newest %d): the test does not reach the bound", s.replays.newest)
	}
	st, err := s.Back()
	var re *ReplayError
	if errors.As(err, &re) {
		t.Fatalf("back: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != ReasonBack || st.Position != 35 {
		t.Fatalf("back: %v at %d, want back at record 35 (the last continue started in record 36)", st.Reason, st.Position)
	}
}

// The first run's digests stay bounded when newest jumps (a light run
// records none): the positions a jump leaves behind are swept, not kept
// for the rest of the session.
func TestDigestsStayBounded(t *testing.T) {
	defer func(n int64) { maxDigestPositions = n }(maxDigestPositions)
	maxDigestPositions = 50
	var r replayCheck
	ev := &runtime.TraceEvent{Operator: "op"}
	pos := int64(0)
	for range 40 {
		for range 60 { // traced: a digest per position
			pos++
			r.note(pos, ev)
		}
		pos += 1000 // a light run: no digests
		r.skip(pos-1000, pos)
	}
	if n := len(r.first); n > 2*int(maxDigestPositions) {
		t.Fatalf("%d positions' digests kept, want at most %d", n, 2*maxDigestPositions)
	}
}
