package savepoint

import (
	"encoding/binary"
	"fmt"
	"slices"

	"streamdbg/state"
)

// lookup.go reads the rows of a scan that wants some keys or one state
// from an indexed section (format 2) without reading the whole section:
// the section's block index (checked against its CRC32C in _metadata)
// says which blocks can hold them; only those are read, each checked
// against its CRC32C in the index and against what the index says of it
// (entry count, first key, and that its last key does not pass the next
// block's first). A lookup therefore never relies on bytes it has not
// checked; the bytes it does not read are checked by full reads and
// Verify.

// lookupMinSection is the size above which a scan that wants some keys or
// one state reads the blocks it needs rather than the whole section: below,
// one read of a few blocks costs what the index read alone does.
const lookupMinSection = 4 * state.IndexedBlockTarget

// lookup makes the rows of u from the blocks that can hold them (m.add;
// more is false when the consumer wants no more). done is false when
// those are all the blocks: the caller reads the whole section (one read,
// one checksum) instead.
func (m *rowMaker) lookup(s *Savepoint, r *sectionReader, u scanUnit) (more, done bool, err error) {
	sec := u.sec
	path := s.fs.PathJoin(s.dir, r.name)
	at := sec.Offset + sec.Size - sec.IndexSize
	idx, err := r.readInto(m.ibuf, at, sec.IndexSize, sec.IndexCRC32C, section{kg: sec.KeyGroup, what: ": block index"})
	if err != nil {
		return false, true, err
	}
	m.ibuf = idx
	refs, err := state.DecodeGroupIndexInto(m.refs, idx, at, sec.KeyGroup, sec.Size, sec.Entries)
	m.refs = refs
	if err != nil {
		return false, true, fmt.Errorf("savepoint: %s: key group %d: %w", path, sec.KeyGroup, err)
	}
	if !m.wantBlocks(u.op, refs) {
		return true, false, nil
	}
	for lo := 0; lo < len(refs); lo++ {
		if !m.want[lo] {
			continue
		}
		hi := lo + 1
		for hi < len(refs) && m.want[hi] {
			hi++
		}
		// One read for a run of blocks; each is checked on its own.
		start := refs[lo].Offset
		end := refs[hi-1].Offset + 4 + int64(refs[hi-1].Size)
		b, err := r.readRun(m.buf, sec.Offset+start, end-start)
		if err != nil {
			return false, true, err
		}
		m.buf = b
		for i := lo; i < hi; i++ {
			off := refs[i].Offset - start
			var next *state.BlockRef
			if i+1 < len(refs) {
				next = &refs[i+1]
			}
			more, past, err := m.block(s, u, path, b[off:off+4+int64(refs[i].Size)], sec.Offset+refs[i].Offset, &refs[i], next)
			if err != nil || past || !more {
				return more, true, err
			}
		}
		lo = hi
	}
	return true, true, nil
}

// wantBlocks marks in m.want the blocks that can hold rows of the scan; it
// reports false when that is every block.
func (m *rowMaker) wantBlocks(op *operator, refs []state.BlockRef) bool {
	m.want = slices.Grow(m.want[:0], len(refs))[:len(refs)]
	clear(m.want)
	mark := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			m.want[i] = true
		}
	}
	scan := &m.scan
	var names []string
	if scan.StateName != "" {
		names = []string{scan.StateName}
	} else {
		// Timer states are not rows of a scan without a state name
		// (rowMaker.keep); states the StateMeta table does not list hold
		// no key a literal can match (their keys show as hex).
		for _, st := range op.states {
			if st.Scope == state.ScopeKeyed && !isTimer(st) {
				names = append(names, st.StateName)
			}
		}
	}
	for _, name := range names {
		keys := state.NewKeyFilter(op.byName[name].KeyType, scan.Keys).Encoded()
		if keys == nil {
			mark(state.BlocksOfState(refs, name))
			continue
		}
		for _, k := range keys {
			mark(state.BlocksFor(refs, name, k))
		}
	}
	for _, w := range m.want {
		if !w {
			return true
		}
	}
	return false
}

// block makes the rows of one block (b: its length field and payload, at
// file offset off) described by ref; next is the following block's ref, if
// any. past reports that no later entry of the section can be kept, more
// false that the consumer wants no more rows.
func (m *rowMaker) block(s *Savepoint, u scanUnit, path string, b []byte, off int64, ref, next *state.BlockRef) (more, past bool, err error) {
	bad := func(err error) error {
		return fmt.Errorf("savepoint: %s: key group %d: block at offset %d (%d bytes): %w", path, u.sec.KeyGroup, off, len(b), err)
	}
	if int(binary.LittleEndian.Uint32(b)) != ref.Size {
		return false, false, bad(fmt.Errorf("%w (length field %d, the block index says %d)", ErrChecksum, binary.LittleEndian.Uint32(b), ref.Size))
	}
	payload := b[4:]
	if got := state.CRC32C(payload); got != ref.CRC32C {
		return false, false, bad(fmt.Errorf("%w (crc32c %08x, the block index says %08x)", ErrChecksum, got, ref.CRC32C))
	}
	sr := &m.sr
	sr.ResetBlock(payload, off+4, u.sec.KeyGroup)
	var e state.Entry
	var n int64
	for {
		ok, err := sr.Read(&e)
		if err != nil {
			return false, false, bad(err)
		}
		if !ok {
			break
		}
		if n == 0 && (e.State != ref.State || string(e.Key) != string(ref.Key)) {
			return false, false, bad(fmt.Errorf("starts at state %q key %x, the block index says %q %x: %w", e.State, e.Key, ref.State, ref.Key, state.ErrCorrupt))
		}
		n++
		if m.keep(u.op, &e) {
			if !m.add(m.row(u.op, u.sub, &e)) {
				return false, false, nil
			}
		} else if m.past(&e) {
			return true, true, nil
		}
		if next != nil && n == ref.Entries && (e.State > next.State || e.State == next.State && string(e.Key) > string(next.Key)) {
			return false, false, bad(fmt.Errorf("ends at state %q key %x, after the next block's start: %w", e.State, e.Key, state.ErrCorrupt))
		}
	}
	if !sr.Done() || n != ref.Entries {
		return false, false, bad(fmt.Errorf("%d entries, the block index says %d, or bytes after them: %w", n, ref.Entries, state.ErrCorrupt))
	}
	return true, false, nil
}

// readRun reads [off, off+size) of the open file into dst when it is large
// enough, else into a new buffer; the caller checks the blocks in it.
func (r *sectionReader) readRun(dst []byte, off, size int64) ([]byte, error) {
	// INVARIANT: the run lies inside a section validate bounded, and
	// DecodeGroupIndex checked that its blocks lie inside the section.
	return r.readAt(dst, off, size, "blocks")
}
