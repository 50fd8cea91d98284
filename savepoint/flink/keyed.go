package flink

import (
	"encoding/binary"
	"fmt"
	"iter"
	"slices"

	"streamdbg/state"
)

const endOfKeyGroup = 0xffff

// entry is one decoded keyed entry or timer of one key group.
type entry struct {
	meta      *stateMeta
	keyGroup  int
	key       any
	namespace any
	userKey   any
	value     any
	timestamp int64 // timers
	// size is the bytes of the pair or heap entry this entry is the first
	// of (key and value as written, uncompressed), 0 for the others: what
	// StateMeta.Bytes adds up. Not known for changelog entries.
	size int64
}

// keyedFile is one subtask's keyed state file with its header.
type keyedFile struct {
	op      *operatorMeta
	subtask int
	handle  *keyGroupsHandle
	header  *keyedHeader
}

// keyedFiles lists the keyed files of the operators a selector picks.
func (sp *Savepoint) keyedFiles(opSel string) []keyedFile {
	var out []keyedFile
	for _, op := range sp.md.operators {
		if !sp.matchOperator(op, opSel) {
			continue
		}
		for _, st := range op.subtasks {
			if st.keyed == nil {
				continue
			}
			out = append(out, keyedFile{op: op, subtask: st.index, handle: st.keyed, header: sp.keyedHeaderOf(op, st.keyed)})
		}
	}
	return out
}

// Keyed streams keyed state rows, one key group in memory at a time. List
// state gives one row per element (UserKey = position), map state one row
// per entry (UserKey = map key). Timers are not keyed rows: see Timers.
//
// States that cannot be read (their StateMeta has a Status) give no rows;
// a scan that names their operator or the state itself gets an error
// saying why (before the rows of the other states), a scan of everything
// does not: States lists them.
func (sp *Savepoint) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	return func(yield func(state.KeyedRow, error) bool) {
		if scan.OperatorID != "" {
			if err := sp.keyedGapError(scan.OperatorID); err != nil && !yield(state.KeyedRow{}, err) {
				return
			}
		}
		for _, f := range sp.keyedFiles(scan.OperatorID) {
			name := sp.opName(f.op)
			want := func(m *stateMeta) bool {
				return m.backendType != backendPriorityQueue && (scan.StateName == "" || scan.StateName == m.name)
			}
			if scan.OperatorID != "" || scan.StateName != "" {
				if err := f.problem(want); err != nil && !yield(state.KeyedRow{}, err) {
					return
				}
			}
			ok := f.readable()
			readable := func(m *stateMeta) bool { return ok[m.index] && want(m) }
			if f.header.key == nil || !slices.ContainsFunc(f.header.states, readable) {
				continue
			}
			keep := keyMatcher(scan.Keys)
			for e, err := range sp.keyedEntries(f, scan, readable, keep) {
				if err != nil {
					if !yield(state.KeyedRow{}, err) {
						return
					}
					break
				}
				if keep != nil && !keep(e.key) {
					continue // the heap-native layout decodes before it can skip
				}
				row := state.KeyedRow{
					OperatorID:   f.op.id,
					OperatorName: name,
					Subtask:      f.subtask,
					KeyGroup:     e.keyGroup,
					StateName:    e.meta.name,
					Kind:         e.meta.kind(),
					Key:          e.key,
					Namespace:    e.namespace,
					UserKey:      e.userKey,
					Value:        e.value,
				}
				if !yield(row, nil) {
					return
				}
			}
		}
	}
}

// keyedGapError is the error for the keyed state of the operators a
// selector picks that is of a kind this reader does not read (changelog):
// a scan naming the operator is told, instead of getting no rows.
func (sp *Savepoint) keyedGapError(opSel string) error {
	for _, op := range sp.md.operators {
		if !sp.matchOperator(op, opSel) {
			continue
		}
		for _, st := range op.subtasks {
			if st.keyedGap != "" {
				return fmt.Errorf("flink: keyed state of operator %s (subtask %d) cannot be read: %s: %w", op.id, st.index, st.keyedGap, ErrUnsupported)
			}
		}
	}
	return nil
}

