//go:build unix

package savepoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Only regular files inside the directory are opened: a FIFO as _metadata
// or a state file is refused at once (opening it would block forever), and
// a state file that is a symlink out of the directory is refused without
// reading it (an error must not tell the target's size or checksum).
func TestSpecialFilesRefused(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sp")
	mustWrite(t, vfs.Default, dir, newFixture(30, 4, 2).snapshot(2))
	keyed := filepath.Join(dir, sumID+"-0.keyed")
	orig, err := os.ReadFile(keyed)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "secret")
	if err := os.WriteFile(outside, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	within := func(what string, fn func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still blocked after 10 s", what)
			return nil
		}
	}

	// A symlink to a copy of the very same bytes: refused all the same.
	if err := os.Remove(keyed); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, keyed); err != nil {
		t.Fatal(err)
	}
	err = within("symlinked state file", func() error { _, err := Open(vfs.Default, dir); return err })
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), keyed+" is a symbolic link") || strings.Contains(err.Error(), "crc32c") {
		t.Fatalf("symlinked state file: %v", err)
	}
	_ = os.Remove(keyed)
	if err := syscall.Mkfifo(keyed, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	err = within("FIFO state file", func() error { _, err := Open(vfs.Default, dir); return err })
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("FIFO state file: %v", err)
	}
	_ = os.Remove(keyed)
	if err := os.WriteFile(keyed, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	meta := filepath.Join(dir, MetadataFile)
	mb, _ := os.ReadFile(meta)
	_ = os.Remove(meta)
	if err := syscall.Mkfifo(meta, 0o644); err != nil {
		t.Fatal(err)
	}
	err = within("FIFO _metadata", func() error { _, err := Open(vfs.Default, dir); return err })
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), meta) {
		t.Fatalf("FIFO _metadata: %v", err)
	}
	_ = os.Remove(meta)
	if err := os.WriteFile(meta, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Verify(); err != nil {
		t.Fatal(err)
	}
}
