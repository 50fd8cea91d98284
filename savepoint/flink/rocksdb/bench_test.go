package rocksdb

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Synthetic stores for the benchmarks, in Flink's key layout: 2-byte
// key-group prefix (max parallelism 32768), an 8-byte key, VoidNamespace
// (one zero byte); values of valueLen bytes, half random, half repeated
// (compressible as real serialized state is).

func flinkKey(kg int, k uint64) []byte {
	b := []byte{byte(kg >> 8), byte(kg)}
	b = binary.BigEndian.AppendUint64(b, k)
	return append(b, 0)
}

type benchStore struct {
	dir   string
	files []string
	bytes int64
	keys  [][]byte // a sample of the user keys written, for lookups
}

// writeBenchStore writes files tables at L1 (disjoint key ranges) holding
// perFile entries each, plus two small L0 files of overwrites, to a new
// directory under os.TempDir (shared by the benchmarks of one run; TestMain
// removes it when the run ends).
func writeBenchStore(tb testing.TB, files, perFile, valueLen int, compression byte) *benchStore {
	tb.Helper()
	dir, err := os.MkdirTemp("", "rocksdb-bench-")
	if err != nil {
		tb.Fatal(err)
	}
	bs := &benchStore{dir: dir}
	s := &store{files: map[string][]byte{}}
	r := rand.New(rand.NewPCG(1, 2))
	val := func(seed uint64) []byte {
		v := make([]byte, valueLen)
		binary.BigEndian.PutUint64(v, seed)
		for i := 8; i < valueLen/2; i++ {
			v[i] = byte(r.Uint32())
		}
		return v
	}
	total := files * perFile
	o := tableOpts{formatVersion: 5, checksum: checksumCRC32C, compression: compression, blockSize: 4096, restart: 16, indexRestart: 1, cfName: "state"}
	flush := func(level int, es []kv) {
		s.add(level, 1, o, es, nil)
		name := TableName(s.next)
		if err := os.WriteFile(filepath.Join(dir, name), s.files[name], 0o644); err != nil {
			tb.Fatal(err)
		}
		bs.files = append(bs.files, filepath.Join(dir, name))
		bs.bytes += int64(len(s.files[name]))
		delete(s.files, name) // keep memory flat: the file is on disk
	}
	// Keys are spread over key groups in key order, so one file holds a
	// contiguous range of key groups, as compaction leaves them.
	seq := uint64(1)
	for f := range files {
		es := make([]kv, 0, perFile)
		for i := range perFile {
			n := f*perFile + i
			kg := n * 32768 / total
			k := flinkKey(kg, uint64(n))
			if n%(total/1000+1) == 0 {
				bs.keys = append(bs.keys, k)
			}
			es = append(es, kv{append(k, make([]byte, 8)...), val(uint64(n))})
			binary.LittleEndian.PutUint64(es[len(es)-1].key[len(k):], seq<<8|typeValue)
			seq++
		}
		flush(1, es)
	}
	for range 2 {
		var es []kv
		for i := 0; i < total; i += 97 {
			kg := i * 32768 / total
			es = append(es, kv{ikey(string(flinkKey(kg, uint64(i))), seq, typeValue), val(uint64(i) + 1)})
			seq++
		}
		flush(0, es)
	}
	src := s.finish(map[uint32]string{0: "default", 1: "state"})
	for _, name := range []string{"CURRENT", "MANIFEST-000007"} {
		if err := os.WriteFile(filepath.Join(dir, name), src[name], 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return bs
}

var (
	scanStores   = map[byte]*benchStore{}
	scanStoresMu sync.Mutex
)

func scanStore(b *testing.B, compression byte) *benchStore {
	scanStoresMu.Lock()
	defer scanStoresMu.Unlock()
	if s, ok := scanStores[compression]; ok {
		return s
	}
	// About 100 MB of tables: 8 files of 100k entries of ~120 bytes.
	s := writeBenchStore(b, 8, 100_000, 120, compression)
	scanStores[compression] = s
	return s
}

// plainRead is the baseline: it reads every table file of the store
// through the same Source and File as the scan (DirSource.Open, then
// File.ReadAt, which opens the file for each read) in windows of
// readaheadMax bytes — the scan's largest read-ahead window — into two
// alternating buffers of that size, as the scan's read-ahead does, and
// touches one byte per cache line of what it read (the scan reads every
// byte: a read into a buffer nobody looks at would be cheaper than any
// use of the data). It does not verify, decompress or decode anything.
func plainRead(b *testing.B, s *benchStore, bufs *[2][]byte) int64 {
	var n int64
	src := DirSource(s.dir)
	var sink byte
	for i, p := range s.files {
		f, err := src.Open(filepath.Base(p))
		if err != nil {
			b.Fatal(err)
		}
		buf := bufs[i&1]
		for off := int64(0); off < f.Size(); {
			w := buf[:min(int64(len(buf)), f.Size()-off)]
			m, err := f.ReadAt(w, off)
			if err != nil && !(err == io.EOF && m == len(w)) {
				b.Fatal(err)
			}
			for j := 0; j < m; j += 64 {
				sink ^= w[j]
			}
			n += int64(m)
			off += int64(m)
			buf = bufs[(i+int(off/int64(len(buf))))&1]
		}
	}
	plainSink = sink
	return n
}

var plainSink byte

// BenchmarkRocksDBScan scans a synthetic ~100 MB set of SST files (8 L1
// tables, 2 L0 tables of overwrites) through the LSM iterator: open, merge,
// checksum every block, decompress, decode every entry and resolve every
// key; against reading the same files plainly, interleaved in each
// iteration. Reported: both rates over the files' bytes (wall time) and
// their ratio; and, where the process's CPU time can be read, the CPU time
// of the process (all threads: the scan's loaders, the collector) during
// each side and their ratio (cpu-plain/scan), which a loaded machine moves
// less than wall time.
func BenchmarkRocksDBScan(b *testing.B) {
	for _, c := range []struct {
		name string
		t    byte
	}{{"none", compressionNone}, {"snappy", compressionSnappy}} {
		b.Run(c.name, func(b *testing.B) {
			s := scanStore(b, c.t)
			bufs := [2][]byte{make([]byte, readaheadMax), make([]byte, readaheadMax)}
			plainRead(b, s, &bufs) // warm the page cache
			var plain, scan, plainCPU, scanCPU time.Duration
			var entries int
			cpuOK := false
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				c0, _ := processCPU()
				if n := plainRead(b, s, &bufs); n != s.bytes {
					b.Fatalf("read %d of %d bytes", n, s.bytes)
				}
				t1 := time.Now()
				c1, _ := processCPU()
				db, err := Open(DirSource(s.dir), Options{})
				if err != nil {
					b.Fatal(err)
				}
				it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{})
				if err != nil {
					b.Fatal(err)
				}
				entries = 0
				sum := 0
				for ok := it.First(); ok; ok = it.Next() {
					sum += len(it.Key()) + len(it.Value())
					entries++
				}
				if it.Err() != nil || entries != 800_000 || sum == 0 {
					b.Fatalf("%d entries, %v", entries, it.Err())
				}
				scan += time.Since(t1)
				plain += t1.Sub(t0)
				c2, ok := processCPU()
				scanCPU += c2 - c1
				plainCPU += c1 - c0
				cpuOK = ok
			}
			mb := float64(s.bytes) * float64(b.N) / 1e6
			b.ReportMetric(mb/scan.Seconds(), "scan-MB/s")
			b.ReportMetric(mb/plain.Seconds(), "plain-MB/s")
			b.ReportMetric(plain.Seconds()/scan.Seconds(), "scan/plain")
			if cpuOK && scanCPU > 0 {
				b.ReportMetric(float64(scanCPU.Microseconds())/1e3/float64(b.N), "scan-cpu-ms/op")
				b.ReportMetric(float64(plainCPU.Microseconds())/1e3/float64(b.N), "plain-cpu-ms/op")
				b.ReportMetric(plainCPU.Seconds()/scanCPU.Seconds(), "cpu-plain/scan")
			}
			b.ReportMetric(float64(s.bytes)/1e6, "MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// countingSource counts the bytes read from its files.
type countingSource struct {
	DirSource
	n atomic.Int64
}

type countingFile struct {
	File
	n *atomic.Int64
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	m, err := f.File.ReadAt(p, off)
	f.n.Add(int64(m))
	return m, err
}

func (c *countingSource) Open(name string) (File, error) {
	f, err := c.DirSource.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, &c.n}, nil
}

var (
	lookupStore     *benchStore
	lookupStoreOnce sync.Once
)

// BenchmarkRocksDBPointLookup looks one key up in a 10M-entry store (10
// L1 tables of 1M entries, two L0 tables of overwrites): open the store,
// seek the key's prefix, read its value, counting every byte read from the
// files (bytes-read/op: what a cold lookup costs; it must stay under 1 MB).
func BenchmarkRocksDBPointLookup(b *testing.B) {
	lookupStoreOnce.Do(func() { lookupStore = writeBenchStore(b, 10, 1_000_000, 16, compressionSnappy) })
	s := lookupStore
	var read int64
	b.ResetTimer()
	for i := range b.N {
		src := &countingSource{DirSource: DirSource(s.dir)}
		db, err := Open(src, Options{})
		if err != nil {
			b.Fatal(err)
		}
		key := s.keys[(i*7919)%len(s.keys)]
		it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{Lower: key, Upper: append(append([]byte(nil), key...), 0xff)})
		if err != nil {
			b.Fatal(err)
		}
		if !it.First() || string(it.Key()) != string(key) {
			b.Fatalf("key %x not found (%v)", key, it.Err())
		}
		if n := src.n.Load(); n >= 1<<20 {
			b.Fatalf("lookup read %d bytes", n)
		}
		read += src.n.Load()
	}
	b.ReportMetric(float64(read)/float64(b.N), "bytes-read/op")
	b.ReportMetric(float64(s.bytes)/1e6, "store-MB")
}

func TestBenchStoreSmall(t *testing.T) {
	// The benchmark stores' builder and lookups, small enough for go test.
	s := writeBenchStore(t, 3, 2000, 16, compressionSnappy)
	defer os.RemoveAll(s.dir)
	src := &countingSource{DirSource: DirSource(s.dir)}
	db, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cf := db.ColumnFamily("state")
	n := 0
	it, _ := db.NewIter(cf, IterOptions{})
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if it.Err() != nil || n != 6000 {
		t.Fatalf("%d entries, %v", n, it.Err())
	}
	for _, k := range s.keys {
		src.n.Store(0)
		db, _ := Open(src, Options{})
		it, _ := db.NewIter(db.ColumnFamily("state"), IterOptions{Lower: k, Upper: append(append([]byte(nil), k...), 0xff)})
		if !it.First() || string(it.Key()) != string(k) || it.Next() {
			t.Fatalf("lookup of %x", k)
		}
		// Footers, properties and indexes of the tables holding the key,
		// and one data block each: far below the store's size.
		if got := src.n.Load(); got > s.bytes/3 {
			t.Errorf("lookup read %d of %d bytes", got, s.bytes)
		}
	}
	_ = fmt.Sprint
}

// BenchmarkRocksDBScanMem scans the store of BenchmarkRocksDBScan/none from
// memory (a MapSource holding the files): the CPU cost of the scan alone,
// per entry, without file reads.
func BenchmarkRocksDBScanMem(b *testing.B) {
	s := scanStore(b, compressionNone)
	src := MapSource{}
	for _, name := range []string{"CURRENT", "MANIFEST-000007"} {
		d, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			b.Fatal(err)
		}
		src[name] = d
	}
	for _, p := range s.files {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		src[filepath.Base(p)] = d
	}
	b.ResetTimer()
	entries := 0
	for range b.N {
		db, err := Open(src, Options{})
		if err != nil {
			b.Fatal(err)
		}
		it, err := db.NewIter(db.ColumnFamily("state"), IterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n, sum := 0, 0
		for ok := it.First(); ok; ok = it.Next() {
			sum += len(it.Key()) + len(it.Value())
			n++
		}
		if it.Err() != nil || n != 800_000 || sum == 0 {
			b.Fatalf("%d entries, %v", n, it.Err())
		}
		entries += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(entries), "ns/entry")
	b.ReportMetric(float64(s.bytes)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
}
