package savepoint

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// isOS reports whether fs is the operating system's file system, where
// symlinks, FIFOs and devices exist and Lstat and renameat2 apply.
func isOS(fs vfs.FS) bool { return vfs.Root(fs) == vfs.Default }

// lstat is Stat without following a final symlink, on the OS file system
// (vfs.FS has no Lstat; the other file systems have no symlinks).
func lstat(fs vfs.FS, name string) (os.FileInfo, error) {
	if isOS(fs) {
		return os.Lstat(name)
	}
	return fs.Stat(name)
}

// openRegular opens a file of a savepoint for reading: only a regular
// file, never a symlink (it could point out of the directory) nor a FIFO
// or device (opening one can block forever). size is its size.
func openRegular(fs vfs.FS, path string) (f vfs.File, size int64, err error) {
	fi, err := lstat(fs, path)
	if err != nil {
		return nil, 0, fmt.Errorf("savepoint: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, 0, err
	}
	f, err = fs.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("savepoint: %w", err)
	}
	// The file may have been replaced between the two calls.
	st, err := f.Stat()
	if err == nil {
		err = checkRegular(path, st)
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func checkRegular(path string, fi os.FileInfo) error {
	switch m := fi.Mode(); {
	case m&os.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link: a savepoint's files must be regular files inside its directory", ErrInvalid, path)
	case !m.IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (%s): a savepoint's files must be regular files inside its directory", ErrInvalid, path, m.Type())
	}
	return nil
}

// renameNoReplace renames the temporary directory to the target, failing
// with ErrExists when the target exists. The caller holds the target's lock.
func renameNoReplace(fs vfs.FS, tmp, dir string) error {
	if isOS(fs) {
		err := renameat2NoReplace(tmp, dir)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, os.ErrExist):
			return fmt.Errorf("%w: %s", ErrExists, dir)
		case !errors.Is(err, errNoRenameat2):
			return fmt.Errorf("savepoint: rename %s to %s: %w", tmp, dir, err)
		}
	}
	// No atomic no-replace rename: the lock keeps other streamdbg writers
	// out between this check and the rename.
	if err := checkAbsent(fs, dir); err != nil {
		return err
	}
	if err := fs.Rename(tmp, dir); err != nil {
		return fmt.Errorf("savepoint: rename %s to %s: %w", tmp, dir, err)
	}
	return nil
}

// errNoRenameat2 says the platform or file system has no atomic
// no-replace rename.
var errNoRenameat2 = errors.New("renameat2 RENAME_NOREPLACE not available")