// readable lists, by state index, whether each state of the file can be
// read.
func (f keyedFile) readable() []bool {
	out := make([]bool, len(f.header.states))
	for i := range out {
		out[i] = f.header.stateStatus(i, f.handle.kind == handleKeyGroupsV2) == ""
	}
	return out
}

// problem is the error for the wanted states of the file that cannot be
// read: the first such listed state, or the header's gap when it may hide
// wanted states. nil when every wanted state is readable.
func (f keyedFile) problem(want func(*stateMeta) bool) error {
	native := f.handle.kind == handleKeyGroupsV2
	found := false
	for i, m := range f.header.states {
		if !want(m) {
			continue
		}
		found = true
		if st := f.header.stateStatusErr(i, native); st != nil {
			return &FormatError{File: f.handle.String(), Msg: fmt.Sprintf("state %q of operator %s cannot be read: %s", m.name, f.op.id, st), Err: st}
		}
	}
	if g := f.header.gapError(); g != nil && (!found || !isUnknownSerializer(f.header.err)) {
		return fmt.Errorf("flink: operator %s: %w", f.op.id, g)
	}
	return nil
}

// Timers streams the timers of keyed operators.
func (sp *Savepoint) Timers(scan state.TimerScan) iter.Seq2[state.TimerRow, error] {
	return sp.timers(scan, "")
}

// TimersOfState streams the timers of one timer state, named as States
// lists it ("_timer_state/event_user-timers"), reading only that state's
// entries: an operator may keep several timer services of one domain (a
// process table function: named and unnamed user timers and one service per
// input's sort buffer), each a state of its own.
func (sp *Savepoint) TimersOfState(scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error] {
	return sp.timers(scan, stateName)
}

// timers streams the timers of scan, of the timer state stateName only
// when it is not "".
func (sp *Savepoint) timers(scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error] {
	return func(yield func(state.TimerRow, error) bool) {
		if scan.OperatorID != "" {
			if err := sp.keyedGapError(scan.OperatorID); err != nil && !yield(state.TimerRow{}, err) {
				return
			}
		}
		for _, f := range sp.keyedFiles(scan.OperatorID) {
			want := func(m *stateMeta) bool {
				return m.backendType == backendPriorityQueue && (stateName == "" || m.name == stateName)
			}
			if scan.OperatorID != "" {
				if err := f.problem(want); err != nil && !yield(state.TimerRow{}, err) {
					return
				}
			}
			ok := f.readable()
			readable := func(m *stateMeta) bool { return ok[m.index] && want(m) }
			if f.header.key == nil || !slices.ContainsFunc(f.header.states, readable) {
				continue
			}
			name := sp.opName(f.op)
			for e, err := range sp.entries(f, scan.KeyGroups, readable) {
				if err != nil {
					if !yield(state.TimerRow{}, err) {
						return
					}
					break
				}
				row := state.TimerRow{
					OperatorID:   f.op.id,
					OperatorName: name,
					Subtask:      f.subtask,
					KeyGroup:     e.keyGroup,
					StateName:    e.meta.name,
					Key:          e.key,
					Namespace:    e.namespace,
					Domain:       e.meta.domain(),
					Timestamp:    e.timestamp,
				}
				if !yield(row, nil) {
					return
				}
			}
		}
		for _, op := range sp.md.operators {
			if !sp.matchOperator(op, scan.OperatorID) {
				continue
			}
			for _, st := range op.subtasks {
				if st.rawKeyedHandle == nil || sp.legacyTimersOf(st.rawKeyedHandle).err != nil {
					continue
				}
				if !sp.legacyTimerRows(op, st.index, st.rawKeyedHandle, scan.KeyGroups, stateName, yield) {
					return
				}
			}
		}
	}
}

