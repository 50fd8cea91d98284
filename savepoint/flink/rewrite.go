package flink

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/golang/snappy"

	"streamdbg/state"
)

// Rewrite writes a changed copy of a canonical savepoint (heap or RocksDB,
// FullSnapshotAsyncWriter's layout): the only writing this package does,
// always into a new directory. What it keeps and what it changes:
//
//   - every file but _metadata and the keyed state files holding a changed
//     key group is copied byte for byte;
//   - a rewritten keyed file keeps its header (the serializer snapshots)
//     byte for byte, and every key group it does not change; a changed key
//     group is encoded again with the state's own serializers, in the order
//     it was read, compressed again when the file is;
//   - _metadata is the source's with the key-group offsets and file sizes
//     of the rewritten files patched in place (8-byte fields: its length
//     does not change).
//
// Key groups of the heap-native layout, keyed state inline in _metadata,
// native RocksDB files and values of serializers encodeValue does not know
// are refused with an error, never rewritten approximately.

// EntryEdit is what a rewrite does with one entry: keep it, drop it, or set
// its value.
type EntryEdit struct {
	Drop  bool
	Set   bool
	Value any
}

// KeyedEdit chooses entry by entry what a Rewrite writes.
type KeyedEdit interface {
	// Touches says whether the edit may change a keyed state; the key
	// groups of other states are copied without being decoded.
	Touches(operatorID, stateName string) bool
	// Edit decides about one decoded entry of a touched state (a list
	// element, a map entry, a value).
	Edit(row *state.KeyedRow) (EntryEdit, error)
}

// RewriteReport says what a Rewrite wrote, for verification: the files
// copied, the keyed files rewritten with where each key group went, and the
// fields of _metadata patched.
type RewriteReport struct {
	Copied  []string
	Files   []RewrittenFile
	Patched []PatchedField
	// Changed and Dropped count entries (list elements, map entries,
	// values) whose value was set, or that were dropped.
	Changed, Dropped int64
}

// RewrittenFile is one rewritten keyed state file.
type RewrittenFile struct {
	Name      string // relative to the savepoint directory
	Header    int64  // bytes of header copied from the source
	OldSize   int64
	NewSize   int64
	KeyGroups []RewrittenGroup
}

// RewrittenGroup is one key group of a rewritten file: its old and new
// byte range ([0,0) when empty), and whether it was encoded again (else its
// bytes are the source's).
type RewrittenGroup struct {
	KeyGroup           int
	OldOffset, OldSize int64
	NewOffset, NewSize int64
	Encoded            bool
}

// PatchedField is one big-endian int64 of _metadata that a rewrite changed.
type PatchedField struct {
	At       int64
	Old, New int64
	What     string
}

