package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"math/bits"
	"slices"
	"strings"
)

// The snapshot stream is the one backend-independent encoding of keyed state
// (and, separately, operator state): heap and pebble write it, checkpoints
// keep it in memory, savepoints store it in files.
//
// Keyed stream (version 1):
//
//	stream = { group } 0x00             (key groups strictly increasing)
//	group  = 0x01 uvarint(keyGroup) { block } u32le(0)
//	block  = u32le(n) n bytes of whole entries, n > 0
//	entry  = flags [state] [key] [namespace] [userKey] value
//	  flags bit 0: state name follows (uvarint len, bytes); else same as previous
//	  flags bit 1: key follows as uvarint(shared prefix with previous key),
//	               uvarint(len suffix), suffix; else same key as previous
//	  flags bit 2: namespace follows (uvarint len, bytes); else same as previous
//	  flags bit 3: user key follows (uvarint len, bytes); else none
//	  flags bits 4-7: zero
//	  value: uvarint len, bytes
//
// INVARIANT: within a group, entries are strictly increasing in Entry order
// (CompareEntries) and all belong to the group's key group; the writer
// refuses anything else and the reader checks it, so a restored backend may
// rely on it. "Previous" starts empty at every group, so a group decodes
// without the groups before it (a savepoint reads one key group alone).
//
// Zero-length namespaces and user keys decode as nil.
//
// Indexed groups (savepoint format 2) lay a group out so that a point
// lookup reads and checks only the blocks that can hold its key:
//
//	group2 = 0x02 uvarint(keyGroup) { block } u32le(0) index
//	index  = u32le(n) n bytes of: uvarint(blocks) { ref }
//	ref    = flags [uvarint len, state] uvarint len, key
//	         uvarint(size) uvarint(entries) u32le(crc32c)
//	  flags bit 0: state name follows; else the previous ref's
//
// Blocks close at about IndexedBlockTarget bytes. The first entry of every
// block restarts its fields (state name, whole key, namespace), so a block
// decodes alone; the order across blocks is still strict and checked. Ref i
// describes block i: its first entry's state and key, its payload size (the
// bytes after its length field), its entry count and the CRC32C of its
// payload. Blocks follow each other from the group header on, so their
// offsets are the sums of the sizes before them.
//
// INVARIANT: a reader of an indexed group checks that its index describes
// the blocks it decoded, so a group whose whole bytes are checked (its
// section's CRC32C) has an index a point lookup may rely on.

const (
	tagEnd          = 0x00
	tagGroup        = 0x01
	tagIndexedGroup = 0x02

	flagState = 1 << 0
	flagKey   = 1 << 1
	flagNS    = 1 << 2
	flagUK    = 1 << 3
	flagsAll  = flagState | flagKey | flagNS | flagUK

	// blockTarget is the size after which the writer closes a block.
	blockTarget = 64 << 10
	// IndexedBlockTarget is the block size of indexed groups: what a point
	// lookup reads and decodes besides the index.
	IndexedBlockTarget = 4 << 10
	// flushTarget is how many bytes the writer buffers before writing.
	flushTarget = 256 << 10
)

// MaxEntrySize bounds one entry's payload (Entry.Size) and one state name;
// the writer refuses larger ones and readers never allocate more on the word
// of a length field.
const MaxEntrySize = 1 << 28

// maxBlock bounds a block: the writer closes a block once it passes
// blockTarget, so a block is at most blockTarget plus one entry.
const maxBlock = blockTarget + MaxEntrySize + 64

// MaxKeyGroups bounds key group numbers in a stream (Flink's upper bound of
// the max parallelism).
const MaxKeyGroups = 1 << 15

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the checksum of snapshot bytes (Castagnoli polynomial).
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// GroupInfo describes one key group as a StreamWriter wrote it.
type GroupInfo struct {
	KeyGroup int
	// Offset and Size locate the group's bytes (tag to terminator) in the
	// stream; CRC32C is their checksum.
	Offset, Size int64
	CRC32C       uint32
	Entries      int64
	// IndexSize is the size of an indexed group's index (its last bytes),
	// IndexCRC32C their checksum, Blocks the number of blocks; zero for a
	// plain group.
	IndexSize   int64
	IndexCRC32C uint32
	Blocks      int
}

// StreamWriter encodes keyed entries, one key group at a time, into an
// io.Writer. It buffers up to a few hundred KiB; Flush or Close write the rest.
type StreamWriter struct {
	w   io.Writer
	buf []byte
	off int64 // stream offset of buf[0]
	err error

	inGroup    bool
	group      GroupInfo
	crc        uint32
	crcFrom    int // buf[crcFrom:] not yet folded into crc
	blockStart int // index in buf of the open block's length field, or -1

	// payload counts the payload bytes (Entry.Size) of the entries written.
	payload int64

	lastGroup int // the previous group's key group, -1 before the first
	prevState string
	prevKey   []byte
	prevNS    []byte
	prevUK    []byte
	first     bool

	// Indexed groups: the block size, and the refs of the group's blocks
	// so far (their keys in refKeys).
	indexed     bool
	target      int
	refs        []BlockRef
	refKeys     []byte
	blockOffset int64 // group offset of the open block's length field
}

// NewStreamWriter returns a writer that writes to w.
func NewStreamWriter(w io.Writer) *StreamWriter {
	return &StreamWriter{w: w, buf: make([]byte, 0, flushTarget+blockTarget), blockStart: -1, lastGroup: -1, target: blockTarget}
}

