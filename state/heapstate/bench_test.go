package heapstate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"streamdbg/internal/cputime"
	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// BenchmarkHeapBackend measures the wordcount hot path, a ValueState[int64]
// read and update under a freshly set key, against its baseline, a plain
// map[string]int64 get and set on the same key sequence (string keys, as
// the wordcount baseline counts tokens: no conversion). Both hold 1M
// distinct keys before the clock starts and then visit them in a random
// order. Key groups are computed up front, as the runtime computes one per
// record before the operator runs.
func BenchmarkHeapBackend(b *testing.B) {
	const nKeys = 1 << 20
	const seqLen = 1 << 20
	keys := make([][]byte, nKeys)
	kgs := make([]int, nKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key_%d", i)
		kgs[i] = state.KeyGroupFor(keys[i], state.DefaultMaxParallelism)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seq := make([]int32, seqLen)
	for i := range seq {
		seq[i] = int32(rng.IntN(nKeys))
	}

	b.Run("map", func(b *testing.B) {
		m := make(map[string]int64)
		skeys := make([]string, nKeys)
		for i, k := range keys {
			// The map owns its key copies, as a record's key is never the
			// map's own string: lookups compare bytes, not just pointers.
			m[string(k)] = int64(i)
			skeys[i] = string(k)
		}
		b.ReportAllocs()
		defer reportCPU(b, cputime.Process())
		i := 0
		for b.Loop() {
			m[skeys[seq[i&(seqLen-1)]]]++
			i++
		}
	})

	b.Run("backend", func(b *testing.B) {
		be := heapstate.New(state.DefaultMaxParallelism, state.KeyGroupRange{Start: 0, End: state.DefaultMaxParallelism - 1})
		count, err := state.Value("count", state.Int64).Bind(registry{be})
		if err != nil {
			b.Fatal(err)
		}
		for i, k := range keys {
			be.SetCurrentKey(k, kgs[i])
			if err := count.Update(int64(i)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		defer reportCPU(b, cputime.Process())
		i := 0
		for b.Loop() {
			j := seq[i&(seqLen-1)]
			be.SetCurrentKey(keys[j], kgs[j])
			n, _, err := count.Value()
			if err != nil {
				b.Fatal(err)
			}
			if err := count.Update(n + 1); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// reportCPU adds the CPU time per operation since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if d := cputime.Process() - start; d > 0 && b.N > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
