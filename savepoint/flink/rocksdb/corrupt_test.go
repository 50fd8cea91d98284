package rocksdb

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// smallStore builds a one-table store whose table has several data blocks,
// a partitioned index and a range deletion.
func smallStore(t *testing.T, o tableOpts) (MapSource, *FileMeta) {
	t.Helper()
	var es []kv
	for i := range 200 {
		es = append(es, kv{ikey(fmt.Sprintf("k%04d", i), uint64(i+10), typeValue), []byte(fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%13)))})
	}
	s := &store{files: map[string][]byte{}}
	s.add(1, 0, o, es, []Tombstone{{Start: []byte("k0100"), End: []byte("k0110"), Seq: 500}})
	src := s.finish(map[uint32]string{0: "default"})
	db, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return src, db.Version().ColumnFamilies[0].Levels[1][0]
}

func readAll(src Source) error {
	db, err := Open(src, Options{})
	if err != nil {
		return err
	}
	for _, cf := range db.Version().ColumnFamilies {
		it, err := db.NewIter(cf, IterOptions{})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
		}
		if it.Err() != nil {
			return it.Err()
		}
	}
	return nil
}

// TestCorruptTables flips bits in data blocks, index blocks and the footer,
// and truncates the table: every read fails with an error that names the
// file and an offset and is marked corrupt; nothing panics.
func TestCorruptTables(t *testing.T) {
	for _, o := range []tableOpts{
		{formatVersion: 5, checksum: checksumCRC32C, compression: compressionSnappy, blockSize: 256, partitioned: true, partitionSize: 3},
		{formatVersion: 6, checksum: checksumXXH3, compression: compressionNone, blockSize: 256},
		{formatVersion: 2, checksum: checksumXXHash64, compression: compressionLZ4, blockSize: 200},
	} {
		src, fm := smallStore(t, o)
		name := TableName(fm.Number)
		orig := src[name]
		tb, err := OpenTable(&BytesFile{name, orig}, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Regions: a data block, the (top-level) index block, the footer.
		var it blockIter
		it.index, it.deltaValue = true, tb.deltaValues
		it.init(tb.index)
		it.first()
		regions := map[string][2]int{
			"data":   {int(it.handle.offset), int(it.handle.offset + it.handle.size)},
			"index":  {int(tb.indexHandle.offset), int(tb.indexHandle.offset + tb.indexHandle.size)},
			"footer": {len(orig) - footerLen, len(orig)},
		}
		// Bytes between the handles and the format version are padding that
		// RocksDB does not check before format 6.
		padStart := len(orig)
		if o.formatVersion < 6 {
			f := orig[len(orig)-footerLen:]
			_, n1 := decodeHandle(f[1:])
			_, n2 := decodeHandle(f[1+n1:])
			padStart = len(orig) - footerLen + 1 + n1 + n2
		}
		if tb.partitioned {
			regions["data"] = [2]int{0, 40} // the first data block starts the file
		}
		for what, r := range regions {
			for pos := r[0]; pos < r[1]; pos += max(1, (r[1]-r[0])/7) {
				for _, bit := range []byte{0x01, 0x80} {
					b := append([]byte(nil), orig...)
					b[pos] ^= bit
					cp := MapSource{}
					for k, v := range src {
						cp[k] = v
					}
					cp[name] = b
					err := readAll(cp)
					if err == nil {
						if what == "footer" && o.formatVersion < 6 {
							// Before format 6 the footer has no checksum: a
							// flip that leaves its handles as they were (in
							// the padding, or a varint spelled longer) or
							// turns the checksum type to none reads fine.
							f1, err1 := readFooter(name, int64(len(b)), b[len(b)-footerLen:])
							f0, _ := readFooter(name, int64(len(orig)), orig[len(orig)-footerLen:])
							if err1 == nil && f1.metaindex == f0.metaindex && f1.index == f0.index && (f1.checksum == f0.checksum || f1.checksum == checksumNone) {
								continue
							}
						}
						t.Errorf("fv%d: bit %#x flipped at %d (%s, footer byte %d, padding from %d) read without error", o.formatVersion, bit, pos, what, pos-(len(orig)-footerLen), padStart-(len(orig)-footerLen))
						continue
					}
					checkNamed(t, err, name)
				}
			}
		}
		for _, n := range []int{0, 10, len(orig) / 2, len(orig) - 1} {
			cp := MapSource{}
			for k, v := range src {
				cp[k] = v
			}
			cp[name] = orig[:n]
			err := readAll(cp)
			if err == nil {
				t.Errorf("table truncated to %d bytes read without error", n)
				continue
			}
			checkNamed(t, err, name)
		}
		// The table alone, truncated (no MANIFEST to compare sizes with).
		for _, n := range []int{0, 30, len(orig) - 20} {
			if _, err := OpenTable(&BytesFile{name, orig[:n]}, 0); err == nil {
				t.Errorf("OpenTable of %d of %d bytes succeeded", n, len(orig))
			} else {
				checkNamed(t, err, name)
			}
		}
	}
}

func checkNamed(t *testing.T, err error, file string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("error %v is not a *rocksdb.Error", err)
		return
	}
	if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "at offset") {
		t.Errorf("error %q does not name %s and an offset", err, file)
	}
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
		t.Errorf("error %q is neither corrupt nor unsupported", err)
	}
}

