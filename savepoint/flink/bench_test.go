package flink

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"streamdbg/state"
)

// scanAll opens a savepoint and reads every row of every table; it returns
// the number of rows.
func scanAll(b *testing.B, dir string) int {
	sp, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	for _, err := range sp.OperatorState(state.OperatorScan{}) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	for _, err := range sp.Timers(state.TimerScan{}) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

func dirSize(b *testing.B, dir string) int64 {
	var size int64
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			size += info.Size()
		}
	}
	return size
}

// BenchmarkOpenScan opens and fully scans the sample with the most state
// (spapi-table-state) and a synthetic savepoint with a ~100 MB keyed file.
// The baseline reads the same bytes through a plain buffered file, and
// synthetic-100MB-ratio reports the scan against it from interleaved runs.
func BenchmarkOpenScan(b *testing.B) {
	sample := filepath.Join(samplesDir, "spapi-table-state")
	b.Run("spapi-table-state", func(b *testing.B) {
		if _, err := os.Stat(sample); err != nil {
			b.Skip("sample absent")
		}
		b.SetBytes(dirSize(b, sample))
		b.ReportAllocs()
		rows := 0
		for b.Loop() {
			rows = scanAll(b, sample)
		}
		b.ReportMetric(float64(rows), "rows/op")
	})

	// 4M keys of ~26 bytes each: about 100 MB in 128 key groups.
	dir := writeSynthetic(b, synthOptions{keys: 4_000_000})
	size := dirSize(b, dir)
	b.Run("synthetic-100MB", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		rows := 0
		for b.Loop() {
			rows = scanAll(b, dir)
		}
		b.ReportMetric(float64(rows), "rows/op")
	})
	// The baseline reads every file of the savepoint (the bytes SetBytes
	// counts) through a bufio.Reader in 64 KiB reads and does not look at
	// them: the cost of getting the bytes, nothing more. (It used to sum
	// every byte, which is slower than reading and flattered the ratio.)
	plain := func(b *testing.B) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		buf := make([]byte, 64<<10)
		for _, e := range ents {
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReader(f)
			for {
				m, err := r.Read(buf)
				n += int64(m)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
		}
		if n != size {
			b.Fatalf("read %d bytes, want %d", n, size)
		}
	}
	b.Run("synthetic-100MB-baseline-bufio", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			plain(b)
		}
	})
	// ratio interleaves the scan and the baseline in every iteration and
	// reports the scan's throughput over the plain read's (x-plain) and
	// the scan's MB/s.
	b.Run("synthetic-100MB-ratio", func(b *testing.B) {
		var scan, base time.Duration
		for i := 0; b.Loop(); i++ {
			for k := range 2 {
				start := time.Now()
				if (i+k)%2 == 0 {
					scanAll(b, dir)
					scan += time.Since(start)
				} else {
					plain(b)
					base += time.Since(start)
				}
			}
		}
		b.ReportMetric(float64(base)/float64(scan), "x-plain")
		b.ReportMetric(float64(size)*float64(b.N)/scan.Seconds()/1e6, "scan-MB/s")
	})
}

// BenchmarkPointLookup reads one key of the synthetic 100 MB savepoint by
// its key group (the query planner's pushdown), against the full scan.
func BenchmarkPointLookup(b *testing.B) {
	dir := writeSynthetic(b, synthOptions{keys: 4_000_000})
	sp, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	meta := sp.States()[0]
	// key-group reads the key's group and decodes all of it; key-filter
	// also passes the key (as the query planner does), so the values of
	// other keys are not decoded.
	for _, keys := range []struct {
		name string
		keys []any
	}{{"key-group", nil}, {"key-filter", []any{int64(123456)}}} {
		b.Run(keys.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				kg, _ := sp.KeyGroupOf(meta, int64(123456))
				found := false
				for r, err := range sp.Keyed(state.KeyedScan{OperatorID: meta.OperatorID, KeyGroups: []int{kg}, Keys: keys.keys}) {
					if err != nil {
						b.Fatal(err)
					}
					if r.Key == int64(123456) {
						found = true
					}
				}
				if !found {
					b.Fatal("key not found")
				}
			}
		})
	}
}
