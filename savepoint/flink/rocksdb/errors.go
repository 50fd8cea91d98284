package rocksdb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// ErrCorrupt marks bytes that do not follow RocksDB's format (a bad
// checksum, a length past the end, an impossible varint).
var ErrCorrupt = errors.New("rocksdb: corrupt")

// ErrUnsupported marks well-formed data this reader does not decode (a
// compression, table format or value type it does not know).
var ErrUnsupported = errors.New("rocksdb: unsupported")

// Error names the file and offset where reading failed. Err is ErrCorrupt,
// ErrUnsupported or the error of the file system.
type Error struct {
	File   string
	Offset int64
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("rocksdb: %s at offset %d: %s", e.File, e.Offset, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

func corruptf(file string, off int64, format string, args ...any) error {
	return &Error{File: file, Offset: off, Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

func unsupportedf(file string, off int64, format string, args ...any) error {
	return &Error{File: file, Offset: off, Msg: fmt.Sprintf(format, args...), Err: ErrUnsupported}
}

// missing is the error of a file the instance needs that its source could
// not open: marked corrupt unless it has a kind (an I/O error keeps only
// its own).
func missing(err error) error {
	switch {
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrUnsupported):
		return err
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		return errors.Join(ErrCorrupt, err)
	}
	return err
}

// short is a read error: a file shorter than its size is corrupt.
func short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.Join(ErrCorrupt, err)
	}
	return err
}