// NewIndexedStreamWriter returns a writer of indexed groups (savepoint
// format 2) to w.
func NewIndexedStreamWriter(w io.Writer) *StreamWriter {
	sw := NewStreamWriter(w)
	sw.indexed, sw.target = true, IndexedBlockTarget
	return sw
}

// Written is the number of entries of the current (or last) group written
// so far, and the payload bytes (Entry.Size) of every entry written: a
// caller counting entries per state reads them where the state changes
// instead of counting each entry.
func (w *StreamWriter) Written() (groupEntries, payload int64) { return w.group.Entries, w.payload }

// Offset is the number of bytes written to the stream so far, flushed or not.
func (w *StreamWriter) Offset() int64 { return w.off + int64(len(w.buf)) }

// BeginKeyGroup starts the group of key group kg.
func (w *StreamWriter) BeginKeyGroup(kg int) error {
	if w.err != nil {
		return w.err
	}
	if w.inGroup {
		return w.fail(fmt.Errorf("state: snapshot stream: key group %d begun inside key group %d", kg, w.group.KeyGroup))
	}
	if kg < 0 || kg >= MaxKeyGroups {
		return w.fail(fmt.Errorf("state: snapshot stream: key group %d out of range", kg))
	}
	if kg <= w.lastGroup {
		return w.fail(fmt.Errorf("state: snapshot stream: key group %d after key group %d", kg, w.lastGroup))
	}
	w.inGroup, w.first, w.lastGroup = true, true, kg
	w.group = GroupInfo{KeyGroup: kg, Offset: w.Offset()}
	w.crc, w.crcFrom = 0, len(w.buf)
	if w.indexed {
		w.buf = append(w.buf, tagIndexedGroup)
		w.refs, w.refKeys = w.refs[:0], w.refKeys[:0]
	} else {
		w.buf = append(w.buf, tagGroup)
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(kg))
	w.prevState, w.prevKey, w.prevNS, w.prevUK = "", w.prevKey[:0], w.prevNS[:0], w.prevUK[:0]
	return nil
}

// Write appends one entry to the current group. Entries must come in
// strictly increasing Entry order and belong to the group's key group.
// Write does not retain e's slices.
func (w *StreamWriter) Write(e Entry) error { return w.WriteEntry(&e) }

// WriteEntry is Write without copying the entry (it neither changes nor
// retains *e): for loops that write millions.
func (w *StreamWriter) WriteEntry(e *Entry) error {
	if w.err != nil {
		return w.err
	}
	if !w.inGroup {
		return w.fail(errors.New("state: snapshot stream: entry outside a key group"))
	}
	if e.KeyGroup != w.group.KeyGroup {
		return w.fail(fmt.Errorf("state: snapshot stream: entry of key group %d in key group %d", e.KeyGroup, w.group.KeyGroup))
	}
	// The most common entry, encoded without the general path: a new key
	// of the same state inside an open block, no namespace or user key
	// (nor before), one-byte lengths. It writes the bytes the general path
	// would.
	if w.blockStart >= 0 && !w.first && len(e.Key) < 0x80 && len(e.Value) < 0x80 &&
		len(e.Namespace)|len(w.prevNS)|len(e.UserKey)|len(w.prevUK) == 0 && e.State == w.prevState {
		k := e.Key
		shared := commonPrefix(k, w.prevKey)
		if shared < len(k) && (shared == len(w.prevKey) || k[shared] > w.prevKey[shared]) {
			b := append(w.buf, flagKey, byte(shared), byte(len(k)-shared))
			b = append(b, k[shared:]...)
			b = append(b, byte(len(e.Value)))
			w.buf = append(b, e.Value...)
			w.prevKey = append(w.prevKey[:shared], k[shared:]...)
			w.group.Entries++
			w.payload += int64(len(k) + len(e.Value))
			if len(w.buf)-w.blockStart >= w.target {
				w.closeBlock()
				if len(w.buf) >= flushTarget {
					return w.flush()
				}
			}
			return nil
		}
	}
	if e.Size() > MaxEntrySize || len(e.State) > MaxEntrySize {
		return w.fail(fmt.Errorf("state: snapshot stream: entry of state %q is %d bytes, more than %d", e.State, e.Size(), MaxEntrySize))
	}
	flags := byte(0)
	sameState, sameKey := false, false
	// shared is the key's common prefix with the previous key; the byte
	// after it decides their order, so the check and the prefix
	// compression are one pass.
	shared := 0
	if !w.first {
		c := 0
		if e.State != w.prevState {
			c = strings.Compare(e.State, w.prevState)
		} else {
			sameState = true
			n := min(len(e.Key), len(w.prevKey))
			shared = commonPrefix(e.Key, w.prevKey)
			switch {
			case shared < n:
				c = int(e.Key[shared]) - int(w.prevKey[shared])
			default:
				c = len(e.Key) - len(w.prevKey)
			}
			if c == 0 {
				sameKey = true
				if c = bytes.Compare(e.Namespace, w.prevNS); c == 0 {
					c = bytes.Compare(e.UserKey, w.prevUK)
				}
			}
		}
		if c <= 0 {
			return w.fail(fmt.Errorf("state: snapshot stream: key group %d: entry of state %q out of order or repeated", e.KeyGroup, e.State))
		}
	}
	if !sameState {
		flags |= flagState
		// A new state starts its keys afresh; the prefix shared with the
		// previous state's last key still compresses.
		n := min(len(e.Key), len(w.prevKey))
		for shared < n && e.Key[shared] == w.prevKey[shared] {
			shared++
		}
	}
	if !sameKey {
		flags |= flagKey
	}
	if w.first || !bytes.Equal(e.Namespace, w.prevNS) {
		flags |= flagNS
	}
	if len(e.UserKey) > 0 {
		flags |= flagUK
	}
	restart := w.first
	if w.blockStart < 0 {
		w.blockStart = len(w.buf)
		w.buf = append(w.buf, 0, 0, 0, 0)
		if w.indexed {
			// The block's first entry restarts its fields, so the
			// block decodes alone.
			restart = true
			flags |= flagState | flagKey | flagNS
			w.blockOffset = w.Offset() - 4 - w.group.Offset
			k := len(w.refKeys)
			w.refKeys = append(w.refKeys, e.Key...)
			// Entries holds the group's count before the block until
			// the block closes (closeBlock).
			w.refs = append(w.refs, BlockRef{State: e.State, Key: w.refKeys[k:len(w.refKeys):len(w.refKeys)], Offset: w.blockOffset, Entries: w.group.Entries})
		}
	}
	b := append(w.buf, flags)
	if flags&flagState != 0 {
		b = binary.AppendUvarint(b, uint64(len(e.State)))
		b = append(b, e.State...)
		w.prevState = e.State
	}
	if flags&flagKey != 0 {
		if restart {
			shared = 0
		}
		b = binary.AppendUvarint(b, uint64(shared))
		b = binary.AppendUvarint(b, uint64(len(e.Key)-shared))
		b = append(b, e.Key[shared:]...)
		w.prevKey = append(w.prevKey[:shared], e.Key[shared:]...)
	}
	if flags&flagNS != 0 {
		b = binary.AppendUvarint(b, uint64(len(e.Namespace)))
		b = append(b, e.Namespace...)
		w.prevNS = append(w.prevNS[:0], e.Namespace...)
	}
	if flags&flagUK != 0 {
		b = binary.AppendUvarint(b, uint64(len(e.UserKey)))
		b = append(b, e.UserKey...)
	}
	w.prevUK = append(w.prevUK[:0], e.UserKey...)
	b = binary.AppendUvarint(b, uint64(len(e.Value)))
	w.buf = append(b, e.Value...)
	w.first = false
	w.group.Entries++
	w.payload += int64(e.Size())
	if len(w.buf)-w.blockStart >= w.target {
		w.closeBlock()
		if len(w.buf) >= flushTarget {
			return w.flush()
		}
	}
	return nil
}

