package flink

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/golang/snappy"
)

// This file reads the DSTL files of the changelog state backend's file
// system storage (FsStateChangelogStorage: StateChangeFsUploader writes
// them, ChangelogStreamWrapper reads them): one byte saying whether what
// follows is compressed (1: Snappy's framing format, as
// SnappyStreamCompressionDecorator writes it with xerial's
// SnappyFramedOutputStream, chunks of at most 64 KiB), then change sets
// (StateChangeFormat). The offsets of ChangelogStateHandleStreamImpl count
// bytes of the stream after the flag, uncompressed.

// dstlFile is one DSTL file, opened once to list its chunks.
type dstlFile struct {
	h          *streamHandle
	path       string // resolved file, "" for an inline handle
	name       string // for messages: the file's path relative to the savepoint's parent
	compressed bool
	size       int64       // bytes of the (uncompressed) stream after the flag
	chunks     []dstlChunk // compressed files: the data chunks in order
}

// dstlChunk is one data chunk of a compressed file.
type dstlChunk struct {
	uoff       int64 // offset of its first byte in the uncompressed stream
	foff       int64 // file offset of its payload (after the 4-byte chunk header)
	clen, ulen int32 // payload bytes in the file; bytes it decompresses to
	compressed bool  // chunk type 0 (else 1: stored)
}

// maxSnappyChunk is the most a framing-format chunk holds uncompressed.
const maxSnappyChunk = 1 << 16

// maxSnappyRatio bounds uncompressed / compressed bytes of a chunk.
const maxSnappyRatio = 32

// dstlFlagOffset is the size of the compression flag that starts a file.
const dstlFlagOffset = 1

// open opens the file's bytes: the inline bytes, or the resolved file.
func (f *dstlFile) open() (section, io.Closer, error) {
	if f.h.kind == handleByteStream {
		return inlineSection{f.h}, io.NopCloser(nil), nil
	}
	h := *f.h
	h.kind, h.path = handleRelativeFile, f.path // already resolved and confined
	return h.open()
}

