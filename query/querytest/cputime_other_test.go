//go:build !unix

package querytest_test

import "time"

// cpuTime is not measured here: the CPU ratio is left out.
func cpuTime() time.Duration { return 0 }
