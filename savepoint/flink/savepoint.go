package flink

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/golang/snappy"

	"streamdbg/state"
)

// maxMetadataSize bounds the `_metadata` read into memory. Real ones are
// kilobytes to a few megabytes (inline state included).
const maxMetadataSize = 256 << 20

// Savepoint is an opened Flink savepoint or retained checkpoint directory.
// It implements state.Catalog. Open reads `_metadata` only; state files are
// read when their states are listed or scanned, one section at a time.
// A Savepoint is safe for concurrent use.
type Savepoint struct {
	dir string
	md  *metadata

	mu        sync.Mutex
	keyed     map[*keyGroupsHandle]*keyedHeader
	operator  map[*operatorStateHandle]*operatorHeader
	metas     []state.StateMeta // cached States()
	listed    bool
	sections  atomic.Int64 // sections read from state files, for tests
	operators []state.OperatorInfo
	plan      map[string]*opPlan    // by operator id, from ApplyPlan
	keyHints  map[string]serializer // by operator id, from SetKeyType
	legacy    map[*keyGroupsHandle]*legacyTimers
}

var _ state.Catalog = (*Savepoint)(nil)

// IsFlink reports whether dir holds a Flink `_metadata` file (by its magic).
func IsFlink(dir string) bool {
	f, err := openRegular(filepath.Join(dir, "_metadata"))
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return binary.BigEndian.Uint32(b[:]) == Magic
}

// Open reads the `_metadata` of a Flink savepoint or checkpoint directory.
func Open(dir string) (*Savepoint, error) {
	p := filepath.Join(dir, "_metadata")
	f, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetadataSize+1))
	if err != nil {
		return nil, fmt.Errorf("flink: %s: %w", p, err)
	}
	if len(b) > maxMetadataSize {
		return nil, fmt.Errorf("flink: %s is larger than %d bytes: %w", p, maxMetadataSize, ErrUnsupported)
	}
	return openBytes(dir, b)
}

func openBytes(dir string, b []byte) (*Savepoint, error) {
	md, err := parseMetadata("_metadata", b)
	if err != nil {
		return nil, err
	}
	sp := &Savepoint{
		dir:      dir,
		md:       md,
		keyed:    map[*keyGroupsHandle]*keyedHeader{},
		operator: map[*operatorStateHandle]*operatorHeader{},
	}
	for _, op := range md.operators {
		for i := range op.subtasks {
			st := &op.subtasks[i]
			if st.keyed != nil {
				st.keyed.stream.resolve(dir)
				if c := st.keyed.changelog; c != nil {
					for _, mh := range c.materialized {
						mh.stream.resolve(dir)
					}
				}
			}
			if st.operatorState != nil {
				st.operatorState.stream.resolve(dir)
			}
			if st.rawKeyedHandle != nil {
				st.rawKeyedHandle.stream.resolve(dir)
			}
			if st.rawOperator {
				op.addUnsupported("raw state (written by the operator itself, no meta information) not shown")
			}
		}
		info := state.OperatorInfo{
			ID:             op.id,
			UID:            op.uid,
			Name:           op.name,
			Parallelism:    op.parallelism,
			MaxParallelism: op.maxParallelism,
		}
		if info.Name == "" {
			info.Name = op.uid
		}
		if info.Name == "" {
			info.Name = op.id
		}
		sp.operators = append(sp.operators, info)
	}
	return sp, nil
}

// Dir is the directory the savepoint was opened from.
func (sp *Savepoint) Dir() string { return sp.dir }

// Version is the `_metadata` format version (3 to 6).
func (sp *Savepoint) Version() int { return sp.md.version }

// CheckpointID is the id of the checkpoint the savepoint was taken as.
func (sp *Savepoint) CheckpointID() int64 { return sp.md.checkpointID }

// MasterStates lists the master states stored in `_metadata`.
func (sp *Savepoint) MasterStates() []MasterState { return slices.Clone(sp.md.masters) }

