//go:build !unix

package savepoint

import "time"

// cpuTime is not measured here: the CPU ratios are left out.
func cpuTime() time.Duration { return 0 }
