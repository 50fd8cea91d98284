package query

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"streamdbg/state"
)

const benchEntries = 1_000_000

var benchCat = sync.OnceValue(func() *memCatalog {
	op := state.OperatorInfo{ID: strings.Repeat("b", 32), Name: "sum", Parallelism: 2, MaxParallelism: maxPar}
	c := &memCatalog{ops: []state.OperatorInfo{op}, metas: []state.StateMeta{{
		OperatorID: op.ID, OperatorName: op.Name, StateName: "total", Scope: state.ScopeKeyed,
		Kind: state.KindReducing, KeyType: "string", ValueType: "int64", Entries: benchEntries,
	}}}
	// Bucket by key group: the rows come out in key group order without a
	// sort of a million rows.
	buckets := make([][]state.KeyedRow, maxPar)
	for i := range benchEntries {
		key := fmt.Sprintf("key_%d", i)
		kg := keyGroup(key)
		buckets[kg] = append(buckets[kg], state.KeyedRow{OperatorID: op.ID, OperatorName: op.Name,
			Subtask: state.SubtaskFor(maxPar, 2, kg), KeyGroup: kg, StateName: "total", Kind: state.KindReducing,
			Key: key, Value: int64(i)})
	}
	c.keyed = make([]state.KeyedRow, 0, benchEntries)
	for _, b := range buckets {
		c.keyed = append(c.keyed, b...)
	}
	return c
})

// BenchmarkQuery measures a point query (key equality: one key group read)
// and a full scan with a value filter, with a hand-written loop over the
// same catalog iterator as the scan's baseline.
func BenchmarkQuery(b *testing.B) {
	cat := benchCat()
	ctx := context.Background()
	count := func(b *testing.B, text string, want int) {
		rows, err := RunText(ctx, cat, text)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, err := range rows.All() {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != want {
			b.Fatalf("%d rows, want %d", n, want)
		}
	}
	b.Run("point", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			count(b, fmt.Sprintf("SELECT value FROM keyed_state WHERE operator_name = 'sum' AND state_name = 'total' AND key = 'key_%d'", i%benchEntries), 1)
		}
	})
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			count(b, "SELECT key, value FROM keyed_state WHERE value % 1000 = 7", benchEntries/1000)
		}
		b.ReportMetric(float64(benchEntries)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("scan-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for r, err := range cat.Keyed(state.KeyedScan{}) {
				if err != nil {
					b.Fatal(err)
				}
				if v, ok := r.Value.(int64); ok && v%1000 == 7 {
					_ = []any{r.Key, r.Value}
					n++
				}
			}
			if n != benchEntries/1000 {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(benchEntries)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
