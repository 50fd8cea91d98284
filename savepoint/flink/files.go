package flink

import (
	"fmt"
	"os"
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