// entries streams the entries of the wanted states in the key groups of
// one keyed file, restricted to kgs when not nil. Each key group is read
// and decoded on its own; a corrupt key group ends the file with an error.
func (sp *Savepoint) entries(f keyedFile, kgs []int, want func(*stateMeta) bool) iter.Seq2[entry, error] {
	return sp.entriesOf(f, kgs, want, nil)
}

// entriesOf is entries with an optional key filter: pairs of other keys are
// skipped before their values are decoded.
func (sp *Savepoint) entriesOf(f keyedFile, kgs []int, want func(*stateMeta) bool, keep func(any) bool) iter.Seq2[entry, error] {
	if f.handle.native != nil {
		return sp.nativeEntries(f, kgs, want, keep, nil)
	}
	if f.handle.changelog != nil {
		return sp.changelogEntries(f, kgs, want, keep)
	}
	return func(yield func(entry, error) bool) {
		h := f.handle
		sec, c, err := h.stream.open()
		if err != nil {
			yield(entry{}, err)
			return
		}
		defer c.Close()
		sorted := sortedOffsets(h.offsets)
		var buf, zbuf []byte // one key group at a time: decoded values copy their bytes
		prefix := 1
		if f.op.maxParallelism > 128 {
			prefix = 2
		}
		for i, off := range h.offsets {
			kg := h.first + i
			if off <= 0 || (kgs != nil && !slices.Contains(kgs, kg)) {
				continue
			}
			b, err := sp.readSectionInto(buf, sec, off, sectionEnd(sorted, off, sec.size()))
			if err != nil {
				yield(entry{}, err)
				return
			}
			buf = b
			r := &kgReader{
				file: sec.name(), base: off, kg: kg, prefix: prefix,
				header: f.header, want: want, yield: yield, keep: keep, zbuf: &zbuf,
			}
			if !r.read(b, h.kind) {
				return
			}
		}
	}
}

// kgReader decodes one key group in the canonical or the heap-native
// layout and hands the wanted entries to yield.
type kgReader struct {
	file   string
	base   int64
	kg     int
	prefix int
	header *keyedHeader
	want   func(*stateMeta) bool
	yield  func(entry, error) bool
	// keep, when set, says whether a decoded key is wanted (KeyedScan.Keys).
	keep func(key any) bool
	// Reused for every pair: decoding a key group allocates per value, not
	// per decoder or result.
	kd, vd decoder
	ud, wd decoder // user keys and values, decoded whole
	slab   rowSlab
	out    []entry
	// zbuf, when set, is the buffer key groups are decompressed into,
	// reused from one to the next (decoded values copy their bytes).
	zbuf *[]byte
}

// useSlab makes d allocate from the reader's slab (written only when it
// changes: see decoder.reset).
func (r *kgReader) useSlab(d *decoder) {
	if d.slab != &r.slab {
		d.slab = &r.slab
	}
}

// one returns e as the single result of a pair, in the reused slice.
func (r *kgReader) one(e entry) []entry {
	r.out = append(r.out[:0], e)
	return r.out
}

// read returns false when the consumer stopped or an error was yielded.
func (r *kgReader) read(b []byte, kind byte) bool {
	native := kind == handleKeyGroupsV2 && !r.canonicalLayout(b)
	if kind == handleKeyGroups && len(b) >= 4 {
		// The older handle type is used by both layouts; the heap-native
		// one starts with the key group id.
		native = int(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8|uint32(b[3]))) == r.kg
	}
	var err error
	if native {
		err = r.readNative(b)
	} else {
		err = r.readCanonical(b)
	}
	if err == errStopped {
		return false
	}
	if err != nil {
		r.yield(entry{}, err)
		return false
	}
	return true
}

var errStopped = fmt.Errorf("flink: consumer stopped")

// maxKeyGroupSize bounds a decompressed key group.
const maxKeyGroupSize = 1 << 30

