package flink

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"

	"streamdbg/savepoint/flink/rocksdb"
	"streamdbg/state"
)

// This file reads the keyed state of RocksDB native savepoints and
// incremental checkpoints (IncrementalRemoteKeyedStateHandle, handle types
// 5 and 11): the serialization proxy in the meta-data handle lists the
// states and their serializers, the shared and private files are a RocksDB
// instance (CURRENT, MANIFEST, SSTs) with one column family per state.
// Keys are laid out as in RocksDBKeySerializationUtils and
// SerializedCompositeKeyBuilder: key-group prefix (1 byte when max
// parallelism <= 128, else 2), key, namespace, user key for map state;
// values as the heap formats' serializers write them, so decodePair decodes
// both.

// nativeHandle is an IncrementalRemoteKeyedStateHandle.
type nativeHandle struct {
	checkpointID int64
	backendID    string
	first, count int // key-group range
	shared       []namedStream
	private      []namedStream

	once sync.Once
	db   *rocksdb.DB
	err  error
}

type namedStream struct {
	local string // the file's name in the RocksDB directory (000012.sst)
	h     *streamHandle
}

// parseIncrementalHandle reads an IncrementalRemoteKeyedStateHandle (type
// 5, or 11 with its checkpointed size and state handle id). The returned
// key-groups handle points at the meta-data file, which holds the same
// serialization proxy as a keyed state file's header.
func parseIncrementalHandle(d *decoder, t byte) *keyGroupsHandle {
	nh := &nativeHandle{checkpointID: d.i64(), backendID: d.utf()}
	nh.first, nh.count = int(d.i32()), int(d.i32())
	if d.err == nil && (nh.first < 0 || nh.count < 0 || int64(nh.first)+int64(nh.count) > 1<<15) {
		d.fail("incremental handle: key groups %d+%d out of range", nh.first, nh.count)
	}
	if t == handleIncrementalV2 {
		d.i64() // checkpointed size
	}
	meta := parseStreamHandle(d, 0)
	for _, list := range []*[]namedStream{&nh.shared, &nh.private} {
		n := d.count("incremental state file", 3)
		for range n {
			ns := namedStream{local: d.utf(), h: parseStreamHandle(d, 0)}
			if d.err != nil {
				return nil
			}
			*list = append(*list, ns)
		}
	}
	if t == handleIncrementalV2 {
		d.utf() // state handle id
	}
	if d.err != nil {
		return nil
	}
	if meta == nil {
		d.fail("incremental handle without its meta-data state handle")
		return nil
	}
	return &keyGroupsHandle{kind: t, first: nh.first, stream: meta, native: nh}
}

// open opens (once) the RocksDB instance of the handle.
func (nh *nativeHandle) open(dir string) (*rocksdb.DB, error) {
	nh.once.Do(func() {
		src := &handleSource{dir: dir, files: map[string]*streamHandle{}, roots: newCheckpointRoots(dir)}
		for _, ns := range slices.Concat(nh.private, nh.shared) {
			src.files[path.Base(filepath.ToSlash(ns.local))] = ns.h
		}
		src.origins = originDirs(nh)
		nh.db, nh.err = rocksdb.Open(src, rocksdb.Options{Merge: rocksdb.StringAppend{Delimiter: ','}})
		if nh.err == nil {
			nh.err = checkLive(nh.db, src.files)
		}
		if nh.err != nil {
			nh.err = fmt.Errorf("flink: RocksDB state of backend %s (checkpoint %d): %w", nh.backendID, nh.checkpointID, rocksDBKind(nh.err))
		}
	})
	return nh.db, nh.err
}

// rocksDBKind is an error of the rocksdb package marked with this
// package's kind too: its ErrCorrupt and ErrUnsupported are ours.
func rocksDBKind(err error) error {
	switch {
	case errors.Is(err, rocksdb.ErrUnsupported):
		return markErr(err, ErrUnsupported)
	case errors.Is(err, rocksdb.ErrCorrupt):
		return markErr(err, ErrCorrupt)
	}
	return err
}

