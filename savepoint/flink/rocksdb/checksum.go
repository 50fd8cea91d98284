package rocksdb

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// Checksum types of the table footer (ChecksumType in rocksdb/table.h).
const (
	checksumNone     = 0
	checksumCRC32C   = 1
	checksumXXHash   = 2
	checksumXXHash64 = 3
	checksumXXH3     = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskCRC is crc32c::Mask: rotate right by 15 bits and add a constant, so
// that a CRC of bytes that contain CRCs is not trivially related to them.
func maskCRC(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }

// blockChecksum computes the checksum of a block's bytes followed by its
// one-byte compression type, as ComputeBuiltinChecksumWithLastByte does.
func blockChecksum(typ byte, data []byte, last byte) uint32 {
	switch typ {
	case checksumCRC32C:
		c := ^crc32.Update(0, castagnoli, data)
		c = castagnoli[byte(c)^last] ^ c>>8 // one more byte, without a slice that escapes
		return maskCRC(^c)
	case checksumXXHash:
		return xxh32Last(data, last)
	case checksumXXHash64:
		var d xxhash.Digest
		d.Reset()
		d.Write(data)
		one := [1]byte{last}
		d.Write(one[:])
		return uint32(d.Sum64())
	case checksumXXH3:
		return uint32(xxh3.Hash(data)) ^ uint32(last)*0x6b9083d9
	}
	return 0
}

// wholeChecksum is ComputeBuiltinChecksum over b (the v6 footer).
func wholeChecksum(typ byte, b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return blockChecksum(typ, b[:len(b)-1], b[len(b)-1])
}

// contextModifier is ChecksumModifierForContext of format_version 6: the
// base context checksum mixed with the block's offset, added to the stored
// checksum so that a block copied to another place or file fails.
func contextModifier(base uint32, offset uint64) uint32 {
	if base == 0 {
		return 0
	}
	return base ^ (uint32(offset) + uint32(offset>>32))
}

// xxh32Last is XXH32 with seed 0 over data followed by one more byte.
func xxh32Last(data []byte, last byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	n := len(data) + 1
	at := func(i int) byte {
		if i == len(data) {
			return last
		}
		return data[i]
	}
	round := func(acc, in uint32) uint32 {
		return bits.RotateLeft32(acc+in*p2, 13) * p1
	}
	var h uint32
	i := 0
	if n >= 16 {
		var seed uint32
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for ; i+16 <= len(data); i += 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(data[i:]))
			v2 = round(v2, binary.LittleEndian.Uint32(data[i+4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(data[i+8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(data[i+12:]))
		}
		if i+16 == n { // the last stripe ends with the extra byte
			var s [16]byte
			copy(s[:], data[i:])
			s[15] = last
			v1 = round(v1, binary.LittleEndian.Uint32(s[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(s[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(s[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(s[12:]))
			i += 16
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for ; i+4 <= n; i += 4 {
		w := uint32(at(i)) | uint32(at(i+1))<<8 | uint32(at(i+2))<<16 | uint32(at(i+3))<<24
		h = bits.RotateLeft32(h+w*p3, 17) * p4
	}
	for ; i < n; i++ {
		h = bits.RotateLeft32(h+uint32(at(i))*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
