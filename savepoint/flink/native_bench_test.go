package flink

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"streamdbg/internal/cputime"
	"streamdbg/savepoint/flink/rocksdb/rocksdbtest"
	"streamdbg/state"
)

// BenchmarkNativeScan scans synthetic RocksDB native savepoints (what a
// RocksDB job's native savepoint or checkpoint holds) of 3M keys with a
// ValueState "count" of k -> 2k, Long keys (long) or String keys
// "key_NNNNNNN" (strings), or, as a Flink SQL group aggregate keeps them,
// RowData keys (k) and accumulators (k, 2k, 3k, "accN") (rowdata), all in
// one uncompressed L1 table, max parallelism 256. Each iteration does both
// sides, taking turns at which goes first: scan = Open and a Keyed scan of
// every entry (the SST read, every block checked, every key and value
// decoded and handed over as a row); plain = the same SST file's bytes
// read with os.ReadFile, not looked at. Reported: the scan's MB/s of SST bytes (scan-MB/s, wall), its MB per
// second of the process's CPU time (scan-MB/cpu-s), the plain read's MB/s
// and rows/op.
func BenchmarkNativeScan(b *testing.B) {
	const keys = 3_000_000
	for _, v := range []struct {
		name             string
		stringKeys, rows bool
	}{{"long", false, false}, {"strings", true, false}, {"rowdata", false, true}} {
		b.Run(v.name, func(b *testing.B) {
			var dir, sst string
			var size int64
			if v.rows {
				dir, sst, size = writeNativeAgg(b, keys)
			} else {
				dir, sst, size = writeNativeCounts(b, keys, v.stringKeys, nil)
			}
			scan := func() {
				if n := scanAll(b, dir); n != keys {
					b.Fatalf("%d rows, want %d", n, keys)
				}
			}
			plain := func() {
				data, err := os.ReadFile(sst)
				if err != nil || int64(len(data)) != size {
					b.Fatal(len(data), err)
				}
			}
			var scanT, plainT, cpu time.Duration
			for i := 0; b.Loop(); i++ {
				for k := range 2 {
					if (i+k)%2 == 0 {
						c0, t0 := cputime.Process(), time.Now()
						scan()
						scanT += time.Since(t0)
						cpu += cputime.Process() - c0
					} else {
						t0 := time.Now()
						plain()
						plainT += time.Since(t0)
					}
				}
			}
			mb := float64(size) * float64(b.N) / 1e6
			b.ReportMetric(mb/scanT.Seconds(), "scan-MB/s")
			b.ReportMetric(mb/cpu.Seconds(), "scan-MB/cpu-s")
			b.ReportMetric(mb/plainT.Seconds(), "plain-MB/s")
			b.ReportMetric(keys, "rows/op")
		})
	}
}

// writeNativeCounts writes a RocksDB native savepoint of one ValueState
// "count" holding k -> 2k for k in [0, keys), keyed by the Long k or the
// String synthStringKey(k), max parallelism 256, in one L1 table, with
// extra entries (full RocksDB keys) besides; it returns the directory and
// the SST file's path and size.
func writeNativeCounts(tb testing.TB, keys int, stringKeys bool, extra []rocksdbtest.Entry) (dir, sst string, size int64) {
	tb.Helper()
	const maxPar = 256
	db := rocksdbtest.New()
	es := make([]rocksdbtest.Entry, 0, keys+len(extra))
	for k := range int64(keys) {
		var key []byte
		if stringKeys {
			key = stringCKey(synthStringKey(k), maxPar)
		} else {
			key = ckey(longKG(k, maxPar), k)
		}
		es = append(es, rocksdbtest.Entry{Key: key, Seq: uint64(k + 1), Type: rocksdbtest.Put, Value: be64(2 * k)})
	}
	for i, e := range extra {
		e.Seq = uint64(keys + 1 + i)
		es = append(es, e)
	}
	db.Table("count", 1, es, nil)
	var meta enc
	meta.i32(6)
	meta.u8(0)
	if stringKeys {
		meta.snapshot(stringSnapshot)
	} else {
		meta.snapshot(longSnapshot)
	}
	meta.u16(1)
	meta.stateMeta("count", backendKeyValue, "VALUE", func() { meta.snapshot(longSnapshot) })
	return writeNativeTable(tb, db, meta.Bytes(), maxPar)
}

// stringCKey is the RocksDB key of the String str in the VoidNamespace:
// the key group, StringValue's bytes of str (ASCII), the namespace byte.
func stringCKey(str string, maxPar int) []byte {
	kg := state.KeyGroupForHash(stringHashCode(str), maxPar)
	key := append([]byte{byte(kg >> 8), byte(kg)}, flinkStr(str)...)
	return append(key, 0)
}

// writeNativeAgg writes a RocksDB native savepoint of a Flink SQL group
// aggregate's ValueState "accState" of keys RowData keys: (k) -> (k, 2k,
// 3k, "acc" k%10), as synthAggFile's canonical one holds, max parallelism
// 256, in one L1 table.
func writeNativeAgg(tb testing.TB, keys int) (dir, sst string, size int64) {
	tb.Helper()
	const maxPar = 256
	db := rocksdbtest.New()
	es := make([]rocksdbtest.Entry, 0, keys)
	for k := range int64(keys) {
		row := binaryRow(k)
		kg := state.KeyGroupForHash(rowHashCode(row), maxPar)
		var key, value enc
		key.u16(uint16(kg))
		key.i32(int32(len(row)))
		key.Write(row)
		key.u8(0) // VoidNamespace
		acc := binaryRow(k, 2*k, 3*k, "acc"+string(rune('0'+k%10)))
		value.i32(int32(len(acc)))
		value.Write(acc)
		es = append(es, rocksdbtest.Entry{Key: key.Bytes(), Seq: uint64(k + 1), Type: rocksdbtest.Put, Value: value.Bytes()})
	}
	db.Table("accState", 1, es, nil)
	var meta enc
	meta.i32(6)
	meta.u8(0)
	rowDataSnapshot(&meta, "B")
	meta.u16(1)
	meta.stateMeta("accState", backendKeyValue, "VALUE", func() { rowDataSnapshot(&meta, "BBBS") })
	return writeNativeTable(tb, db, meta.Bytes(), maxPar)
}

// writeNativeTable is writeNative of a savepoint whose subtask owns every
// key group and whose db has one SST, and returns that SST's path and size.
func writeNativeTable(tb testing.TB, db *rocksdbtest.DB, meta []byte, maxPar int) (dir, sst string, size int64) {
	tb.Helper()
	dir = writeNative(tb, db, meta, maxPar, maxPar)
	for name, data := range db.Files() {
		if filepath.Ext(name) == ".sst" {
			sst, size = filepath.Join(dir, "f-"+name), int64(len(data))
		}
	}
	return dir, sst, size
}
