package session

import (
	"testing"
	"unsafe"

	"streamdbg/runtime"
)

// TestLightEntrySize: a light run keeps one history per key it writes
// (200k of them in BenchmarkContinue, in slabs: lightRun.spare) and one
// write record per write (1.65M, in batches of up to 262k), so their sizes
// are the light run's footprint: a forgotten history must hold no
// revisions of its own (they are in histEntry.rec), and a write record
// must stay the 32 bytes of runtime.LightRec (the LightWrite it replaces
// is 56, with pointers). (The runtime keeps 56 bytes per entry for it:
// TestLightDispSize.)
func TestLightEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(histEntry{}); n > 136 {
		t.Fatalf("histEntry is %d bytes, more than 136", n)
	}
	if n := unsafe.Sizeof(runtime.LightRec{}); n > 32 {
		t.Fatalf("runtime.LightRec is %d bytes, more than 32", n)
	}
}