// checkLive checks the MANIFEST against the files the handle lists: the
// SSTs of a RocksDB checkpoint are exactly its live tables, so a listed SST
// the MANIFEST does not name means a MANIFEST cut short at a record
// boundary (which reads as a valid, older version) or a foreign one.
func checkLive(db *rocksdb.DB, files map[string]*streamHandle) error {
	live := map[string]bool{}
	for _, cf := range db.Version().ColumnFamilies {
		for _, lvl := range cf.Levels {
			for _, f := range lvl {
				live[rocksdb.TableName(f.Number)] = true
			}
		}
	}
	var missing []string
	for name := range files {
		if strings.HasSuffix(name, ".sst") && !live[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("rocksdb: %s does not name %s as live, which the checkpoint lists (a MANIFEST cut short?): %w", db.Version().Manifest, strings.Join(missing, ", "), rocksdb.ErrCorrupt)
	}
	return nil
}

// originDirs are the directories the handle's absolute paths were written
// under, as Flink saw them: the checkpoint directory (private files) and its
// parent (shared/ and taskowned/ live there).
func originDirs(nh *nativeHandle) []string {
	var out []string
	for _, ns := range nh.private {
		if ns.h != nil && ns.h.kind == handleFile {
			if p := stripScheme(ns.h.name); p != "" {
				out = append(out, path.Dir(path.Dir(p)))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func stripScheme(p string) string {
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			return p[j:]
		}
		return ""
	}
	return strings.TrimPrefix(p, "file:")
}

// handleSource serves a RocksDB instance's files from the handle's streams.
// Files are opened inside the directories a checkpoint may use only: dir
// (a savepoint, the private files of chk-N) and its parent (shared/ and
// taskowned/ of a retained checkpoint), never through a symlink out of
// them, and regular files only.
type handleSource struct {
	dir     string
	files   map[string]*streamHandle
	origins []string
	roots   checkpointRoots
}

func (s *handleSource) Open(name string) (rocksdb.File, error) {
	h, ok := s.files[name]
	if !ok {
		return nil, fmt.Errorf("flink: %s is not in the checkpoint's list of RocksDB files: %w", name, markErr(fs.ErrNotExist, ErrCorrupt))
	}
	if h == nil {
		return nil, fmt.Errorf("flink: %s has a null state handle: %w", name, markErr(fs.ErrNotExist, ErrCorrupt))
	}
	if h.kind == handleByteStream {
		return &rocksdb.BytesFile{FileName: name + " (inline in _metadata)", Data: h.inline}, nil
	}
	root, rel, size, err := resolveShared(s.roots, s.origins, h)
	if err != nil {
		return nil, fmt.Errorf("flink: %s: %w", name, err)
	}
	shown := rel
	if root == s.roots.dir {
		shown = filepath.Join(filepath.Base(s.dir), rel)
	}
	return newConfinedFile(root, rel, size, name+" ("+filepath.ToSlash(shown)+")"), nil
}

// errEscapes marks a state file path that leaves the directories a
// checkpoint may use.
var errEscapes = errors.New("leaves the checkpoint's directory")

// checkpointRoots are the directories the files of a checkpoint may be
// in: the checkpoint's own (dir) and its parent.
type checkpointRoots struct {
	dir, parent *confinedDir
}

func newCheckpointRoots(dir string) checkpointRoots {
	return checkpointRoots{dir: &confinedDir{path: dir}, parent: &confinedDir{path: filepath.Dir(dir)}}
}

// resolveShared finds the file of a stream handle of an incremental
// checkpoint: the root it is in, its path inside that root and its size.
// Relative handles resolve inside dir. An absolute path is never opened
// as such: the file is looked up inside dir by its base name (a
// savepoint, or the private files of chk-N), then inside dir's parent, the
// root of a retained checkpoint's shared/ and taskowned/ files: by the path
// relative to the directory Flink wrote the checkpoint under, else by its
// last two or three components (shared/<file>, shared/<subdir>/<file>). A
// path with ".." components is refused: it could name a file outside that
// root. The first candidate that exists decides: a regular file is the
// file, anything else (a symlink, a FIFO, a path through a symlink out of
// the root) is an error.
func resolveShared(roots checkpointRoots, origins []string, h *streamHandle) (*confinedDir, string, int64, error) {
	if strings.ContainsRune(h.name, 0) {
		return nil, "", 0, fmt.Errorf("state file path %q has a NUL byte: %w", h.name, ErrCorrupt)
	}
	var tried []string
	// try reports whether rel is in root: ok and its size when it is a
	// regular file, an error when it is something else.
	try := func(root *confinedDir, rel string) (bool, int64, error) {
		rel = filepath.FromSlash(rel)
		if rel == "" || !filepath.IsLocal(rel) {
			return false, 0, nil
		}
		p := filepath.Join(root.path, rel)
		if slices.Contains(tried, p) {
			return false, 0, nil // a candidate already tried (and absent)
		}
		tried = append(tried, p)
		fi, err := root.lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return false, 0, nil
		case err != nil:
			return false, 0, fmt.Errorf("state file %s: %w", p, markErr(err, ErrUnsupported))
		}
		if err := checkRegular(p, fi); err != nil {
			return false, 0, err
		}
		return true, fi.Size(), nil
	}
	notFound := func() error {
		return fmt.Errorf("state file %s not found (looked for %s): %w", h.name, strings.Join(tried, ", "), markErr(fs.ErrNotExist, ErrCorrupt))
	}
	switch h.kind {
	case handleRelativeFile:
		rel := filepath.FromSlash(h.name)
		if !filepath.IsLocal(rel) {
			return nil, "", 0, fmt.Errorf("relative state file %q %w", h.name, markErr(errEscapes, ErrCorrupt))
		}
		ok, size, err := try(roots.dir, rel)
		if err != nil || !ok {
			return nil, "", 0, cmp.Or(err, notFound())
		}
		return roots.dir, rel, size, nil
	case handleFile:
	default:
		return nil, "", 0, fmt.Errorf("stream handle type %d for a RocksDB file: %w", h.kind, ErrUnsupported)
	}
	p := stripScheme(h.name)
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return nil, "", 0, fmt.Errorf("state file %q %w", h.name, markErr(errEscapes, ErrCorrupt))
		}
	}
	base := path.Base(p)
	if base == "" || base == "." || base == "/" || !filepath.IsLocal(base) {
		return nil, "", 0, fmt.Errorf("state file path %q has no file name: %w", h.name, ErrCorrupt)
	}
	if ok, size, err := try(roots.dir, base); err != nil || ok {
		return roots.dir, base, size, err
	}
	var cands []string
	for _, o := range origins {
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(o, "/")+"/"); ok {
			cands = append(cands, rel)
		}
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for k := 2; k <= min(3, len(parts)); k++ {
		cands = append(cands, strings.Join(parts[len(parts)-k:], "/"))
	}
	for _, rel := range cands {
		if ok, size, err := try(roots.parent, rel); err != nil || ok {
			return roots.parent, filepath.FromSlash(rel), size, err
		}
	}
	return nil, "", 0, notFound()
}

