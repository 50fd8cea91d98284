package flink

import (
	"os"
	"path/filepath"
	"testing"

	"streamdbg/savepoint/flink/rocksdb"
)

// BenchmarkConfinedRead: one read of a RocksDB file of a checkpoint, each
// read opening the file anew (as the scan's read-ahead windows do), in
// shared/ under the checkpoint's parent. confined: through os.Root and the
// regular-file check (confinedFile, what native.go uses); baseline: by path
// with os.Open (rocksdb.OpenFile, what it used before). Both read the same
// 256 KiB window of the same 4 MiB file.
func BenchmarkConfinedRead(b *testing.B) {
	parent := b.TempDir()
	if err := os.MkdirAll(filepath.Join(parent, "shared"), 0o755); err != nil {
		b.Fatal(err)
	}
	rel := filepath.Join("shared", "000042.sst")
	if err := os.WriteFile(filepath.Join(parent, rel), make([]byte, 4<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	run := func(b *testing.B, f rocksdb.File) {
		b.SetBytes(int64(len(buf)))
		for i := 0; b.Loop(); i++ {
			if _, err := f.ReadAt(buf, int64(i%16)*int64(len(buf))); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("confined", func(b *testing.B) {
		run(b, newConfinedFile(&confinedDir{path: parent}, rel, 4<<20, "000042.sst"))
	})
	b.Run("baseline-path", func(b *testing.B) {
		f, err := rocksdb.OpenFile(filepath.Join(parent, rel), "000042.sst")
		if err != nil {
			b.Fatal(err)
		}
		run(b, f)
	})
}