// Operators lists the operators in `_metadata` order, with what could not
// be read (after States or a scan has looked at the state files).
func (sp *Savepoint) Operators() []state.OperatorInfo {
	sp.States() // fills in unreadable files
	sp.mu.Lock()
	defer sp.mu.Unlock()
	out := make([]state.OperatorInfo, len(sp.operators))
	for i, info := range sp.operators {
		info.Unsupported = slices.Clone(sp.md.operators[i].unsupported)
		info.Notes = slices.Clone(info.Notes)
		out[i] = info
	}
	return out
}

func (sp *Savepoint) opIndex(op *operatorMeta) int {
	return slices.Index(sp.md.operators, op)
}

func (sp *Savepoint) opName(op *operatorMeta) string {
	return sp.operators[sp.opIndex(op)].Name
}

// matchOperator reports whether a scan's operator selector picks op: the
// id, the uid or the name.
func (sp *Savepoint) matchOperator(op *operatorMeta, sel string) bool {
	return sel == "" || sel == op.id || (op.uid != "" && sel == op.uid) || sel == sp.opName(op)
}

// keyedHeaderOf reads (once) the header of a keyed state file.
func (sp *Savepoint) keyedHeaderOf(op *operatorMeta, h *keyGroupsHandle) *keyedHeader {
	sp.mu.Lock()
	kh, ok := sp.keyed[h]
	sp.mu.Unlock()
	if ok {
		return kh
	}
	if h.changelog != nil {
		kh = sp.changelogHeader(op, h)
	} else {
		kh = sp.readKeyedHeader(h)
	}
	notes := sp.nativeNotes(h, kh)
	sp.mu.Lock()
	if p := sp.plan[op.id]; p != nil && kh.key != nil {
		kh = p.applyToHeader(kh)
	}
	sp.keyed[h] = kh
	if kh.err != nil {
		what := "keyed state file"
		if h.changelog != nil {
			what = "changelog keyed state,"
		}
		op.addUnsupported(fmt.Sprintf("%s %s unreadable: %v", what, h, kh.err))
	}
	for _, n := range notes {
		op.addUnsupported(n)
	}
	sp.mu.Unlock()
	return kh
}

func (sp *Savepoint) readKeyedHeader(h *keyGroupsHandle) *keyedHeader {
	sec, c, err := h.stream.open()
	if err != nil {
		return &keyedHeader{err: err}
	}
	defer c.Close()
	end := sec.size()
	for _, off := range h.offsets {
		if off > 0 && off < end {
			end = off
		}
	}
	end = min(end, headerProbe)
	b, err := sec.read(0, end)
	if err != nil {
		return &keyedHeader{err: err}
	}
	sp.sections.Add(1)
	return readKeyedHeader(newDecoder(sec.name(), 0, b))
}

// operatorHeaderOf reads (once) the header of an operator state file.
func (sp *Savepoint) operatorHeaderOf(op *operatorMeta, h *operatorStateHandle) *operatorHeader {
	sp.mu.Lock()
	oh, ok := sp.operator[h]
	sp.mu.Unlock()
	if ok {
		return oh
	}
	oh = sp.readOperatorHeader(h)
	sp.mu.Lock()
	sp.operator[h] = oh
	if oh.err != nil {
		op.addUnsupported(fmt.Sprintf("operator state file %s unreadable: %v", h.stream, oh.err))
	}
	sp.mu.Unlock()
	return oh
}

func (sp *Savepoint) readOperatorHeader(h *operatorStateHandle) *operatorHeader {
	sec, c, err := h.stream.open()
	if err != nil {
		return &operatorHeader{err: err}
	}
	defer c.Close()
	end := sec.size()
	for _, s := range h.states {
		for _, off := range s.offsets {
			if off > 0 && off < end {
				end = off
			}
		}
	}
	end = min(end, headerProbe)
	b, err := sec.read(0, end)
	if err != nil {
		return &operatorHeader{err: err}
	}
	sp.sections.Add(1)
	return readOperatorHeader(newDecoder(sec.name(), 0, b))
}