// commonPrefix is the length of the prefix a and b share, compared eight
// bytes at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func (w *StreamWriter) closeBlock() {
	if w.blockStart < 0 {
		return
	}
	n := len(w.buf) - w.blockStart - 4
	binary.LittleEndian.PutUint32(w.buf[w.blockStart:], uint32(n))
	if w.indexed {
		r := &w.refs[len(w.refs)-1]
		r.Size = n
		r.CRC32C = CRC32C(w.buf[w.blockStart+4:])
		r.Entries = w.group.Entries - r.Entries
	}
	w.blockStart = -1
}

// EndKeyGroup closes the current group and describes it.
func (w *StreamWriter) EndKeyGroup() (GroupInfo, error) {
	if w.err != nil {
		return GroupInfo{}, w.err
	}
	if !w.inGroup {
		return GroupInfo{}, w.fail(errors.New("state: snapshot stream: no key group to end"))
	}
	w.closeBlock()
	w.buf = append(w.buf, 0, 0, 0, 0)
	var idx []byte
	if w.indexed {
		start := len(w.buf)
		w.buf = appendGroupIndex(w.buf, w.refs)
		idx = w.buf[start:]
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.buf[w.crcFrom:])
	w.crcFrom = len(w.buf)
	w.inGroup = false
	g := w.group
	g.Size = w.Offset() - g.Offset
	g.CRC32C = w.crc
	if w.indexed {
		g.IndexSize, g.IndexCRC32C, g.Blocks = int64(len(idx)), CRC32C(idx), len(w.refs)
	}
	if len(w.buf) >= flushTarget {
		if err := w.flush(); err != nil {
			return GroupInfo{}, err
		}
	}
	return g, nil
}

// flush writes buffered bytes up to the open block, if any.
func (w *StreamWriter) flush() error {
	end := len(w.buf)
	if w.blockStart >= 0 {
		end = w.blockStart
	}
	if w.inGroup {
		w.crc = crc32.Update(w.crc, castagnoli, w.buf[w.crcFrom:end])
	}
	if end == 0 {
		return nil
	}
	if _, err := w.w.Write(w.buf[:end]); err != nil {
		return w.fail(fmt.Errorf("state: snapshot stream: write at offset %d: %w", w.off, err))
	}
	w.off += int64(end)
	n := copy(w.buf, w.buf[end:])
	w.buf = w.buf[:n]
	w.crcFrom = 0
	if w.blockStart >= 0 {
		w.blockStart = 0
	}
	return nil
}

// Flush writes everything buffered. It fails inside an open key group.
func (w *StreamWriter) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.inGroup {
		return w.fail(fmt.Errorf("state: snapshot stream: flush inside key group %d", w.group.KeyGroup))
	}
	return w.flush()
}

// Close ends the stream (writes the end tag) and flushes. It does not close
// the underlying writer.
func (w *StreamWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.inGroup {
		return w.fail(fmt.Errorf("state: snapshot stream: close inside key group %d", w.group.KeyGroup))
	}
	w.buf = append(w.buf, tagEnd)
	return w.flush()
}

