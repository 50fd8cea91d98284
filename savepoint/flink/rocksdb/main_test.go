package rocksdb

import (
	"os"
	"testing"
)

// TestMain removes the benchmarks' stores when the run ends: they are
// shared between benchmarks, so no one benchmark can, and each is 100 MB
// or more of /tmp (left behind, a few hundred runs filled the disk).
func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range scanStores {
		_ = os.RemoveAll(s.dir)
	}
	if lookupStore != nil {
		_ = os.RemoveAll(lookupStore.dir)
	}
	os.Exit(code)
}