// Rewrite writes the savepoint with edit applied into dst, which must not
// exist, atomically (a temporary directory beside it, synced, renamed).
func (sp *Savepoint) Rewrite(dst string, edit KeyedEdit) (rep *RewriteReport, err error) {
	dst = filepath.Clean(dst)
	if abs, aerr := filepath.Abs(dst); aerr == nil {
		if src, serr := filepath.Abs(sp.dir); serr == nil && src == abs {
			return nil, fmt.Errorf("flink: rewrite: the target is the source savepoint %s", sp.dir)
		}
	}
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("flink: rewrite: %s exists", dst)
	}
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	tmp := filepath.Join(parent, "."+filepath.Base(dst)+".inprogress")
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	md, err := os.ReadFile(filepath.Join(sp.dir, "_metadata"))
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	rep = &RewriteReport{}
	rewritten := map[string]bool{}
	var keyedStates map[string][]string // operator id → its keyed states, listed at the first native handle
	for _, op := range sp.md.operators {
		for _, st := range op.subtasks {
			h := st.keyed
			if h == nil {
				continue
			}
			if h.native != nil {
				// RocksDB's own files: refused rather than copied
				// unchanged (which reported 0 entries changed).
				if keyedStates == nil {
					keyedStates = map[string][]string{}
					for _, m := range sp.States() {
						if m.Scope == state.ScopeKeyed {
							keyedStates[m.OperatorID] = append(keyedStates[m.OperatorID], m.StateName)
						}
					}
				}
				for _, name := range keyedStates[op.id] {
					if edit.Touches(op.id, name) {
						return nil, fmt.Errorf("flink: rewrite: operator %s: keyed state of a native RocksDB savepoint or checkpoint (RocksDB's own files) cannot be rewritten; take a canonical savepoint of the job (flink stop --type canonical) and modify that: %w", sp.opName(op), ErrUnsupported)
					}
				}
				continue
			}
			if h.changelog != nil {
				for _, m := range sp.keyedHeaderOf(op, h).states {
					if m.backendType == backendKeyValue && edit.Touches(op.id, m.name) {
						return nil, fmt.Errorf("flink: rewrite: operator %s: keyed state of the changelog state backend (a materialized part and a change log) cannot be rewritten; rewrite a savepoint of the job instead", sp.opName(op))
					}
				}
				continue
			}
			kh := sp.keyedHeaderOf(op, h)
			touched := false
			for _, m := range kh.states {
				if m.backendType == backendKeyValue && edit.Touches(op.id, m.name) {
					touched = true
				}
			}
			if !touched {
				continue
			}
			if kh.err != nil {
				return nil, fmt.Errorf("flink: rewrite: operator %s: %w", sp.opName(op), kh.err)
			}
			if h.stream == nil || h.stream.path == "" || h.stream.sizeAt < 0 {
				return nil, fmt.Errorf("flink: rewrite: operator %s subtask %d: keyed state not in a file of the savepoint directory (inline or unresolved: %s): %w", sp.opName(op), st.index, h.stream, ErrUnsupported)
			}
			rel, err := filepath.Rel(sp.dir, h.stream.path)
			if err != nil || !filepath.IsLocal(rel) {
				return nil, fmt.Errorf("flink: rewrite: %s is outside the savepoint directory: %w", h.stream.path, ErrCorrupt)
			}
			if rewritten[rel] {
				return nil, fmt.Errorf("flink: rewrite: %s holds the keyed state of more than one subtask: %w", rel, ErrUnsupported)
			}
			rewritten[rel] = true
			rf, err := sp.rewriteKeyed(op, st.index, h, kh, edit, filepath.Join(tmp, rel), rep)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(rf.KeyGroups, func(g RewrittenGroup) bool { return g.Encoded }) {
				// Nothing changed in this file: it is copied like the rest.
				if err := os.Remove(filepath.Join(tmp, rel)); err != nil {
					return nil, fmt.Errorf("flink: rewrite: %w", err)
				}
				rewritten[rel] = false
				continue
			}
			rf.Name = rel
			rep.Files = append(rep.Files, *rf)
			patch := func(at, v int64, what string) {
				old := int64(binary.BigEndian.Uint64(md[at:]))
				if old != v {
					binary.BigEndian.PutUint64(md[at:], uint64(v))
					rep.Patched = append(rep.Patched, PatchedField{At: at, Old: old, New: v, What: what})
				}
			}
			for i, g := range rf.KeyGroups {
				patch(h.offsetsAt+8*int64(g.KeyGroup-h.first), g.NewOffset, fmt.Sprintf("%s key group %d offset", rel, rf.KeyGroups[i].KeyGroup))
			}
			patch(h.stream.sizeAt, rf.NewSize, rel+" size")
		}
	}
	// Everything else, byte for byte.
	err = filepath.WalkDir(sp.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sp.dir, path)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		case !d.Type().IsRegular() || rel == "_metadata" || rewritten[rel]:
			return nil
		}
		rep.Copied = append(rep.Copied, rel)
		return copyFile(path, filepath.Join(tmp, rel))
	})
	if err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	if err := writeSynced(filepath.Join(tmp, "_metadata"), func(w io.Writer) error { _, err := w.Write(md); return err }); err != nil {
		return nil, err
	}
	if err := syncPath(tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	if err := syncPath(parent); err != nil {
		os.RemoveAll(dst)
		return nil, err
	}
	return rep, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeSynced(dst, func(w io.Writer) error { _, err := io.Copy(w, in); return err })
}

func writeSynced(path string, fill func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("flink: rewrite: %w", err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("flink: rewrite: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("flink: rewrite: %s: %w", path, err)
	}
	return f.Close()
}

func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("flink: rewrite: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flink: rewrite: sync %s: %w", dir, err)
	}
	return nil
}

// pair is one canonical (key, value) pair of a key group.
type pair struct {
	state      int
	key, value []byte // the key without the "meta data follows" flag
	edited     bool
}

