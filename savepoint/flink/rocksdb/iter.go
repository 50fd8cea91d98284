package rocksdb

import (
	"bytes"
	"encoding/binary"
)

// Value types of an internal key's trailer (db/dbformat.h).
const (
	typeDeletion              = 0x0
	typeValue                 = 0x1
	typeMerge                 = 0x2
	typeSingleDeletion        = 0x7
	typeRangeDeletion         = 0xF
	typeBlobIndex             = 0x11
	typeDeletionWithTimestamp = 0x14
	typeWideColumnEntity      = 0x16
	typeValuePreferredSeqno   = 0x18
)

// An internal key is the user key followed by 8 little-endian bytes:
// sequence number << 8 | value type.
func userKey(ik []byte) []byte { return ik[:len(ik)-8] }

func trailer(ik []byte) uint64 { return le64(ik[len(ik)-8:]) }

func identity(k []byte) []byte { return k }

// tableIter iterates the entries of one table: a two-level iteration over
// the index (or, partitioned, over the top-level index and its partitions)
// and the data blocks.
type tableIter struct {
	t     *Table
	upper []byte // exclusive user-key bound: blocks past it are not read
	trace func(BlockRef)

	top     blockIter // the table's index, or the top level of a partitioned one
	part    blockIter // the current partition
	partRaw []byte
	partDec []byte
	data    blockIter
	dataDec [2][]byte
	dataRaw [2][]byte
	ra      readahead
	pf      *prefetch // nil: no reading ahead
	loads   uint64
	// Offsets of the last data block and partition loaded since the last
	// positioning: blocks follow one another, so an index that points back
	// is corrupt (and would make one scan decompress a block again and
	// again).
	lastData, lastPart int64
	keyBuf             []byte // key with the global sequence number applied
	altKey             []byte // the data block iterator's other key buffer
	err                error
	ok                 bool
}

func newTableIter(t *Table, upper []byte, trace func(BlockRef), pf *prefetch) *tableIter {
	it := &tableIter{t: t, upper: upper, trace: trace, pf: pf, lastData: -1, lastPart: -1}
	it.top.index, it.top.deltaValue, it.top.firstKey = true, t.deltaValues, t.firstKey
	it.part.index, it.part.deltaValue, it.part.firstKey = true, t.deltaValues, t.firstKey
	return it
}

func (it *tableIter) indexKey(k []byte) []byte {
	if it.t.userKeyIndex {
		return k
	}
	if len(k) < 8 {
		return k
	}
	return k[:len(k)-8]
}

// indexKey0 is userKey for a data block's keys, tolerating keys too short
// to be internal keys (settle reports those).
func (it *tableIter) indexKey0(k []byte) []byte {
	if len(k) < 8 {
		return k
	}
	return k[:len(k)-8]
}

// idx is the iterator over data block handles.
func (it *tableIter) idx() *blockIter {
	if it.t.partitioned {
		return &it.part
	}
	return &it.top
}

func (it *tableIter) setErr(err error) bool {
	if it.err == nil {
		it.err = err
	}
	it.ok = false
	return false
}

func (it *tableIter) loadPartition() bool {
	h := it.top.handle
	if int64(h.offset) <= it.lastPart {
		return it.setErr(corruptf(it.t.name, it.t.index.off, "index partition at %d follows the one at %d", h.offset, it.lastPart))
	}
	it.lastPart = int64(h.offset)
	if it.trace != nil {
		it.trace(BlockRef{File: it.t.name, Kind: "index partition", Offset: h.offset, Size: h.size})
	}
	b, err := it.t.readBlock(h, "index partition", &it.partRaw, &it.partDec, nil)
	if err != nil {
		return it.setErr(err)
	}
	it.part.init(b)
	return true
}

func (it *tableIter) loadData() bool {
	h := it.idx().handle
	if int64(h.offset) <= it.lastData {
		return it.setErr(corruptf(it.t.name, it.idx().b.off, "data block at %d follows the one at %d", h.offset, it.lastData))
	}
	it.lastData = int64(h.offset)
	if it.trace != nil {
		it.trace(BlockRef{File: it.t.name, Kind: "data", Offset: h.offset, Size: h.size})
	}
	// The previous block's last key stays intact in the other buffer
	// (Iter.Next compares with it).
	it.data.key, it.altKey = it.altKey[:0], it.data.key
	if b, ok := it.prefetched(h); ok {
		it.loads++
		it.data.init(b)
		return true
	}
	// Alternate buffers: the previous block stays valid while this one is
	// read (see gen). With batches to read ahead, the few blocks read the
	// ordinary way are read exactly.
	i := it.loads & 1
	var b block
	var err error
	if it.pf != nil {
		b, err = it.t.readBlock(h, "data", &it.dataRaw[i], &it.dataDec[i], nil)
	} else {
		b, err = it.t.readBlock(h, "data", nil, &it.dataDec[i], &it.ra)
	}
	if err != nil {
		return it.setErr(err)
	}
	it.loads++
	it.data.init(b)
	if it.pf != nil {
		it.pf.loaded()
		it.startPrefetch()
	}
	return true
}