func (w *StreamWriter) fail(err error) error {
	w.err = err
	return err
}

// WriteKeyGroups writes the entries of the given key groups as a whole
// stream, end tag included: what an in-memory checkpoint holds. entries(kg)
// is typically KeyedBackend.Entries(kg, "").
func WriteKeyGroups(w io.Writer, groups KeyGroupRange, entries func(kg int) iter.Seq2[Entry, error]) error {
	sw := NewStreamWriter(w)
	for kg := groups.Start; kg <= groups.End; kg++ {
		begun := false
		for e, err := range entries(kg) {
			if err != nil {
				return fmt.Errorf("state: snapshot stream: key group %d: %w", kg, err)
			}
			if !begun {
				if err := sw.BeginKeyGroup(kg); err != nil {
					return err
				}
				begun = true
			}
			if err := sw.Write(e); err != nil {
				return err
			}
		}
		if begun {
			if _, err := sw.EndKeyGroup(); err != nil {
				return err
			}
		}
	}
	return sw.Close()
}

// StreamReader decodes a keyed snapshot stream from bytes (without copying)
// or from an io.Reader (one block in memory at a time). The slices of the
// entries it returns are only valid until the next call of Next or
// NextKeyGroup.
type StreamReader struct {
	r    io.Reader // nil: all bytes are in buf
	buf  []byte    // bytes mode: the whole input; reader mode: the current block
	pos  int
	end  int   // end of the current block in buf, or -1 outside a block
	base int64 // stream offset of buf[0]

	inGroup   bool
	group     int
	lastGroup int // -1 before the first group
	first     bool
	state     string
	key       []byte
	ns        []byte
	uk        []byte
	nsOwned   []byte
	ukOwned   []byte
	hdr       [binary.MaxVarintLen64]byte
	finished  bool

	// Indexed groups. restart: the next entry is a block's first, which
	// restarts its fields; it is ordered against the entry before it,
	// kept in last*. seen lists the group's blocks so far, to check the
	// index against; n counts the group's entries.
	indexed   bool
	single    bool // one block alone (NewBlockReader)
	restart   bool
	lastState string
	lastKey   []byte
	lastNS    []byte
	lastUK    []byte
	seen      []BlockRef
	seenKeys  []byte
	n         int64
	refs      []BlockRef // the index's refs, decoded to check them
	// names are the state names met before: a reader reset for the next
	// section finds them there instead of allocating them again.
	names []string
}

// NewStreamReaderBytes reads the stream in b; base is the offset of b[0] in
// its file, used in error messages. A savepoint section (one group, no end
// tag) reads with NextKeyGroup, Next until done, and Done.
func NewStreamReaderBytes(b []byte, base int64) *StreamReader {
	r := &StreamReader{}
	r.ResetBytes(b, base)
	return r
}

// ResetBytes makes r a reader of b as NewStreamReaderBytes(b, base) would,
// keeping the memory it allocated before: a scan of many sections reuses
// one reader.
func (r *StreamReader) ResetBytes(b []byte, base int64) {
	*r = StreamReader{buf: b, base: base, end: -1, lastGroup: -1,
		key: r.key[:0], lastKey: r.lastKey[:0], seen: r.seen[:0], seenKeys: r.seenKeys[:0], refs: r.refs[:0], names: r.names}
}

// ResetBlock makes r a reader of one block as NewBlockReader(b, base, kg)
// would, keeping the memory it allocated before.
func (r *StreamReader) ResetBlock(b []byte, base int64, kg int) {
	r.ResetBytes(b, base)
	r.end, r.lastGroup, r.group = len(b), kg, kg
	r.inGroup, r.first, r.indexed, r.single, r.restart = true, true, true, true, true
}

// NewStreamReader reads the stream from r.
func NewStreamReader(r io.Reader) *StreamReader {
	return &StreamReader{r: r, end: -1, lastGroup: -1}
}

// NewBlockReader reads the entries of one block of an indexed group of key
// group kg alone: b is its payload (the bytes after its length field), base
// the offset of b[0] in its file. Read yields its entries until the block
// ends; Done reports whether they used all of b.
func NewBlockReader(b []byte, base int64, kg int) *StreamReader {
	r := &StreamReader{}
	r.ResetBlock(b, base, kg)
	return r
}

// GroupEntries is the number of entries of the current group decoded so
// far, those ReadFiltered skipped included.
func (r *StreamReader) GroupEntries() int64 { return r.n }

// Indexed reports whether the current (or last) group is an indexed group.
func (r *StreamReader) Indexed() bool { return r.indexed }

// Offset is the stream offset of the next byte the reader will decode.
func (r *StreamReader) Offset() int64 { return r.base + int64(r.pos) }

// Done reports whether a bytes reader consumed all its input.
func (r *StreamReader) Done() bool { return r.r == nil && r.pos == len(r.buf) }

func (r *StreamReader) corrupt(format string, args ...any) error {
	return fmt.Errorf("state: snapshot stream: offset %d: %s: %w", r.Offset(), fmt.Sprintf(format, args...), ErrCorrupt)
}