func (r *kgReader) decompress(b []byte, at int64) (*decoder, error) {
	if !r.header.compressed {
		return newDecoder(r.file, at, b), nil
	}
	var into []byte
	if r.zbuf != nil {
		into = *r.zbuf
	}
	out, err := unsnappyInto(into, b, r.file, at, fmt.Sprintf("key group %d", r.kg))
	if err != nil {
		return nil, err
	}
	if r.zbuf != nil {
		*r.zbuf = out
	}
	// Offsets inside decompressed bytes are not file offsets: errors name
	// the key group's offset and the decompressed position.
	return newDecoder(fmt.Sprintf("%s (key group %d at %d, decompressed)", r.file, r.kg, at), 0, out), nil
}

// stateByID is the state of an id. An id past the states of a header that
// stopped early is a state this reader could not list: nil, no error (its
// entries are skipped where they can be, see readCanonical and readNative).
func (r *kgReader) stateByID(d *decoder, id int) *stateMeta {
	if id >= len(r.header.states) {
		if !r.header.complete() && id < r.header.declared {
			return nil
		}
		d.fail("key group %d: state id %d of %d", r.kg, id, len(r.header.states))
		return nil
	}
	return r.header.states[id]
}

// wanted says whether the pairs of m are wanted and, when they are, gives
// their fast path in fp (nil if they have none).
func (r *kgReader) wanted(m *stateMeta, fp *fastPair) (bool, *fastPair) {
	if m == nil || !r.want(m) {
		return false, nil
	}
	if !fp.of(r.header, m) {
		return true, nil
	}
	return true, fp
}

// pair decodes one wanted pair and yields its entries: by the fast path
// when it has one and the bytes fit it, else by decodeOne.
func (r *kgReader) pair(at int64, m *stateMeta, fast *fastPair, key, value []byte) error {
	size := int64(len(key) + len(value))
	if fast != nil {
		if e, ok := fast.decode(r, m, key, value); ok {
			e.size = size
			if (r.keep == nil || r.keep(e.key)) && !r.yield(e, nil) {
				return errStopped
			}
			return nil
		}
	}
	e, list, ok, err := r.decodeOne(at, m, key, value)
	if err != nil {
		return err
	}
	e.size = size
	if ok && !r.yield(e, nil) {
		return errStopped
	}
	for i, x := range list {
		if i == 0 {
			x.size = size
		}
		if !r.yield(x, nil) {
			return errStopped
		}
	}
	return nil
}

// readCanonical decodes FullSnapshotAsyncWriter's layout: a state id, then
// (key, value) pairs; bit 0x80 of a key's first byte says a state id (or
// the end-of-group mark) follows the pair.
func (r *kgReader) readCanonical(b []byte) error {
	d, err := r.decompress(b, r.base)
	if err != nil {
		return err
	}
	m := r.stateByID(d, int(d.u16()))
	var fp fastPair
	wanted, fast := r.wanted(m, &fp) // asked once per run of a state's pairs
	for d.err == nil {
		if fast != nil && fastRuns && r.fastRun(d, m, fast) {
			return errStopped
		}
		key := d.take(d.count("key byte", 1))
		value := d.take(d.count("value byte", 0))
		if d.err != nil {
			break
		}
		if len(key) == 0 {
			d.fail("key group %d: empty key", r.kg)
			break
		}
		// The flag bit sits in the key-group prefix; decodePair clears it.
		more := key[0]&0x80 != 0
		if wanted {
			if err := r.pair(d.pos(), m, fast, key, value); err != nil {
				return err
			}
		}
		if more {
			id := d.u16()
			if id == endOfKeyGroup {
				break
			}
			m = r.stateByID(d, int(id))
			wanted, fast = r.wanted(m, &fp)
		}
	}
	return d.err
}

// fastRuns turns fastRun on; off, tests compare what it gives with the
// pair-by-pair path's.
var fastRuns = true

