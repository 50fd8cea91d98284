package rocksdb

import (
	"bytes"
	"encoding/binary"
)

// block is one decoded (decompressed, checksum-verified) block: entries
// with prefix-compressed keys, then the restart array, then (data blocks
// with a hash index) the hash buckets, then a 32-bit footer holding the
// restart count and, in its top bit, the data block index type
// (table/block_based/block.cc, block_builder.cc, data_block_hash_index.cc).
type block struct {
	data        []byte
	restarts    int // offset of the restart array: entries end here
	numRestarts int
	file        string
	off         int64 // file offset of the block, for errors
}

func parseBlock(data []byte, file string, off int64) (block, error) {
	b := block{data: data, file: file, off: off}
	if len(data) < 4 {
		return b, corruptf(file, off, "block of %d bytes", len(data))
	}
	end := len(data) - 4
	foot := le32(data[end:])
	n := int(foot & 0x7fffffff)
	if foot>>31 != 0 {
		// kDataBlockBinaryAndHash: NUM_BUCKETS (u16) and one byte per
		// bucket sit between the restart array and the footer.
		if end < 2 {
			return b, corruptf(file, off, "block hash index without room for its bucket count")
		}
		buckets := int(binary.LittleEndian.Uint16(data[end-2:]))
		end -= 2 + buckets
		if end < 0 {
			return b, corruptf(file, off, "block hash index of %d buckets does not fit", buckets)
		}
	}
	if n > end/4 {
		return b, corruptf(file, off, "%d restart points do not fit in a block of %d bytes", n, len(data))
	}
	b.numRestarts = n
	b.restarts = end - 4*n
	if b.restarts == 0 && n > 0 {
		// No entries: RocksDB's BlockBuilder still writes its first
		// restart point, at 0 (the index block of a table holding only
		// range deletions).
		for i := range n {
			if b.restart(i) != 0 {
				return b, corruptf(file, off, "block without entries has restart point %d at %d", i, b.restart(i))
			}
		}
		b.numRestarts = 0
	}
	return b, nil
}

func (b *block) restart(i int) int {
	return int(le32(b.data[b.restarts+4*i:]))
}

// blockIter walks the entries of one block. Keys are rebuilt in a reused
// buffer: Key is valid until the next move.
type blockIter struct {
	b   block
	cur int // offset of the current entry; >= b.restarts when exhausted
	nxt int // offset of the entry after it
	key []byte
	val []byte
	// Index blocks: values are block handles, delta-encoded against the
	// previous entry when the key shares a prefix with it (format_version
	// >= 4, BlockBuilder's use_value_delta_encoding).
	index      bool
	deltaValue bool
	firstKey   bool // kBinarySearchWithFirstKey: a first internal key follows the handle
	handle     blockHandle
	// same says, after a step to the next entry, whether its key differs
	// from the previous one only in the last 8 bytes (an internal key's
	// trailer: the same user key): 1 yes, 0 no, -1 not known (the first
	// entry of a block, an entry found by a seek).
	same int8
	err  error
}

func (it *blockIter) init(b block) {
	it.b = b
	it.cur, it.nxt = b.restarts, b.restarts
	it.key = it.key[:0]
	it.val = nil
	it.same = -1
	it.err = nil
	it.handle = blockHandle{}
}

func (it *blockIter) valid() bool { return it.err == nil && it.cur < it.b.restarts }

func (it *blockIter) fail(at int, msg string) {
	if it.err == nil {
		it.err = corruptf(it.b.file, it.b.off+int64(at), "block entry: %s", msg)
	}
	it.cur = it.b.restarts
}

// decodeAt decodes the entry at off; prevHandle says whether it.handle holds
// the previous entry's handle (needed for a delta-encoded value).
func (it *blockIter) decodeAt(off int, prevHandle bool) bool {
	d := it.b.data[:it.b.restarts]
	if off >= len(d) {
		it.cur, it.nxt = it.b.restarts, it.b.restarts
		return false
	}
	p := off
	var shared, nonShared, valLen uint32
	// Fast path: three one-byte varints.
	if p+3 <= len(d) && d[p]|d[p+1]|d[p+2] < 0x80 && !it.deltaValue {
		shared, nonShared, valLen = uint32(d[p]), uint32(d[p+1]), uint32(d[p+2])
		p += 3
	} else {
		var n int
		if shared, n = uvarint32(d[p:]); n <= 0 {
			it.fail(off, "bad shared length")
			return false
		}
		p += n
		if nonShared, n = uvarint32(d[p:]); n <= 0 {
			it.fail(off, "bad key length")
			return false
		}
		p += n
		if !it.deltaValue {
			if valLen, n = uvarint32(d[p:]); n <= 0 {
				it.fail(off, "bad value length")
				return false
			}
			p += n
		}
	}
	if int(shared) > len(it.key) {
		it.fail(off, "shared key prefix longer than the previous key")
		return false
	}
	if uint64(nonShared) > uint64(len(d)-p) {
		it.fail(off, "key runs past the entries")
		return false
	}
	it.same = -1
	if prevHandle {
		it.same = sameUser(it.key, int(shared), d[p:p+int(nonShared)])
	}
	it.key = appendKey(it.key[:shared], d[p:p+int(nonShared)])
	p += int(nonShared)
	if !it.deltaValue {
		if uint64(valLen) > uint64(len(d)-p) {
			it.fail(off, "value runs past the entries")
			return false
		}
		it.val = d[p : p+int(valLen) : p+int(valLen)]
		p += int(valLen)
		if it.index {
			h, n := decodeHandle(it.val)
			if n <= 0 {
				it.fail(off, "bad block handle in an index entry")
				return false
			}
			it.handle = h
		}
	} else {
		start := p
		if shared != 0 {
			if !prevHandle {
				it.fail(off, "delta-encoded index value without a previous handle")
				return false
			}
			delta, n := varsigned64(d[p:])
			if n <= 0 {
				it.fail(off, "bad delta-encoded index value")
				return false
			}
			p += n
			prev := it.handle
			size := int64(prev.size) + delta
			if size < 0 {
				it.fail(off, "negative block size in a delta-encoded index value")
				return false
			}
			it.handle = blockHandle{prev.offset + prev.size + blockTrailerLen, uint64(size)}
		} else {
			h, n := decodeHandle(d[p:])
			if n <= 0 {
				it.fail(off, "bad block handle in an index entry")
				return false
			}
			p += n
			it.handle = h
		}
		if it.firstKey {
			_, n := lengthPrefixed(d[p:])
			if n <= 0 {
				it.fail(off, "bad first key in an index entry")
				return false
			}
			p += n
		}
		it.val = d[start:p:p]
	}
	it.cur, it.nxt = off, p
	return true
}