// readRaw reads n bytes outside blocks (tags, key group numbers, block
// lengths). In reader mode it refills buf with exactly those bytes.
func (r *StreamReader) readRaw(n int) ([]byte, error) {
	if r.r == nil {
		if len(r.buf)-r.pos < n {
			return nil, r.corrupt("stream ends inside a header")
		}
		b := r.buf[r.pos : r.pos+n]
		r.pos += n
		return b, nil
	}
	r.base += int64(r.pos)
	r.buf, r.pos = r.buf[:0], 0
	b := r.hdr[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, r.readErr(err)
	}
	r.base += int64(n)
	return b, nil
}

func (r *StreamReader) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.corrupt("stream ends early")
	}
	return fmt.Errorf("state: snapshot stream: offset %d: %w", r.Offset(), err)
}

func (r *StreamReader) readUvarintRaw() (uint64, error) {
	if r.r == nil {
		v, n := binary.Uvarint(r.buf[r.pos:])
		if n <= 0 {
			return 0, r.corrupt("bad varint")
		}
		r.pos += n
		return v, nil
	}
	var v uint64
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b, err := r.readRaw(1)
		if err != nil {
			return 0, err
		}
		v |= uint64(b[0]&0x7f) << (7 * i)
		if b[0] < 0x80 {
			if i == binary.MaxVarintLen64-1 && b[0] > 1 {
				break
			}
			return v, nil
		}
	}
	return 0, r.corrupt("bad varint")
}

// NextKeyGroup moves to the next group. It returns ok=false at the end tag,
// or at the end of the input of a bytes reader (a savepoint section). Entries
// left in the current group are skipped (and checked).
func (r *StreamReader) NextKeyGroup() (kg int, ok bool, err error) {
	for r.inGroup {
		if _, more, err := r.Next(); err != nil {
			return 0, false, err
		} else if !more {
			break
		}
	}
	if r.finished {
		return 0, false, nil
	}
	if r.r == nil && r.pos == len(r.buf) {
		r.finished = true
		return 0, false, nil
	}
	tag, err := r.readRaw(1)
	if err != nil {
		return 0, false, err
	}
	switch tag[0] {
	case tagEnd:
		r.finished = true
		return 0, false, nil
	case tagGroup:
		r.indexed = false
	case tagIndexedGroup:
		r.indexed = true
	default:
		r.pos--
		return 0, false, r.corrupt("unknown tag 0x%02x", tag[0])
	}
	v, err := r.readUvarintRaw()
	if err != nil {
		return 0, false, err
	}
	if v >= MaxKeyGroups {
		return 0, false, r.corrupt("key group %d out of range", v)
	}
	if int(v) <= r.lastGroup {
		return 0, false, r.corrupt("key group %d after key group %d", v, r.lastGroup)
	}
	r.inGroup, r.first, r.group, r.lastGroup = true, true, int(v), int(v)
	r.state, r.key, r.ns, r.uk = "", r.key[:0], nil, nil
	r.seen, r.seenKeys, r.n = r.seen[:0], r.seenKeys[:0], 0
	return r.group, true, nil
}

// Next returns the next entry of the current group, or ok=false at its end.
func (r *StreamReader) Next() (e Entry, ok bool, err error) {
	ok, err = r.Read(&e)
	return e, ok, err
}

// Read is Next decoding into e, which saves copying the entry on hot paths.
func (r *StreamReader) Read(e *Entry) (ok bool, err error) { return r.ReadFiltered(e, nil) }

// ReadFiltered is Read skipping the entries keep rejects among those that
// continue the previous entry's state, key group and namespace without a
// user key (most entries of a scan; they are decoded and checked all the
// same): a scan's filter on encoded bytes then costs no Entry for the rows
// it drops. Other entries come back whatever keep says: the caller filters
// them, and must filter again anyway if keep depends on the state.
func (r *StreamReader) ReadFiltered(e *Entry, keep func(key, value []byte, keyGroup int) bool) (ok bool, err error) {
	// The most common entry, decoded here without a call: a new key of
	// the same state and namespace, no user key, one-byte lengths, its
	// order decided by the first byte after the shared prefix. Anything
	// else, and whatever does not fit this shape exactly, takes
	// decodeEntry.
fast:
	if p := r.pos; p < r.end && r.inGroup && !r.restart && !r.first {
		b := r.buf[:r.end]
		if p+3 < len(b) && b[p] == flagKey {
			shared, n := int(b[p+1]), int(b[p+2])
			q := p + 3 + n
			if shared <= len(r.key) && n > 0 && n < 0x80 && q < len(b) && (shared == len(r.key) || b[p+3] > r.key[shared]) {
				if vl := int(b[q]); vl < 0x80 && vl < len(b)-q {
					// No pointer stores when the key fits (the reader is
					// on the heap: each would be a write barrier while
					// the garbage collector marks).
					if k := shared + n; k <= cap(r.key) {
						r.key = r.key[:k]
						if dst, src := r.key[shared:k], b[p+3:q]; n <= 8 {
							// A few bytes, usually: no memmove call.
							for i := range src {
								dst[i] = src[i]
							}
						} else {
							copy(dst, src)
						}
					} else {
						r.key = append(r.key[:shared], b[p+3:q]...)
					}
					if r.uk != nil {
						r.uk = nil
					}
					r.pos = q + 1 + vl
					r.n++
					var value []byte
					if vl > 0 {
						value = b[q+1 : q+1+vl : q+1+vl]
					}
					if keep != nil && !keep(r.key, value, r.group) {
						goto fast
					}
					// e is usually the entry of the previous call: what
					// stays the same (state, namespace, the key's array)
					// is not stored again, as every pointer stored
					// through e is a write barrier while the garbage
					// collector marks.
					if e.State != r.state {
						e.State = r.state
					}
					e.KeyGroup = r.group
					if k := r.key; cap(e.Key) == cap(k) && len(e.Key) > 0 && &e.Key[:1][0] == &k[:1][0] {
						e.Key = e.Key[:len(k)]
					} else {
						e.Key = k
					}
					if len(e.Namespace) != len(r.ns) || len(r.ns) > 0 && &e.Namespace[0] != &r.ns[0] || (e.Namespace == nil) != (r.ns == nil) {
						e.Namespace = r.ns
					}
					if e.UserKey != nil {
						e.UserKey = nil
					}
					e.Value = value
					return true, nil
				}
			}
		}
	}
	if !r.inGroup {
		return false, nil
	}
	if r.end < 0 || r.pos == r.end {
		if r.single {
			r.inGroup = false
			return false, nil
		}
		if r.end >= 0 {
			r.end = -1
		}
		more, err := r.nextBlock()
		if err != nil || !more {
			r.inGroup = false
			return false, err
		}
	}
	return r.decodeEntry(e)
}