// keyGroupPrefix is the big-endian key-group prefix of a composite key.
func keyGroupPrefix(kg, size int) []byte {
	if size == 1 {
		return []byte{byte(kg)}
	}
	return []byte{byte(kg >> 8), byte(kg)}
}

func prefixSize(maxParallelism int) int {
	if maxParallelism > 128 {
		return 2
	}
	return 1
}

// successor is the smallest key greater than every key with prefix p (nil:
// none).
func successor(p []byte) []byte {
	s := bytes.Clone(p)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// keyRange is one range of composite keys to read, in one key group.
type keyRange struct {
	kg           int
	lower, upper []byte
}

// nativeRanges are the ranges a scan reads: the key-group prefixes of the
// wanted key groups, or, when every key literal can be serialized, the
// prefix key group + serialized key of each.
func (sp *Savepoint) nativeRanges(f keyedFile, kgs []int, keys []any) []keyRange {
	nh := f.handle.native
	ps := prefixSize(f.op.maxParallelism)
	var out []keyRange
	if keys != nil && f.header.key != nil {
		ok := true
		for _, k := range keys {
			kb, ok1 := encodeKey(f.header.key, k)
			h, ok2 := javaHashCode(f.header.key, k)
			if !ok1 || !ok2 {
				ok = false
				break
			}
			kg := state.KeyGroupForHash(h, f.op.maxParallelism)
			if kg < nh.first || kg >= nh.first+nh.count || kgs != nil && !slices.Contains(kgs, kg) {
				continue
			}
			lo := append(keyGroupPrefix(kg, ps), kb...)
			out = append(out, keyRange{kg: kg, lower: lo, upper: successor(lo)})
		}
		if ok {
			slices.SortFunc(out, func(a, b keyRange) int {
				return cmp.Or(cmp.Compare(a.kg, b.kg), bytes.Compare(a.lower, b.lower))
			})
			return slices.CompactFunc(out, func(a, b keyRange) bool { return bytes.Equal(a.lower, b.lower) })
		}
		out = out[:0]
	}
	for kg := nh.first; kg < nh.first+nh.count; kg++ {
		if kgs != nil && !slices.Contains(kgs, kg) {
			continue
		}
		lo := keyGroupPrefix(kg, ps)
		out = append(out, keyRange{kg: kg, lower: lo, upper: successor(lo)})
	}
	return out
}

// nativeEntries streams the entries of the wanted states of one native
// handle, key group by key group and, within one, state by state in the
// order of the serialization proxy (the order of a canonical savepoint).
func (sp *Savepoint) nativeEntries(f keyedFile, kgs []int, want func(*stateMeta) bool, keep func(any) bool, keys []any) iter.Seq2[entry, error] {
	return func(yield func(entry, error) bool) {
		nh := f.handle.native
		db, err := nh.open(sp.dir)
		if err != nil {
			yield(entry{}, err)
			return
		}
		type stateIter struct {
			m  *stateMeta
			r  *kgReader
			it *rocksdb.Iter
			cf string
			// fp decodes most entries of a state of scalars (or String
			// keys), as pair does, when fast.
			fp   fastPair
			fast bool
		}
		var its []*stateIter
		ps := prefixSize(f.op.maxParallelism)
		lower, upper := keyGroupPrefix(nh.first, ps), successor(keyGroupPrefix(nh.first+nh.count-1, ps))
		for _, m := range f.header.states {
			if !want(m) {
				continue
			}
			cf := db.ColumnFamily(m.name)
			if cf == nil {
				continue // registered, never written
			}
			it, err := db.NewIter(cf, rocksdb.IterOptions{Lower: lower, Upper: upper})
			if err != nil {
				yield(entry{}, fmt.Errorf("flink: %s state %q: %w", sp.opName(f.op), m.name, rocksDBKind(err)))
				return
			}
			r := &kgReader{
				file:   fmt.Sprintf("RocksDB column family %q of %s subtask %d", m.name, sp.opName(f.op), f.subtask),
				prefix: ps, header: f.header, want: want, keep: keep,
				yield: func(entry, error) bool { return true },
			}
			si := &stateIter{m: m, r: r, it: it, cf: m.name}
			si.fast = fastRuns && si.fp.of(f.header, m)
			its = append(its, si)
		}
		for _, rg := range sp.nativeRanges(f, kgs, keys) {
			for _, s := range its {
				it := s.it
				ok := it.Valid() && bytes.Compare(it.Key(), rg.lower) >= 0
				if !ok {
					ok = it.SeekGE(rg.lower)
				}
				for ; ok && (rg.upper == nil || bytes.Compare(it.Key(), rg.upper) < 0); ok = it.Next() {
					s.r.kg = rg.kg
					if s.fast {
						key, value := it.Key(), it.Value()
						if e, ok := s.fp.decode(s.r, s.m, key, value); ok {
							e.size = int64(len(key) + len(value))
							if (keep == nil || keep(e.key)) && !yield(e, nil) {
								return
							}
							continue
						}
					}
					es, err := s.r.decodePair(0, s.m, it.Key(), it.Value())
					if err != nil {
						yield(entry{}, err)
						return
					}
					for _, e := range es {
						if !yield(e, nil) {
							return
						}
					}
				}
				if err := it.Err(); err != nil {
					yield(entry{}, fmt.Errorf("flink: %s state %q: %w", sp.opName(f.op), s.cf, rocksDBKind(err)))
					return
				}
			}
		}
	}
}

// nativeNotes lists what a native handle holds that cannot be shown: an
// instance that does not open, a timer state without a column family (heap
// timers, kept outside RocksDB).
func (sp *Savepoint) nativeNotes(h *keyGroupsHandle, kh *keyedHeader) []string {
	if h.native == nil || kh.err != nil {
		return nil
	}
	// kh is not shared yet: its states' problems (StateMeta.Status) are
	// set here.
	db, err := h.native.open(sp.dir)
	if err != nil {
		why := statusf(err, "RocksDB state unreadable: %v", err)
		for _, m := range kh.states {
			if m.problem == "" {
				m.setProblem(why)
			}
		}
		return []string{"keyed state: " + why.Error()}
	}
	var out []string
	for _, m := range kh.states {
		if db.ColumnFamily(m.name) == nil && m.backendType == backendPriorityQueue {
			why := statusf(ErrUnsupported, "no RocksDB column family: heap timers are not in the RocksDB files")
			if m.problem == "" {
				m.setProblem(why)
			}
			out = append(out, fmt.Sprintf("timer state %q: %s", m.name, why))
		}
	}
	return out
}

// keyedEntries is entriesOf for a Keyed scan: native state also seeks to
// the serialized key literals.
func (sp *Savepoint) keyedEntries(f keyedFile, scan state.KeyedScan, want func(*stateMeta) bool, keep func(any) bool) iter.Seq2[entry, error] {
	if f.handle.native != nil {
		return sp.nativeEntries(f, scan.KeyGroups, want, keep, scan.Keys)
	}
	return sp.entriesOf(f, scan.KeyGroups, want, keep)
}

// encodeKey serializes a key literal as Flink's serializer would, for the
// serializers whose bytes are known exactly; ok=false otherwise.
func encodeKey(s serializer, v any) ([]byte, bool) {
	switch s {
	case longSer:
		x, ok := state.IntLiteral(v)
		return binary.BigEndian.AppendUint64(nil, uint64(x)), ok
	case intSer:
		x, ok := state.IntLiteral(v)
		return binary.BigEndian.AppendUint32(nil, uint32(int32(x))), ok && x == int64(int32(x))
	case shortSer:
		x, ok := state.IntLiteral(v)
		return binary.BigEndian.AppendUint16(nil, uint16(int16(x))), ok && x == int64(int16(x))
	case byteSer:
		x, ok := state.IntLiteral(v)
		return []byte{byte(int8(x))}, ok && x == int64(int8(x))
	case boolSer:
		x, ok := v.(bool)
		if x {
			return []byte{1}, ok
		}
		return []byte{0}, ok
	case stringSer:
		x, ok := v.(string)
		if !ok {
			return nil, false
		}
		units := utf16.Encode([]rune(x))
		b := appendVarUint(nil, uint32(len(units)+1))
		for _, u := range units {
			b = appendVarUint(b, uint32(u))
		}
		return b, true
	}
	if t, ok := s.(*tupleSer); ok {
		fields, ok := tupleLiteral(len(t.fields), v)
		if !ok {
			return nil, false
		}
		var out []byte
		for i, f := range t.fields {
			b, ok := encodeKey(f, fields[i])
			if !ok {
				return nil, false
			}
			out = append(out, b...)
		}
		return out, true
	}
	return nil, false
}

func appendVarUint(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// ExplainKeyed says which files and blocks a keyed scan reads: for RocksDB
// native state, the data blocks an index seek selects in each live SST of
// each state's column family (index partitions included); for key-group
// files, the sections. It reads indexes, no data.
func (sp *Savepoint) ExplainKeyed(scan state.KeyedScan) []string {
	var out []string
	for _, f := range sp.keyedFiles(scan.OperatorID) {
		if f.header.err != nil {
			continue
		}
		name := sp.opName(f.op)
		if c := f.handle.changelog; c != nil {
			out = append(out, sp.explainChangelog(f, scan.KeyGroups)...)
			continue
		}
		if f.handle.native == nil {
			n := 0
			for i, off := range f.handle.offsets {
				if off > 0 && (scan.KeyGroups == nil || slices.Contains(scan.KeyGroups, f.handle.first+i)) {
					n++
				}
			}
			out = append(out, fmt.Sprintf("%s subtask %d: %s, %d key-group sections", name, f.subtask, f.handle.stream, n))
			continue
		}
		db, err := f.handle.native.open(sp.dir)
		if err != nil {
			out = append(out, fmt.Sprintf("%s subtask %d: unreadable: %v", name, f.subtask, err))
			continue
		}
		ranges := sp.nativeRanges(f, scan.KeyGroups, scan.Keys)
		if len(ranges) == 0 {
			continue // none of its key groups is wanted: nothing read
		}
		for _, m := range f.header.states {
			if m.backendType != backendKeyValue || scan.StateName != "" && m.name != scan.StateName {
				continue
			}
			cf := db.ColumnFamily(m.name)
			if cf == nil {
				continue
			}
			var refs []rocksdb.BlockRef
			for _, rg := range ranges {
				r, err := db.Plan(cf, rg.lower, rg.upper)
				if err != nil {
					out = append(out, fmt.Sprintf("%s subtask %d: %s: %v", name, f.subtask, m.name, err))
					break
				}
				refs = append(refs, r...)
			}
			slices.SortFunc(refs, func(a, b rocksdb.BlockRef) int {
				return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Offset, b.Offset))
			})
			refs = slices.Compact(refs)
			what := fmt.Sprintf("%d key groups", len(ranges))
			if scan.Keys != nil && len(ranges) > 0 && len(ranges[0].lower) > prefixSize(f.op.maxParallelism) {
				what = fmt.Sprintf("%d key prefixes", len(ranges))
			}
			var blocks []string
			for _, r := range refs {
				blocks = append(blocks, fmt.Sprintf("%s %s@%d+%d", r.File, r.Kind, r.Offset, r.Size))
			}
			if len(blocks) == 0 {
				blocks = []string{"no blocks"}
			}
			out = append(out, fmt.Sprintf("%s subtask %d: %s (RocksDB, %s): %s", name, f.subtask, m.name, what, strings.Join(blocks, ", ")))
		}
	}
	return out
}

