package cputime_test

import (
	"testing"
	"time"

	"streamdbg/internal/cputime"
)

// TestProcessCountsWork spins until a second clock of the process's CPU
// time (refCPU) has moved 50 ms, then requires Process to have moved as
// far, within a few ms either way. It waits for CPU time, not wall time,
// so a loaded machine only makes it take longer.
func TestProcessCountsWork(t *testing.T) {
	if !cputime.Known() {
		if cputime.Process() != 0 {
			t.Fatal("Process is not 0 where it is not known")
		}
		t.Skip("no CPU time on this platform")
	}
	r0 := refCPU(t)
	p0 := cputime.Process()
	x := 0
	for deadline := time.Now().Add(30 * time.Second); refCPU(t)-r0 < 50*time.Millisecond; x++ {
		if time.Now().After(deadline) {
			t.Fatalf("the reference clock moved %v in 30 s of spinning", refCPU(t)-r0)
		}
	}
	p1 := cputime.Process()
	r1 := refCPU(t)
	if p1 < p0 {
		t.Fatalf("CPU time went back: %v -> %v", p0, p1)
	}
	d, ref := p1-p0, r1-r0
	if !refIsCPU {
		// Wall time: the spin got about as much CPU time on an idle
		// machine, and never more than the process's other threads add.
		if d < 25*time.Millisecond {
			t.Fatalf("50 ms of spinning took %v of CPU time (x=%d)", d, x)
		}
		return
	}
	if d < 45*time.Millisecond || d > ref+5*time.Millisecond {
		t.Fatalf("Process moved %v while the reference moved at least 50 ms and at most %v (x=%d)", d, ref, x)
	}
}
