//go:build !unix

package rocksdb

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
