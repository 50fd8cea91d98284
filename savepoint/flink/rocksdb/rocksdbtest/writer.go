// Package rocksdbtest writes small RocksDB instances for tests outside the
// rocksdb package: block-based tables of format_version 5 with crc32c
// checksums, uncompressed, and a MANIFEST naming them, written from the
// formats (block_builder.cc, block_based_table_builder.cc, format.cc,
// version_edit.cc, log_writer.cc). The rocksdb package's own tests have a
// writer of every format variant; this one is the few lines other
// packages need to build Flink-shaped state. Never used outside tests.
package rocksdbtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
)

// Value types of internal keys.
const (
	Delete = 0x0
	Put    = 0x1
	Merge  = 0x2
)

// Entry is one version of a key.
type Entry struct {
	Key   []byte
	Seq   uint64
	Type  byte
	Value []byte
}

// RangeDelete deletes [Start, End) below Seq.
type RangeDelete struct {
	Start, End []byte
	Seq        uint64
}

// DB collects column families and tables, then writes the files.
type DB struct {
	cfs   []string
	files map[string][]byte
	edits [][]byte
	next  uint64
}

func New() *DB { return &DB{cfs: []string{"default"}, files: map[string][]byte{}, next: 10} }

// ColumnFamily adds a column family without tables (Flink creates one per
// registered state, empty or not).
func (db *DB) ColumnFamily(name string) { db.cfID(name) }

func (db *DB) cfID(name string) int {
	if i := slices.Index(db.cfs, name); i >= 0 {
		return i
	}
	db.cfs = append(db.cfs, name)
	return len(db.cfs) - 1
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func mask(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }

func ikey(k []byte, seq uint64, typ byte) []byte {
	return binary.LittleEndian.AppendUint64(append([]byte(nil), k...), seq<<8|uint64(typ))
}

type block struct {
	buf      []byte
	restarts []uint32
	n        int
	interval int
	last     []byte
}

func (b *block) add(k, v []byte) {
	shared := 0
	if b.n%b.interval == 0 {
		b.restarts = append(b.restarts, uint32(len(b.buf)))
	} else {
		for shared < len(k) && shared < len(b.last) && k[shared] == b.last[shared] {
			shared++
		}
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(k)-shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(v)))
	b.buf = append(b.buf, k[shared:]...)
	b.buf = append(b.buf, v...)
	b.last = append(b.last[:0], k...)
	b.n++
}

func (b *block) finish() []byte {
	out := b.buf
	if len(b.restarts) == 0 {
		b.restarts = []uint32{0}
	}
	for _, r := range b.restarts {
		out = binary.LittleEndian.AppendUint32(out, r)
	}
	return binary.LittleEndian.AppendUint32(out, uint32(len(b.restarts)))
}

type handle struct{ off, size uint64 }

func (h handle) enc() []byte { return binary.AppendUvarint(binary.AppendUvarint(nil, h.off), h.size) }

func writeBlock(out *[]byte, data []byte) handle {
	h := handle{uint64(len(*out)), uint64(len(data))}
	*out = append(*out, data...)
	c := crc32.Update(0, castagnoli, data)
	c = crc32.Update(c, castagnoli, []byte{0})
	*out = append(*out, 0)
	*out = binary.LittleEndian.AppendUint32(*out, mask(c))
	return h
}

