package cputime_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const refIsCPU = true

// refCPU is the process's CPU time from CLOCK_PROCESS_CPUTIME_ID, a
// different call than the getrusage Process reads.
func refCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