func (sp *Savepoint) rewriteKeyed(op *operatorMeta, subtask int, h *keyGroupsHandle, kh *keyedHeader, edit KeyedEdit, out string, rep *RewriteReport) (*RewrittenFile, error) {
	sec, c, err := h.stream.open()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	size := sec.size()
	sorted := sortedOffsets(h.offsets)
	header := size
	if len(sorted) > 0 {
		header = sorted[0]
	}
	rf := &RewrittenFile{Header: header, OldSize: size}
	prefix := 1
	if op.maxParallelism > 128 {
		prefix = 2
	}
	type group struct {
		kg  int
		off int64
	}
	var groups []group
	for i, off := range h.offsets {
		if off > 0 {
			groups = append(groups, group{h.first + i, off})
		} else {
			rf.KeyGroups = append(rf.KeyGroups, RewrittenGroup{KeyGroup: h.first + i})
		}
	}
	slices.SortFunc(groups, func(a, b group) int { return int(a.off - b.off) })
	err = writeSynced(out, func(w io.Writer) error {
		b, err := sec.read(0, header)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		pos := header
		for _, g := range groups {
			end := sectionEnd(sorted, g.off, size)
			raw, err := sec.read(g.off, end-g.off)
			if err != nil {
				return err
			}
			enc, changed, err := sp.rewriteGroup(op, subtask, g.kg, prefix, h.kind, kh, edit, sec.name(), g.off, raw, rep)
			if err != nil {
				return err
			}
			rg := RewrittenGroup{KeyGroup: g.kg, OldOffset: g.off, OldSize: end - g.off, Encoded: changed}
			if !changed {
				enc = raw
			}
			if len(enc) > 0 {
				rg.NewOffset, rg.NewSize = pos, int64(len(enc))
				if _, err := w.Write(enc); err != nil {
					return err
				}
				pos += int64(len(enc))
			}
			rf.KeyGroups = append(rf.KeyGroups, rg)
		}
		rf.NewSize = pos
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rf.KeyGroups, func(a, b RewrittenGroup) int { return a.KeyGroup - b.KeyGroup })
	return rf, nil
}

// rewriteGroup decodes one key group's pairs and, when the edit changes
// any, encodes them again; changed=false leaves the source's bytes.
func (sp *Savepoint) rewriteGroup(op *operatorMeta, subtask, kg, prefix int, kind byte, kh *keyedHeader, edit KeyedEdit, file string, off int64, raw []byte, rep *RewriteReport) (out []byte, changed bool, err error) {
	r := &kgReader{file: file, base: off, kg: kg, prefix: prefix, header: kh, want: func(*stateMeta) bool { return true }}
	// The reader's test of the layout (kgReader.read).
	native := kind == handleKeyGroupsV2 && !r.canonicalLayout(raw)
	if kind == handleKeyGroups && len(raw) >= 4 {
		native = int(int32(binary.BigEndian.Uint32(raw))) == kg
	}
	if native {
		return nil, false, fmt.Errorf("flink: rewrite: %s key group %d: heap-native layout (a heap checkpoint); only canonical savepoints can be rewritten: %w", file, kg, ErrUnsupported)
	}
	d, err := r.decompress(raw, off)
	if err != nil {
		return nil, false, err
	}
	var pairs []pair
	id := int(d.u16())
	for d.err == nil {
		m := r.stateByID(d, id)
		at := d.pos()
		key := d.take(d.count("key byte", 1))
		value := d.take(d.count("value byte", 0))
		if d.err != nil || m == nil {
			break
		}
		if len(key) == 0 {
			d.fail("key group %d: empty key", kg)
			break
		}
		more := key[0]&0x80 != 0
		p := pair{state: id, key: slices.Clone(key), value: value}
		p.key[0] &^= 0x80
		if m.backendType == backendKeyValue && edit.Touches(op.id, m.name) {
			if m.unreadable != "" {
				return nil, false, fmt.Errorf("flink: rewrite: state %q: %w", m.name, &UnknownSerializerError{Class: m.unreadable})
			}
			nv, drop, edited, err := sp.editPair(op, subtask, r, at, m, key, value, edit, rep)
			if err != nil {
				return nil, false, err
			}
			if edited {
				changed = true
				p.edited = true
				p.value = nv
			}
			if drop {
				changed = true
				p.value = nil
				p.state = -1
			}
		}
		pairs = append(pairs, p)
		if more {
			id = int(d.u16())
			if id == endOfKeyGroup {
				break
			}
		}
	}
	if d.err != nil {
		return nil, false, d.err
	}
	if d.remaining() != 0 {
		return nil, false, fmt.Errorf("flink: %s key group %d: %d bytes after the end mark: %w", file, kg, d.remaining(), ErrCorrupt)
	}
	if !changed {
		return nil, false, nil
	}
	pairs = slices.DeleteFunc(pairs, func(p pair) bool { return p.state < 0 })
	if len(pairs) == 0 {
		return nil, true, nil
	}
	var b []byte
	for i, p := range pairs {
		if i == 0 || pairs[i-1].state != p.state {
			b = binary.BigEndian.AppendUint16(b, uint16(p.state))
		}
		last := i == len(pairs)-1 || pairs[i+1].state != p.state
		b = binary.BigEndian.AppendUint32(b, uint32(len(p.key)))
		start := len(b)
		b = append(b, p.key...)
		if last {
			b[start] |= 0x80
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p.value)))
		b = append(b, p.value...)
	}
	b = binary.BigEndian.AppendUint16(b, endOfKeyGroup)
	if kh.compressed {
		var z bytes.Buffer
		w := snappy.NewBufferedWriter(&z)
		if _, err := w.Write(b); err != nil {
			return nil, false, err
		}
		if err := w.Close(); err != nil {
			return nil, false, err
		}
		b = z.Bytes()
	}
	return b, true, nil
}