// Table adds one table of column family cf at level with the given
// entries (any order) and range deletions. It returns the table's name.
func (db *DB) Table(cf string, level int, entries []Entry, dels []RangeDelete) string {
	id := db.cfID(cf)
	es := slices.Clone(entries)
	sort.Slice(es, func(i, j int) bool {
		if c := bytes.Compare(es[i].Key, es[j].Key); c != 0 {
			return c < 0
		}
		return es[i].Seq > es[j].Seq
	})
	var out []byte
	idx := &block{interval: 1}
	data := &block{interval: 4}
	var merges uint64
	var lo, hi []byte
	var minSeq, maxSeq uint64 = ^uint64(0), 0
	note := func(k []byte, seq uint64) {
		if lo == nil || bytes.Compare(k, lo) < 0 {
			lo = k
		}
		if hi == nil || bytes.Compare(k, hi) > 0 {
			hi = k
		}
		minSeq, maxSeq = min(minSeq, seq), max(maxSeq, seq)
	}
	for i, e := range es {
		k := ikey(e.Key, e.Seq, e.Type)
		data.add(k, e.Value)
		if e.Type == Merge {
			merges++
		}
		note(e.Key, e.Seq)
		if len(data.buf) > 200 || i == len(es)-1 {
			h := writeBlock(&out, data.finish())
			idx.add(k, h.enc())
			data = &block{interval: 4}
		}
	}
	meta := map[string]handle{}
	if len(dels) > 0 {
		rb := &block{interval: 1}
		ds := slices.Clone(dels)
		sort.Slice(ds, func(i, j int) bool { return bytes.Compare(ds[i].Start, ds[j].Start) < 0 })
		for _, d := range ds {
			rb.add(ikey(d.Start, d.Seq, 0xF), d.End)
			note(d.Start, d.Seq)
			note(d.End, d.Seq)
		}
		meta["rocksdb.range_del"] = writeBlock(&out, rb.finish())
	}
	props := map[string][]byte{
		"rocksdb.column.family.name":           []byte(cf),
		"rocksdb.column.family.id":             binary.AppendUvarint(nil, uint64(id)),
		"rocksdb.comparator":                   []byte("leveldb.BytewiseComparator"),
		"rocksdb.merge.operator":               []byte("StringAppendTESTOperator"),
		"rocksdb.num.entries":                  binary.AppendUvarint(nil, uint64(len(es)+len(dels))),
		"rocksdb.merge.operands":               binary.AppendUvarint(nil, merges),
		"rocksdb.num.range-deletions":          binary.AppendUvarint(nil, uint64(len(dels))),
		"rocksdb.index.key.is.user.key":        {0},
		"rocksdb.index.value.is.delta.encoded": {0},
		"rocksdb.block.based.table.index.type": {0, 0, 0, 0},
	}
	var names []string
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	pb := &block{interval: 1}
	for _, k := range names {
		pb.add([]byte(k), props[k])
	}
	meta["rocksdb.properties"] = writeBlock(&out, pb.finish())
	ih := writeBlock(&out, idx.finish())
	names = names[:0]
	for k := range meta {
		names = append(names, k)
	}
	sort.Strings(names)
	mb := &block{interval: 1}
	for _, k := range names {
		mb.add([]byte(k), meta[k].enc())
	}
	mh := writeBlock(&out, mb.finish())
	foot := make([]byte, 53)
	foot[0] = 1 // crc32c
	copy(foot[1:], append(mh.enc(), ih.enc()...))
	binary.LittleEndian.PutUint32(foot[41:], 5)
	binary.LittleEndian.PutUint64(foot[45:], 0x88e241b785f4cff7)
	out = append(out, foot...)

	db.next++
	name := fmt.Sprintf("%06d.sst", db.next)
	db.files[name] = out
	var e []byte
	e = binary.AppendUvarint(e, 200)
	e = binary.AppendUvarint(e, uint64(id))
	e = binary.AppendUvarint(e, 103)
	e = binary.AppendUvarint(e, uint64(level))
	e = binary.AppendUvarint(e, db.next)
	e = binary.AppendUvarint(e, uint64(len(out)))
	for _, k := range [][]byte{ikey(lo, maxSeq, Put), ikey(hi, minSeq, Put)} {
		e = binary.AppendUvarint(e, uint64(len(k)))
		e = append(e, k...)
	}
	e = binary.AppendUvarint(e, minSeq)
	e = binary.AppendUvarint(e, maxSeq)
	e = binary.AppendUvarint(e, 1) // end of custom fields
	db.edits = append(db.edits, e)
	return name
}

// Files returns every file of the instance: the tables, a MANIFEST and
// CURRENT.
func (db *DB) Files() map[string][]byte {
	var log []byte
	record := func(p []byte) {
		if left := 32768 - len(log)%32768; left < 7+len(p) {
			panic("rocksdbtest: MANIFEST records across blocks are not written")
		}
		c := crc32.Update(0, castagnoli, []byte{1})
		c = crc32.Update(c, castagnoli, p)
		log = binary.LittleEndian.AppendUint32(log, mask(c))
		log = binary.LittleEndian.AppendUint16(log, uint16(len(p)))
		log = append(log, 1)
		log = append(log, p...)
	}
	var first []byte
	first = binary.AppendUvarint(first, 1)
	first = binary.AppendUvarint(first, uint64(len("leveldb.BytewiseComparator")))
	first = append(first, "leveldb.BytewiseComparator"...)
	record(first)
	for id, name := range db.cfs {
		if id == 0 {
			continue
		}
		var e []byte
		e = binary.AppendUvarint(e, 200)
		e = binary.AppendUvarint(e, uint64(id))
		e = binary.AppendUvarint(e, 201)
		e = binary.AppendUvarint(e, uint64(len(name)))
		e = append(e, name...)
		record(e)
	}
	for _, e := range db.edits {
		record(e)
	}
	out := map[string][]byte{}
	for k, v := range db.files {
		out[k] = v
	}
	out["MANIFEST-000005"] = log
	out["CURRENT"] = []byte("MANIFEST-000005\n")
	out["OPTIONS-000007"] = []byte("[Version]\n")
	return out
}
