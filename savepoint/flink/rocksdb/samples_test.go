package rocksdb

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const samplesDir = "../../../../shared/flink-savepoints"

// sampleTables lists the SST files of the shared Flink samples (found by
// their footer magic: Flink names them by UUID).
func sampleTables(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(samplesDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) < footerLen || le64(b[len(b)-8:]) != magicBlockBased {
			return nil
		}
		out = append(out, p)
		return nil
	})
	if len(out) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no sample SST files under " + samplesDir)
		}
		t.Skip("samples absent")
	}
	return out
}

func TestSampleTablesOpenAndScan(t *testing.T) {
	versions := map[uint32]int{}
	checksums := map[byte]int{}
	for _, p := range sampleTables(t) {
		f, err := OpenFile(p, filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		tb, err := OpenTable(f, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		versions[tb.FormatVersion()]++
		checksums[tb.footer.checksum]++
		it := newTableIter(tb, nil, nil, new(prefetch))
		n := 0
		var prev []byte
		for ok := it.first(); ok; ok = it.next() {
			k := it.key()
			if prev != nil && compareInternal(prev, k) >= 0 {
				t.Fatalf("%s: keys out of order: %x then %x", p, prev, k)
			}
			prev = bytes.Clone(k)
			n++
		}
		if it.error() != nil {
			t.Fatalf("%s: %v", p, it.error())
		}
		if uint64(n) != tb.Props.NumEntries-tb.Props.NumRangeDeletions {
			t.Errorf("%s: %d entries, properties say %d", p, n, tb.Props.NumEntries)
		}
		if tb.Props.ColumnFamily == "" {
			t.Errorf("%s: no column family name", p)
		}
	}
	t.Logf("format versions %v, checksum types %v", versions, checksums)
	if versions[5] == 0 {
		t.Errorf("no format_version 5 table among the samples: %v", versions)
	}
}
