package pebblestate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// BenchmarkPebbleBackend compares a ValueState[int64] read-modify-write
// through the backend (backend) with the same pebble Get and Set through an
// indexed batch on the same composite keys, precomputed (raw). The budget
// is backend within 1.5× of raw.
func BenchmarkPebbleBackend(b *testing.B) {
	const nKeys = 10000
	r := rand.New(rand.NewPCG(1, 1))
	keys := make([][]byte, nKeys)
	kgs := make([]int, nKeys)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key_%d", i))
		kgs[i] = state.KeyGroupFor(keys[i], state.DefaultMaxParallelism)
	}
	seq := make([]int, 1<<16)
	for i := range seq {
		seq[i] = r.IntN(nKeys)
	}

	b.Run("raw", func(b *testing.B) {
		cache := pebble.NewCache(DefaultCacheSize)
		db, err := pebble.Open("raw", pebbleOptions(vfs.NewMem(), cache))
		cache.Unref()
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		composite := make([][]byte, nKeys)
		for i, k := range keys {
			composite[i] = appendEscaped(appendEscaped(appendPrefix(nil, 1, kgs[i]), k), nil)
		}
		batch := db.NewIndexedBatch()
		defer batch.Close()
		var buf []byte
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b, cpuTime())
		for i := 0; i < b.N; i++ {
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
	})

	b.Run("backend", func(b *testing.B) {
		be, err := Open(Options{FS: vfs.NewMem(), KeyGroups: state.KeyGroupRange{Start: 0, End: state.DefaultMaxParallelism - 1}})
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		s, err := state.Value("count", state.Int64).Bind(registry{be})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b, cpuTime())
		for i := 0; i < b.N; i++ {
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
	})
}

// reportCPU adds the CPU time per operation since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
