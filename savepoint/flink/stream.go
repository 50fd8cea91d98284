package flink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxSection bounds the bytes read into memory at once: one key group, one
// state file header or one operator state section.
const maxSection = 1 << 30

// resolve finds the file a handle points to, confined to dir. A relative
// handle must stay inside dir. An absolute handle (a savepoint that was
// moved: Flink's relocatable savepoints) is looked up by its base name
// inside dir; only when that fails is the original path tried, and only if
// it lies inside dir too.
func (h *streamHandle) resolve(dir string) {
	if h == nil {
		return // a null handle: open reports it
	}
	if strings.ContainsRune(h.name, 0) {
		h.err = fmt.Errorf("flink: state file path %q has a NUL byte: %w", h.name, ErrCorrupt)
		return
	}
	switch h.kind {
	case handleRelativeFile:
		rel := filepath.FromSlash(h.name)
		if !filepath.IsLocal(rel) {
			h.err = fmt.Errorf("flink: relative state file %q leaves the savepoint directory: %w", h.name, ErrCorrupt)
			return
		}
		h.path = filepath.Join(dir, rel)
	case handleFile:
		p := h.name
		if i := strings.Index(p, "://"); i >= 0 {
			// scheme://authority/path
			p = p[i+3:]
			if j := strings.IndexByte(p, '/'); j >= 0 {
				p = p[j:]
			} else {
				p = ""
			}
		} else if strings.HasPrefix(p, "file:") {
			p = strings.TrimPrefix(p, "file:")
		}
		base := path.Base(p)
		if base == "" || base == "." || base == ".." || base == "/" || !filepath.IsLocal(base) {
			h.err = fmt.Errorf("flink: state file path %q has no file name: %w", h.name, ErrCorrupt)
			return
		}
		h.path = filepath.Join(dir, base)
		if _, err := os.Stat(h.path); err != nil {
			h.path = ""
			// _metadata names a file the savepoint does not have.
			h.err = fmt.Errorf("flink: state file %q not found in savepoint directory %s (looked for %s): %w", h.name, dir, base, markErr(fs.ErrNotExist, ErrCorrupt))
		}
	}
}

// section is a readable byte range of a stream handle.
type section interface {
	size() int64
	// read returns the bytes [off, off+n).
	read(off, n int64) ([]byte, error)
	name() string
}

type inlineSection struct {
	h *streamHandle
}

func (s inlineSection) size() int64  { return int64(len(s.h.inline)) }
func (s inlineSection) name() string { return s.h.String() }
func (s inlineSection) read(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > int64(len(s.h.inline)) || n > int64(len(s.h.inline))-off {
		return nil, &FormatError{File: s.name(), Offset: off, Msg: fmt.Sprintf("range of %d bytes beyond the end (%d)", n, len(s.h.inline)), Err: ErrCorrupt}
	}
	return s.h.inline[off : off+n : off+n], nil
}

type fileSection struct {
	f    *os.File
	path string
	sz   int64
}

func (s *fileSection) size() int64  { return s.sz }
func (s *fileSection) name() string { return filepath.Base(s.path) }
func (s *fileSection) read(off, n int64) ([]byte, error) {
	return s.readInto(nil, off, n)
}

// readInto is read into buf when it is large enough (callers that copy
// what they decode reuse one buffer for every section).
func (s *fileSection) readInto(buf []byte, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > s.sz || n > s.sz-off {
		return nil, &FormatError{File: s.name(), Offset: off, Msg: fmt.Sprintf("range of %d bytes beyond the end of the file (%d)", n, s.sz), Err: ErrCorrupt}
	}
	if n > maxSection {
		return nil, &FormatError{File: s.name(), Offset: off, Msg: fmt.Sprintf("section of %d bytes is larger than %d", n, maxSection), Err: ErrUnsupported}
	}
	b := buf[:0]
	if int64(cap(b)) < n {
		b = make([]byte, n)
	}
	b = b[:n]
	if _, err := s.f.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && off+n == s.sz) {
		if errors.Is(err, io.EOF) {
			// Shorter than when it was opened.
			return nil, &FormatError{File: s.name(), Offset: off, Msg: fmt.Sprintf("file ends before %d bytes at %d (it was %d bytes)", n, off, s.sz), Err: ErrCorrupt}
		}
		return nil, fmt.Errorf("flink: %s: %w", s.path, err)
	}
	return b, nil
}

// open opens the bytes of a handle. The caller closes the returned closer.
func (h *streamHandle) open() (section, io.Closer, error) {
	if h == nil {
		return nil, nil, fmt.Errorf("flink: no state handle: %w", ErrCorrupt)
	}
	if h.kind == handleByteStream {
		return inlineSection{h}, io.NopCloser(nil), nil
	}
	if h.path == "" {
		if h.err != nil {
			return nil, nil, h.err
		}
		return nil, nil, fmt.Errorf("flink: state file %q not resolved: %w", h.name, ErrCorrupt)
	}
	f, err := openRegular(h.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("flink: state file %s not found in the savepoint directory: %w", h.name, markErr(err, ErrCorrupt))
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("flink: %w", err)
	}
	return &fileSection{f: f, path: h.path, sz: st.Size()}, f, nil
}