// pastUpper reports whether every block after the current index entry lies
// at or past the upper bound: the entry's key is >= every key of its block
// and < every key of the next.
func (it *tableIter) pastUpper(ix *blockIter) bool {
	return it.upper != nil && bytes.Compare(it.indexKey(ix.key), it.upper) >= 0
}

// nextIndex moves to the next data block handle, across partitions.
func (it *tableIter) nextIndex() bool {
	ix := it.idx()
	if ix.next() {
		return true
	}
	if ix.err != nil {
		return it.setErr(ix.err)
	}
	if !it.t.partitioned {
		return false
	}
	for {
		if it.pastUpper(&it.top) {
			return false
		}
		if !it.top.next() {
			if it.top.err != nil {
				return it.setErr(it.top.err)
			}
			return false
		}
		if !it.loadPartition() {
			return false
		}
		if it.part.first() {
			return true
		}
		if it.part.err != nil {
			return it.setErr(it.part.err)
		}
	}
}

// settle moves forward from the current data position to the first valid
// entry, loading further blocks as needed.
func (it *tableIter) settle() bool {
	for !it.data.valid() {
		if it.data.err != nil {
			return it.setErr(it.data.err)
		}
		if it.pastUpper(it.idx()) || !it.nextIndex() {
			it.ok = false
			return false
		}
		if !it.loadData() {
			return false
		}
		if !it.data.first() {
			if it.data.err != nil {
				return it.setErr(it.data.err)
			}
			// RocksDB never writes one; reading past it would also break
			// the two-block validity of values (gen).
			return it.setErr(corruptf(it.t.name, it.data.b.off, "data block without entries"))
		}
	}
	if len(it.data.key) < 8 {
		return it.setErr(corruptf(it.t.name, it.data.b.off+int64(it.data.cur), "internal key of %d bytes", len(it.data.key)))
	}
	it.ok = true
	return true
}

func (it *tableIter) first() bool {
	it.err, it.ok = nil, false
	it.data.init(block{})
	it.resetReadahead()
	if !it.top.initFrom(it.t.index) || !it.top.first() {
		return it.setErr(it.top.err)
	}
	if it.t.partitioned {
		if !it.loadPartition() {
			return false
		}
		if !it.part.first() {
			if it.part.err != nil {
				return it.setErr(it.part.err)
			}
			if !it.nextIndex() {
				return false
			}
		}
	}
	if !it.loadData() {
		return false
	}
	it.data.first()
	return it.settle()
}

func (it *tableIter) seekGE(ukey []byte) bool {
	it.err, it.ok = nil, false
	it.data.init(block{})
	it.resetReadahead()
	it.top.initFrom(it.t.index)
	if !it.top.seekGE(ukey, it.indexKey) {
		return it.setErr(it.top.err)
	}
	if it.t.partitioned {
		for {
			if !it.loadPartition() {
				return false
			}
			if it.part.seekGE(ukey, it.indexKey) {
				break
			}
			if it.part.err != nil {
				return it.setErr(it.part.err)
			}
			if !it.top.next() {
				return it.setErr(it.top.err)
			}
		}
	}
	if !it.loadData() {
		return false
	}
	it.data.seekGE(ukey, it.indexKey0)
	return it.settle()
}

func (it *tableIter) next() bool {
	if !it.ok {
		return false
	}
	d := &it.data
	if d.nxt >= d.b.restarts {
		d.cur = d.b.restarts // the block is done
	} else if d.nextData() && len(d.key) >= 8 {
		return true
	}
	return it.settle()
}

func (it *tableIter) valid() bool { return it.ok }

func (it *tableIter) key() []byte {
	if !it.t.hasGlobalSeq {
		return it.data.key
	}
	return it.globalKey()
}

// globalKey is the current key with the table's global sequence number.
func (it *tableIter) globalKey() []byte {
	k := it.data.key
	it.keyBuf = append(it.keyBuf[:0], k...)
	tr := trailer(k)&0xff | it.t.globalSeq<<8
	binary.LittleEndian.PutUint64(it.keyBuf[len(it.keyBuf)-8:], tr)
	return it.keyBuf
}

func (it *tableIter) value() []byte { return it.data.val }

// gen counts the data blocks loaded. A value stays valid until the
// iterator has loaded two more blocks (its buffers alternate), so a caller
// holding one copies it when gen moves.
func (it *tableIter) gen() uint64 { return it.loads }

// resetReadahead starts a new positioning: exact reads again, and any
// block may come first.
func (it *tableIter) resetReadahead() {
	it.ra.reset()
	if it.pf != nil {
		it.pf.reset()
	}
	it.lastData, it.lastPart = -1, -1
}
func (it *tableIter) error() error { return it.err }

// initFrom starts an iterator over b; false (with no error) when b is empty.
func (it *blockIter) initFrom(b block) bool {
	it.init(b)
	return true
}
