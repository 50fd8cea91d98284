package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// BlockRef is one block of an indexed group as the group's index lists it.
type BlockRef struct {
	// State and Key are the block's first entry's.
	State string
	Key   []byte
	// Offset is the offset of the block's length field from the start of
	// the group; Size the payload bytes after it, Entries how many entries
	// they hold, CRC32C their checksum.
	Offset  int64
	Size    int
	Entries int64
	CRC32C  uint32
}

// appendGroupIndex appends the index of an indexed group (see the stream
// format in stream.go).
func appendGroupIndex(dst []byte, refs []BlockRef) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.AppendUvarint(dst, uint64(len(refs)))
	for i, r := range refs {
		if i == 0 || r.State != refs[i-1].State {
			dst = append(dst, flagState)
			dst = binary.AppendUvarint(dst, uint64(len(r.State)))
			dst = append(dst, r.State...)
		} else {
			dst = append(dst, 0)
		}
		dst = binary.AppendUvarint(dst, uint64(len(r.Key)))
		dst = append(dst, r.Key...)
		dst = binary.AppendUvarint(dst, uint64(r.Size))
		dst = binary.AppendUvarint(dst, uint64(r.Entries))
		dst = binary.LittleEndian.AppendUint32(dst, r.CRC32C)
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// GroupHeaderSize is the size of the header (tag and key group) of a group
// of key group kg: where its first block starts.
func GroupHeaderSize(kg int) int64 {
	var b [binary.MaxVarintLen64]byte
	return 1 + int64(binary.PutUvarint(b[:], uint64(kg)))
}

// DecodeGroupIndex decodes the index of an indexed group of key group kg
// and size groupSize whose last len(index) bytes are index; base is the
// offset of index[0] in its file, for errors. It checks everything a point
// lookup relies on: the refs are ordered by state and key, their blocks
// (sizes within bounds) lie back to back from the group header up to the
// terminator before the index, and their entries add up to entries. The
// refs' keys alias index.
func DecodeGroupIndex(index []byte, base int64, kg int, groupSize, entries int64) ([]BlockRef, error) {
	return DecodeGroupIndexInto(nil, index, base, kg, groupSize, entries)
}

// DecodeGroupIndexInto is DecodeGroupIndex appending the refs to dst[:0].
func DecodeGroupIndexInto(dst []BlockRef, index []byte, base int64, kg int, groupSize, entries int64) ([]BlockRef, error) {
	refs, err := decodeIndexInto(dst[:0], index, base)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("state: snapshot stream: offset %d: group index: %s: %w", base, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	off := GroupHeaderSize(kg)
	var n int64
	for i := range refs {
		refs[i].Offset = off
		off += 4 + int64(refs[i].Size)
		n += refs[i].Entries
	}
	if want := groupSize - int64(len(index)) - 4; off != want {
		return nil, bad("its blocks end at %d, the group's terminator is at %d", off, want)
	}
	if n != entries {
		return nil, bad("its blocks hold %d entries, the group %d", n, entries)
	}
	return refs, nil
}

// decodeIndex parses an index (its length field included) without
// relating it to the group: refs in order, sizes and counts in bounds.
// Offsets are left zero.
func decodeIndex(b []byte, base int64) ([]BlockRef, error) { return decodeIndexInto(nil, b, base) }

// decodeIndexInto is decodeIndex appending to dst.
func decodeIndexInto(dst []BlockRef, b []byte, base int64) ([]BlockRef, error) {
	pos := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("state: snapshot stream: offset %d: group index: %s: %w", base+int64(pos), fmt.Sprintf(format, args...), ErrCorrupt)
	}
	if len(b) < 4 || int(binary.LittleEndian.Uint32(b)) != len(b)-4 {
		return nil, bad("length field does not match its %d bytes", len(b))
	}
	pos = 4
	uv := func(what string) (uint64, error) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, bad("bad %s", what)
		}
		pos += n
		return v, nil
	}
	field := func(what string) ([]byte, error) {
		n, err := uv(what + " length")
		if err != nil {
			return nil, err
		}
		if n > uint64(len(b)-pos) {
			return nil, bad("%s of %d bytes runs past the index", what, n)
		}
		f := b[pos : pos+int(n) : pos+int(n)]
		pos += int(n)
		return f, nil
	}
	count, err := uv("block count")
	if err != nil {
		return nil, err
	}
	// Every ref takes at least 8 bytes (flags, key length, size, entries, CRC).
	if count > uint64(len(b)-pos)/8 {
		return nil, bad("%d blocks cannot be listed in %d bytes", count, len(b)-pos)
	}
	refs := slices.Grow(dst, int(count))[:count]
	state := ""
	for i := range refs {
		r := &refs[i]
		*r = BlockRef{}
		if pos >= len(b) {
			return nil, bad("index ends at block %d of %d", i, count)
		}
		flags := b[pos]
		if flags&^flagState != 0 || i == 0 && flags&flagState == 0 {
			return nil, bad("bad block flags 0x%02x", flags)
		}
		pos++
		if flags&flagState != 0 {
			s, err := field("state name")
			if err != nil {
				return nil, err
			}
			if len(s) > MaxEntrySize {
				return nil, bad("state name of %d bytes", len(s))
			}
			if i > 0 && string(s) == state {
				return nil, bad("block %d repeats the state name", i)
			}
			if i == 0 || string(s) != state {
				state = string(s)
			}
		}
		r.State = state
		if r.Key, err = field("key"); err != nil {
			return nil, err
		}
		if len(r.Key) == 0 {
			r.Key = nil
		}
		size, err := uv("block size")
		if err != nil {
			return nil, err
		}
		if size == 0 || size > maxBlock {
			return nil, bad("block %d of %d bytes", i, size)
		}
		r.Size = int(size)
		ents, err := uv("entry count")
		if err != nil {
			return nil, err
		}
		// An entry takes at least 2 bytes (flags, value length).
		if ents == 0 || ents > size/2 {
			return nil, bad("block %d: %d entries in %d bytes", i, ents, size)
		}
		r.Entries = int64(ents)
		if len(b)-pos < 4 {
			return nil, bad("index ends in block %d", i)
		}
		r.CRC32C = binary.LittleEndian.Uint32(b[pos:])
		pos += 4
		if i > 0 && compareStateKey(refs[i-1].State, refs[i-1].Key, r.State, r.Key) > 0 {
			return nil, bad("block %d starts before block %d", i, i-1)
		}
	}
	if pos != len(b) {
		return nil, bad("%d bytes after the last block", len(b)-pos)
	}
	return refs, nil
}

