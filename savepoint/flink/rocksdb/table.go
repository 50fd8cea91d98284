package rocksdb

import (
	"bytes"
	"fmt"
	"io"
)

// File is one file of a RocksDB instance (an SST, a MANIFEST, CURRENT).
type File interface {
	io.ReaderAt
	Size() int64
	// Name names the file in errors and plans: its local name and, when it
	// lives elsewhere, where.
	Name() string
}

// Names of the meta blocks and table properties this reader uses
// (table/meta_blocks.cc, table/table_properties.cc,
// table/block_based/block_based_table_builder.cc).
const (
	metaProperties    = "rocksdb.properties"
	metaPropertiesOld = "rocksdb.stats"
	metaIndex         = "rocksdb.index"
	metaRangeDel      = "rocksdb.range_del"
	metaCompressDict  = "rocksdb.compression_dict"

	propCFID            = "rocksdb.column.family.id"
	propCFName          = "rocksdb.column.family.name"
	propComparator      = "rocksdb.comparator"
	propMergeOperator   = "rocksdb.merge.operator"
	propCompression     = "rocksdb.compression"
	propNumEntries      = "rocksdb.num.entries"
	propNumDataBlocks   = "rocksdb.num.data.blocks"
	propMergeOperands   = "rocksdb.merge.operands"
	propRangeDeletions  = "rocksdb.num.range-deletions"
	propIndexType       = "rocksdb.block.based.table.index.type"
	propIndexUserKey    = "rocksdb.index.key.is.user.key"
	propIndexDelta      = "rocksdb.index.value.is.delta.encoded"
	propExternalVersion = "rocksdb.external_sst_file.version"
	propGlobalSeqno     = "rocksdb.external_sst_file.global_seqno"
	propUserTimestamps  = "rocksdb.timestamp_size"
)

// Index types of BlockBasedTableOptions::IndexType.
const (
	indexBinarySearch          = 0
	indexHashSearch            = 1 // a binary search index plus prefix meta blocks
	indexTwoLevel              = 2 // partitioned
	indexBinarySearchFirstKey  = 3
	bytewiseComparator         = "leveldb.BytewiseComparator"
	maxMetaBlockEntriesPerFile = 1 << 16
)

// Properties are the table properties this reader uses.
type Properties struct {
	ColumnFamilyID    uint64
	ColumnFamily      string
	Comparator        string
	MergeOperator     string
	Compression       string
	NumEntries        uint64
	NumDataBlocks     uint64
	NumMergeOperands  uint64
	NumRangeDeletions uint64
	IndexType         uint32
	// Raw holds every property as stored.
	Raw map[string][]byte
}

// Tombstone is a range deletion: user keys in [Start, End) written with a
// sequence number below Seq are deleted.
type Tombstone struct {
	Start, End []byte
	Seq        uint64
}

// Table is an opened block-based table. Open reads the footer, the
// metaindex, the properties, the (top-level) index and the range deletions;
// data blocks are read by iterators.
type Table struct {
	f      File
	name   string
	size   int64
	footer footer
	Props  Properties

	index        block
	indexHandle  blockHandle
	partitioned  bool
	userKeyIndex bool
	deltaValues  bool
	firstKey     bool
	tombstones   []Tombstone
	// globalSeq, when set, is the sequence number of every entry (a file
	// ingested from outside, written with sequence number 0).
	globalSeq    uint64
	hasGlobalSeq bool
}

