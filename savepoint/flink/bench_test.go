package flink

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang/snappy"

	"streamdbg/internal/cputime"
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
// (spapi-table-state) and synthetic canonical savepoints with a ~100 MB
// keyed file (4M Long keys and Long values in 128 key groups), plain and
// with every key group Snappy-compressed, and one of 4M String keys
// ("key_0000000" on) with Long values (synthetic-strings, ~136 MB).
//
// The baseline of each synthetic savepoint reads the bytes the scan reads,
// the way it reads them, and does nothing with them: `_metadata` in one
// read, then the keyed file's header and each key group's section with one
// ReadAt of exactly that range into a reused buffer, in file order. What
// the scan costs beyond it is decompressing, decoding and handing over the
// rows. (An older baseline summed every byte, slower than reading, which
// flattered the ratio; the one after it read whole files through a
// bufio.Reader, close to this one.)
//
// The -ratio benchmarks interleave scan and baseline in every iteration
// and report the scan's MB/s of savepoint bytes (scan-MB/s), the
// baseline's (plain-MB/s), their ratio (x-plain: scan throughput over the
// baseline's), and the scan's MB per second of this process's CPU time
// (scan-MB/cpu-s: user+system, GC included), which does not count time
// spent waiting for a CPU on a loaded machine.
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

	for _, v := range []struct {
		name                   string
		compressed, stringKeys bool
	}{{"synthetic-100MB", false, false}, {"synthetic-100MB-snappy", true, false}, {"synthetic-strings", false, true}} {
		// Written by the first sub-benchmark that runs (none when -bench
		// picks none of them).
		var dir string
		var offsets []int64
		var size, raw int64 // savepoint bytes; with the key groups uncompressed
		parent := b         // the data outlives each sub-benchmark's TempDir
		data := func(b *testing.B) {
			if dir == "" {
				dir, offsets = writeSyntheticOffsets(parent, synthOptions{keys: 4_000_000, compressed: v.compressed, stringKeys: v.stringKeys})
				size = dirSize(b, dir)
				raw = uncompressedSize(b, dir, offsets, v.compressed)
			}
		}
		b.Run(v.name, func(b *testing.B) {
			data(b)
			b.SetBytes(size)
			b.ReportAllocs()
			rows := 0
			for b.Loop() {
				rows = scanAll(b, dir)
			}
			if rows != 4_000_000 {
				b.Fatalf("%d rows, want 4000000", rows)
			}
			b.ReportMetric(float64(rows), "rows/op")
		})
		var buf []byte
		plain := func(b *testing.B) {
			md, err := os.ReadFile(filepath.Join(dir, "_metadata"))
			if err != nil {
				b.Fatal(err)
			}
			n := int64(len(md))
			f, err := os.Open(filepath.Join(dir, "keyed-0"))
			if err != nil {
				b.Fatal(err)
			}
			st, err := f.Stat()
			if err != nil {
				b.Fatal(err)
			}
			ranges := append([]int64{0}, sortedOffsets(offsets)...)
			ranges = append(ranges, st.Size())
			for i := range len(ranges) - 1 {
				want := ranges[i+1] - ranges[i]
				if int64(cap(buf)) < want {
					buf = make([]byte, want)
				}
				m, err := f.ReadAt(buf[:want], ranges[i])
				if err != nil && !(err == io.EOF && int64(m) == want) {
					b.Fatal(err)
				}
				n += int64(m)
			}
			f.Close()
			if n != size {
				b.Fatalf("read %d bytes, want %d", n, size)
			}
		}
		b.Run(v.name+"-baseline-sections", func(b *testing.B) {
			data(b)
			b.SetBytes(size)
			for b.Loop() {
				plain(b)
			}
		})
		b.Run(v.name+"-ratio", func(b *testing.B) {
			data(b)
			var scan, base, cpu time.Duration
			for i := 0; b.Loop(); i++ {
				for k := range 2 {
					if (i+k)%2 == 0 {
						c0, t0 := cputime.Process(), time.Now()
						scanAll(b, dir)
						scan += time.Since(t0)
						cpu += cputime.Process() - c0
					} else {
						t0 := time.Now()
						plain(b)
						base += time.Since(t0)
					}
				}
			}
			mb := float64(size) * float64(b.N) / 1e6
			b.ReportMetric(float64(base)/float64(scan), "x-plain")
			b.ReportMetric(mb/scan.Seconds(), "scan-MB/s")
			b.ReportMetric(mb/base.Seconds(), "plain-MB/s")
			b.ReportMetric(mb/cpu.Seconds(), "scan-MB/cpu-s")
			if v.compressed {
				// The same scan's throughput counting each key group's
				// bytes as they are before compression (what the plain
				// savepoint's MB/s counts).
				b.ReportMetric(float64(raw)*float64(b.N)/1e6/scan.Seconds(), "scan-MB/s-uncompressed")
			}
		})
	}
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

// uncompressedSize is the savepoint's size with every key group of its
// keyed file decompressed, by golang/snappy's own reader (not the code
// under test).
func uncompressedSize(b *testing.B, dir string, offsets []int64, compressed bool) int64 {
	size := dirSize(b, dir)
	if !compressed {
		return size
	}
	f, err := os.ReadFile(filepath.Join(dir, "keyed-0"))
	if err != nil {
		b.Fatal(err)
	}
	sorted := append(sortedOffsets(offsets), int64(len(f)))
	for i := range len(sorted) - 1 {
		n, err := io.Copy(io.Discard, snappy.NewReader(bytes.NewReader(f[sorted[i]:sorted[i+1]])))
		if err != nil {
			b.Fatal(err)
		}
		size += n - (sorted[i+1] - sorted[i])
	}
	return size
}
