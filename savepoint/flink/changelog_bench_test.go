package flink

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"streamdbg/internal/cputime"
	"streamdbg/state"
)

// writeChangelogBench writes a changelog checkpoint with no materialized
// state and a change log in four DSTL files: keys 0..keys-1 of the value
// state set three times each (the last value is key*3+2), in change sets of
// 1000 changes, plus one timer per 100 keys.
func writeChangelogBench(tb testing.TB, keys int, compressed bool) (dir string, files []string) {
	dir = filepath.Join(tb.TempDir(), "chk-9")
	os.MkdirAll(dir, 0o755)
	fs := make([]*dstlFileW, 4)
	for i := range fs {
		fs[i] = &dstlFileW{name: fmt.Sprintf("dstl-%d", i), compressed: compressed}
	}
	log := []memChange{{kg: metaKeyGroup, b: metaChange(0, 1, false, false)}, {kg: metaKeyGroup, b: metaChange(clTimerState, 2, false, false)}}
	var p clPartW
	flush := func() {
		f := fs[len(p.streams)%len(fs)]
		p.streams = append(p.streams, struct {
			off  int64
			file *dstlFileW
		}{f.changeSet(log), f})
		log = log[:0]
	}
	for round := range int64(3) {
		for k := range int64(keys) {
			log = append(log, data(0, k, opSet, 1, clKV(0, k, 0, be64(k*3+round))))
			if round == 0 && k%100 == 0 {
				var t enc
				t.i32(1)
				t.i64(k ^ -1<<63)
				t.i64(k)
				t.i64(0)
				log = append(log, memChange{kg: int32(longKG(k, clMaxPar)), b: append([]byte{opAddElement, 0, 2}, t.Bytes()...)})
			}
			if len(log) >= 1000 {
				flush()
			}
		}
	}
	flush()
	writeChangelogCheckpoint(tb, dir, newCLTestModel(), []clSubtaskW{{first: 0, end: clMaxPar, parts: []clPartW{p}}}, fs)
	for _, f := range fs {
		files = append(files, filepath.Join(dir, f.name))
	}
	return dir, files
}

// BenchmarkChangelogScan: open a changelog checkpoint and scan all its
// keyed state (the change log indexed, then every key group replayed:
// each change read, decoded and applied; the rows sorted) against the
// baseline of reading the same DSTL files through a 64 KiB bufio.Reader,
// touching each byte. Both sides run in every iteration; each side's MB/s
// is over the DSTL files' bytes on disk, and the replay's MB per second of
// CPU time (getrusage) is reported because the machine is shared.
func BenchmarkChangelogScan(b *testing.B) {
	for _, compressed := range []bool{false, true} {
		b.Run(fmt.Sprintf("snappy=%v", compressed), func(b *testing.B) {
			const keys = 200_000
			dir, files := writeChangelogBench(b, keys, compressed)
			var size int64
			for _, f := range files {
				st, _ := os.Stat(f)
				size += st.Size()
			}
			b.ReportAllocs()
			var replay, base, cpu time.Duration
			buf := make([]byte, 64<<10)
			for b.Loop() {
				c0 := cputime.Process()
				t0 := time.Now()
				sp, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for r, err := range sp.Keyed(state.KeyedScan{}) {
					if err != nil {
						b.Fatal(err)
					}
					if r.Value != r.Key.(int64)*3+2 {
						b.Fatalf("row %+v", r)
					}
					n++
				}
				if n != keys {
					b.Fatalf("%d rows, want %d", n, keys)
				}
				t1 := time.Now()
				cpu += cputime.Process() - c0
				var sum byte
				for _, name := range files {
					f, err := os.Open(name)
					if err != nil {
						b.Fatal(err)
					}
					r := bufio.NewReaderSize(f, 64<<10)
					for {
						n, err := r.Read(buf)
						for _, c := range buf[:n] {
							sum += c
						}
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					f.Close()
				}
				_ = sum
				replay += t1.Sub(t0)
				base += time.Since(t1)
			}
			mb := float64(size) / 1e6 * float64(b.N)
			b.ReportMetric(mb/replay.Seconds(), "replay-MB/s")
			b.ReportMetric(mb/base.Seconds(), "bufio-MB/s")
			b.ReportMetric(replay.Seconds()/base.Seconds(), "replay/bufio")
			b.ReportMetric(mb/cpu.Seconds(), "replay-MB/cpu-s")
			b.ReportMetric(float64(size)/1e6, "dstl-MB")
		})
	}
}

// BenchmarkChangelogPointLookup: one key of the 200k-key change log, by its
// key group (what the planner pushes down for key = 123457): the log
// indexed once when the savepoint is opened, then one key group replayed.
func BenchmarkChangelogPointLookup(b *testing.B) {
	dir, _ := writeChangelogBench(b, 200_000, true)
	sp, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	meta := sp.States()[0]
	kg, ok := sp.KeyGroupOf(meta, int64(123457))
	if !ok {
		b.Fatal("no key group")
	}
	b.ReportAllocs()
	for b.Loop() {
		found := 0
		for r, err := range sp.Keyed(state.KeyedScan{OperatorID: clOpID, StateName: "v", KeyGroups: []int{kg}, Keys: []any{int64(123457)}}) {
			if err != nil {
				b.Fatal(err)
			}
			if r.Key == int64(123457) && r.Value == int64(123457*3+2) {
				found++
			}
		}
		if found != 1 {
			b.Fatalf("found %d", found)
		}
	}
}