// States lists every state of every operator: keyed states from the keyed
// files' headers (timers included, kind timers), operator states from the
// operator state files' headers. Entries are the list lengths of operator
// list state; unknown (0) elsewhere.
//
// A state that cannot be read is listed with its Status; what cannot even
// be listed (states of a header that stopped at an unknown serializer,
// keyed state of a kind this reader does not read, raw state) is listed as
// a placeholder state of kind unknown whose name says what it stands for.
func (sp *Savepoint) States() []state.StateMeta {
	sp.mu.Lock()
	if sp.listed {
		out := slices.Clone(sp.metas)
		sp.mu.Unlock()
		return out
	}
	sp.mu.Unlock()

	var metas []state.StateMeta
	for _, op := range sp.md.operators {
		name := sp.opName(op)
		uid := sp.operators[sp.opIndex(op)].UID
		seen := map[string]int{}
		add := func(m state.StateMeta) int {
			m.OperatorUID = uid
			if i, ok := seen[m.StateName]; ok {
				if metas[i].Status == "" {
					// a gap in one subtask is a gap
					metas[i].Status, metas[i].Cause = m.Status, m.Cause
				}
				return i
			}
			seen[m.StateName] = len(metas)
			metas = append(metas, m)
			return len(metas) - 1
		}
		gap := func(stateName string, scope state.Scope, why error) {
			m := state.StateMeta{OperatorID: op.id, OperatorName: name, StateName: stateName, Scope: scope, Kind: state.KindUnknown}
			setStatus(&m, why)
			add(m)
		}
		for _, st := range op.subtasks {
			if st.keyed != nil {
				kh := sp.keyedHeaderOf(op, st.keyed)
				for i, m := range kh.states {
					sm := keyedMeta(op.id, name, kh, m)
					setStatus(&sm, kh.stateStatusErr(i, st.keyed.kind == handleKeyGroupsV2))
					add(sm)
				}
				if g := kh.gap(); g != "" {
					gap(UnlistedKeyedStates, state.ScopeKeyed, statusf(kh.err, "%s", g))
				}
			}
			if st.keyedGap != "" {
				gap(KeyedStateGap, state.ScopeKeyed, statusf(ErrUnsupported, "%s", st.keyedGap))
			}
			if st.rawKeyed {
				var lt *legacyTimers
				if st.rawKeyedHandle != nil {
					lt = sp.legacyTimersOf(st.rawKeyedHandle)
				}
				if lt != nil && lt.err == nil {
					for _, m := range legacyTimerMetas(op.id, name, lt) {
						add(m)
					}
				} else {
					why := statusf(ErrUnsupported, "raw keyed state (written by the operator itself, without meta information) cannot be read")
					if lt != nil && !errors.Is(lt.err, ErrUnsupported) {
						why = statusf(lt.err, "raw keyed state unreadable: %v", lt.err)
					}
					gap(RawKeyedState, state.ScopeKeyed, why)
					sp.mu.Lock()
					op.addUnsupported("raw state (written by the operator itself, no meta information) not shown")
					sp.mu.Unlock()
				}
			}
			if st.rawOperator {
				gap(RawOperatorState, state.ScopeOperator, statusf(ErrUnsupported, "raw operator state (written by the operator itself, without meta information) cannot be read"))
			}
			if st.operatorState != nil {
				oh := sp.operatorHeaderOf(op, st.operatorState)
				for _, s := range st.operatorState.states {
					m := oh.find(s.name)
					sm := state.StateMeta{OperatorID: op.id, OperatorName: name, StateName: s.name, Scope: state.ScopeOperator}
					switch s.mode {
					case 0:
						sm.Kind = state.KindSplitList
					case 1:
						sm.Kind = state.KindUnionList
					default:
						sm.Kind = state.KindBroadcast
					}
					switch {
					case m != nil:
						sm.Kind = m.kind()
						fillOperatorTypes(&sm, m)
						setStatus(&sm, m.statusErr())
					case oh.err != nil:
						setStatus(&sm, statusf(oh.err, "operator state file %s unreadable: %v", st.operatorState.stream, oh.err))
					default:
						// _metadata lists a state its file does not hold.
						setStatus(&sm, statusf(ErrCorrupt, "no meta information in the operator state file"))
					}
					i := add(sm)
					if sm.Kind != state.KindBroadcast {
						metas[i].Entries += int64(len(s.offsets))
					}
				}
			}
		}
	}
	sp.mu.Lock()
	sp.metas, sp.listed = metas, true
	sp.mu.Unlock()
	sp.countKeyed()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return slices.Clone(sp.metas)
}

