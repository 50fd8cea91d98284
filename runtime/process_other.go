//go:build !unix

package runtime

// processAlive says every process lives where it cannot be asked: a
// state directory is then never taken for stale.
func processAlive(int) bool { return true }
