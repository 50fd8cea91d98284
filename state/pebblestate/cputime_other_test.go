//go:build !unix

package pebblestate

import "time"

func cpuTime() time.Duration { return 0 }