// Names of the placeholder states that stand for what cannot be listed.
const (
	UnlistedKeyedStates = "(unlisted keyed states)"
	KeyedStateGap       = "(keyed state)"
	RawKeyedState       = "(raw keyed state)"
	RawOperatorState    = "(raw operator state)"
)

// stateStatus is why state i of a keyed file cannot be read, or "". In a
// heap snapshot (native layout) values have no length, so a state written
// after an unreadable one cannot be reached either.
func (h *keyedHeader) stateStatus(i int, native bool) string {
	if err := h.stateStatusErr(i, native); err != nil {
		return err.Error()
	}
	return ""
}

// stateStatusErr is stateStatus as a statusError of its kind.
func (h *keyedHeader) stateStatusErr(i int, native bool) error {
	if err := h.states[i].statusErr(); err != nil {
		return err
	}
	if native {
		for _, m := range h.states[:i] {
			if err := m.statusErr(); err != nil {
				return statusf(err, "follows unreadable state %q in a heap snapshot, whose values have no length", m.name)
			}
		}
	}
	return nil
}

// countBudget bounds the keyed rows read to count entries: a small
// savepoint gets exact counts in its StateMeta, a large one's stay unknown
// (NULL in state_meta) rather than being read whole just to be listed.
const countBudget = 200_000

// operatorBytesBudget bounds the compressed operator state read to tell
// its uncompressed size when listed (uncompressed sizes need no read).
const operatorBytesBudget = 16 << 20

// stateTally is what counting found of one state.
type stateTally struct {
	entries, bytes int64
	// failed: a file of the state could not be read to its end;
	// unsized: some of its entries' bytes are not known (changelog).
	failed, unsized bool
}

