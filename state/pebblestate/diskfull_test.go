package pebblestate

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// fullFS is a file system that holds budget bytes: writes beyond fail with
// ENOSPC, as a full disk's do.
type fullFS struct {
	vfs.FS
	left atomic.Int64
}

type fullFile struct {
	vfs.File
	fs *fullFS
}

func (f *fullFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return &fullFile{file, f}, nil
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.fs.left.Add(-int64(len(p))) < 0 {
		return 0, &pathErr{syscall.ENOSPC}
	}
	return f.File.Write(p)
}

type pathErr struct{ err error }

func (e *pathErr) Error() string { return "write: " + e.err.Error() }
func (e *pathErr) Unwrap() error { return e.err }

// A full disk is an error naming the directory, promptly: the writes that
// follow the first failed flush fail instead of waiting forever in
// pebble's write stall. (Before: the run spun at 170% CPU forever and
// ignored SIGINT.) When pebble's own background flush is the one that
// finds the disk full (a MANIFEST write, about one run in a hundred), the
// process ends with that error instead: fatalExit stands in for os.Exit
// here, and the error must say the same.
func TestDiskFullIsAPromptError(t *testing.T) {
	exited := make(chan error, 1)
	defer func(f func(error)) { fatalExit = f }(fatalExit)
	fatalExit = func(err error) { exited <- err }
	fs := &fullFS{FS: vfs.NewMem()}
	fs.left.Store(2 << 20)
	b, err := Open(Options{FS: fs, Dir: "/state/sum-0", KeyGroups: all, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s := must(state.Value("v", state.Bytes).Bind(registry{b}))
	done := make(chan error, 1)
	go func() {
		val := []byte(strings.Repeat("x", 1000))
		for i := 0; ; i++ {
			setKey(b, fmt.Sprintf("key-%d", i))
			if err := s.Update(val); err != nil {
				done <- err
				return
			}
			if i > 2_000_000 {
				done <- errors.New("2 GB written into 2 MB")
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/state/sum-0") || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("error %v, want ENOSPC naming /state/sum-0 and saying the disk is full", err)
		}
	case err := <-exited:
		// The process would end here with this message and status 1;
		// the backend is past closing.
		if !strings.Contains(err.Error(), "/state/sum-0") || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("background error %v, want one naming /state/sum-0 and saying the disk is full", err)
		}
		return
	case <-time.After(30 * time.Second):
		t.Fatal("no error 30 s after the disk filled: the writer hangs")
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close hangs on a full disk")
	}
}

// Many writes on a disk with room never wait for ever: waiting for room
// must not wait for a flush pebble does not start. (A first version waited
// at four memtables, which pebble's ramp of small first memtables reaches
// before it flushes: the wordcount of 250,000 keys hung.)
func TestManyWritesFinish(t *testing.T) {
	b, err := Open(Options{FS: vfs.NewMem(), KeyGroups: all, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := must(state.Value("v", state.Bytes).Bind(registry{b}))
	done := make(chan error, 1)
	go func() {
		val := []byte(strings.Repeat("x", 40))
		for i := range 400_000 {
			setKey(b, fmt.Sprintf("key-%d", i))
			if err := s.Update(val); err != nil {
				done <- err
				return
			}
		}
		done <- b.commit()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("400,000 writes did not finish in 60 s: waiting for room that never comes")
	}
	setKey(b, "key-399999")
	if v, ok, err := s.Value(); err != nil || !ok || len(v) != 40 {
		t.Fatalf("last key: %q %v %v", v, ok, err)
	}
}
