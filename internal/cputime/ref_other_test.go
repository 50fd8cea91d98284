//go:build !linux

package cputime_test

import (
	"testing"
	"time"
)

var refStart = time.Now()

const refIsCPU = false

// refCPU is wall time where there is no second CPU clock to compare with:
// spinning on an idle machine gives about as much CPU time.
func refCPU(*testing.T) time.Duration { return time.Since(refStart) }