// countKeyed fills in the entries and bytes of keyed states (timers
// included: their rows are the timers) and of broadcast states when the
// whole savepoint holds at most countBudget such rows, and the bytes of
// operator list states. What is not known (too large, a state or file
// that cannot be read, bytes of replayed changelog entries) is marked
// unknown; a state no subtask has rows of is known empty.
func (sp *Savepoint) countKeyed() {
	sp.mu.Lock()
	metas := slices.Clone(sp.metas)
	sp.mu.Unlock()
	index := map[stateID]int{}
	for i, m := range metas {
		index[stateID{m.OperatorID, m.StateName}] = i
	}
	tally := make([]stateTally, len(metas))
	budget := countBudget
	counted := true // within budget
	// add counts an entry of a state; false when the budget is spent.
	add := func(op, name string, size int64, sized bool) bool {
		if i, ok := index[stateID{op, name}]; ok {
			tally[i].entries++
			tally[i].bytes += size
			tally[i].unsized = tally[i].unsized || !sized
		}
		budget--
		return budget >= 0
	}
	failAll := func(op string, keyed bool) {
		for i, m := range metas {
			if m.OperatorID == op && (m.Scope == state.ScopeKeyed) == keyed {
				tally[i].failed = true
			}
		}
	}
count:
	for _, op := range sp.md.operators {
		for _, st := range op.subtasks {
			if st.keyed != nil {
				f := keyedFile{op: op, subtask: st.index, handle: st.keyed, header: sp.keyedHeaderOf(op, st.keyed)}
				if f.header.key != nil {
					ok := f.readable()
					sized := f.handle.changelog == nil
					for e, err := range sp.entries(f, nil, func(m *stateMeta) bool { return ok[m.index] }) {
						if err != nil {
							failAll(op.id, true)
							break
						}
						if !add(op.id, e.meta.name, e.size, sized) {
							counted = false
							break count
						}
					}
				}
			}
			if st.rawKeyedHandle != nil {
				if lt := sp.legacyTimersOf(st.rawKeyedHandle); lt.err == nil {
					for e, err := range sp.legacyTimerEntries(st.rawKeyedHandle, len(st.rawKeyedHandle.offsets), nil) {
						if err != nil {
							failAll(op.id, true)
							break
						}
						if e.services != nil || e.service >= len(lt.services) {
							continue
						}
						domain := "processing"
						if e.event {
							domain = "event"
						}
						if !add(op.id, "_timer_state/"+domain+"_"+lt.services[e.service].name, 0, false) {
							counted = false
							break count
						}
					}
				}
			}
		}
	}
	// Broadcast states: their rows are the map's entries.
	for i, m := range metas {
		if !counted || m.Kind != state.KindBroadcast || m.Status != "" {
			continue
		}
		for r, err := range sp.OperatorState(state.OperatorScan{OperatorID: m.OperatorID, StateName: m.StateName}) {
			if err != nil {
				tally[i].failed = true
				break
			}
			if r.StateName != m.StateName {
				continue
			}
			tally[i].entries++
			if budget--; budget < 0 {
				counted = false
				break
			}
		}
	}
	opBytes := sp.operatorBytes(index)

	sp.mu.Lock()
	defer sp.mu.Unlock()
	for i := range sp.metas {
		m := &sp.metas[i]
		t := tally[i]
		switch {
		case m.Scope == state.ScopeKeyed || m.Kind == state.KindBroadcast:
			known := counted && !t.failed && m.Status == "" && m.Kind != state.KindUnknown
			m.EntriesUnknown, m.BytesUnknown = !known, !known || t.unsized
			if known {
				m.Entries = t.entries
				if !t.unsized {
					m.Bytes = t.bytes
				}
			}
			if m.Kind == state.KindBroadcast {
				// Its bytes are the elements' (operatorBytes).
				m.BytesUnknown = true
				if b, ok := opBytes[i]; ok {
					m.Bytes, m.BytesUnknown = b, false
				}
			}
		default: // operator list states: entries from _metadata
			m.EntriesUnknown = m.Status != "" || m.Kind == state.KindUnknown
			m.BytesUnknown = true
			if b, ok := opBytes[i]; ok && m.Status == "" {
				m.Bytes, m.BytesUnknown = b, false
			}
		}
		if m.EntriesUnknown {
			m.Entries = 0
		}
		if m.BytesUnknown {
			m.Bytes = 0
		}
	}
}

// stateID names a state: its operator's id and its name.
type stateID struct{ op, state string }

