package rocksdb

import (
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression types of the block trailer (CompressionType in
// rocksdb/compression_type.h).
const (
	compressionNone         = 0x0
	compressionSnappy       = 0x1
	compressionZlib         = 0x2
	compressionBZip2        = 0x3
	compressionLZ4          = 0x4
	compressionLZ4HC        = 0x5
	compressionXpress       = 0x6
	compressionZSTD         = 0x7
	compressionZSTDNotFinal = 0x40
)

// maxBlockSize bounds a decompressed block. RocksDB's blocks are kilobytes
// (data) to a few megabytes (index partitions of large files).
const maxBlockSize = 256 << 20

// decompressLimit bounds what n compressed bytes may decompress to: no
// real codec reaches this ratio on RocksDB blocks (LZ4's maximum is about
// 255; a 64 KiB allowance covers tiny blocks of one repeated byte), and it
// keeps a forged length from allocating gigabytes.
func decompressLimit(n int) int {
	return min(maxBlockSize, 256*n+64<<10)
}

var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlockSize))
})

func compressionName(t byte) string {
	switch t {
	case compressionNone:
		return "none"
	case compressionSnappy:
		return "Snappy"
	case compressionZlib:
		return "Zlib"
	case compressionBZip2:
		return "BZip2"
	case compressionLZ4:
		return "LZ4"
	case compressionLZ4HC:
		return "LZ4HC"
	case compressionXpress:
		return "Xpress"
	case compressionZSTD, compressionZSTDNotFinal:
		return "ZSTD"
	}
	return fmt.Sprintf("compression %#x", t)
}

// decompress decodes a block of the given compression type into dst (reused
// when large enough). Table format versions 2 and later (compress format
// version 2) prefix Zlib, BZip2, LZ4 and ZSTD blocks with their decompressed
// size as a varint32; Snappy carries its own.
func decompress(t byte, src, dst []byte, file string, off int64) ([]byte, error) {
	limit := decompressLimit(len(src))
	bad := func(err error) error {
		return corruptf(file, off, "%s block: %v", compressionName(t), err)
	}
	if t == compressionSnappy {
		// S2's decoder reads the Snappy block format (S2 extends it), and
		// faster than golang/snappy's.
		n, err := s2.DecodedLen(src)
		if err != nil {
			return nil, bad(err)
		}
		if n > limit || n == 0 {
			return nil, bad(fmt.Errorf("decompressed size %d is implausible", n))
		}
		out, err := s2.Decode(grow(dst, n), src)
		if err != nil {
			return nil, bad(err)
		}
		return out, nil
	}
	switch t {
	case compressionZlib, compressionBZip2, compressionLZ4, compressionLZ4HC, compressionZSTD, compressionZSTDNotFinal:
	default:
		return nil, unsupportedf(file, off, "block compressed with %s", compressionName(t))
	}
	size, n := uvarint32(src)
	if n <= 0 {
		return nil, bad(fmt.Errorf("bad decompressed size"))
	}
	if int64(size) > int64(limit) {
		return nil, bad(fmt.Errorf("decompressed size %d is implausible", size))
	}
	src = src[n:]
	if size == 0 {
		// Nothing to decode into (lz4's assembly decoder faults on an
		// empty destination); an empty block is corrupt anyway.
		return nil, bad(fmt.Errorf("decompressed size 0"))
	}
	out := grow(dst, int(size))
	switch t {
	case compressionLZ4, compressionLZ4HC:
		m, err := lz4.UncompressBlock(src, out)
		if err != nil {
			return nil, bad(err)
		}
		if m != int(size) {
			return nil, bad(fmt.Errorf("%d bytes, header says %d", m, size))
		}
		return out, nil
	case compressionZSTD, compressionZSTDNotFinal:
		dec, err := zstdDecoder()
		if err != nil {
			return nil, bad(err)
		}
		res, err := dec.DecodeAll(src, out[:0])
		if err != nil {
			return nil, bad(err)
		}
		if len(res) != int(size) {
			return nil, bad(fmt.Errorf("%d bytes, header says %d", len(res), size))
		}
		return res, nil
	}
	var r io.Reader
	if t == compressionZlib {
		// RocksDB's default window bits (-14) mean a raw deflate stream.
		r = flate.NewReader(bytes.NewReader(src))
	} else {
		r = bzip2.NewReader(bytes.NewReader(src))
	}
	m, err := io.ReadFull(r, out)
	if err != nil {
		return nil, bad(err)
	}
	if extra, _ := r.Read(make([]byte, 1)); extra != 0 {
		return nil, bad(fmt.Errorf("more than the %d bytes the header says", m))
	}
	return out, nil
}

func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
