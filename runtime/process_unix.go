//go:build unix

package runtime

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of this PID exists (signal 0
// checks without sending anything; EPERM: it exists, someone else's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