func (r *StreamReader) nextBlock() (bool, error) {
	start := r.Offset()
	if r.r != nil {
		// The previous block's bytes are about to be overwritten: keep what
		// the next entries may refer to.
		r.nsOwned = append(r.nsOwned[:0], r.ns...)
		r.ns = r.nsOwned[:len(r.ns):len(r.ns)]
		r.ukOwned = append(r.ukOwned[:0], r.uk...)
		r.uk = r.ukOwned[:len(r.uk):len(r.uk)]
	}
	if r.indexed && len(r.seen) > 0 {
		b := &r.seen[len(r.seen)-1]
		b.Entries = r.n - b.Entries
	}
	lb, err := r.readRaw(4)
	if err != nil {
		return false, err
	}
	n := int(binary.LittleEndian.Uint32(lb))
	if n == 0 {
		if r.indexed {
			return false, r.checkIndex()
		}
		return false, nil
	}
	if n > maxBlock {
		return false, fmt.Errorf("state: snapshot stream: offset %d: block of %d bytes exceeds %d: %w", start, n, maxBlock, ErrCorrupt)
	}
	if err := r.fill(n, "block", start); err != nil {
		return false, err
	}
	if r.indexed {
		// The previous entry stays what the block's first is ordered
		// against; its fields no longer serve as prefixes.
		r.restart = true
		r.lastState, r.lastNS, r.lastUK = r.state, r.ns, r.uk
		r.lastKey = append(r.lastKey[:0], r.key...)
		r.key = r.key[:0]
		r.seen = append(r.seen, BlockRef{Size: n, Entries: r.n})
	}
	return true, nil
}

// fill makes the next n bytes the current block (or index): in bytes mode
// by bounds, in reader mode by reading them.
func (r *StreamReader) fill(n int, what string, start int64) error {
	if r.r == nil {
		if len(r.buf)-r.pos < n {
			return fmt.Errorf("state: snapshot stream: offset %d: %s of %d bytes runs past the end (%d left): %w", start, what, n, len(r.buf)-r.pos, ErrCorrupt)
		}
		r.end = r.pos + n
		return nil
	}
	// Grow in steps so that a lying length costs no more memory than the
	// bytes actually there.
	r.base += int64(r.pos)
	r.buf, r.pos = r.buf[:0], 0
	for len(r.buf) < n {
		step := min(n-len(r.buf), 1<<20)
		r.buf = slices.Grow(r.buf, step)
		m := len(r.buf)
		r.buf = r.buf[:m+step]
		if _, err := io.ReadFull(r.r, r.buf[m:]); err != nil {
			r.buf = r.buf[:m]
			return r.readErr(err)
		}
	}
	r.end = n
	return nil
}

