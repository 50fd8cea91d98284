package rocksdb

import (
	"encoding/binary"
	"math"
)

// Varints as util/coding.h writes them: little-endian base 128, at most
// 5 bytes for 32 bits and 10 for 64. Every reader here returns n <= 0 when
// the bytes end early or the value overflows, never a partial value.

func uvarint32(b []byte) (uint32, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint32(b[0]), 1
	}
	v, n := binary.Uvarint(b)
	if n <= 0 || n > 5 || v > math.MaxUint32 {
		return 0, -1
	}
	return uint32(v), n
}

func uvarint64(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, -1
	}
	return v, n
}

// varsigned64 is GetVarsignedint64: a zigzag-encoded varint64.
func varsigned64(b []byte) (int64, int) {
	u, n := uvarint64(b)
	if n <= 0 {
		return 0, n
	}
	return int64(u>>1) ^ -int64(u&1), n
}

// lengthPrefixed reads GetLengthPrefixedSlice: a varint32 length, then the
// bytes.
func lengthPrefixed(b []byte) ([]byte, int) {
	l, n := uvarint32(b)
	if n <= 0 || uint64(l) > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(l) : n+int(l)], n + int(l)
}

// blockHandle is BlockHandle: where a block lives in a table file, without
// its 5-byte trailer.
type blockHandle struct {
	offset, size uint64
}

func decodeHandle(b []byte) (blockHandle, int) {
	off, n1 := uvarint64(b)
	if n1 <= 0 {
		return blockHandle{}, -1
	}
	size, n2 := uvarint64(b[n1:])
	if n2 <= 0 {
		return blockHandle{}, -1
	}
	return blockHandle{off, size}, n1 + n2
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