// fastRun decodes the pairs from d's offset on that fastPair decodes and
// that are not the last of their state's run, as the loop of readCanonical
// would (same entries, same order), and leaves d at the first pair it does
// not take: a length the state's serializers do not give, a key with the
// flag bit, a key fastPair refuses (another key group, a String that is not
// ASCII). It reports whether the consumer stopped. It reads the two lengths
// and takes the bytes itself, without a decoder call per field: most pairs
// of a large state are these.
func (r *kgReader) fastRun(d *decoder, m *stateMeta, fp *fastPair) (stopped bool) {
	b, p := d.b, d.off
	vl := fp.valueLen
	// The key's length: prefix, key, namespace; a String key is its
	// length+1 in one byte, then up to 126 chars.
	minKey := r.prefix + fp.keyLen + fp.nsLen
	maxKey := minKey
	if fp.stringKey {
		minKey, maxKey = r.prefix+1+fp.nsLen, r.prefix+1+126+fp.nsLen
	}
	for len(b)-p >= 8 {
		kl := int(binary.BigEndian.Uint32(b[p:]))
		if kl < minKey || kl > maxKey || len(b)-p-8-vl < kl {
			break
		}
		q := p + 4 + kl
		if binary.BigEndian.Uint32(b[q:]) != uint32(vl) || b[p+4]&0x80 != 0 {
			break
		}
		e, ok := fp.decode(r, m, b[p+4:q:q], b[q+4:q+4+vl:q+4+vl])
		if !ok {
			break
		}
		e.size = int64(kl + vl)
		if (r.keep == nil || r.keep(e.key)) && !r.yield(e, nil) {
			return true
		}
		p = q + 4 + vl
	}
	d.off = p
	return false
}

// decodePair decodes one canonical (key, value) pair. List values give one
// entry per element.
func (r *kgReader) decodePair(at int64, m *stateMeta, key, value []byte) ([]entry, error) {
	e, list, ok, err := r.decodeOne(at, m, key, value)
	size := int64(len(key) + len(value))
	if list != nil || err != nil || !ok {
		if len(list) > 0 {
			list[0].size = size
		}
		return list, err
	}
	e.size = size
	return r.one(e), nil
}

