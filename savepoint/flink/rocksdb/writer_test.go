package rocksdb

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"sort"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// A table and MANIFEST writer of RocksDB's formats, written from the format
// (table/block_based/block_builder.cc, block_based_table_builder.cc,
// table/format.cc, db/version_edit.cc, db/log_writer.cc) for tests only: it
// lets the tests build stores RocksDB could have written with any format
// version, checksum, compression and index layout.

type tableOpts struct {
	formatVersion uint32
	checksum      byte
	compression   byte
	blockSize     int
	restart       int
	indexRestart  int
	partitioned   bool
	partitionSize int // index entries per partition
	userKeyIndex  bool
	hashIndex     bool // set the data block hash index bit (buckets empty)
	firstKey      bool // kBinarySearchWithFirstKey
	cfName        string
	cfID          uint64
	globalSeq     uint64 // ingested file: written with seqno 0, property version 2
	baseContext   uint32
}

type kv struct{ key, value []byte } // internal key

func ikey(uk string, seq uint64, typ byte) []byte {
	b := append([]byte(uk), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint64(b[len(b)-8:], seq<<8|uint64(typ))
	return b
}

type blockBuilder struct {
	buf        []byte
	restarts   []uint32
	counter    int
	interval   int
	last       []byte
	index      bool
	delta      bool
	prevHandle blockHandle
	n          int
}

func newBlockBuilder(interval int) *blockBuilder {
	return &blockBuilder{interval: max(interval, 1), restarts: []uint32{0}}
}

func putUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func (bb *blockBuilder) add(key, value []byte) {
	bb.addRaw(key, value, blockHandle{}, false)
}

func (bb *blockBuilder) addHandle(key []byte, h blockHandle, firstKey []byte, withFirst bool) {
	var full []byte
	full = putUvarint(full, h.offset)
	full = putUvarint(full, h.size)
	if withFirst {
		full = putUvarint(full, uint64(len(firstKey)))
		full = append(full, firstKey...)
	}
	bb.addRaw(key, full, h, withFirst)
	_ = firstKey
}

func (bb *blockBuilder) addRaw(key, value []byte, h blockHandle, withFirst bool) {
	shared := 0
	if bb.counter >= bb.interval {
		bb.restarts = append(bb.restarts, uint32(len(bb.buf)))
		bb.counter = 0
	} else {
		for shared < len(key) && shared < len(bb.last) && key[shared] == bb.last[shared] {
			shared++
		}
	}
	nonShared := len(key) - shared
	if bb.delta {
		bb.buf = putUvarint(bb.buf, uint64(shared))
		bb.buf = putUvarint(bb.buf, uint64(nonShared))
	} else {
		bb.buf = putUvarint(bb.buf, uint64(shared))
		bb.buf = putUvarint(bb.buf, uint64(nonShared))
		bb.buf = putUvarint(bb.buf, uint64(len(value)))
	}
	bb.buf = append(bb.buf, key[shared:]...)
	if bb.delta && shared != 0 {
		d := int64(h.size) - int64(bb.prevHandle.size)
		bb.buf = binary.AppendUvarint(bb.buf, uint64(d<<1)^uint64(d>>63))
		if withFirst {
			// the first key follows the delta too
			_, n := decodeHandle(value)
			bb.buf = append(bb.buf, value[n:]...)
		}
	} else {
		bb.buf = append(bb.buf, value...)
	}
	bb.prevHandle = h
	bb.last = append(bb.last[:0], key...)
	bb.counter++
	bb.n++
}

func (bb *blockBuilder) finish(hash bool) []byte {
	out := bb.buf
	for _, r := range bb.restarts {
		out = binary.LittleEndian.AppendUint32(out, r)
	}
	n := uint32(len(bb.restarts))
	if hash {
		out = append(out, 0xff)                        // one empty bucket
		out = binary.LittleEndian.AppendUint16(out, 1) // NUM_BUCKETS
		n |= 1 << 31
	}
	return binary.LittleEndian.AppendUint32(out, n)
}

type tableWriter struct {
	o   tableOpts
	out []byte
}

func compressBlock(t byte, raw []byte) []byte {
	switch t {
	case compressionSnappy:
		return snappy.Encode(nil, raw)
	case compressionLZ4, compressionLZ4HC:
		dst := make([]byte, lz4.CompressBlockBound(len(raw)))
		n, err := lz4.CompressBlock(raw, dst, nil)
		if err != nil || n == 0 {
			return nil
		}
		return append(putUvarint(nil, uint64(len(raw))), dst[:n]...)
	case compressionZSTD:
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		return enc.EncodeAll(raw, putUvarint(nil, uint64(len(raw))))
	case compressionZlib:
		var b bytes.Buffer
		b.Write(putUvarint(nil, uint64(len(raw))))
		w, _ := flate.NewWriter(&b, flate.BestSpeed)
		w.Write(raw)
		w.Close()
		return b.Bytes()
	}
	return nil
}

func (w *tableWriter) writeBlock(raw []byte, compress bool) blockHandle {
	typ := byte(compressionNone)
	data := raw
	if compress && w.o.compression != compressionNone {
		if c := compressBlock(w.o.compression, raw); c != nil && len(c) < len(raw)-len(raw)/8 {
			data, typ = c, w.o.compression
		}
	}
	h := blockHandle{uint64(len(w.out)), uint64(len(data))}
	w.out = append(w.out, data...)
	sum := blockChecksum(w.o.checksum, data, typ)
	if w.o.formatVersion >= 6 {
		sum += contextModifier(w.o.baseContext, h.offset)
	}
	w.out = append(w.out, typ)
	w.out = binary.LittleEndian.AppendUint32(w.out, sum)
	return h
}

func buildTable(o tableOpts, entries []kv, tombs []Tombstone) []byte {
	if o.blockSize == 0 {
		o.blockSize = 256
	}
	if o.restart == 0 {
		o.restart = 4
	}
	if o.indexRestart == 0 {
		o.indexRestart = 1
	}
	if o.formatVersion >= 6 && o.baseContext == 0 {
		o.baseContext = 0x5eed1234
	}
	delta := o.formatVersion >= 4
	w := &tableWriter{o: o}
	type ixEntry struct {
		sep, first []byte
		h          blockHandle
	}
	var ix []ixEntry
	db := newBlockBuilder(o.restart)
	var first []byte
	var numMerges uint64
	flush := func(last []byte) {
		if db.n == 0 {
			return
		}
		h := w.writeBlock(db.finish(o.hashIndex), true)
		sep := bytes.Clone(last)
		if o.userKeyIndex {
			sep = sep[:len(sep)-8]
		}
		ix = append(ix, ixEntry{sep, first, h})
		db = newBlockBuilder(o.restart)
	}
	for i, e := range entries {
		k := e.key
		if byte(trailer(k)) == typeMerge {
			numMerges++
		}
		if o.globalSeq != 0 {
			k = ikey(string(userKey(k)), 0, byte(trailer(k)))
		}
		if db.n == 0 {
			first = bytes.Clone(k)
		}
		db.add(k, e.value)
		cut := len(db.buf) >= o.blockSize
		if cut && o.userKeyIndex && i+1 < len(entries) && bytes.Equal(userKey(entries[i+1].key), userKey(e.key)) {
			cut = false // a user key index needs every user key in one block
		}
		if cut || i == len(entries)-1 {
			flush(k)
		}
	}
	// Index (partitions, then the top level).
	newIndex := func() *blockBuilder {
		b := newBlockBuilder(o.indexRestart)
		b.delta = delta
		return b
	}
	var indexRaw []byte
	if o.partitioned {
		per := max(o.partitionSize, 1)
		top := newIndex()
		for s := 0; s < len(ix); s += per {
			p := newIndex()
			end := min(s+per, len(ix))
			for _, e := range ix[s:end] {
				p.addHandle(e.sep, e.h, e.first, o.firstKey)
			}
			ph := w.writeBlock(p.finish(false), true)
			top.addHandle(ix[end-1].sep, ph, ix[s].first, o.firstKey)
		}
		indexRaw = top.finish(false)
	} else {
		b := newIndex()
		for _, e := range ix {
			b.addHandle(e.sep, e.h, e.first, o.firstKey)
		}
		indexRaw = b.finish(false)
	}
	meta := map[string]blockHandle{}
	if len(tombs) > 0 {
		rb := newBlockBuilder(1)
		sort.Slice(tombs, func(i, j int) bool { return bytes.Compare(tombs[i].Start, tombs[j].Start) < 0 })
		for _, t := range tombs {
			seq := t.Seq
			if o.globalSeq != 0 {
				seq = 0
			}
			rb.add(ikey(string(t.Start), seq, typeRangeDeletion), t.End)
		}
		meta[metaRangeDel] = w.writeBlock(rb.finish(false), true)
	}
	props := map[string][]byte{
		propCFName:         []byte(o.cfName),
		propCFID:           putUvarint(nil, o.cfID),
		propComparator:     []byte(bytewiseComparator),
		propMergeOperator:  []byte("StringAppendTESTOperator"),
		propCompression:    []byte(compressionName(o.compression)),
		propNumEntries:     putUvarint(nil, uint64(len(entries)+len(tombs))),
		propNumDataBlocks:  putUvarint(nil, uint64(len(ix))),
		propMergeOperands:  putUvarint(nil, numMerges),
		propRangeDeletions: putUvarint(nil, uint64(len(tombs))),
		propIndexUserKey:   putUvarint(nil, b2u(o.userKeyIndex)),
		propIndexDelta:     putUvarint(nil, b2u(delta)),
	}
	it := uint32(indexBinarySearch)
	if o.partitioned {
		it = indexTwoLevel
	} else if o.firstKey {
		it = indexBinarySearchFirstKey
	}
	props[propIndexType] = binary.LittleEndian.AppendUint32(nil, it)
	if o.globalSeq != 0 {
		props[propExternalVersion] = binary.LittleEndian.AppendUint32(nil, 2)
		props[propGlobalSeqno] = binary.LittleEndian.AppendUint64(nil, 0)
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	pb := newBlockBuilder(1)
	for _, k := range names {
		pb.add([]byte(k), props[k])
	}
	meta[metaProperties] = w.writeBlock(pb.finish(false), false)
	indexHandle := w.writeBlock(indexRaw, true)
	if o.formatVersion >= 6 {
		meta[metaIndex] = indexHandle
	}
	mnames := make([]string, 0, len(meta))
	for k := range meta {
		mnames = append(mnames, k)
	}
	sort.Strings(mnames)
	mb := newBlockBuilder(1)
	for _, k := range mnames {
		var v []byte
		v = putUvarint(v, meta[k].offset)
		v = putUvarint(v, meta[k].size)
		mb.add([]byte(k), v)
	}
	metaHandle := w.writeBlock(mb.finish(false), false)
	w.out = append(w.out, buildFooter(o, metaHandle, indexHandle, uint64(len(w.out)))...)
	return w.out
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func buildFooter(o tableOpts, meta, index blockHandle, footerOff uint64) []byte {
	f := make([]byte, footerLen)
	f[0] = o.checksum
	if o.formatVersion >= 6 {
		copy(f[1:5], extendedMagic)
		binary.LittleEndian.PutUint32(f[9:], o.baseContext)
		binary.LittleEndian.PutUint32(f[13:], uint32(meta.size))
	} else {
		p := putUvarint(nil, meta.offset)
		p = putUvarint(p, meta.size)
		p = putUvarint(p, index.offset)
		p = putUvarint(p, index.size)
		copy(f[1:], p)
	}
	binary.LittleEndian.PutUint32(f[41:], o.formatVersion)
	binary.LittleEndian.PutUint64(f[45:], magicBlockBased)
	if o.formatVersion >= 6 && o.checksum != checksumNone {
		sum := wholeChecksum(o.checksum, f) + contextModifier(o.baseContext, footerOff)
		binary.LittleEndian.PutUint32(f[5:], sum)
	}
	return f
}

// manifestWriter writes version edits as log records.
type manifestWriter struct{ out []byte }

func (m *manifestWriter) record(payload []byte) {
	first := true
	for {
		left := logBlockSize - len(m.out)%logBlockSize
		if left < logHeaderLen {
			m.out = append(m.out, make([]byte, left)...)
			left = logBlockSize
		}
		n := min(len(payload), left-logHeaderLen)
		last := n == len(payload)
		typ := byte(recFull)
		switch {
		case first && !last:
			typ = recFirst
		case !first && last:
			typ = recLast
		case !first && !last:
			typ = recMiddle
		}
		c := crc32.Update(0, castagnoli, []byte{typ})
		c = crc32.Update(c, castagnoli, payload[:n])
		m.out = binary.LittleEndian.AppendUint32(m.out, maskCRC(c))
		m.out = binary.LittleEndian.AppendUint16(m.out, uint16(n))
		m.out = append(m.out, typ)
		m.out = append(m.out, payload[:n]...)
		payload = payload[n:]
		first = false
		if last {
			return
		}
	}
}

type editBuilder struct{ b []byte }

func (e *editBuilder) tag(t uint32) *editBuilder {
	e.b = binary.AppendUvarint(e.b, uint64(t))
	return e
}
func (e *editBuilder) u(v uint64) *editBuilder { e.b = binary.AppendUvarint(e.b, v); return e }
func (e *editBuilder) s(v []byte) *editBuilder {
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
	return e
}

func (e *editBuilder) newFile(level int, f *FileMeta) *editBuilder {
	e.tag(tagNewFile4).u(uint64(level)).u(f.Number).u(f.Size).s(f.Smallest).s(f.Largest).u(f.SmallestSeq).u(f.LargestSeq)
	e.tag(customTerminate)
	return e
}