// editPair runs the edit over the entries of one pair and returns its new
// value bytes; drop when nothing of the pair is left.
func (sp *Savepoint) editPair(op *operatorMeta, subtask int, r *kgReader, at int64, m *stateMeta, key, value []byte, edit KeyedEdit, rep *RewriteReport) (nv []byte, drop, edited bool, err error) {
	entries, err := r.decodePair(at, m, key, value)
	if err != nil {
		return nil, false, false, err
	}
	entries = slices.Clone(entries)
	edits := make([]EntryEdit, len(entries))
	any := false
	for i, e := range entries {
		row := state.KeyedRow{OperatorID: op.id, OperatorName: sp.opName(op), Subtask: subtask, KeyGroup: e.keyGroup,
			StateName: m.name, Kind: m.kind(), Key: e.key, Namespace: e.namespace, UserKey: e.userKey, Value: e.value}
		ed, err := edit.Edit(&row)
		if err != nil {
			return nil, false, false, err
		}
		edits[i] = ed
		if ed.Drop {
			rep.Dropped++
			any = true
		} else if ed.Set {
			rep.Changed++
			any = true
		}
	}
	if !any {
		return nil, false, false, nil
	}
	fail := func(err error) ([]byte, bool, bool, error) {
		return nil, false, false, fmt.Errorf("flink: rewrite: state %q, key %v: %w", m.name, entries[0].key, err)
	}
	switch m.kind() {
	case state.KindList:
		elem, _ := m.listElem()
		// Split the value into its elements' bytes: untouched elements
		// stay byte for byte.
		d := newDecoder(r.file, at, value)
		var out []byte
		kept := 0
		for i := 0; d.remaining() > 0; i++ {
			start := d.off
			elem.decode(d)
			if d.err != nil {
				return nil, false, false, d.err
			}
			span := value[start:d.off]
			if d.remaining() > 0 && d.u8() != ',' {
				return fail(fmt.Errorf("list element not followed by ',': %w", ErrCorrupt))
			}
			if i >= len(edits) {
				return fail(errors.New("list elements changed while read"))
			}
			switch ed := edits[i]; {
			case ed.Drop:
				continue
			case ed.Set:
				if !canEncode(elem) {
					return fail(fmt.Errorf("values of serializer %s cannot be written", elem.typeName()))
				}
				if span, err = encodeValue(elem, nil, ed.Value); err != nil {
					return fail(err)
				}
			}
			if kept > 0 {
				out = append(out, ',')
			}
			out = append(out, span...)
			kept++
		}
		if kept == 0 {
			return nil, true, false, nil
		}
		return out, false, true, nil
	case state.KindMap:
		ed := edits[0]
		if ed.Drop {
			return nil, true, false, nil
		}
		ms, _ := m.mapParts()
		if ed.Value == nil {
			// As Flink writes it: the flag, then the serializer's null.
			return append([]byte{1}, nullEncoding(ms.value)...), false, true, nil
		}
		if !canEncode(ms.value) {
			return fail(fmt.Errorf("values of serializer %s cannot be written", ms.value.typeName()))
		}
		b, err := encodeValue(ms.value, []byte{0}, ed.Value)
		if err != nil {
			return fail(err)
		}
		return b, false, true, nil
	}
	ed := edits[0]
	if ed.Drop {
		return nil, true, false, nil
	}
	if !canEncode(m.value) {
		return fail(fmt.Errorf("values of serializer %s cannot be written", typeOf(m.value)))
	}
	b, err := encodeValue(m.value, nil, ed.Value)
	if err != nil {
		return fail(err)
	}
	return b, false, true, nil
}
