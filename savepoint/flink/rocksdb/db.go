package rocksdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Source opens the files of one RocksDB instance by their local names
// (CURRENT, MANIFEST-000004, 000012.sst). A missing file is an error
// wrapping fs.ErrNotExist.
type Source interface {
	Open(name string) (File, error)
}

// MergeOperator combines a key's merge operands (oldest first) with the
// value below them (hasBase false: none, or deleted).
type MergeOperator interface {
	// Name is the name RocksDB records in the table property
	// rocksdb.merge.operator.
	Name() string
	Merge(base []byte, hasBase bool, operands [][]byte, dst []byte) []byte
}

// StringAppend is RocksDB's StringAppendTESTOperator (and
// StringAppendOperator): the base and the operands joined by one delimiter
// byte. Flink's list state uses it with ','.
type StringAppend struct{ Delimiter byte }

func (StringAppend) Name() string { return "StringAppendTESTOperator" }

func (s StringAppend) Merge(base []byte, hasBase bool, operands [][]byte, dst []byte) []byte {
	dst = dst[:0]
	sep := false
	if hasBase {
		dst = append(dst, base...)
		sep = true
	}
	for _, op := range operands {
		if sep {
			dst = append(dst, s.Delimiter)
		}
		dst = append(dst, op...)
		sep = true
	}
	return dst
}

// mergeOperatorNames are the property values that mean StringAppend.
var mergeOperatorNames = map[string]bool{"StringAppendTESTOperator": true, "StringAppendOperator": true, "stringappendtest": true, "stringappend": true}

// Options configure Open.
type Options struct {
	// Merge resolves merge operands; nil makes a merge operand an error.
	Merge MergeOperator
}

// DB is a read-only view of one RocksDB instance: the live files of the
// version its MANIFEST describes. Tables are opened on first use and kept.
// A DB is safe for concurrent use; iterators are not.
type DB struct {
	src     Source
	opts    Options
	version *Version
	files   map[uint64]File

	mu     sync.Mutex
	tables map[uint64]*Table
}

// Open reads CURRENT and the MANIFEST it names, and checks that every live
// table file exists with the size the MANIFEST gives it.
func Open(src Source, opts Options) (*DB, error) {
	// A file the instance needs and does not have makes it corrupt; the
	// file system's error stays (errors.Is(err, fs.ErrNotExist)).
	cur, err := src.Open("CURRENT")
	if err != nil {
		return nil, &Error{File: "CURRENT", Msg: err.Error(), Err: missing(err)}
	}
	name, err := ReadCurrent(cur)
	if err != nil {
		return nil, err
	}
	mf, err := src.Open(name)
	if err != nil {
		return nil, &Error{File: name, Msg: "named by CURRENT: " + err.Error(), Err: missing(err)}
	}
	if mf.Size() > maxManifestSize {
		return nil, unsupportedf(mf.Name(), 0, "MANIFEST of %d bytes", mf.Size())
	}
	b := make([]byte, mf.Size())
	if _, err := mf.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, &Error{File: mf.Name(), Msg: err.Error(), Err: short(err)}
	}
	v, err := ReadManifest(mf.Name(), b)
	if err != nil {
		return nil, err
	}
	if v.BlobFiles > 0 {
		return nil, unsupportedf(mf.Name(), 0, "%d blob files (values stored outside the tables)", v.BlobFiles)
	}
	db := &DB{src: src, opts: opts, version: v, files: map[uint64]File{}, tables: map[uint64]*Table{}}
	for _, cf := range v.ColumnFamilies {
		for _, lvl := range cf.Levels {
			for _, fm := range lvl {
				f, err := src.Open(TableName(fm.Number))
				if err != nil {
					return nil, &Error{File: mf.Name(), Offset: fm.EditOffset,
						Msg: fmt.Sprintf("live table %s (column family %q, level %d) is missing: %v", TableName(fm.Number), cf.Name, fm.Level, err), Err: missing(err)}
				}
				if uint64(f.Size()) != fm.Size {
					return nil, corruptf(f.Name(), f.Size(), "table is %d bytes, the MANIFEST (%s at offset %d) says %d", f.Size(), mf.Name(), fm.EditOffset, fm.Size)
				}
				db.files[fm.Number] = f
			}
		}
	}
	return db, nil
}