// decodeOne is decodePair without a slice for the common single entry (a
// scan's hot path: the entry stays on the stack): ok says e is the pair's
// entry; a list value's entries are in list instead; neither for a pair
// of a key the scan does not keep.
func (r *kgReader) decodeOne(at int64, m *stateMeta, key, value []byte) (e entry, list []entry, ok bool, err error) {
	kd := &r.kd
	kd.reset(key, at, r.file, &r.slab)
	gotKG := 0
	for i := range r.prefix {
		c := kd.u8()
		if i == 0 {
			c &^= 0x80 // the "meta data follows" flag of canonical keys
		}
		gotKG = gotKG<<8 | int(c)
	}
	if kd.err == nil && gotKG != r.kg {
		kd.fail("entry of key group %d inside key group %d", gotKG, r.kg)
	}
	e = entry{meta: m, keyGroup: r.kg}
	if m.backendType == backendPriorityQueue {
		ts, ok := m.value.(*timerSer)
		if !ok {
			return e, nil, false, fmt.Errorf("flink: %s: timer state %q has serializer %s: %w", r.file, m.name, typeOf(m.value), ErrUnsupported)
		}
		t := ts.decodeTimer(kd)
		e.key, e.namespace, e.timestamp = t.key, t.namespace, t.timestamp
		if kd.err != nil {
			return e, nil, false, kd.err
		}
		return e, nil, true, nil
	}
	// Key and namespace are followed by their lengths only when both have a
	// variable length (CompositeKeySerializationUtils).
	ambiguous := r.header.key.fixedLen() < 0 && m.namespace != nil && m.namespace.fixedLen() < 0
	e.key = r.header.key.decode(kd)
	if ambiguous {
		kd.varUint()
	}
	if m.namespace != nil {
		e.namespace = m.namespace.decode(kd)
		if ambiguous {
			kd.varUint()
		}
	}
	if kd.err != nil {
		return e, nil, false, kd.err
	}
	if r.keep != nil && !r.keep(e.key) {
		return e, nil, false, nil // another key: its value is not decoded
	}
	switch m.kind() {
	case state.KindMap:
		ms, ok := m.mapParts()
		if !ok {
			return e, nil, false, fmt.Errorf("flink: %s: map state %q has serializer %s: %w", r.file, m.name, typeOf(m.value), ErrUnsupported)
		}
		r.useSlab(&r.ud)
		uk, err := decodeWholeWith(&r.ud, ms.key, r.file, at, kd.b[kd.off:])
		if err != nil {
			return e, nil, false, err
		}
		e.userKey = uk
		vd := &r.vd
		vd.reset(value, at, r.file, &r.slab)
		if vd.boolean() {
			// Flink writes the flag, then whatever the value serializer
			// writes for null (HeapKeyValueStateIterator, RocksDBMapState:
			// a String's null is one 0 byte; most serializers write
			// nothing, or cannot write null at all).
			if vd.err == nil && vd.remaining() != 0 {
				r.useSlab(&r.wd)
				v, err := decodeWholeWith(&r.wd, ms.value, r.file, at, vd.b[vd.off:])
				if err == nil && v != nil {
					err = fmt.Errorf("flink: %s at offset %d: null map value followed by a %s value", r.file, at, ms.value.typeName())
				}
				if err != nil {
					return e, nil, false, err
				}
			}
			return e, nil, vd.err == nil, vd.err
		}
		if vd.err != nil {
			return e, nil, false, vd.err
		}
		r.useSlab(&r.wd)
		e.value, err = decodeWholeWith(&r.wd, ms.value, r.file, at, vd.b[vd.off:])
		if err != nil {
			return e, nil, false, err
		}
		return e, nil, true, nil
	case state.KindList:
		if kd.remaining() != 0 {
			kd.fail("%d bytes after the key of list state %q", kd.remaining(), m.name)
			return e, nil, false, kd.err
		}
		elem, ok := m.listElem()
		if !ok {
			return e, nil, false, fmt.Errorf("flink: %s: list state %q has serializer %s: %w", r.file, m.name, typeOf(m.value), ErrUnsupported)
		}
		list, err := decodeDelimitedList(r.file, at, e, elem, value)
		return e, list, false, err
	}
	if kd.remaining() != 0 {
		kd.fail("%d bytes after the key of state %q", kd.remaining(), m.name)
		return e, nil, false, kd.err
	}
	r.useSlab(&r.wd)
	v, err := decodeWholeWith(&r.wd, m.value, r.file, at, value)
	if err != nil {
		return e, nil, false, err
	}
	e.value = v
	return e, nil, true, nil
}

// decodeDelimitedList splits ListDelimitedSerializer bytes: elements
// separated by one ',' byte. An element that cannot be decoded makes the
// rest of the value one hex element.
func decodeDelimitedList(file string, at int64, base entry, elem serializer, value []byte) ([]entry, error) {
	d := newDecoder(file, at, value)
	var out []entry
	for pos := int64(0); d.remaining() > 0; pos++ {
		start := d.off
		v := elem.decode(d)
		if d.err != nil {
			if !isUnknownSerializer(d.err) {
				return nil, d.err
			}
			v = state.Hex(append([]byte(nil), value[start:]...))
			d.err, d.off = nil, len(value)
		}
		e := base
		e.userKey, e.value = pos, v
		out = append(out, e)
		if d.remaining() > 0 && d.u8() != ',' {
			d.off--
			d.fail("list element not followed by ','")
			return nil, d.err
		}
	}
	return out, nil
}

