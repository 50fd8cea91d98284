//go:build unix

package pebblestate

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process used so far, pebble's background
// goroutines included: on a loaded machine it compares raw and backend
// better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