// Version is the live version read from the MANIFEST.
func (db *DB) Version() *Version { return db.version }

// ColumnFamily finds a column family by name.
func (db *DB) ColumnFamily(name string) *ColumnFamily {
	for _, cf := range db.version.ColumnFamilies {
		if cf.Name == name {
			return cf
		}
	}
	return nil
}

// Table opens (once) the table of a live file.
func (db *DB) Table(fm *FileMeta) (*Table, error) {
	db.mu.Lock()
	t, ok := db.tables[fm.Number]
	db.mu.Unlock()
	if ok {
		return t, nil
	}
	f := db.files[fm.Number]
	if f == nil {
		return nil, corruptf(TableName(fm.Number), 0, "not a live table")
	}
	t, err := OpenTable(f, fm.LargestSeq)
	if err != nil {
		return nil, err
	}
	if t.Props.NumMergeOperands > 0 {
		if db.opts.Merge == nil {
			return nil, unsupportedf(t.name, 0, "%d merge operands and no merge operator", t.Props.NumMergeOperands)
		}
		if op := t.Props.MergeOperator; op != "" && op != "nullptr" && !(mergeOperatorNames[op] && isStringAppend(db.opts.Merge)) && op != db.opts.Merge.Name() {
			return nil, unsupportedf(t.name, 0, "merge operands of merge operator %q (this reader has %s)", op, db.opts.Merge.Name())
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if t2, ok := db.tables[fm.Number]; ok {
		return t2, nil
	}
	db.tables[fm.Number] = t
	return t, nil
}

func isStringAppend(m MergeOperator) bool {
	_, ok := m.(StringAppend)
	return ok
}

// IterOptions bound an iteration to user keys in [Lower, Upper).
type IterOptions struct {
	Lower, Upper []byte
	// Trace, when set, is called for every block an iterator reads.
	Trace func(BlockRef)
}

func overlaps(fm *FileMeta, lower, upper []byte) bool {
	if upper != nil && bytes.Compare(userKey(fm.Smallest), upper) >= 0 {
		return false
	}
	if lower != nil && bytes.Compare(userKey(fm.Largest), lower) < 0 {
		return false
	}
	return true
}

// NewIter iterates the live user keys of a column family in [Lower, Upper):
// newest version first wins, deletions and range deletions hide older
// versions, merge operands are merged. Call SeekGE or First to start.
func (db *DB) NewIter(cf *ColumnFamily, o IterOptions) (*Iter, error) {
	it := &Iter{db: db, lower: bytes.Clone(o.Lower), upper: bytes.Clone(o.Upper), merge: db.opts.Merge}
	var tombs []Tombstone
	for level, files := range cf.Levels {
		var live []*FileMeta
		for _, fm := range files {
			if overlaps(fm, it.lower, it.upper) {
				live = append(live, fm)
			}
		}
		if len(live) == 0 {
			continue
		}
		tables := make([]*Table, len(live))
		for i, fm := range live {
			t, err := db.Table(fm)
			if err != nil {
				return nil, err
			}
			tables[i] = t
			tombs = append(tombs, t.tombstones...)
		}
		if level == 0 || !disjoint(live) {
			// Each file on its own: a level of one file.
			for i := range tables {
				it.children = append(it.children, &child{levelIter: levelIter{files: live[i : i+1], tables: tables[i : i+1], upper: it.upper, trace: o.Trace}})
			}
			continue
		}
		it.children = append(it.children, &child{levelIter: levelIter{files: live, tables: tables, upper: it.upper, trace: o.Trace}})
	}
	it.tombs = fragment(tombs)
	return it, nil
}

func disjoint(files []*FileMeta) bool {
	for i := 1; i < len(files); i++ {
		if bytes.Compare(userKey(files[i-1].Largest), userKey(files[i].Smallest)) >= 0 {
			return false
		}
	}
	return true
}

// Plan lists the blocks an iteration over [lower, upper) would read: the
// data blocks an index seek selects in every overlapping file (index
// partitions included), without reading any data block.
func (db *DB) Plan(cf *ColumnFamily, lower, upper []byte) ([]BlockRef, error) {
	var out []BlockRef
	for _, files := range cf.Levels {
		for _, fm := range files {
			if !overlaps(fm, lower, upper) {
				continue
			}
			t, err := db.Table(fm)
			if err != nil {
				return nil, err
			}
			refs, err := t.plan(lower, upper)
			if err != nil {
				return nil, err
			}
			out = append(out, refs...)
		}
	}
	return out, nil
}

// plan walks the index from lower and lists the data blocks up to upper.
func (t *Table) plan(lower, upper []byte) ([]BlockRef, error) {
	it := newTableIter(t, upper, nil, nil)
	var out []BlockRef
	it.top.init(t.index)
	var ok bool
	if lower != nil {
		ok = it.top.seekGE(lower, it.indexKey)
	} else {
		ok = it.top.first()
	}
	for ; ok; ok = it.top.next() {
		h := it.top.handle
		if !t.partitioned {
			out = append(out, BlockRef{File: t.name, Kind: "data", Offset: h.offset, Size: h.size})
			if it.pastUpper(&it.top) {
				break
			}
			continue
		}
		out = append(out, BlockRef{File: t.name, Kind: "index partition", Offset: h.offset, Size: h.size})
		if !it.loadPartition() {
			return nil, it.err
		}
		var pok bool
		if lower != nil {
			pok = it.part.seekGE(lower, it.indexKey)
		} else {
			pok = it.part.first()
		}
		stop := false
		for ; pok; pok = it.part.next() {
			ph := it.part.handle
			out = append(out, BlockRef{File: t.name, Kind: "data", Offset: ph.offset, Size: ph.size})
			if it.pastUpper(&it.part) {
				stop = true
				break
			}
		}
		if it.part.err != nil {
			return nil, it.part.err
		}
		if stop || it.pastUpper(&it.top) {
			break
		}
	}
	if it.top.err != nil {
		return nil, it.top.err
	}
	return out, nil
}

// levelIter iterates the files of one level ≥ 1, which do not overlap.
type levelIter struct {
	files  []*FileMeta
	tables []*Table
	upper  []byte
	trace  func(BlockRef)
	i      int
	cur    *tableIter
	base   uint64 // blocks loaded by the level's earlier table iterators
	pf     prefetch
	err    error
}

func (l *levelIter) open(i int) {
	l.i = i
	if i >= len(l.files) {
		l.cur = nil
		return
	}
	if l.cur == nil || l.cur.t != l.tables[i] {
		// A new iterator: the old one's buffers are left as they are, so
		// values it served stay valid.
		if l.cur != nil {
			l.base += l.cur.loads + 1
		}
		l.cur = newTableIter(l.tables[i], l.upper, l.trace, &l.pf)
	}
}

func (l *levelIter) skipEmpty(ok bool) bool {
	for !ok {
		if l.cur == nil {
			return false
		}
		if err := l.cur.error(); err != nil {
			l.err = err
			l.cur = nil
			return false
		}
		if l.upper != nil && l.i+1 < len(l.files) && bytes.Compare(userKey(l.files[l.i+1].Smallest), l.upper) >= 0 {
			l.cur = nil
			return false
		}
		l.open(l.i + 1)
		if l.cur == nil {
			return false
		}
		ok = l.cur.first()
	}
	return true
}

func (l *levelIter) first() bool {
	l.err = nil
	l.open(0)
	if l.cur == nil {
		return false
	}
	return l.skipEmpty(l.cur.first())
}

func (l *levelIter) seekGE(ukey []byte) bool {
	l.err = nil
	i, _ := slices.BinarySearchFunc(l.files, ukey, func(f *FileMeta, k []byte) int {
		return bytes.Compare(userKey(f.Largest), k)
	})
	l.open(i)
	if l.cur == nil {
		return false
	}
	return l.skipEmpty(l.cur.seekGE(ukey))
}

func (l *levelIter) next() bool {
	if l.cur == nil {
		return false
	}
	return l.skipEmpty(l.cur.next())
}

func (l *levelIter) valid() bool   { return l.cur != nil && l.cur.valid() }
func (l *levelIter) key() []byte   { return l.cur.key() }
func (l *levelIter) value() []byte { return l.cur.value() }
func (l *levelIter) error() error  { return l.err }
func (l *levelIter) gen() uint64 {
	if l.cur == nil {
		return l.base
	}
	return l.base + l.cur.loads
}

// fragments are range tombstones cut into non-overlapping pieces, each with
// the highest sequence number covering it.
type fragments struct {
	starts [][]byte
	ends   [][]byte
	seqs   []uint64
}

func fragment(ts []Tombstone) fragments {
	var fr fragments
	if len(ts) == 0 {
		return fr
	}
	var bounds [][]byte
	for _, t := range ts {
		if bytes.Compare(t.Start, t.End) < 0 {
			bounds = append(bounds, t.Start, t.End)
		}
	}
	slices.SortFunc(bounds, bytes.Compare)
	bounds = slices.CompactFunc(bounds, bytes.Equal)
	for i := 0; i+1 < len(bounds); i++ {
		var seq uint64
		found := false
		for _, t := range ts {
			if bytes.Compare(t.Start, bounds[i]) <= 0 && bytes.Compare(t.End, bounds[i+1]) >= 0 {
				seq, found = max(seq, t.Seq), true
			}
		}
		if found {
			fr.starts = append(fr.starts, bounds[i])
			fr.ends = append(fr.ends, bounds[i+1])
			fr.seqs = append(fr.seqs, seq)
		}
	}
	return fr
}

// covers reports whether a version of ukey with sequence number seq is
// deleted by a range tombstone.
func (fr *fragments) covers(ukey []byte, seq uint64) bool {
	if len(fr.starts) == 0 {
		return false
	}
	i, found := slices.BinarySearchFunc(fr.starts, ukey, bytes.Compare)
	if !found {
		i--
	}
	if i < 0 || bytes.Compare(ukey, fr.ends[i]) >= 0 {
		return false
	}
	return seq < fr.seqs[i]
}

// Iter iterates the live user keys of one column family. Key and Value are
// valid until the next move.
type Iter struct {
	db       *DB
	lower    []byte
	upper    []byte
	merge    MergeOperator
	children []*child
	heap     []*child
	limit    []byte // see setLimit
	topAlone bool   // no other child holds the top's user key (see setLimit)
	stayed   bool   // the last advanceTop left the same child on top without comparing more
	// pending is the child findNext left on the entry it returned, when
	// that entry is the only version of its user key that matters: Key and
	// Value point into it, and Next moves it on.
	pending *child
	keyCopy []byte
	tombs   fragments

	key    []byte
	val    []byte
	base   []byte
	merged []byte
	opBuf  []byte
	opEnd  []int
	ops    [][]byte
	ok     bool
	err    error
}

// First moves to the first live key at or after Lower.
func (it *Iter) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	it.err = nil
	it.pending = nil
	it.heap = it.heap[:0]
	for _, c := range it.children {
		if c.first() {
			c.key = c.levelIter.key()
			it.heap = append(it.heap, c)
		} else if err := c.error(); err != nil {
			it.err = err
			it.ok = false
			return false
		}
	}
	it.initHeap()
	return it.findNext()
}

// SeekGE moves to the first live key >= key (and >= Lower).
func (it *Iter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.err = nil
	it.pending = nil
	it.heap = it.heap[:0]
	for _, c := range it.children {
		if c.seekGE(key) {
			c.key = c.levelIter.key()
			it.heap = append(it.heap, c)
		} else if err := c.error(); err != nil {
			it.err = err
			it.ok = false
			return false
		}
	}
	it.initHeap()
	return it.findNext()
}

// Next moves to the next live key.
func (it *Iter) Next() bool {
	if !it.ok {
		return false
	}
	c := it.pending
	if c == nil {
		return it.findNext()
	}
	if t := c.cur; c.fast || t.ok && len(it.tombs.starts) == 0 && !t.t.hasGlobalSeq {
		// skipPending, advanceTop and findNext for the common case, in one
		// place: c, the top child, steps to a value of a new user key that
		// stays below the limit (and the upper bound), so c stays on top,
		// alone, and the entry needs only its own checks.
		d := &t.data
		ok := false
		if d.nxt < d.b.restarts {
			ok = d.nextData() && len(d.key) >= 8
			if ok && d.same == 0 {
				c.key = d.key
				uk := d.key[:len(d.key)-8]
				if d.key[len(d.key)-8] == typeValue && (c.fast ||
					it.limit != nil && bytes.Compare(uk, userKey(it.limit)) < 0 && (it.upper == nil || bytes.Compare(uk, it.upper) < 0)) {
					it.key, it.val = uk, d.val
					return true
				}
				it.pending = nil
				if !it.topMoved(c, true) {
					it.ok = false
					return false
				}
				return it.findNext()
			}
		} else {
			d.cur = d.b.restarts // the block is done
		}
		// An older version of the key returned, a new block, the end (or
		// a corrupt entry): finish the move as tableIter.next does, and
		// go on as skipPending does.
		if !ok {
			ok = t.settle()
		}
		it.pending = nil
		if !it.topMoved(c, c.moved(ok)) || !it.skipOlder(c) {
			it.ok = false
			return false
		}
		return it.findNext()
	}
	if !it.skipPending(c) {
		it.ok = false
		return false
	}
	return it.findNext()
}

// skipPending moves past the entry findNext left the top child on (see
// there) and past older versions of its user key in that child; no other
// child holds that user key.
func (it *Iter) skipPending(c *child) bool {
	it.pending = nil
	return it.advanceTop() && it.skipOlder(c)
}

// skipOlder moves the top child past older versions of the user key
// returned last (it.key), after a step of c, the child that returned it.
func (it *Iter) skipOlder(c *child) bool {
	for {
		if len(it.heap) == 0 {
			return true
		}
		var same bool
		switch {
		case it.heap[0] != c || !it.stayed:
			// The heap moved: the new top's user key is above the limit,
			// which was above it.key.
			same = false
		case c.cur.data.same >= 0:
			same = c.cur.data.same == 1
		default:
			// A new block: it.key is intact in the previous block's key
			// buffer (tableIter.altKey).
			same = bytes.Equal(userKey(c.key), it.key)
		}
		if !same {
			return true
		}
		// An older version, hidden by the value returned. Keep the user
		// key apart: the next block change would reuse its buffer.
		it.keyCopy = append(it.keyCopy[:0], it.key...)
		it.key = it.keyCopy
		if !it.advanceTop() {
			return false
		}
	}
}

func (it *Iter) Valid() bool   { return it.ok }
func (it *Iter) Key() []byte   { return it.key }
func (it *Iter) Value() []byte { return it.val }
func (it *Iter) Err() error    { return it.err }

// child is one input of the merge: the files of one level ≥ 1, or one L0
// file (a level of one file), with its current internal key.
type child struct {
	levelIter
	key []byte
	// below says that every key of the child's current data block is
	// below the Iter's limit and upper bound (the block's index key is): a
	// step inside it needs no comparison. It holds for the block of gen belowGen, and
	// setLimit voids it. INVARIANT (the format's): no key of a data block
	// is above its index key.
	below    bool
	belowGen uint64
	// fast is below, without range tombstones, of a table without a
	// global sequence number: Iter.Next's short path needs no other check.
	// It is set with below and voided with it (setLimit), and holds while
	// the child stays on top: below is recomputed whenever the top child
	// loads a block (topMoved), and a child becomes the top only through
	// setLimit.
	fast bool
}

// blockBelow reports whether the current data block of c (the top child)
// lies below the limit and the upper bound: its index key, which no key of
// the block exceeds, is below both user keys.
func (it *Iter) blockBelow(c *child) bool {
	if it.limit == nil && it.upper == nil {
		return true
	}
	t := c.cur
	ix := t.idx()
	if ix.err != nil || ix.cur >= ix.b.restarts {
		return false
	}
	k := t.indexKey(ix.key)
	return (it.limit == nil || bytes.Compare(k, userKey(it.limit)) < 0) && (it.upper == nil || bytes.Compare(k, it.upper) < 0)
}

// next moves the child on and sets its key.
func (c *child) next() bool {
	t := c.cur
	if t == nil {
		return false
	}
	return c.moved(t.next())
}

// moved sets the child's key after its table iterator moved (ok: to an
// entry), opening the level's next tables when that one ended.
func (c *child) moved(ok bool) bool {
	if !ok && !c.skipEmpty(false) {
		return false
	}
	c.key = c.cur.key()
	return true
}

func less(a, b *child) bool { return compareInternal(a.key, b.key) < 0 }

func (it *Iter) initHeap() {
	for i := len(it.heap)/2 - 1; i >= 0; i-- {
		it.down(i)
	}
	it.setLimit()
}

// setLimit records the internal key of the smallest child but the top one
// (nil when the top is alone). While the top child's user key stays below
// it, the top stays the top and no other child holds its user key: a step
// of the top child then costs one comparison. INVARIANT: limit is the key
// of a child that is not the top, and a child's key changes only when it
// moves, which only the top does.
func (it *Iter) setLimit() {
	h := it.heap
	switch {
	case len(h) < 2:
		it.limit = nil
	case len(h) == 2 || less(h[1], h[2]):
		it.limit = h[1].key
	default:
		it.limit = h[2].key
	}
	it.topAlone = it.limit == nil || bytes.Compare(userKey(h[0].key), userKey(it.limit)) < 0
	if len(h) > 0 {
		h[0].belowGen, h[0].fast = ^uint64(0), false
	}
}

func (it *Iter) down(i int) {
	h := it.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// advanceTop moves the smallest child on and restores the heap.
func (it *Iter) advanceTop() bool {
	c := it.heap[0]
	return it.topMoved(c, c.next())
}

// topMoved restores the heap after the top child c moved (ok: to an entry,
// whose key c.key is).
func (it *Iter) topMoved(c *child, ok bool) bool {
	if ok {
		if g := c.gen(); g != c.belowGen {
			c.below, c.belowGen = it.blockBelow(c), g
			c.fast = c.below && len(it.tombs.starts) == 0 && !c.cur.t.hasGlobalSeq
		}
		if c.below || it.limit == nil || bytes.Compare(userKey(c.key), userKey(it.limit)) < 0 {
			it.topAlone, it.stayed = true, true
			return true
		}
		it.down(0)
		it.setLimit()
		it.stayed = false
		return true
	}
	if err := c.error(); err != nil {
		it.err = err
		return false
	}
	last := len(it.heap) - 1
	it.heap[0] = it.heap[last]
	it.heap = it.heap[:last]
	it.down(0)
	it.setLimit()
	it.stayed = false
	return true
}

// findNext resolves the next user key with a live value.
//
// When the top child alone holds the user key, its newest version is a
// value and no range tombstone covers it (most keys of a scan), the child
// is left on that entry (pending): Key and Value point into its block and
// nothing is copied; Next moves it on.
func (it *Iter) findNext() bool {
	it.ok = false
	for len(it.heap) > 0 && it.err == nil {
		c := it.heap[0]
		uk := userKey(c.key)
		if it.upper != nil && bytes.Compare(uk, it.upper) >= 0 {
			it.release()
			return false
		}
		if tr := trailer(c.key); it.topAlone && byte(tr) == typeValue && !c.cur.t.hasGlobalSeq && !it.tombs.covers(uk, tr>>8) {
			it.key, it.val = uk, c.value()
			it.pending = c
			it.ok = true
			return true
		}
		it.key = append(it.keyCopy[:0], uk...)
		it.keyCopy = it.key
		it.opBuf, it.opEnd = it.opBuf[:0], it.opEnd[:0]
		hasBase, done := false, false
		// The newest value is borrowed from its child until that child
		// loads another block (gen moves): most keys have one version, so
		// most values are never copied.
		var base []byte
		var lender *child
		var lenderGen uint64
		for len(it.heap) > 0 {
			c := it.heap[0]
			ik := c.key
			if !bytes.Equal(userKey(ik), it.key) {
				break
			}
			if !done {
				tr := trailer(ik)
				seq, typ := tr>>8, byte(tr)
				if it.tombs.covers(it.key, seq) {
					done = true
				} else {
					switch typ {
					case typeValue:
						base, lender, lenderGen = c.value(), c, c.gen()
						hasBase, done = true, true
					case typeMerge:
						it.opBuf = append(it.opBuf, c.value()...)
						it.opEnd = append(it.opEnd, len(it.opBuf))
					case typeDeletion, typeSingleDeletion, typeDeletionWithTimestamp:
						done = true
					case typeBlobIndex:
						it.err = unsupportedf(it.childName(c), 0, "value stored in a blob file (key %x)", it.key)
						return false
					case typeWideColumnEntity, typeValuePreferredSeqno:
						it.err = unsupportedf(it.childName(c), 0, "value type %#x (key %x)", typ, it.key)
						return false
					default:
						it.err = corruptf(it.childName(c), 0, "internal key %x of unknown value type %#x", it.key, typ)
						return false
					}
				}
			}
			if !it.advanceTop() {
				return false
			}
			if lender != nil && lender.gen() != lenderGen {
				it.base = append(it.base[:0], base...)
				base, lender = it.base, nil
			}
		}
		if len(it.opEnd) == 0 {
			if !hasBase {
				continue // deleted
			}
			it.val = base
			it.ok = true
			return true
		}
		if it.merge == nil {
			it.err = unsupportedf("", 0, "merge operands for key %x and no merge operator", it.key)
			return false
		}
		// Operands were met newest first; the operator wants oldest first.
		it.ops = it.ops[:0]
		for i := len(it.opEnd) - 1; i >= 0; i-- {
			start := 0
			if i > 0 {
				start = it.opEnd[i-1]
			}
			it.ops = append(it.ops, it.opBuf[start:it.opEnd[i]])
		}
		// Never into it.val: it may be a child's block.
		it.merged = it.merge.Merge(base, hasBase, it.ops, it.merged)
		it.val = it.merged
		it.ok = true
		return true
	}
	if it.err == nil {
		it.release()
	}
	return false
}

// release gives the read-ahead buffers of a scan that ended to later scans
// (see prefetch.release).
func (it *Iter) release() {
	for _, c := range it.children {
		c.pf.release()
	}
}

func (it *Iter) childName(c *child) string {
	if c.cur != nil {
		return c.cur.t.name
	}
	return "table"
}

// DirSource reads the files of a RocksDB directory.
type DirSource string

func (d DirSource) Open(name string) (File, error) {
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("rocksdb: file name %q leaves the directory: %w", name, fs.ErrInvalid)
	}
	return OpenFile(filepath.Join(string(d), name), name)
}

// pathFile is a File on disk, opened for each read: a checkpoint of many
// subtasks has thousands of tables, more than a process may keep open, and
// reads are few and large (read-ahead windows, index blocks).
type pathFile struct {
	path string
	size int64
	name string
}

func (f *pathFile) Size() int64  { return f.size }
func (f *pathFile) Name() string { return f.name }
func (f *pathFile) ReadAt(p []byte, off int64) (int, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	return fh.ReadAt(p, off)
}

// OpenFile returns path as a File named name in errors. It only checks the
// file is there (and its size): each read opens it anew.
func OpenFile(path, name string) (File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("rocksdb: %s is not a regular file: %w", path, fs.ErrInvalid)
	}
	return &pathFile{path: path, size: st.Size(), name: name}, nil
}

// BytesFile is a File held in memory.
type BytesFile struct {
	FileName string
	Data     []byte
}

func (b *BytesFile) Size() int64  { return int64(len(b.Data)) }
func (b *BytesFile) Name() string { return b.FileName }
func (b *BytesFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b.Data)) {
		return 0, fmt.Errorf("rocksdb: read at %d of %s (%d bytes): %w", off, b.FileName, len(b.Data), io.ErrUnexpectedEOF)
	}
	n := copy(p, b.Data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// MapSource is a Source over files held in memory.
type MapSource map[string][]byte

func (m MapSource) Open(name string) (File, error) {
	b, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("rocksdb: %s: %w", name, fs.ErrNotExist)
	}
	return &BytesFile{FileName: name, Data: b}, nil
}

var _ = errors.Is
