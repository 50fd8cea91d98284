package flink

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// openRegular opens a file of a savepoint for reading: a regular file
// only, never a symlink (it could lead out of the directory) nor a FIFO or
// device (opening one can block forever: a FIFO as _metadata hung inspect,
// query and --from-savepoint).
func openRegular(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	// It may have been replaced between the two calls.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("flink: %s is not a regular file: %w", path, ErrUnsupported)
	}
	return f, nil
}

func checkRegular(path string, fi os.FileInfo) error {
	switch m := fi.Mode(); {
	case m&os.ModeSymlink != 0:
		return fmt.Errorf("flink: %s is a symbolic link: a savepoint's files must be regular files inside its directory: %w", path, ErrUnsupported)
	case !m.IsRegular():
		return fmt.Errorf("flink: %s is not a regular file (%s): a savepoint's files must be regular files inside its directory: %w", path, m.Type(), ErrUnsupported)
	}
	return nil
}

// confinedDir opens files inside one directory only (os.Root): a path
// with "..", or through a symlink that leads out of the directory, fails.
// The directory is opened on first use and kept (its descriptor is closed
// when it is collected), and so are its subdirectories opened by sub.
type confinedDir struct {
	path string
	// in and rel, for a subdirectory: the directory it is opened from and
	// its path there.
	in   *confinedDir
	rel  string
	once sync.Once
	root *os.Root
	err  error

	mu   sync.Mutex
	subs map[string]*confinedDir
}

func (c *confinedDir) open() (*os.Root, error) {
	c.once.Do(func() {
		if c.in == nil {
			c.root, c.err = os.OpenRoot(c.path)
			return
		}
		var in *os.Root
		if in, c.err = c.in.open(); c.err == nil {
			c.root, c.err = in.OpenRoot(c.rel)
		}
	})
	return c.root, c.err
}

// sub is the directory rel inside c, itself confined to c: a file read
// many times opens in one step from it.
func (c *confinedDir) sub(rel string) *confinedDir {
	if rel == "." || rel == "" {
		return c
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.subs[rel]
	if !ok {
		d = &confinedDir{path: filepath.Join(c.path, rel), in: c, rel: rel}
		if c.subs == nil {
			c.subs = map[string]*confinedDir{}
		}
		c.subs[rel] = d
	}
	return d
}

// lstat is what rel names inside the directory, a last symlink not
// followed.
func (c *confinedDir) lstat(rel string) (fs.FileInfo, error) {
	r, err := c.open()
	if err != nil {
		return nil, err
	}
	return r.Lstat(rel)
}

// openRegular opens rel for reading, a regular file only. The open does
// not block: a FIFO put there since rel was looked up is refused, not
// waited on.
func (c *confinedDir) openRegular(rel string) (*os.File, error) {
	r, err := c.open()
	if err != nil {
		return nil, err
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("flink: %s is no longer a regular file: %w", f.Name(), ErrUnsupported)
	}
	return f, nil
}

// confinedFile is a RocksDB file of a checkpoint, opened for each read (a
// checkpoint of many subtasks has thousands of tables, more than a process
// may keep open; reads are few and large) inside its directory.
type confinedFile struct {
	root *confinedDir // the file's own directory
	rel  string       // its name there
	size int64
	name string
}

// newConfinedFile is the file rel inside root.
func newConfinedFile(root *confinedDir, rel string, size int64, name string) *confinedFile {
	return &confinedFile{root: root.sub(filepath.Dir(rel)), rel: filepath.Base(rel), size: size, name: name}
}

func (f *confinedFile) Size() int64  { return f.size }
func (f *confinedFile) Name() string { return f.name }
func (f *confinedFile) ReadAt(p []byte, off int64) (int, error) {
	fh, err := f.root.openRegular(f.rel)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	return fh.ReadAt(p, off)
}
