package session

import (
	"testing"
	"unsafe"
)

// TestLightEntrySize: a light run makes one lightEntry per key it writes
// (200k of them in BenchmarkContinue), so its size is the light run's
// footprint: it must stay within the 256-byte size class, and a forgotten
// history must hold no revisions of its own (they are in histEntry.rec).
func TestLightEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(lightEntry{}); n > 256 {
		t.Fatalf("lightEntry is %d bytes, more than 256", n)
	}
	if n := unsafe.Sizeof(histEntry{}); n > 136 {
		t.Fatalf("histEntry is %d bytes, more than 136", n)
	}
}
