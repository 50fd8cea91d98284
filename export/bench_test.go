package export_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/export"
	"streamdbg/internal/cputime"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// benchSavepoint writes a savepoint of n entries of one keyed state; json
// selects JSON values of about 60 bytes ({"customer":…,"total":…,"items":[…]})
// instead of int64 ones. It returns the bytes of its keyed files.
func benchSavepoint(b *testing.B, dir string, n int, jsonValues bool) int64 {
	const maxPar, par = 128, 2
	key := func(i int) []byte { return fmt.Appendf(nil, "customer_%08d", i) }
	byGroup := make([][]int32, maxPar)
	for i := range n {
		kg := state.KeyGroupFor(key(i), maxPar)
		byGroup[kg] = append(byGroup[kg], int32(i))
	}
	vt := "int64"
	if jsonValues {
		vt = "json:fixtures.Order"
	}
	op := savepoint.OperatorSnapshot{ID: state.OperatorID("bench"), UID: "bench", Name: "bench", Parallelism: par, MaxParallelism: maxPar,
		States: []state.StateMeta{{StateName: "v", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", ValueType: vt}}}
	for i := range par {
		op.Subtasks = append(op.Subtasks, savepoint.SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(maxPar, par, i),
			Keyed: func(kg int) iter.Seq2[state.Entry, error] {
				return func(yield func(state.Entry, error) bool) {
					for _, id := range byGroup[kg] {
						v := state.Int64.Append(nil, int64(id))
						if jsonValues {
							v = fmt.Appendf(nil, `{"customer":"customer_%08d","total":%d,"items":[%d,%d]}`, id, id*7, id%13, id%17)
						}
						if !yield(state.Entry{State: "v", KeyGroup: kg, Key: key(int(id)), Value: v}, nil) {
							return
						}
					}
				}
			}})
	}
	if err := savepoint.Write(vfs.Default, dir, &savepoint.Snapshot{JobName: "bench", Created: time.Unix(0, 0), Operators: []savepoint.OperatorSnapshot{op}}); err != nil {
		b.Fatal(err)
	}
	var size int64
	files, _ := filepath.Glob(filepath.Join(dir, "*.keyed"))
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	return size
}

// BenchmarkExport exports a 1M-entry savepoint to Parquet; MB/s is of the
// savepoint's keyed files per second of wall time, MB/cpu-s per second of
// CPU time the process used (both cores counted: on a loaded machine the
// wall figure measures the load). Baseline "read": the same rows streamed
// through the catalog (Keyed, decoded as the export reads them) without
// writing.
func BenchmarkExport(b *testing.B) {
	for _, c := range []struct {
		name string
		json bool
	}{{"int64", false}, {"json", true}} {
		dir := filepath.Join(b.TempDir(), "sp")
		size := benchSavepoint(b, dir, 1_000_000, c.json)
		sp, err := savepoint.Open(vfs.Default, dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/read", func(b *testing.B) {
			b.SetBytes(size)
			cpu := cputime.Process()
			defer func() { reportCPU(b, size, cputime.Process()-cpu) }()
			for b.Loop() {
				n := 0
				for _, err := range sp.Keyed(state.KeyedScan{}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 1_000_000 {
					b.Fatalf("%d rows", n)
				}
			}
		})
		b.Run(c.name+"/export", func(b *testing.B) {
			b.SetBytes(size)
			cpu := cputime.Process()
			defer func() { reportCPU(b, size, cputime.Process()-cpu) }()
			for b.Loop() {
				out := b.TempDir()
				rep, err := export.Parquet(context.Background(), sp, out, export.Options{})
				if err != nil {
					b.Fatal(err)
				}
				var rows int64
				for _, f := range rep.Files {
					rows += f.Rows
				}
				if rows != 1_000_000 {
					b.Fatalf("%d rows", rows)
				}
			}
		})
	}
}

func reportCPU(b *testing.B, size int64, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}