// compareStateKey orders (state, key) pairs as entries are ordered.
func compareStateKey(s1 string, k1 []byte, s2 string, k2 []byte) int {
	if c := strings.Compare(s1, s2); c != 0 {
		return c
	}
	return bytes.Compare(k1, k2)
}

// BlocksFor returns the range [lo, hi) of refs whose blocks can hold
// entries of (state, key): entries of one state and key may run over
// several blocks.
func BlocksFor(refs []BlockRef, state string, key []byte) (lo, hi int) {
	// The first block starting at or after (state, key) may hold it only
	// from its start; the block before it may hold it at its end.
	i := 0
	j := len(refs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if compareStateKey(refs[h].State, refs[h].Key, state, key) < 0 {
			i = h + 1
		} else {
			j = h
		}
	}
	hi = i
	for hi < len(refs) && compareStateKey(refs[hi].State, refs[hi].Key, state, key) == 0 {
		hi++
	}
	if i == 0 {
		// No block starts before (state, key): only those starting with
		// it can hold it.
		return 0, hi
	}
	return i - 1, hi
}

// BlocksOfState returns the range [lo, hi) of refs whose blocks can hold
// entries of state.
func BlocksOfState(refs []BlockRef, state string) (lo, hi int) {
	i := 0
	for i < len(refs) && refs[i].State < state {
		i++
	}
	hi = i
	for hi < len(refs) && refs[hi].State == state {
		hi++
	}
	if i == 0 {
		return 0, hi
	}
	return i - 1, hi
}

// CheckIndexedGroup checks what a point lookup relies on in the bytes of
// one indexed group (base is the offset of group[0] in its file, kg its key
// group, entries its entry count, indexSize the size of its index): the
// index (DecodeGroupIndex), and each block's length field and checksum.
// A full decode checks the rest (that the index describes the blocks).
func CheckIndexedGroup(group []byte, base int64, kg int, entries, indexSize int64) error {
	size := int64(len(group))
	if indexSize < 8 || indexSize > size {
		return fmt.Errorf("state: snapshot stream: offset %d: group index of %d bytes in a group of %d: %w", base, indexSize, size, ErrCorrupt)
	}
	refs, err := DecodeGroupIndex(group[size-indexSize:], base+size-indexSize, kg, size, entries)
	if err != nil {
		return err
	}
	for i, r := range refs {
		if int(binary.LittleEndian.Uint32(group[r.Offset:])) != r.Size {
			return fmt.Errorf("state: snapshot stream: offset %d: block %d of key group %d: length field differs from the index: %w", base+r.Offset, i, kg, ErrCorrupt)
		}
		if got := CRC32C(group[r.Offset+4 : r.Offset+4+int64(r.Size)]); got != r.CRC32C {
			return fmt.Errorf("state: snapshot stream: offset %d: block %d of key group %d: crc32c %08x, the index says %08x: %w", base+r.Offset, i, kg, got, r.CRC32C, ErrCorrupt)
		}
	}
	return nil
}
