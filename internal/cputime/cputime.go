// Package cputime reads the CPU time the process has used, for benchmarks
// that compare two sides by CPU time: on a shared machine wall time moves
// with the load, CPU time far less.
package cputime

import "time"

// Process is the user and system CPU time of the whole process so far
// (every goroutine, the garbage collector included), or 0 where the
// platform does not say (Known reports which).
func Process() time.Duration { return process() }

// Known reports whether Process measures anything on this platform; a
// benchmark leaves its CPU figures out when it does not.
func Known() bool { return known }
