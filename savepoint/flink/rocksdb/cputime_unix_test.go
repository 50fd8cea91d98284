//go:build unix

package rocksdb

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used, all
// its threads together; ok is false where it cannot be read.
func processCPU() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