// readNative decodes HeapSnapshotStrategy's layout: the key group id, then
// per state a state id, an entry count and (namespace, key, value)
// entries, values written whole with no length.
func (r *kgReader) readNative(b []byte) error {
	d := newDecoder(r.file, r.base, b)
	if id := int(d.i32()); d.err == nil && id != r.kg {
		d.off -= 4
		d.fail("key group %d starts with id %d", r.kg, id)
	}
	if d.err != nil {
		return d.err
	}
	d, err := r.decompress(b[4:], r.base+4)
	if err != nil {
		return err
	}
	for i := 0; d.remaining() > 0; i++ {
		if i >= r.header.declared {
			d.fail("key group %d: more than the %d states of the header", r.kg, r.header.declared)
			return d.err
		}
		id := int(d.u16())
		m := r.stateByID(d, id)
		n := d.count("entry", 1)
		if d.err != nil {
			return d.err
		}
		if m == nil || m.status() != "" {
			// Values have no length: nothing after this state can be
			// read. States wanted after it are unreadable (stateStatus).
			return nil
		}
		for range n {
			e := entry{meta: m, keyGroup: r.kg}
			start := d.off
			var vals []entry
			if m.backendType == backendPriorityQueue {
				ts, ok := m.value.(*timerSer)
				if !ok {
					return fmt.Errorf("flink: %s: timer state %q has serializer %s: %w", r.file, m.name, typeOf(m.value), ErrUnsupported)
				}
				t := ts.decodeTimer(d)
				e.key, e.namespace, e.timestamp = t.key, t.namespace, t.timestamp
				vals = []entry{e}
			} else {
				if m.namespace != nil {
					e.namespace = m.namespace.decode(d)
				}
				e.key = r.header.key.decode(d)
				vals = r.nativeValue(d, e)
			}
			if d.err != nil {
				return d.err
			}
			if !r.want(m) {
				continue
			}
			if len(vals) > 0 {
				vals[0].size = int64(d.off - start)
			}
			for _, x := range vals {
				if !r.yield(x, nil) {
					return errStopped
				}
			}
		}
	}
	return d.err
}

// nativeValue decodes a whole state value of the heap-native layout: a list
// becomes one entry per element, a map one entry per map entry.
func (r *kgReader) nativeValue(d *decoder, e entry) []entry {
	m := e.meta
	switch m.kind() {
	case state.KindList:
		if ls, ok := unwrapTTL(m.value).(*listSer); ok {
			n := d.count("list element", max(ls.elem.fixedLen(), 1))
			out := make([]entry, 0, min(n, 1024))
			for i := range n {
				x := e
				x.userKey, x.value = int64(i), ls.elem.decode(d)
				if d.err != nil {
					return nil
				}
				out = append(out, x)
			}
			return out
		}
	case state.KindMap:
		if ms, ok := unwrapTTL(m.value).(*mapSer); ok {
			n := d.count("map entry", max(ms.key.fixedLen(), 0)+1)
			out := make([]entry, 0, min(n, 1024))
			for range n {
				x := e
				x.userKey = ms.key.decode(d)
				if !d.boolean() {
					x.value = ms.value.decode(d)
				}
				if d.err != nil {
					return nil
				}
				out = append(out, x)
			}
			return out
		}
	}
	e.value = m.value.decode(d)
	return []entry{e}
}

// keyMatcher keeps the keys that may equal one of the query's key literals.
// It only drops a key it knows is different (numbers, strings, tuples of
// them); anything it cannot compare is kept and left to the query.
func keyMatcher(literals []any) func(any) bool {
	if literals == nil {
		return nil
	}
	return func(key any) bool {
		for _, l := range literals {
			if !surelyDifferent(key, l) {
				return true
			}
		}
		return false
	}
}

func surelyDifferent(a, b any) bool {
	if r, ok := a.(*state.Row); ok && r.Type() == "" {
		switch y := b.(type) {
		case map[string]any:
			// Fields pinned one by one (key.b = 2).
			for name, v := range y {
				f, ok := r.Field(name)
				if ok && surelyDifferent(f, v) {
					return true
				}
			}
			return false
		case []any:
			return surelyDifferent(r.Values, y)
		case *state.Row:
			return surelyDifferent(r.Values, y.Values)
		}
		if len(r.Values) == 1 {
			return surelyDifferent(r.Values[0], b)
		}
		return false
	}
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return x != y
		}
		return false
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x != y
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			if len(x) == 1 {
				return surelyDifferent(x[0], b) // a Tuple1 key against a scalar literal
			}
			return false
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if surelyDifferent(x[i], y[i]) {
				return true
			}
		}
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
