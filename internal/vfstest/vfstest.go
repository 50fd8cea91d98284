// Package vfstest holds test helpers over pebble's vfs.FS, shared by the
// tests of the packages that write savepoints.
package vfstest

import (
	"fmt"
	"io"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Files reads every file of dir on fs, by name (a savepoint directory, to
// compare two of them byte for byte). It fails t on any error.
func Files(t testing.TB, fs vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		f, err := fs.Open(fs.PathJoin(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			t.Fatal(fmt.Errorf("%s: %w", n, err))
		}
		out[n] = b
	}
	return out
}
