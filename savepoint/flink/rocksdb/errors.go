package rocksdb

import (
	"errors"
	"fmt"
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