// canonicalLayout reports whether a key group of a type-12 handle is in
// the canonical layout. Handle type 12 (KeyGroupsStateHandle with a state
// handle id) holds heap snapshots (HeapSnapshotStrategy: the key-group id,
// then per state a state id and an entry count) and RocksDB full snapshots
// (FullSnapshotAsyncWriter, as RocksDBFullSnapshotResources feeds it: state
// ids and (key, value) pairs, each key starting with the key-group prefix).
// A compressed group is canonical when its Snappy stream starts at once;
// an uncompressed one when it parses as canonical to its last byte: state
// ids in range, lengths inside the group, every key in this key group, the
// end-of-group mark last.
func (r *kgReader) canonicalLayout(b []byte) bool {
	if r.header.compressed {
		return isSnappyFramed(b)
	}
	d := newDecoder(r.file, r.base, b)
	n := len(r.header.states)
	if int(d.u16()) >= n {
		return false
	}
	for d.err == nil {
		key := d.take(d.count("key byte", 1))
		d.take(d.count("value byte", 0))
		if d.err != nil || len(key) < r.prefix {
			return false
		}
		kg := int(key[0] &^ 0x80)
		if r.prefix == 2 {
			kg = kg<<8 | int(key[1])
		}
		if kg != r.kg {
			return false
		}
		if key[0]&0x80 != 0 {
			id := d.u16()
			if id == endOfKeyGroup {
				return d.err == nil && d.remaining() == 0
			}
			if int(id) >= n {
				return false
			}
		}
	}
	return false
}