// operatorBytes is the bytes of each operator state's elements (by index in
// the metas), uncompressed: the ranges between the offsets _metadata lists,
// decompressed when the file is compressed (within operatorBytesBudget).
// A state missing from the result has a file that could not be read.
func (sp *Savepoint) operatorBytes(index map[stateID]int) map[int]int64 {
	out := map[int]int64{}
	failed := map[int]bool{}
	budget := int64(operatorBytesBudget)
	for _, op := range sp.md.operators {
		for _, st := range op.subtasks {
			h := st.operatorState
			if h == nil {
				continue
			}
			fail := func() {
				for _, s := range h.states {
					if i, ok := index[stateID{op.id, s.name}]; ok {
						failed[i] = true
					}
				}
			}
			oh := sp.operatorHeaderOf(op, h)
			sec, c, err := h.stream.open()
			if err != nil || oh.err != nil && len(oh.states) == 0 {
				if err == nil {
					c.Close()
				}
				fail()
				continue
			}
			var all [][]int64
			for _, s := range h.states {
				all = append(all, s.offsets)
			}
			sorted := sortedOffsets(all...)
			for _, s := range h.states {
				i, ok := index[stateID{op.id, s.name}]
				if !ok {
					continue
				}
				var n int64
				for _, off := range s.offsets {
					end := sectionEnd(sorted, off, sec.size())
					if end < off {
						failed[i] = true
						break
					}
					if !oh.compressed {
						n += end - off
						continue
					}
					if budget -= end - off; budget < 0 {
						failed[i] = true
						break
					}
					b, err := sp.readSection(sec, off, end)
					if err == nil {
						b, err = unsnappy(b, sec.name(), off, "operator state "+s.name)
					}
					if err != nil {
						failed[i] = true
						break
					}
					n += int64(len(b))
				}
				out[i] += n
			}
			c.Close()
		}
	}
	for i := range failed {
		delete(out, i)
	}
	return out
}

func typeOf(s serializer) string {
	if s == nil {
		return ""
	}
	return s.typeName()
}

func keyedMeta(id, name string, kh *keyedHeader, m *stateMeta) state.StateMeta {
	sm := state.StateMeta{
		OperatorID:    id,
		OperatorName:  name,
		StateName:     m.name,
		Scope:         state.ScopeKeyed,
		Kind:          m.kind(),
		KeyType:       typeOf(kh.key),
		NamespaceType: typeOf(m.namespace),
		ValueType:     typeOf(m.value),
	}
	switch sm.Kind {
	case state.KindMap:
		if ms, ok := m.mapParts(); ok {
			sm.UserKeyType, sm.ValueType = ms.key.typeName(), ms.value.typeName()
		}
	case state.KindList:
		if e, ok := m.listElem(); ok {
			sm.UserKeyType, sm.ValueType = "position", e.typeName()
		}
	case state.KindTimers:
		if ts, ok := m.value.(*timerSer); ok {
			sm.NamespaceType = ts.namespace.typeName()
			sm.ValueType = "timestamp"
		}
	}
	if m.unreadable != "" {
		sm.ValueType = m.unreadable
	}
	return sm
}

func fillOperatorTypes(sm *state.StateMeta, m *stateMeta) {
	sm.ValueType = typeOf(m.value)
	if m.unreadable != "" {
		sm.ValueType = m.unreadable
	}
	if sm.Kind == state.KindBroadcast {
		sm.UserKeyType = typeOf(m.key)
	} else {
		sm.UserKeyType = "position"
	}
}

// readSection reads bytes [off, end) of a state file, counting the read.
func (sp *Savepoint) readSection(sec section, off, end int64) ([]byte, error) {
	return sp.readSectionInto(nil, sec, off, end)
}

// readSectionInto is readSection reusing buf for file sections. The bytes
// are only valid until the next read into buf: decoders copy what they
// keep (strings, byte arrays, hex).
func (sp *Savepoint) readSectionInto(buf []byte, sec section, off, end int64) ([]byte, error) {
	if end < off {
		return nil, &FormatError{File: sec.name(), Offset: off, Msg: fmt.Sprintf("section ends at %d, before it starts", end), Err: ErrCorrupt}
	}
	sp.sections.Add(1)
	if fs, ok := sec.(*fileSection); ok {
		return fs.readInto(buf, off, end-off)
	}
	return sec.read(off, end-off)
}

