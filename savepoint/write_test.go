package savepoint

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// pauseFS blocks the first Create of a state file until resume is closed,
// after telling reached: a writer caught in the middle of its write.
type pauseFS struct {
	vfs.FS
	once    sync.Once
	reached chan struct{}
	resume  chan struct{}
}

func newPauseFS(fs vfs.FS) *pauseFS {
	return &pauseFS{FS: fs, reached: make(chan struct{}), resume: make(chan struct{})}
}

func (p *pauseFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if strings.HasSuffix(name, ".keyed") {
		p.once.Do(func() {
			close(p.reached)
			<-p.resume
		})
	}
	return p.FS.Create(name, cat)
}

// fileSystems are the two file systems Write runs on: pebble's MemFS (no
// atomic no-replace rename: the lock and a check) and the OS's (fcntl
// locks, renameat2).
func fileSystems(t *testing.T) map[string]func() (vfs.FS, string) {
	return map[string]func() (vfs.FS, string){
		"mem": func() (vfs.FS, string) { return vfs.NewMem(), "/sps" },
		"os":  func() (vfs.FS, string) { return vfs.Default, t.TempDir() },
	}
}

// A second writer of the same target fails at once, without touching the
// first writer's files; the first then completes a savepoint that reads
// back whole. (Before: the second writer removed the shared temporary
// directory of the first and one of them reported success over a
// savepoint that failed its checksums.)
func TestConcurrentWritersOfOneTarget(t *testing.T) {
	for name, mk := range fileSystems(t) {
		t.Run(name, func(t *testing.T) {
			base, root := mk()
			dir := base.PathJoin(root, "sp")
			f := newFixture(300, 8, 3)
			pfs := newPauseFS(base)
			first := make(chan error, 1)
			go func() { first <- Write(pfs, dir, f.snapshot(2)) }()
			<-pfs.reached
			err := Write(base, dir, newFixture(10, 8, 4).snapshot(1))
			if err == nil || !strings.Contains(err.Error(), "another savepoint write to "+dir+" is in progress") {
				close(pfs.resume)
				<-first
				t.Fatalf("second writer: %v, want: another savepoint write is in progress", err)
			}
			close(pfs.resume)
			if err := <-first; err != nil {
				t.Fatalf("first writer: %v", err)
			}
			sp, err := Open(base, dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := sp.Verify(); err != nil {
				t.Fatal(err)
			}
			sameEntries(t, readAll(t, sp, sumID, state.KeyGroupRange{Start: 0, End: 7}), f.all)
			// After both, only the savepoint is left: no lock, no temporary.
			names, _ := base.List(root)
			if len(names) != 1 || names[0] != "sp" {
				t.Fatalf("left in %s: %v", root, names)
			}
		})
	}
}

// A directory that appears at the target while the write runs (made by
// someone else) is never replaced: Write fails with ErrExists, the other
// directory keeps its files, and Write's temporary directory is gone.
func TestTargetAppearingDuringWriteIsKept(t *testing.T) {
	for name, mk := range fileSystems(t) {
		t.Run(name, func(t *testing.T) {
			base, root := mk()
			dir := base.PathJoin(root, "sp")
			pfs := newPauseFS(base)
			done := make(chan error, 1)
			go func() { done <- Write(pfs, dir, newFixture(50, 8, 3).snapshot(2)) }()
			<-pfs.reached
			if err := base.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeMem(t, base, base.PathJoin(dir, "mine"), []byte("user data"))
			close(pfs.resume)
			if err := <-done; !errors.Is(err, ErrExists) {
				t.Fatalf("Write: %v, want ErrExists", err)
			}
			names, _ := base.List(dir)
			if len(names) != 1 || names[0] != "mine" {
				t.Fatalf("target now holds %v, want only the user's file", names)
			}
			names, _ = base.List(root)
			if len(names) != 1 {
				t.Fatalf("left in %s: %v", root, names)
			}
		})
	}
}

// A sibling .NAME.inprogress (the temporary name of earlier versions, or
// anything of the user's) is never removed nor written into. (Before: Write
// removed it silently.)
func TestWriteKeepsSiblingInprogress(t *testing.T) {
	for name, mk := range fileSystems(t) {
		t.Run(name, func(t *testing.T) {
			fs, root := mk()
			dir := fs.PathJoin(root, "sp")
			sib := fs.PathJoin(root, ".sp.inprogress")
			if err := fs.MkdirAll(sib, 0o755); err != nil {
				t.Fatal(err)
			}
			writeMem(t, fs, fs.PathJoin(sib, "notes.txt"), []byte("mine"))
			mustWrite(t, fs, dir, newFixture(20, 4, 1).snapshot(1))
			names, err := fs.List(sib)
			if err != nil || len(names) != 1 || names[0] != "notes.txt" {
				t.Fatalf("%s now holds %v (%v)", sib, names, err)
			}
		})
	}
}

// roFS is a read-only file system: every change fails with EROFS, as
// Linux's calls do on a read-only mount (unlinking an absent name too).
type roFS struct{ vfs.FS }

func (roFS) Create(string, vfs.DiskWriteCategory) (vfs.File, error) { return nil, roErr() }
func (r roFS) MkdirAll(dir string, _ os.FileMode) error {
	if fi, err := r.Stat(dir); err == nil && fi.IsDir() {
		return nil // as os.MkdirAll: nothing to change
	}
	return roErr()
}
func (roFS) Remove(string) error            { return roErr() }
func (roFS) RemoveAll(string) error         { return roErr() }
func (roFS) Rename(string, string) error    { return roErr() }
func (roFS) Lock(string) (io.Closer, error) { return nil, roErr() }
func roErr() error                          { return &os.PathError{Op: "open", Path: "x", Err: syscall.EROFS} }

// A failed write in a read-only directory says what it could not do and
// where, not "remove stale" (nothing was stale), and leaves nothing.
func TestWriteReadOnlyParent(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/ro", 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(roFS{mem}, "/ro/sp", newFixture(5, 4, 1).snapshot(1))
	if !errors.Is(err, syscall.EROFS) || strings.Contains(err.Error(), "stale") || !strings.Contains(err.Error(), "cannot write in /ro") {
		t.Fatalf("Write in a read-only directory: %v", err)
	}
	if names, _ := mem.List("/ro"); len(names) != 0 {
		t.Fatalf("left %v", names)
	}
}