// nextData decodes the entry after the current one of a data block (no
// delta-encoded values, no handles): decodeAt's common case, kept small so
// that a scan's step is cheap. It falls back to decodeAt for multi-byte
// varints and for every error.
func (it *blockIter) nextData() bool {
	d := it.b.data[:it.b.restarts]
	p := it.nxt
	if p+4 > len(d) || d[p]|d[p+1] >= 0x80 || it.deltaValue {
		return it.decodeAt(p, true)
	}
	shared, nonShared, valLen := int(d[p]), int(d[p+1]), int(d[p+2])
	q := p + 3
	if valLen >= 0x80 { // a value of 128 to 16383 bytes: two bytes of length
		if d[p+3] >= 0x80 {
			return it.decodeAt(p, true)
		}
		valLen = valLen&0x7f | int(d[p+3])<<7
		q++
	}
	if shared > len(it.key) || nonShared+valLen > len(d)-q {
		return it.decodeAt(p, true)
	}
	src := d[q : q+nonShared]
	it.same = sameUser(it.key, shared, src)
	if n := shared + nonShared; nonShared <= 16 && shared+16 <= cap(it.key) && q+16 <= len(d) {
		// Most suffixes (the end of the user key and the 8-byte trailer):
		// one 16-byte move instead of a call to memmove; the bytes past
		// the key are the buffer's slack.
		it.key = it.key[:shared+16]
		*(*[16]byte)(it.key[shared:]) = *(*[16]byte)(d[q:])
		it.key = it.key[:n]
	} else {
		it.key = appendKey(it.key[:shared], src)
	}
	q += nonShared
	it.val = d[q : q+valLen : q+valLen]
	it.cur, it.nxt = p, q+valLen
	return true
}

// appendKey appends rest to a key being rebuilt, keeping room for
// nextData's 16-byte moves.
func appendKey(k, rest []byte) []byte {
	if n := len(k) + len(rest); n+16 > cap(k) {
		k = append(make([]byte, 0, n+32), k...)
	}
	return append(k, rest...)
}

// sameUser is blockIter.same for the key prev[:shared] + rest that follows
// the key prev (shared <= len(prev)).
func sameUser(prev []byte, shared int, rest []byte) int8 {
	n := shared + len(rest)
	switch {
	case n != len(prev) || n < 8:
		return 0
	case shared >= n-8:
		return 1
	case prev[shared] != rest[0] || !bytes.Equal(prev[shared:n-8], rest[:n-8-shared]):
		// Keys at restart points are stored whole (shared 0).
		return 0
	}
	return 1
}

func (it *blockIter) first() bool {
	it.key = it.key[:0]
	if it.b.numRestarts == 0 {
		it.cur = it.b.restarts
		return false
	}
	return it.decodeAt(it.b.restart(0), false)
}

func (it *blockIter) next() bool {
	if !it.valid() {
		return false
	}
	return it.decodeAt(it.nxt, true)
}

// seekGE positions at the first entry whose key, cut by keyLen (the user
// key of an internal key, or the whole key), is >= target.
func (it *blockIter) seekGE(target []byte, userKey func([]byte) []byte) bool {
	b := &it.b
	if b.numRestarts == 0 {
		it.cur = b.restarts
		return false
	}
	// Binary search for the last restart point whose key is < target: keys
	// at restart points are stored whole.
	lo, hi := 0, b.numRestarts-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		off := b.restart(mid)
		if off >= b.restarts {
			it.fail(b.restarts+4*mid, "restart point past the entries")
			return false
		}
		it.key = it.key[:0]
		if !it.decodeAt(off, false) {
			return false
		}
		if bytes.Compare(userKey(it.key), target) < 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	off := b.restart(lo)
	if off >= b.restarts {
		it.fail(b.restarts+4*lo, "restart point past the entries")
		return false
	}
	it.key = it.key[:0]
	if !it.decodeAt(off, false) {
		return false
	}
	for bytes.Compare(userKey(it.key), target) < 0 {
		if !it.next() {
			return false
		}
	}
	return true
}