// sectionEnd is where the section starting at off ends: the next larger
// offset, or the end of the stream.
func sectionEnd(sorted []int64, off, size int64) int64 {
	i, _ := slices.BinarySearch(sorted, off+1)
	if i < len(sorted) && sorted[i] <= size {
		return sorted[i]
	}
	return size
}

func sortedOffsets(offs ...[]int64) []int64 {
	var all []int64
	for _, o := range offs {
		for _, x := range o {
			if x > 0 {
				all = append(all, x)
			}
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}

var snappyStreamID = []byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'}

// maxDecompressed bounds what one compressed section may decompress to.
const maxDecompressed = 1 << 30

// unsnappy decompresses b: Snappy's framing format (xerial's
// SnappyFramedOutputStream, which Flink's SnappyStreamCompressionDecorator
// writes). A section that does not start with the stream identifier is a
// part of a stream that Flink reads after a seek (operator state: one stream
// for the whole file, each element starting a new chunk): its chunks are
// read as they come.
func unsnappy(b []byte, file string, at int64, what string) ([]byte, error) {
	return unsnappyInto(nil, b, file, at, what)
}

// unsnappyInto is unsnappy into dst's array when it is large enough (a scan
// decompresses every key group into one buffer): each chunk is decoded in
// place at the end of what is already out, and its checksum (the masked
// CRC-32C of its uncompressed bytes) checked there.
func unsnappyInto(dst, b []byte, file string, at int64, what string) ([]byte, error) {
	bad := func(off int, format string, args ...any) error {
		return &FormatError{File: file, Offset: at, Msg: fmt.Sprintf("%s: snappy: chunk at %d: %s", what, off, fmt.Sprintf(format, args...)), Err: ErrCorrupt}
	}
	out := dst[:0]
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return nil, bad(off, "header cut short")
		}
		typ := b[off]
		n := int(b[off+1]) | int(b[off+2])<<8 | int(b[off+3])<<16
		p := off + 4
		if n > len(b)-p {
			return nil, bad(off, "%d bytes, %d left", n, len(b)-p)
		}
		chunk := b[p : p+n]
		switch {
		case typ == 0xff:
			if string(chunk) != "sNaPpY" {
				return nil, bad(off, "bad stream identifier")
			}
		case typ == 0x00 || typ == 0x01:
			if n < 4 {
				return nil, bad(off, "%d bytes, no checksum", n)
			}
			data := chunk[4:]
			ulen := len(data)
			if typ == 0x00 {
				l, err := snappy.DecodedLen(data)
				if err != nil {
					return nil, bad(off, "%v", err)
				}
				ulen = l
			}
			if ulen > maxSnappyChunk {
				return nil, bad(off, "%d bytes uncompressed (at most %d)", ulen, maxSnappyChunk)
			}
			start := len(out)
			if start+ulen > maxDecompressed {
				return nil, &FormatError{File: file, Offset: at, Msg: fmt.Sprintf("%s decompresses to more than %d bytes", what, maxDecompressed), Err: ErrUnsupported}
			}
			if typ == 0x00 {
				out = slices.Grow(out, ulen)[:start+ulen]
				got, err := snappy.Decode(out[start:], data)
				if err != nil || len(got) != ulen || (ulen > 0 && &got[0] != &out[start]) {
					return nil, bad(off, "does not decompress: %v", err)
				}
			} else {
				out = append(out, data...)
			}
			sum := crc32.Checksum(out[start:], crcTable)
			if masked := (sum>>15 | sum<<17) + 0xa282ead8; masked != binary.LittleEndian.Uint32(chunk) {
				return nil, bad(off, "checksum mismatch")
			}
		case typ >= 0x80:
			// padding (0xfe) and reserved skippable chunks
		default:
			return nil, bad(off, "reserved unskippable chunk type %#x", typ)
		}
		off = p + n
	}
	return out, nil
}

func isSnappyFramed(b []byte) bool { return bytes.HasPrefix(b, snappyStreamID) }
