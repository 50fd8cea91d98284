//go:build unix

package flink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keyedErrWithin is firstKeyedErr, failing the test when the scan has not
// returned after 20 s (a FIFO opened for reading blocks).
func keyedErrWithin(t *testing.T, sp *Savepoint, op string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- firstKeyedErr(sp, op) }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("scan blocked")
		return nil
	}
}

// TestNativeFilesAreConfined: the RocksDB files of a native savepoint are
// opened only as regular files inside the savepoint directory: an SST
// replaced by a symlink (here to a copy of itself outside) or by a FIFO is
// refused naming it, and the scan returns. Before: the symlink was
// followed and its rows read.
func TestNativeFilesAreConfined(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"symlink out", func(t *testing.T, path string) {
			outside := filepath.Join(t.TempDir(), "elsewhere.sst")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(outside, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"FIFO", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("no FIFOs: %v", err)
			}
		}, "is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copySample(t, "udf-flink1.20-rocksdb-savepoint-native")
			op, sst, path := nativeSST(t, dir)
			tc.make(t, path)
			sp, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = keyedErrWithin(t, sp, op)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), sst) || !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Errorf("scan with %s as a %s: %v", sst, tc.name, err)
			}
		})
	}
}

// TestRetainedCheckpointSharedSymlinkOut: a retained checkpoint whose
// shared/ directory is a symlink to a directory outside its root is
// refused (the files are looked up through os.Root). Before: followed.
func TestRetainedCheckpointSharedSymlinkOut(t *testing.T) {
	const op = "4b818c7923a927796d24b727201ba34d"
	chk, _ := retainedCheckpoint(t, op, "file:/data/flink/cp", func(p string) string { return p })
	shared := filepath.Join(filepath.Dir(chk), "shared")
	outside := filepath.Join(t.TempDir(), "shared-elsewhere")
	if err := os.Rename(shared, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, shared); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(chk)
	if err != nil {
		t.Fatal(err)
	}
	err = keyedErrWithin(t, sp, op)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "escapes") || !strings.Contains(err.Error(), ".sst") {
		t.Errorf("scan through a shared/ symlinked out: %v", err)
	}
}

// TestConfinedFileReopens: a file opened for each read is checked at each
// read: replaced since by a symlink out of its directory or by a FIFO, the
// read fails at once.
func TestConfinedFileReopens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "000001.sst")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &confinedFile{root: &confinedDir{path: dir}, rel: "000001.sst", size: 10, name: "000001.sst"}
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 3); err != nil || n != 4 || string(buf) != "3456" {
		t.Fatalf("read %d %q %v", n, buf, err)
	}
	outside := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(outside, []byte("abcdefghij"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(path)
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(buf, 0); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("read through a symlink out: %v (%q)", err, buf)
	}
	_ = os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := f.ReadAt(buf, 0); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "no longer a regular file") {
			t.Errorf("read of a FIFO: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("read of a FIFO blocked")
	}
}