// OpenTable opens a block-based table. largestSeq is the file's largest
// sequence number from the MANIFEST (the global sequence number of an
// ingested file), or 0 when unknown.
func OpenTable(f File, largestSeq uint64) (*Table, error) {
	t := &Table{f: f, name: f.Name(), size: f.Size()}
	n := min(t.size, footerLen)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, t.size-n); err != nil && err != io.EOF {
		return nil, &Error{File: t.name, Offset: t.size - n, Msg: "reading the footer: " + err.Error(), Err: short(err)}
	}
	var err error
	if t.footer, err = readFooter(t.name, t.size, tail); err != nil {
		return nil, err
	}
	meta, err := t.readBlock(t.footer.metaindex, "metaindex", nil, nil, nil)
	if err != nil {
		return nil, err
	}
	handles := map[string]blockHandle{}
	var it blockIter
	it.init(meta)
	for ok := it.first(); ok; ok = it.next() {
		h, n := decodeHandle(it.val)
		if n <= 0 {
			return nil, corruptf(t.name, int64(t.footer.metaindex.offset)+int64(it.cur), "bad block handle for meta block %q", it.key)
		}
		if len(handles) >= maxMetaBlockEntriesPerFile {
			return nil, corruptf(t.name, int64(t.footer.metaindex.offset), "more than %d meta blocks", maxMetaBlockEntriesPerFile)
		}
		handles[string(it.key)] = h
	}
	if it.err != nil {
		return nil, it.err
	}
	ph, ok := handles[metaProperties]
	if !ok {
		ph, ok = handles[metaPropertiesOld]
	}
	if !ok {
		return nil, corruptf(t.name, int64(t.footer.metaindex.offset), "no properties block")
	}
	if err := t.readProperties(ph); err != nil {
		return nil, err
	}
	if err := t.checkFeatures(largestSeq); err != nil {
		return nil, err
	}
	if _, ok := handles[metaCompressDict]; ok {
		return nil, unsupportedf(t.name, int64(t.footer.metaindex.offset), "blocks compressed with a dictionary (%s)", metaCompressDict)
	}
	t.indexHandle = t.footer.index
	if t.footer.formatVersion >= 6 {
		if t.indexHandle, ok = handles[metaIndex]; !ok {
			return nil, corruptf(t.name, int64(t.footer.metaindex.offset), "format_version %d table without %s in its metaindex", t.footer.formatVersion, metaIndex)
		}
	}
	if t.index, err = t.readBlock(t.indexHandle, "index", nil, nil, nil); err != nil {
		return nil, err
	}
	if rh, ok := handles[metaRangeDel]; ok {
		if err := t.readTombstones(rh); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Name is the file's name as given by its File.
func (t *Table) Name() string { return t.name }

// FormatVersion is the footer's format_version.
func (t *Table) FormatVersion() uint32 { return t.footer.formatVersion }

// Tombstones are the table's range deletions, with the table's global
// sequence number applied.
func (t *Table) Tombstones() []Tombstone { return t.tombstones }

func (t *Table) readProperties(h blockHandle) error {
	b, err := t.readBlock(h, "properties", nil, nil, nil)
	if err != nil {
		return err
	}
	p := &t.Props
	p.Raw = map[string][]byte{}
	var it blockIter
	it.init(b)
	for ok := it.first(); ok; ok = it.next() {
		if len(p.Raw) >= maxMetaBlockEntriesPerFile {
			return corruptf(t.name, int64(h.offset), "more than %d properties", maxMetaBlockEntriesPerFile)
		}
		p.Raw[string(it.key)] = bytes.Clone(it.val)
	}
	if it.err != nil {
		return it.err
	}
	num := func(name string) (uint64, error) {
		v, ok := p.Raw[name]
		if !ok {
			return 0, nil
		}
		x, n := uvarint64(v)
		if n != len(v) {
			return 0, corruptf(t.name, int64(h.offset), "property %s is not a varint", name)
		}
		return x, nil
	}
	for _, f := range []struct {
		name string
		dst  *uint64
	}{
		{propCFID, &p.ColumnFamilyID},
		{propNumEntries, &p.NumEntries},
		{propNumDataBlocks, &p.NumDataBlocks},
		{propMergeOperands, &p.NumMergeOperands},
		{propRangeDeletions, &p.NumRangeDeletions},
	} {
		if *f.dst, err = num(f.name); err != nil {
			return err
		}
	}
	p.ColumnFamily = string(p.Raw[propCFName])
	p.Comparator = string(p.Raw[propComparator])
	p.MergeOperator = string(p.Raw[propMergeOperator])
	p.Compression = string(p.Raw[propCompression])
	if v, ok := p.Raw[propIndexType]; ok {
		if len(v) != 4 {
			return corruptf(t.name, int64(h.offset), "property %s has %d bytes", propIndexType, len(v))
		}
		p.IndexType = le32(v)
	}
	userKey, err := num(propIndexUserKey)
	if err != nil {
		return err
	}
	delta, err := num(propIndexDelta)
	if err != nil {
		return err
	}
	t.userKeyIndex, t.deltaValues = userKey != 0, delta != 0
	return nil
}

func (t *Table) checkFeatures(largestSeq uint64) error {
	p := &t.Props
	at := int64(t.footer.metaindex.offset)
	switch p.IndexType {
	case indexBinarySearch, indexHashSearch:
	case indexTwoLevel:
		t.partitioned = true
	case indexBinarySearchFirstKey:
		t.firstKey = true
	default:
		return unsupportedf(t.name, at, "index type %d", p.IndexType)
	}
	if p.Comparator != "" && p.Comparator != bytewiseComparator {
		return unsupportedf(t.name, at, "comparator %q (only %s is read)", p.Comparator, bytewiseComparator)
	}
	if v, ok := p.Raw[propUserTimestamps]; ok && !bytes.Equal(v, []byte{0}) && len(v) != 0 {
		if x, n := uvarint64(v); n != len(v) || x != 0 {
			return unsupportedf(t.name, at, "user-defined timestamps")
		}
	}
	if v, ok := p.Raw[propExternalVersion]; ok {
		if len(v) != 4 {
			return corruptf(t.name, at, "property %s has %d bytes", propExternalVersion, len(v))
		}
		if le32(v) >= 2 {
			var g uint64
			if s, ok := p.Raw[propGlobalSeqno]; ok {
				if len(s) != 8 {
					return corruptf(t.name, at, "property %s has %d bytes", propGlobalSeqno, len(s))
				}
				g = le64(s)
			}
			if g == 0 {
				g = largestSeq
			}
			t.globalSeq, t.hasGlobalSeq = g, true
		}
	}
	return nil
}

func (t *Table) readTombstones(h blockHandle) error {
	b, err := t.readBlock(h, "range deletion", nil, nil, nil)
	if err != nil {
		return err
	}
	var it blockIter
	it.init(b)
	for ok := it.first(); ok; ok = it.next() {
		if len(it.key) < 8 {
			return corruptf(t.name, int64(h.offset)+int64(it.cur), "range deletion key of %d bytes", len(it.key))
		}
		trailer := le64(it.key[len(it.key)-8:])
		if byte(trailer) != typeRangeDeletion {
			return corruptf(t.name, int64(h.offset)+int64(it.cur), "entry of type %#x in the range deletion block", byte(trailer))
		}
		seq := trailer >> 8
		if t.hasGlobalSeq {
			seq = t.globalSeq
		}
		t.tombstones = append(t.tombstones, Tombstone{
			Start: bytes.Clone(it.key[:len(it.key)-8]),
			End:   bytes.Clone(it.val),
			Seq:   seq,
		})
	}
	return it.err
}

// BlockRef names one block read from a table, for plans and tests.
type BlockRef struct {
	File   string
	Kind   string // "data", "index", "index partition", ...
	Offset uint64
	Size   uint64
}

func (r BlockRef) String() string {
	return fmt.Sprintf("%s %s block at %d (%d bytes)", r.File, r.Kind, r.Offset, r.Size)
}

// readBlock reads, verifies and decompresses one block. raw and dec are
// reusable buffers (nil: allocate); ra, when set, serves sequential reads
// from a read-ahead window.
func (t *Table) readBlock(h blockHandle, kind string, raw, dec *[]byte, ra *readahead) (block, error) {
	if h.size > maxBlockSize || h.offset > uint64(t.size) || h.size+blockTrailerLen > uint64(t.size)-h.offset {
		return block{}, corruptf(t.name, int64(min(h.offset, uint64(t.size))), "%s block of %d bytes at %d runs past the end of the file (%d bytes)", kind, h.size, h.offset, t.size)
	}
	n := int(h.size) + blockTrailerLen
	var b []byte
	var err error
	if ra != nil {
		b, err = ra.read(t, int64(h.offset), n)
	} else {
		var buf []byte
		if raw != nil {
			buf = grow(*raw, n)
			*raw = buf
		} else {
			buf = make([]byte, n)
		}
		_, err = t.f.ReadAt(buf, int64(h.offset))
		if err == io.EOF {
			err = nil
		}
		b = buf
	}
	if err != nil {
		return block{}, &Error{File: t.name, Offset: int64(h.offset), Msg: fmt.Sprintf("reading the %s block: %v", kind, err), Err: err}
	}
	return t.decodeBlock(h, kind, b, dec)
}

// decodeBlock verifies, decompresses (into dec when set) and parses the
// bytes b of the block at h, its trailer included.
func (t *Table) decodeBlock(h blockHandle, kind string, b []byte, dec *[]byte) (block, error) {
	var err error
	data, typ := b[:h.size], b[h.size]
	if t.footer.checksum != checksumNone {
		stored := le32(b[h.size+1:]) - contextModifier(t.footer.baseContext, h.offset)
		if got := blockChecksum(t.footer.checksum, data, typ); got != stored {
			return block{}, corruptf(t.name, int64(h.offset), "%s block checksum mismatch (stored %#x, computed %#x)", kind, stored, got)
		}
	}
	if typ != compressionNone {
		var d []byte
		if dec != nil {
			d = *dec
		}
		if data, err = decompress(typ, data, d, t.name, int64(h.offset)); err != nil {
			return block{}, err
		}
		if dec != nil && cap(data) > cap(*dec) {
			*dec = data
		}
	}
	return parseBlock(data, t.name, int64(h.offset))
}

// readahead serves the sequential block reads of a scan from one window,
// growing it while reads stay sequential, as RocksDB's automatic readahead
// does; a seek starts again with exact reads, so a point lookup reads only
// the blocks it needs. Two buffers alternate: a new window never
// overwrites the one the previous block was served from.
type readahead struct {
	bufs    [2][]byte
	cur     int
	bufOff  int64
	size    int   // window to read next time
	nextOff int64 // where a sequential read would start
	seq     int   // sequential reads so far
}

const (
	readaheadMin = 16 << 10
	readaheadMax = 256 << 10 // RocksDB's max_auto_readahead_size; two windows stay in L2
)

func (r *readahead) reset() {
	*r = readahead{bufs: [2][]byte{r.bufs[0][:0], r.bufs[1][:0]}}
}

func (r *readahead) read(t *Table, off int64, n int) ([]byte, error) {
	buf := r.bufs[r.cur]
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(buf)) {
		r.nextOff = off + int64(n)
		return buf[off-r.bufOff : off-r.bufOff+int64(n)], nil
	}
	want := n
	if off == r.nextOff {
		r.seq++
		if r.seq >= 2 {
			r.size = min(max(r.size*2, readaheadMin), readaheadMax)
			want = max(n, r.size)
		}
	} else {
		r.seq, r.size = 0, 0
	}
	want = int(min(int64(want), t.size-off))
	r.cur ^= 1
	buf = grow(r.bufs[r.cur], want)
	r.bufs[r.cur] = buf
	m, err := t.f.ReadAt(buf, off)
	if err != nil && !(err == io.EOF && m == want) {
		r.bufs[r.cur] = buf[:0]
		return nil, err
	}
	r.bufOff = off
	r.nextOff = off + int64(n)
	return buf[:n], nil
}
