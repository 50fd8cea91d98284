package cputime_test

import (
	"testing"
	"time"

	"streamdbg/internal/cputime"
)

// TestProcessCountsWork: spinning for 50 ms of wall time adds at least
// 25 ms of CPU time, and CPU time never goes back.
func TestProcessCountsWork(t *testing.T) {
	if !cputime.Known() {
		if cputime.Process() != 0 {
			t.Fatal("Process is not 0 where it is not known")
		}
		t.Skip("no CPU time on this platform")
	}
	before := cputime.Process()
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after := cputime.Process()
	if after < before {
		t.Fatalf("CPU time went back: %v -> %v", before, after)
	}
	if d := after - before; d < 25*time.Millisecond {
		t.Fatalf("50 ms of spinning took %v of CPU time (x=%d)", d, x)
	}
}
