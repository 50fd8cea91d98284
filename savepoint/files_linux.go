package savepoint

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func renameat2NoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTEMPTY):
		return os.ErrExist
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return errNoRenameat2
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
