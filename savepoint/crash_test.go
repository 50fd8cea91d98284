package savepoint

import (
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

var errInjected = errors.New("injected failure")

// crashFS counts every mutating step (create, write, sync, close, mkdir,
// rename, remove, directory open) and, at step failAt, takes crash clones
// of the file system as it is before the step and fails it: what a process
// killed at that moment leaves on disk.
type crashFS struct {
	vfs.FS
	mem *vfs.MemFS
	// mu orders the steps of writers in parallel (a savepoint's subtasks).
	mu     sync.Mutex
	n      int
	failAt int
	clones []*vfs.MemFS
}

func (c *crashFS) step() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n != c.failAt {
		return nil
	}
	c.clones = append(c.clones, c.mem.CrashClone(vfs.CrashCloneCfg{}))
	for seed := range uint64(4) {
		c.clones = append(c.clones, c.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(seed, 0))}))
	}
	return errInjected
}

type crashFile struct {
	vfs.File
	fs *crashFS
}

func (c *crashFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	f, err := c.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return &crashFile{f, c}, nil
}

func (c *crashFS) OpenDir(name string) (vfs.File, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	f, err := c.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &crashFile{f, c}, nil
}

func (c *crashFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.MkdirAll(dir, perm)
}

func (c *crashFS) Rename(a, b string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.Rename(a, b)
}

func (c *crashFS) RemoveAll(name string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.RemoveAll(name)
}

func (f *crashFile) Write(p []byte) (int, error) {
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *crashFile) Sync() error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *crashFile) Close() error {
	if err := f.fs.step(); err != nil {
		_ = f.File.Close()
		return err
	}
	return f.File.Close()
}

// CrashEveryStep runs write once per mutating file system step, failing it
// at that step, on a fresh crashable file system holding /sps: the target
// then never opens as a savepoint, in the file system the failed write
// leaves nor in any crash image of it, except a complete one that verify
// accepts. Once write succeeds, its savepoint must survive a crash. prepare
// puts what write reads (a source savepoint) on the file system first. It
// returns the number of steps of a successful write.
func CrashEveryStep(t *testing.T, target string, prepare func(vfs.FS), write func(vfs.FS) error, verify func(*Savepoint)) int {
	t.Helper()
	for failAt := 1; ; failAt++ {
		mem := vfs.NewCrashableMem()
		if err := mem.MkdirAll("/sps", 0o755); err != nil {
			t.Fatal(err)
		}
		if prepare != nil {
			prepare(mem)
		}
		for _, d := range []string{"/", "/sps"} {
			if err := syncDir(mem, d); err != nil {
				t.Fatal(err)
			}
		}
		fs := &crashFS{FS: mem, mem: mem, failAt: failAt}
		err := write(fs)
		if err == nil {
			if len(fs.clones) != 0 {
				t.Fatalf("step %d failed but the write succeeded", failAt)
			}
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			sp, err := Open(crashed, target)
			if err != nil {
				t.Fatalf("complete savepoint lost in a crash: %v", err)
			}
			verify(sp)
			return failAt - 1
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("step %d: %v", failAt, err)
		}
		if _, err := Open(mem, target); err == nil {
			t.Fatalf("step %d: failed write left a savepoint that opens", failAt)
		}
		for i, c := range fs.clones {
			sp, err := Open(c, target)
			if err != nil {
				continue
			}
			// Only a renamed, complete directory may open; then all of it reads.
			if err := readEverything(sp); err != nil {
				t.Fatalf("step %d crash image %d: opens but reads: %v", failAt, i, err)
			}
			verify(sp)
		}
	}
}

// TestCrashAtomicity kills the write at every step: the target then never
// opens as a savepoint, in the file system the failed write leaves nor in
// any crash image of it. Once Write returns, the savepoint survives a crash.
func TestCrashAtomicity(t *testing.T) {
	f := newFixture(3000, 8, 9)
	want := f.all
	const dir = "/sps/sp"
	steps := CrashEveryStep(t, dir, nil, func(fs vfs.FS) error { return Write(fs, dir, f.snapshot(2)) }, func(sp *Savepoint) {
		sameEntries(t, readAll(t, sp, sumID, state.KeyGroupRange{Start: 0, End: 7}), want)
	})
	if steps < 10 {
		t.Fatalf("only %d steps", steps)
	}
	t.Logf("crashed at each of %d steps", steps)
}