// TestManifestNamesMissingFile: a live file the MANIFEST names but the
// source lacks is an error naming the file and the MANIFEST offset.
func TestManifestNamesMissingFile(t *testing.T) {
	src, fm := smallStore(t, tableOpts{formatVersion: 5, checksum: checksumCRC32C})
	delete(src, TableName(fm.Number))
	_, err := Open(src, Options{})
	if err == nil {
		t.Fatal("opened a store whose table is missing")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), TableName(fm.Number)) || !strings.Contains(err.Error(), "MANIFEST-000007 at offset") {
		t.Errorf("error %q", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Offset != fm.EditOffset || e.Offset <= 0 {
		t.Errorf("error %v: offset is not the edit's (%d)", err, fm.EditOffset)
	}
}

// TestCorruptManifest flips bits and truncates the MANIFEST.
func TestCorruptManifest(t *testing.T) {
	src, _ := smallStore(t, tableOpts{formatVersion: 5, checksum: checksumCRC32C})
	orig := src["MANIFEST-000007"]
	for pos := range orig {
		b := append([]byte(nil), orig...)
		b[pos] ^= 0x10
		if _, err := ReadManifest("MANIFEST-000007", b); err == nil {
			t.Errorf("bit flipped at %d: MANIFEST read without error", pos)
		} else if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "MANIFEST-000007 at offset") {
			t.Errorf("bit flipped at %d: %v", pos, err)
		}
	}
	// A log cut exactly between two records is a shorter valid log: the
	// Flink reader checks the MANIFEST against the files the checkpoint
	// lists for that. Every other cut is an error.
	recs, err := readLog("MANIFEST-000007", orig)
	if err != nil {
		t.Fatal(err)
	}
	boundary := map[int]bool{}
	for _, r := range recs {
		boundary[int(r.off)] = true
	}
	for n := 1; n < len(orig); n++ {
		if boundary[n] {
			continue
		}
		if _, err := ReadManifest("MANIFEST-000007", orig[:n]); err == nil {
			t.Errorf("MANIFEST truncated to %d of %d bytes read without error", n, len(orig))
		}
	}
}

// TestOpenMissingFilesAreCorrupt: an instance without CURRENT, without
// the MANIFEST CURRENT names, or without a live table is corrupt (and the
// file system's not-exist stays visible), naming the file.
func TestOpenMissingFilesAreCorrupt(t *testing.T) {
	for _, drop := range []string{"CURRENT", "MANIFEST-000007", ""} {
		src, fm := smallStore(t, tableOpts{formatVersion: 5, checksum: checksumCRC32C})
		name := drop
		if name == "" {
			name = TableName(fm.Number)
		}
		delete(src, name)
		_, err := Open(src, Options{})
		var e *Error
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &e) || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: %v, want a *rocksdb.Error naming it, ErrCorrupt and not-exist", name, err)
		}
	}
}