func (f *dstlFile) fail(kind error, off int64, format string, args ...any) error {
	return &FormatError{File: f.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// load reads the compression flag and, for a compressed file, lists its
// chunks (headers only).
func (f *dstlFile) load() error {
	sec, c, err := f.open()
	if err != nil {
		return err
	}
	defer c.Close()
	size := sec.size()
	if size < 1 {
		return f.fail(ErrCorrupt, 0, "empty change-log file (no compression flag)")
	}
	flag, err := sec.read(0, 1)
	if err != nil {
		return err
	}
	switch flag[0] {
	case 0:
		f.size = size - dstlFlagOffset
		return nil
	case 1:
		f.compressed = true
	default:
		return f.fail(ErrCorrupt, 0, "compression flag %d (0 or 1)", flag[0])
	}
	var uoff int64
	for off := int64(dstlFlagOffset); off < size; {
		if size-off < 4 {
			return f.fail(ErrCorrupt, off, "snappy: chunk header cut short")
		}
		hdr, err := sec.read(off, 4)
		if err != nil {
			return err
		}
		typ := hdr[0]
		n := int64(hdr[1]) | int64(hdr[2])<<8 | int64(hdr[3])<<16
		payload := off + 4
		if n > size-payload {
			return f.fail(ErrCorrupt, off, "snappy: chunk of %d bytes, %d left", n, size-payload)
		}
		first := off == dstlFlagOffset
		switch {
		case typ == 0xff:
			id, err := sec.read(payload, n)
			if err != nil {
				return err
			}
			if string(id) != "sNaPpY" {
				return f.fail(ErrCorrupt, off, "snappy: bad stream identifier")
			}
		case first:
			return f.fail(ErrCorrupt, off, "snappy: the stream does not start with its identifier")
		case typ == 0x00 || typ == 0x01:
			if n < 4 {
				return f.fail(ErrCorrupt, off, "snappy: chunk of %d bytes has no checksum", n)
			}
			ulen := n - 4
			if typ == 0x00 {
				head, err := sec.read(payload+4, min(n-4, binary.MaxVarintLen32))
				if err != nil {
					return err
				}
				l, err := snappy.DecodedLen(head)
				if err != nil {
					return f.fail(ErrCorrupt, off, "snappy: %v", err)
				}
				ulen = int64(l)
			}
			if ulen > maxSnappyChunk {
				return f.fail(ErrCorrupt, off, "snappy: chunk of %d bytes uncompressed (at most %d)", ulen, maxSnappyChunk)
			}
			// INVARIANT: a Snappy block decodes to less than 22 times its
			// size (a copy of 64 bytes takes 3), so a file decompresses to
			// at most 32 times its size: what FuzzChangelog bounds
			// allocations by.
			if ulen > maxSnappyRatio*n {
				return f.fail(ErrCorrupt, off, "snappy: chunk of %d bytes claims %d uncompressed", n, ulen)
			}
			f.chunks = append(f.chunks, dstlChunk{uoff: uoff, foff: payload, clen: int32(n), ulen: int32(ulen), compressed: typ == 0})
			uoff += ulen
		case typ >= 0x80:
			// padding (0xfe) and reserved skippable chunks
		default:
			return f.fail(ErrCorrupt, off, "snappy: reserved unskippable chunk type %#x", typ)
		}
		off = payload + n
	}
	f.size = uoff
	return nil
}

// dstlReader reads byte ranges of a DSTL file's uncompressed stream,
// decompressing the chunks a range covers (the last one stays cached).
type dstlReader struct {
	f      *dstlFile
	sec    section
	closer io.Closer
	name   string // for messages
	cur    int    // chunk in buf, -1 for none
	buf    []byte // decompressed chunk
	zbuf   []byte // compressed chunk
	out    []byte
	// kept holds decompressed chunks up to dstlKeep bytes: a scan replays
	// key group after key group, and every change set holds many.
	kept     map[int][]byte
	keptSize int
}

// dstlKeep bounds the decompressed chunks a reader keeps.
const dstlKeep = 64 << 20

func (f *dstlFile) reader() (*dstlReader, error) {
	sec, c, err := f.open()
	if err != nil {
		return nil, err
	}
	r := &dstlReader{f: f, sec: sec, closer: c, cur: -1, name: f.name}
	if f.compressed {
		r.name += " (decompressed)"
	}
	return r, nil
}

func (r *dstlReader) Close() error { return r.closer.Close() }

// where is the file and offset of an uncompressed stream position.
func (r *dstlReader) where(off int64) (string, int64) {
	if r.f.compressed {
		return r.name, off
	}
	return r.name, off + dstlFlagOffset
}

// readAt returns the bytes [off, off+n) of the stream, valid until the next
// call.
func (r *dstlReader) readAt(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > r.f.size || int64(n) > r.f.size-off {
		file, at := r.where(off)
		return nil, &FormatError{File: file, Offset: at, Msg: fmt.Sprintf("need %d bytes, %d left in the change-log file", n, max(r.f.size-off, 0)), Err: ErrCorrupt}
	}
	if !r.f.compressed {
		if fs, ok := r.sec.(*fileSection); ok {
			b, err := fs.readInto(r.out, off+dstlFlagOffset, int64(n))
			r.out = b
			return b, err
		}
		return r.sec.read(off+dstlFlagOffset, int64(n))
	}
	r.out = r.out[:0]
	i, _ := slices.BinarySearchFunc(r.f.chunks, off, func(c dstlChunk, off int64) int {
		switch {
		case c.uoff+int64(c.ulen) <= off:
			return -1
		case c.uoff > off:
			return 1
		}
		return 0
	})
	for len(r.out) < n {
		if i >= len(r.f.chunks) {
			file, at := r.where(off)
			return nil, &FormatError{File: file, Offset: at, Msg: "range beyond the last chunk", Err: ErrCorrupt}
		}
		b, err := r.chunk(i)
		if err != nil {
			return nil, err
		}
		c := r.f.chunks[i]
		from := max(off+int64(len(r.out))-c.uoff, 0)
		take := min(int64(len(b))-from, int64(n-len(r.out)))
		r.out = append(r.out, b[from:from+take]...)
		i++
	}
	return r.out, nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// chunk decompresses chunk i and checks its checksum (the masked CRC-32C
// of the uncompressed bytes).
func (r *dstlReader) chunk(i int) ([]byte, error) {
	if i == r.cur {
		return r.buf, nil
	}
	if b, ok := r.kept[i]; ok {
		return b, nil
	}
	c := r.f.chunks[i]
	var raw []byte
	var err error
	if fs, ok := r.sec.(*fileSection); ok {
		raw, err = fs.readInto(r.zbuf, c.foff, int64(c.clen))
		r.zbuf = raw
	} else {
		raw, err = r.sec.read(c.foff, int64(c.clen))
	}
	if err != nil {
		return nil, err
	}
	want := binary.LittleEndian.Uint32(raw)
	data := raw[4:]
	if c.compressed {
		if cap(r.buf) < int(c.ulen) {
			r.buf = make([]byte, c.ulen)
		}
		data, err = snappy.Decode(r.buf[:cap(r.buf)], data)
		if err != nil || len(data) != int(c.ulen) {
			return nil, r.f.fail(ErrCorrupt, c.foff-4, "snappy: chunk does not decompress: %v", err)
		}
	} else {
		r.buf = append(r.buf[:0], data...)
		data = r.buf
	}
	sum := crc32.Checksum(data, crcTable)
	if masked := (sum>>15 | sum<<17) + 0xa282ead8; masked != want {
		return nil, r.f.fail(ErrCorrupt, c.foff-4, "snappy: chunk checksum mismatch")
	}
	if r.keptSize+len(data) <= dstlKeep {
		if r.kept == nil {
			r.kept = map[int][]byte{}
		}
		data = slices.Clone(data)
		r.kept[i] = data
		r.keptSize += len(data)
		return data, nil
	}
	r.buf, r.cur = data, i
	return data, nil
}

// dstlCursor reads a DSTL stream sequentially from an offset, a window at
// a time.
type dstlCursor struct {
	r      *dstlReader
	pos    int64
	win    []byte
	winOff int64
}

const dstlWindow = 64 << 10

// take returns the next n bytes, valid until the next call.
func (c *dstlCursor) take(n int) ([]byte, error) {
	if c.pos >= c.winOff && c.pos+int64(n) <= c.winOff+int64(len(c.win)) {
		b := c.win[c.pos-c.winOff : c.pos-c.winOff+int64(n)]
		c.pos += int64(n)
		return b, nil
	}
	want := max(n, int(min(dstlWindow, c.r.f.size-c.pos)))
	b, err := c.r.readAt(c.pos, want)
	if err != nil {
		if want > n { // the window reaches past the end: read just n
			b, err = c.r.readAt(c.pos, n)
		}
		if err != nil {
			return nil, err
		}
	}
	c.win, c.winOff = b, c.pos
	c.pos += int64(n)
	return b[:n], nil
}

func (c *dstlCursor) i32() (int32, error) {
	b, err := c.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}
