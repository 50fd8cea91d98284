package rocksdb

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestMutatedTables reads tables with bytes replaced, inserted, deleted
// and bit-flipped (including the seeds without checksums, so that the
// parsers behind the checksums are reached): errors of the right kind,
// no panic, each input done within a second. It found an LZ4 decode of an
// empty destination that faulted in the codec's assembly, and a seek that
// sliced a too-short key.
func TestMutatedTables(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	seeds := seedTables()
	for i := range 20000 {
		b := append([]byte(nil), seeds[r.IntN(len(seeds))]...)
		for range 1 + r.IntN(8) {
			j := r.IntN(len(b))
			switch r.IntN(4) {
			case 0:
				b[j] = byte(r.Uint32())
			case 1:
				b = append(b[:j], b[j+1:]...)
			case 2:
				b = append(b[:j], append([]byte{byte(r.Uint32())}, b[j:]...)...)
			case 3:
				b[j] ^= 1 << r.IntN(8)
			}
		}
		done := make(chan error, 1)
		go func() {
			tb, err := OpenTable(&BytesFile{"mutated.sst", b}, 0)
			if err == nil {
				it := newTableIter(tb, nil, nil, new(prefetch))
				for ok := it.first(); ok; ok = it.next() {
				}
				if err = it.error(); err == nil {
					it = newTableIter(tb, []byte("key030"), nil, new(prefetch))
					it.seekGE([]byte("key010"))
					err = it.error()
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			checkKind(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("mutation %d still running after 5 s", i)
		}
	}
}
