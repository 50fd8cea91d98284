package pebblestate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/cputime"
	"streamdbg/state"
)

// BenchmarkPebbleBackend compares a ValueState[int64] read-modify-write
// through the backend (backend: SetCurrentKey, Value, Update) with raw
// pebble doing the same on the same key sequence (raw: Get through an
// indexed batch, decode, encode, Set into it, committed at commitThreshold
// as the backend used to; the keys precomputed in the backend's layout).
// DESIGN's budget: backend within 1.2x of raw.
//
// keys=10k fits the backend's table of pending writes (writes.go), so
// after the first touch of a key its reads never reach pebble; keys=1M
// does not: the table is dropped at commits and most reads go to pebble.
// Each case's ratio sub-benchmark runs both sides in every iteration, in
// alternating order, 64k operations each, and reports backend/raw of
// their CPU times (cpu-ratio, the process's: garbage collection included)
// and wall times (wall-ratio).
func BenchmarkPebbleBackend(b *testing.B) {
	for _, nKeys := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%s", shortCount(nKeys)), func(b *testing.B) { benchPebbleBackend(b, nKeys) })
	}
}

func shortCount(n int) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	return fmt.Sprintf("%dk", n/1000)
}

// rmwSide is one side of BenchmarkPebbleBackend: ops read-modify-writes
// from position from of the key sequence.
type rmwSide func(b *testing.B, from, ops int)

func benchPebbleBackend(b *testing.B, nKeys int) {
	r := rand.New(rand.NewPCG(1, 1))
	keys := make([][]byte, nKeys)
	kgs := make([]int, nKeys)
	composite := make([][]byte, nKeys)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key_%d", i))
		kgs[i] = state.KeyGroupFor(keys[i], state.DefaultMaxParallelism)
		composite[i] = appendEscaped(appendEscaped(appendPrefix(nil, 1, kgs[i]), keys[i]), nil)
	}
	seq := make([]int, 1<<20)
	for i := range seq {
		seq[i] = r.IntN(nKeys)
	}
	raw := func(b *testing.B) (rmwSide, func()) {
		cache := pebble.NewCache(DefaultCacheSize)
		db, err := pebble.Open("raw", pebbleOptions(vfs.NewMem(), cache))
		cache.Unref()
		if err != nil {
			b.Fatal(err)
		}
		batch := db.NewIndexedBatch()
		var buf []byte
		side := func(b *testing.B, from, ops int) {
			for i := from; i < from+ops; i++ {
				k := composite[seq[i&(len(seq)-1)]]
				var n int64
				v, c, err := batch.Get(k)
				switch err {
				case nil:
					n, err = state.Int64.Decode(v)
					c.Close()
					if err != nil {
						b.Fatal(err)
					}
				case pebble.ErrNotFound:
				default:
					b.Fatal(err)
				}
				buf = state.Int64.Append(buf[:0], n+1)
				if err := batch.Set(k, buf, nil); err != nil {
					b.Fatal(err)
				}
				if batch.Len() >= commitThreshold {
					if err := batch.Commit(pebble.NoSync); err != nil {
						b.Fatal(err)
					}
					batch.Reset()
				}
			}
		}
		return side, func() { batch.Close(); db.Close() }
	}
	backend := func(b *testing.B) (rmwSide, func()) {
		be, err := Open(Options{FS: vfs.NewMem(), KeyGroups: state.KeyGroupRange{Start: 0, End: state.DefaultMaxParallelism - 1}})
		if err != nil {
			b.Fatal(err)
		}
		s, err := state.Value("count", state.Int64).Bind(registry{be})
		if err != nil {
			b.Fatal(err)
		}
		side := func(b *testing.B, from, ops int) {
			for i := from; i < from+ops; i++ {
				j := seq[i&(len(seq)-1)]
				be.SetCurrentKey(keys[j], kgs[j])
				n, _, err := s.Value()
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Update(n + 1); err != nil {
					b.Fatal(err)
				}
			}
		}
		return side, func() { be.Close() }
	}
	for _, c := range []struct {
		name string
		make func(*testing.B) (rmwSide, func())
	}{{"raw", raw}, {"backend", backend}} {
		b.Run(c.name, func(b *testing.B) {
			side, done := c.make(b)
			defer done()
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b, cputime.Process())
			side(b, 0, b.N)
		})
	}
	b.Run("ratio", func(b *testing.B) {
		rawSide, rawDone := raw(b)
		defer rawDone()
		beSide, beDone := backend(b)
		defer beDone()
		const ops = 1 << 16
		var cpu, wall [2]time.Duration
		sides := []rmwSide{rawSide, beSide}
		for i := 0; b.Loop(); i++ {
			for k := range sides {
				j := (i + k) % 2
				start, c := time.Now(), cputime.Process()
				sides[j](b, i*ops, ops)
				cpu[j] += cputime.Process() - c
				wall[j] += time.Since(start)
			}
		}
		if cpu[0] > 0 {
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
		}
		b.ReportMetric(float64(wall[1])/float64(wall[0]), "wall-ratio")
	})
}

// reportCPU adds the CPU time per operation since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if d := cputime.Process() - start; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