// checkIndex reads the index after an indexed group's last block and
// checks that it describes the blocks just decoded.
func (r *StreamReader) checkIndex() error {
	start := r.Offset()
	lb, err := r.readRaw(4)
	if err != nil {
		return err
	}
	n := int(binary.LittleEndian.Uint32(lb))
	if n > maxBlock {
		return fmt.Errorf("state: snapshot stream: offset %d: group index of %d bytes exceeds %d: %w", start, n, maxBlock, ErrCorrupt)
	}
	var idx []byte
	if r.r == nil {
		if err := r.fill(n, "group index", start); err != nil {
			return err
		}
		idx = r.buf[r.pos-4 : r.end]
	} else {
		// The index with its length field, as decodeIndex reads it.
		lf := binary.LittleEndian.AppendUint32(nil, uint32(n))
		if err := r.fill(n, "group index", start); err != nil {
			return err
		}
		idx = append(lf, r.buf[:n]...)
	}
	r.pos, r.end = r.end, -1
	refs, err := decodeIndexInto(r.refs[:0], idx, start)
	if err != nil {
		return err
	}
	r.refs = refs
	bad := func(format string, args ...any) error {
		return fmt.Errorf("state: snapshot stream: offset %d: group index of key group %d: %s: %w", start, r.group, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	if len(refs) != len(r.seen) {
		return bad("lists %d blocks, the group has %d", len(refs), len(r.seen))
	}
	for i, ref := range refs {
		b := r.seen[i]
		if ref.Size != b.Size || ref.Entries != b.Entries || ref.State != b.State || !bytes.Equal(ref.Key, b.Key) {
			return bad("block %d is listed as %d bytes, %d entries from state %q key %x; it is %d bytes, %d entries from state %q key %x",
				i, ref.Size, ref.Entries, ref.State, ref.Key, b.Size, b.Entries, b.State, b.Key)
		}
	}
	return nil
}

func (r *StreamReader) field(what string) ([]byte, error) {
	if r.pos < r.end {
		if v := int(r.buf[r.pos]); v < 0x80 && v < r.end-r.pos {
			// One-byte length: most fields.
			r.pos++
			if v == 0 {
				return nil, nil
			}
			r.pos += v
			return r.buf[r.pos-v : r.pos : r.pos], nil
		}
	}
	v, n := binary.Uvarint(r.buf[r.pos:r.end])
	if n <= 0 {
		return nil, r.corrupt("bad %s length", what)
	}
	if v > uint64(r.end-r.pos-n) {
		return nil, r.corrupt("%s of %d bytes runs past its block", what, v)
	}
	r.pos += n
	b := r.buf[r.pos : r.pos+int(v) : r.pos+int(v)]
	r.pos += int(v)
	if len(b) == 0 {
		return nil, nil
	}
	return b, nil
}

// field1 reads a length-prefixed field at pos of b (the current block),
// the one-byte length of most fields without a call.
func field1(b []byte, pos int) (f []byte, next int, ok bool) {
	if pos < len(b) {
		if v := int(b[pos]); v < 0x80 {
			pos++
			if v > len(b)-pos {
				return nil, pos, false
			}
			if v == 0 {
				return nil, pos, true
			}
			return b[pos : pos+v : pos+v], pos + v, true
		}
	}
	v, n := binary.Uvarint(b[pos:])
	if n <= 0 || v > uint64(len(b)-pos-n) {
		return nil, pos, false
	}
	pos += n
	if v == 0 {
		return nil, pos, true
	}
	return b[pos : pos+int(v) : pos+int(v)], pos + int(v), true
}

// compareFrom compares a with b, where a is known to share nothing before
// its first byte with b's (a key suffix against the previous key's): the
// first bytes usually decide.
func compareFrom(a, b []byte) int {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		if a[0] < b[0] {
			return -1
		}
		return 1
	}
	return bytes.Compare(a, b)
}

// badField is the error of a field that does not fit its block.
func (r *StreamReader) badField(pos int, what string) (bool, error) {
	r.pos = pos
	return false, r.corrupt("bad %s length, or it runs past its block", what)
}

func (r *StreamReader) decodeEntry(e *Entry) (bool, error) {
	b := r.buf[:r.end]
	start := r.pos
	pos := start
	flags := b[pos]
	if flags&^flagsAll != 0 {
		return false, r.corrupt("bad entry flags 0x%02x", flags)
	}
	pos++
	if r.first && flags&flagState == 0 {
		return false, r.corrupt("first entry of key group %d has no state name", r.group)
	}
	if r.restart && flags&(flagState|flagKey|flagNS) != flagState|flagKey|flagNS {
		return false, r.corrupt("first entry of a block of key group %d does not restart its fields", r.group)
	}
	var f []byte
	var ok bool

	c := 0 // order against the previous entry, decided by the first field that changed
	if flags&flagState != 0 {
		if f, pos, ok = field1(b, pos); !ok {
			return r.badField(pos, "state name")
		}
		if string(f) != r.state || r.first {
			c = strings.Compare(string(f), r.state)
			r.state = r.name(f)
		}
	}
	if flags&flagKey != 0 {
		var shared uint64
		if pos < len(b) && b[pos] < 0x80 {
			shared = uint64(b[pos])
			pos++
		} else {
			var n int
			shared, n = binary.Uvarint(b[pos:])
			if n <= 0 {
				return r.badField(pos, "key prefix")
			}
			pos += n
		}
		if shared > uint64(len(r.key)) {
			r.pos = pos
			return false, r.corrupt("bad key prefix")
		}
		if f, pos, ok = field1(b, pos); !ok {
			return r.badField(pos, "key")
		}
		if c == 0 {
			c = compareFrom(f, r.key[shared:])
		}
		r.key = append(r.key[:shared], f...)
	}
	if flags&flagNS != 0 {
		if f, pos, ok = field1(b, pos); !ok {
			return r.badField(pos, "namespace")
		}
		if c == 0 {
			c = bytes.Compare(f, r.ns)
		}
		r.ns = f
	}
	var uk []byte
	if flags&flagUK != 0 {
		if uk, pos, ok = field1(b, pos); !ok {
			return r.badField(pos, "user key")
		}
	}
	if c == 0 {
		c = bytes.Compare(uk, r.uk)
	}
	r.uk = uk
	value, pos, ok := field1(b, pos)
	if !ok {
		return r.badField(pos, "value")
	}
	r.pos = pos
	if r.restart {
		r.restart = false
		c = r.orderAfterLast(uk)
		if !r.single {
			k := len(r.seenKeys)
			r.seenKeys = append(r.seenKeys, r.key...)
			sb := &r.seen[len(r.seen)-1]
			sb.State, sb.Key = r.state, r.seenKeys[k:len(r.seenKeys):len(r.seenKeys)]
			if len(sb.Key) == 0 {
				sb.Key = nil
			}
		}
	}
	r.n++
	if c <= 0 && !r.first {
		return false, fmt.Errorf("state: snapshot stream: offset %d: entry out of order in key group %d: %w", r.base+int64(start), r.group, ErrCorrupt)
	}
	r.first = false
	var key []byte
	if len(r.key) > 0 {
		key = r.key
	}
	e.State, e.KeyGroup, e.Key, e.Namespace, e.UserKey, e.Value = r.state, r.group, key, r.ns, uk, value
	return true, nil
}

// name returns f as a string, one of r.names when it is there.
func (r *StreamReader) name(f []byte) string {
	for _, n := range r.names {
		if n == string(f) {
			return n
		}
	}
	n := string(f)
	if len(r.names) < 8 {
		r.names = append(r.names, n)
	}
	return n
}

// orderAfterLast compares the entry just decoded at a block's start with
// the one before the block.
func (r *StreamReader) orderAfterLast(uk []byte) int {
	if c := strings.Compare(r.state, r.lastState); c != 0 {
		return c
	}
	if c := bytes.Compare(r.key, r.lastKey); c != 0 {
		return c
	}
	if c := bytes.Compare(r.ns, r.lastNS); c != 0 {
		return c
	}
	return bytes.Compare(uk, r.lastUK)
}

// All yields every entry of every group until the end of the stream.
func (r *StreamReader) All() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for {
			_, ok, err := r.NextKeyGroup()
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if !ok {
				return
			}
			var e Entry
			for {
				ok, err := r.Read(&e)
				if err != nil {
					yield(Entry{}, err)
					return
				}
				if !ok {
					break
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// Operator state stream (version 1):
//
//	opstream = uvarint(count) { entry }
//	entry    = flags [state] kind uvarint(position) [key] value
//	  flags bit 0: state name follows (uvarint len, bytes); else same as previous
//	  flags bit 1: key follows (uvarint len, bytes); else none
//	  value: uvarint len, bytes

// AppendOperatorEntries appends the encoding of es, in the order given.
func AppendOperatorEntries(dst []byte, es []OperatorEntry) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(es)))
	prev := ""
	for i, e := range es {
		flags := byte(0)
		if i == 0 || e.State != prev {
			flags |= flagState
		}
		if len(e.Key) > 0 {
			flags |= 2
		}
		dst = append(dst, flags)
		if flags&flagState != 0 {
			dst = binary.AppendUvarint(dst, uint64(len(e.State)))
			dst = append(dst, e.State...)
			prev = e.State
		}
		dst = append(dst, byte(e.Kind))
		dst = binary.AppendUvarint(dst, uint64(e.Position))
		if flags&2 != 0 {
			dst = binary.AppendUvarint(dst, uint64(len(e.Key)))
			dst = append(dst, e.Key...)
		}
		dst = binary.AppendUvarint(dst, uint64(len(e.Value)))
		dst = append(dst, e.Value...)
	}
	return dst
}

// WriteOperatorEntries writes the encoding of es to w.
func WriteOperatorEntries(w io.Writer, es []OperatorEntry) error {
	_, err := w.Write(AppendOperatorEntries(nil, es))
	return err
}

// DecodeOperatorEntries decodes all of b; base is b's offset in its file, for
// error messages. The entries' Key and Value alias b.
func DecodeOperatorEntries(b []byte, base int64) ([]OperatorEntry, error) {
	pos := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("state: operator stream: offset %d: %s: %w", base+int64(pos), fmt.Sprintf(format, args...), ErrCorrupt)
	}
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
			return nil, bad("%s of %d bytes runs past the end", what, n)
		}
		f := b[pos : pos+int(n)]
		pos += int(n)
		if len(f) == 0 {
			return nil, nil
		}
		return f, nil
	}
	count, err := uv("entry count")
	if err != nil {
		return nil, err
	}
	// Every entry takes at least 4 bytes (flags, kind, position, value length).
	if count > uint64(len(b)-pos)/4 {
		return nil, bad("%d entries cannot fit in %d bytes", count, len(b)-pos)
	}
	out := make([]OperatorEntry, 0, count)
	state := ""
	for i := uint64(0); i < count; i++ {
		if pos >= len(b) {
			return nil, bad("stream ends at entry %d of %d", i, count)
		}
		flags := b[pos]
		if flags&^3 != 0 || (i == 0 && flags&flagState == 0) {
			return nil, bad("bad entry flags 0x%02x", flags)
		}
		pos++
		if flags&flagState != 0 {
			s, err := field("state name")
			if err != nil {
				return nil, err
			}
			state = string(s)
		}
		if pos >= len(b) {
			return nil, bad("stream ends in entry %d", i)
		}
		kind := Kind(b[pos])
		if kind != KindSplitList && kind != KindUnionList && kind != KindBroadcast {
			return nil, bad("operator state kind %d", kind)
		}
		pos++
		p, err := uv("position")
		if err != nil {
			return nil, err
		}
		if p > 1<<40 {
			return nil, bad("position %d", p)
		}
		var key []byte
		if flags&2 != 0 {
			if key, err = field("key"); err != nil {
				return nil, err
			}
		}
		value, err := field("value")
		if err != nil {
			return nil, err
		}
		out = append(out, OperatorEntry{State: state, Kind: kind, Position: int(p), Key: key, Value: value})
	}
	if pos != len(b) {
		return nil, bad("%d bytes after the last entry", len(b)-pos)
	}
	return out, nil
}

// ReadOperatorEntries reads an operator stream of at most max bytes from r.
func ReadOperatorEntries(r io.Reader, max int64) ([]OperatorEntry, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("state: operator stream: %w", err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("state: operator stream: more than %d bytes: %w", max, ErrCorrupt)
	}
	return DecodeOperatorEntries(b, 0)
}
