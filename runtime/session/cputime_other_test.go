//go:build !unix

package session_test

import "time"

// cpuTime is not measured here: the CPU-time ratios come out as NaN.
func cpuTime() time.Duration { return 0 }
