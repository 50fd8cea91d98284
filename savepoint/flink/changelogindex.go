package flink

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"

	"streamdbg/state"
)

// This file reads a changelog handle's change log once, in order, as
// ChangelogBackendRestoreOperation does: the metadata changes (state name,
// serializers, TTL, default value, then the short state id the data
// changes name the state by), and where each key group's data changes are,
// so that a key group is later replayed alone (changelogapply.go).
//
// A change is what AbstractStateChangeLogger writes: the operation byte
// (StateChangeOperation), then for METADATA the StateMetaInfoSnapshot
// version and snapshot, for key-value states a TTL flag (and the
// Java-serialized StateTtlConfig) and a default-value flag (and the value),
// the short state id and the backend state type; for data changes the
// short state id, the scope (key and namespace for key-value states,
// nothing for priority queues) and the operation's payload.

// StateChangeOperation codes of Flink 1.15 and later (1.14 had
// REMOVE_FIRST_ELEMENT as 8 and METADATA as 9).
const (
	opClear              = 0
	opSet                = 1
	opSetInternal        = 2
	opAdd                = 3
	opMergeNS            = 4
	opAddElement         = 5
	opAddOrUpdateElement = 6
	opRemoveElement      = 7
	opMetadata           = 8
	opLegacyMetadata     = 9
)

var opNames = [...]string{"CLEAR", "SET", "SET_INTERNAL", "ADD", "MERGE_NS", "ADD_ELEMENT", "ADD_OR_UPDATE_ELEMENT", "REMOVE_ELEMENT", "METADATA"}

func opName(op byte) string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("operation %d", op)
}

// opsAllowed are the operations the change appliers of each kind of state
// accept (ValueStateChangeApplier, ListStateChangeApplier, ...); any other
// fails Flink's restore.
func opsAllowed(kind state.Kind) []byte {
	switch kind {
	case state.KindValue:
		return []byte{opSet, opClear}
	case state.KindList:
		return []byte{opAdd, opAddElement, opSet, opSetInternal, opMergeNS, opClear}
	case state.KindMap:
		return []byte{opAdd, opAddElement, opAddOrUpdateElement, opRemoveElement, opClear}
	case state.KindReducing, state.KindAggregating:
		return []byte{opSet, opSetInternal, opMergeNS, opClear}
	case state.KindTimers:
		return []byte{opAddElement, opRemoveElement}
	}
	return nil
}

// changelogIndex is what one reading of a change log yields.
type changelogIndex struct {
	states []*clState // materialized states first, then the ones only the log declares
	byName map[string]int
	// matGap is why states of the materialized part may be missing from
	// states (a header that stopped early), or "".
	matGap string
	runs   map[int][]clRun // data changes per key group, in log order
	binds  clBindLog
	files  map[string]*dstlFile
	err    error
}

// clState is one state of the changelog backend.
type clState struct {
	meta    *stateMeta // the last metadata change's, else the materialized header's
	problem string     // why it cannot be read, beyond its serializers
	inMat   bool       // listed by the materialized part
	// mergeKGs are the key groups with MERGE_NS changes of a reducing or
	// aggregating state, which may need the job's function.
	mergeKGs []int
}

// clBindLog maps the short state ids of data changes to states, as the
// metadata changes before them declared them: every binding with the
// number of metadata changes read before it (its version), so that a run
// of changes finds the bindings of its place in the log.
type clBindLog struct {
	ver  int32
	byID map[int16][]clBindAt
}

type clBindAt struct {
	ver int32
	b   clBinding
}

func (l *clBindLog) bind(id int16, b clBinding) {
	l.ver++
	l.byID[id] = append(l.byID[id], clBindAt{l.ver, b})
}

// at is the binding of id at version ver.
func (l *clBindLog) at(id int16, ver int32) (clBinding, bool) {
	list := l.byID[id]
	i, _ := slices.BinarySearchFunc(list, ver+1, func(a clBindAt, v int32) int { return cmp.Compare(a.ver, v) })
	if i == 0 {
		return clBinding{}, false
	}
	return list[i-1].b, true
}

type clBinding struct {
	state int        // in changelogIndex.states
	meta  *stateMeta // the serializers its changes are written with
}

// clRun is a run of data changes of one key group that follow each other
// in the log and share their bindings.
type clRun struct {
	file  *dstlFile // nil for an in-memory part
	part  int32     // in-memory: the part's index
	start int64     // in-memory: the first change's index; file: the stream offset of its length
	n     int32
	size  int32 // file: the run's bytes (each change with its length)
	ver   int32 // of the bindings
}

// changelogIndexOf reads (once) the change log of a changelog handle.
func (sp *Savepoint) changelogIndexOf(op *operatorMeta, c *changelogHandle) *changelogIndex {
	sp.mu.Lock()
	x := c.index
	sp.mu.Unlock()
	if x != nil {
		return x
	}
	x = sp.buildChangelogIndex(op, c)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if c.index == nil {
		c.index = x
	}
	return c.index
}

func (sp *Savepoint) buildChangelogIndex(op *operatorMeta, c *changelogHandle) *changelogIndex {
	x := &changelogIndex{byName: map[string]int{}, runs: map[int][]clRun{}, files: map[string]*dstlFile{}, binds: clBindLog{byID: map[int16][]clBindAt{}}}
	for _, mh := range c.materialized {
		kh := sp.keyedHeaderOf(op, mh)
		if kh.key == nil {
			err := kh.err
			if err == nil {
				err = fmt.Errorf("no key serializer: %w", ErrCorrupt)
			}
			x.err = fmt.Errorf("flink: materialized state %s: %w", mh, err)
			return x
		}
		for i, m := range kh.states {
			st := x.state(m.name)
			st.inMat = true
			if st.meta == nil {
				st.meta = m
			}
			if s := kh.stateStatus(i, mh.kind == handleKeyGroupsV2); s != "" && st.problem == "" {
				st.problem = "materialized state: " + s
			}
		}
		if g := kh.gap(); g != "" && x.matGap == "" {
			x.matGap = g
		}
	}
	for i, p := range c.parts {
		var err error
		if p.kind == handleChangelogBytes {
			err = x.indexMemory(c, int32(i), p)
		} else {
			for _, sa := range p.streams {
				if err = x.indexStream(sp, c, sa); err != nil {
					break
				}
			}
		}
		if err != nil {
			x.err = err
			return x
		}
	}
	return x
}

// state is the state of a name, added when new.
func (x *changelogIndex) state(name string) *clState {
	if i, ok := x.byName[name]; ok {
		return x.states[i]
	}
	x.byName[name] = len(x.states)
	st := &clState{}
	x.states = append(x.states, st)
	return st
}

func (c *changelogHandle) has(kg int32) bool {
	return kg >= 0 && int(kg) >= c.first && int(kg) < c.first+c.count
}

// indexMemory indexes the changes of an InMemoryChangelogStateHandle.
func (x *changelogIndex) indexMemory(c *changelogHandle, part int32, p changelogPart) error {
	for i, ch := range p.changes {
		d := newDecoder("_metadata", ch.at, ch.b)
		kind, err := x.change(d, ch.kg)
		if err != nil {
			return err
		}
		if kind != changeData || !c.has(ch.kg) {
			continue
		}
		runs := x.runs[int(ch.kg)]
		if n := len(runs); n > 0 {
			last := &runs[n-1]
			if last.file == nil && last.part == part && last.start+int64(last.n) == int64(i) && last.ver == x.binds.ver {
				last.n++
				continue
			}
		}
		x.runs[int(ch.kg)] = append(runs, clRun{part: part, start: int64(i), n: 1, ver: x.binds.ver})
	}
	return nil
}

// indexStream indexes one change set of a DSTL file (StateChangeFormat:
// the number of key groups, then per key group its number of changes, its
// id and the changes, each with its length).
func (x *changelogIndex) indexStream(sp *Savepoint, c *changelogHandle, sa streamAt) error {
	f, err := x.file(sp, sa.h)
	if err != nil {
		return err
	}
	r, err := f.reader()
	if err != nil {
		return err
	}
	defer r.Close()
	cur := &dstlCursor{r: r, pos: sa.off, winOff: -1}
	fail := func(at int64, format string, args ...any) error {
		file, off := r.where(at)
		return &FormatError{File: file, Offset: off, Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
	}
	at := cur.pos
	groups, err := cur.i32()
	if err != nil {
		return err
	}
	if groups < 0 {
		return fail(at, "change set of %d key groups", groups)
	}
	for range groups {
		at = cur.pos
		n, err := cur.i32()
		if err != nil {
			return err
		}
		kg, err := cur.i32()
		if err != nil {
			return err
		}
		if n <= 0 || kg < metaKeyGroup {
			return fail(at, "change-set group of %d changes in key group %d", n, kg)
		}
		keep := c.has(kg)
		run := clRun{file: f, start: cur.pos, ver: x.binds.ver}
		flush := func() {
			if run.n > 0 {
				x.runs[int(kg)] = append(x.runs[int(kg)], run)
			}
		}
		for range n {
			at = cur.pos
			size, err := cur.i32()
			if err != nil {
				return err
			}
			if size <= 0 || size > maxChange {
				return fail(at, "change of %d bytes", size)
			}
			b, err := cur.take(int(size))
			if err != nil {
				return err
			}
			file, off := r.where(at + 4)
			kind, err := x.change(newDecoder(file, off, b), kg)
			if err != nil {
				return err
			}
			switch {
			case kind == changeMetadata:
				flush()
				run = clRun{file: f, start: cur.pos, ver: x.binds.ver}
			case keep && kind == changeData:
				run.n++
				run.size = int32(cur.pos - run.start)
			default:
				run.start = cur.pos // the group's changes are all kept or all skipped
			}
		}
		flush()
	}
	return nil
}

// file is the DSTL file of a stream handle, loaded once.
func (x *changelogIndex) file(sp *Savepoint, h *streamHandle) (*dstlFile, error) {
	f := &dstlFile{h: h}
	var id string
	switch h.kind {
	case handleByteStream:
		id = fmt.Sprintf("inline:%p", h)
		f.name = h.String()
	default:
		root, in, _, err := resolveShared(newCheckpointRoots(sp.dir), nil, h)
		if err != nil {
			return nil, fmt.Errorf("flink: change-log file: %w", err)
		}
		p := filepath.Join(root.path, in) // opened by openRegular: no symlink, no FIFO
		rel, err := filepath.Rel(filepath.Dir(sp.dir), p)
		if err != nil {
			rel = p
		}
		id, f.path, f.name = p, p, filepath.ToSlash(rel)
	}
	if old, ok := x.files[id]; ok {
		return old, nil
	}
	if err := f.load(); err != nil {
		return nil, err
	}
	x.files[id] = f
	return f, nil
}

// maxChange bounds one change of a DSTL file (runs of changes are read
// whole: their sizes add up in an int32).
const maxChange = 1 << 30

type changeKind int

const (
	changeSkipped  changeKind = iota // data of the metadata key group, ignored as Flink does
	changeMetadata                   // a metadata change, applied to binds
	changeData                       // a data change, checked
)

// change reads one change of key group kg: a metadata change adds to the
// bindings; a data change is checked against them (known state id, an
// operation its kind of state accepts).
func (x *changelogIndex) change(d *decoder, kg int32) (changeKind, error) {
	if len(d.b) == 0 {
		d.fail("empty change")
		return 0, d.err
	}
	op := d.b[0]
	switch {
	case op == opMetadata:
		m, id, err := x.metadata(d)
		if err != nil {
			return 0, err
		}
		x.binds.bind(id, clBinding{state: x.byName[m.name], meta: m})
		return changeMetadata, nil
	case op == opLegacyMetadata:
		d.failErr(ErrUnsupported, "operation 9: the change-log format of Flink 1.14 (REMOVE_FIRST_ELEMENT 8, METADATA 9) is not supported")
		return 0, d.err
	case op > opMetadata:
		d.fail("unknown state change operation %d", op)
		return 0, d.err
	case kg == metaKeyGroup:
		return changeSkipped, nil // not in any key-group range: Flink skips it
	}
	if len(d.b) < 3 {
		d.fail("%s change of %d bytes", opName(op), len(d.b))
		return 0, d.err
	}
	id := int16(binary.BigEndian.Uint16(d.b[1:]))
	b, ok := x.binds.at(id, x.binds.ver)
	if !ok {
		d.off = 1
		d.fail("%s change of state id %d, which no metadata change before it declares", opName(op), id)
		return 0, d.err
	}
	kind := b.meta.kind()
	allowed := false
	for _, a := range opsAllowed(kind) {
		allowed = allowed || a == op
	}
	if !allowed {
		d.fail("%s change of %s state %q (its change applier refuses it)", opName(op), kind, b.meta.name)
		return 0, d.err
	}
	if op == opMergeNS && kind != state.KindList {
		st := x.states[b.state]
		if !slices.Contains(st.mergeKGs, int(kg)) {
			st.mergeKGs = append(st.mergeKGs, int(kg))
		}
	}
	return changeData, nil
}

// metadata reads a METADATA change.
func (x *changelogIndex) metadata(d *decoder) (*stateMeta, int16, error) {
	d.u8()
	if v := d.i32(); d.err == nil && v != 6 {
		d.off -= 4
		d.failErr(ErrUnsupported, "state meta info snapshot version %d not supported (6 is)", v)
	}
	if d.err != nil {
		return nil, 0, d.err
	}
	m := readStateMeta(d)
	if m == nil {
		return nil, 0, d.err
	}
	if m.unreadable != "" {
		// The snapshot stops at a serializer this reader does not know;
		// the change's last three bytes are still its id and type.
		d.err = nil
	} else if m.backendType == backendKeyValue {
		// The TTL configuration (Java-serialized) and the default value
		// only matter to a running job: when they cannot be read, the
		// id and type still end the change.
		probe := *d
		if probe.boolean() {
			readJavaObject(&probe)
		}
		if probe.boolean() && probe.err == nil {
			m.value.decode(&probe)
		}
		if probe.err == nil && probe.remaining() != 3 {
			probe.fail("%d bytes after the metadata of state %q, 3 expected", probe.remaining(), m.name)
			return nil, 0, probe.err
		}
	} else if d.remaining() != 3 {
		d.fail("%d bytes after the metadata of state %q, 3 expected", d.remaining(), m.name)
		return nil, 0, d.err
	}
	if len(d.b) < 3 || d.off > len(d.b)-3 {
		d.fail("metadata change of state %q without its state id", m.name)
		return nil, 0, d.err
	}
	d.off = len(d.b) - 3
	id := int16(d.u16())
	typ := d.u8()
	if int32(typ) != m.backendType || (typ != backendKeyValue && typ != backendPriorityQueue) {
		d.off--
		d.fail("metadata change of state %q: state type %d for a snapshot of type %d", m.name, typ, m.backendType)
		return nil, 0, d.err
	}
	if m.backendType == backendKeyValue && m.namespace == nil && m.unreadable == "" {
		d.fail("key-value state %q without a namespace serializer", m.name)
		return nil, 0, d.err
	}
	if m.backendType == backendPriorityQueue && m.unreadable == "" {
		if _, ok := m.value.(*timerSer); !ok {
			d.failErr(ErrUnsupported, "priority queue state %q of %s elements (timers are read)", m.name, typeOf(m.value))
			return nil, 0, d.err
		}
	}
	m.problem = m.findProblem()
	st := x.state(m.name)
	if st.meta != nil && st.meta.backendType != m.backendType {
		d.fail("state %q declared as state type %d, then %d", m.name, st.meta.backendType, m.backendType)
		return nil, 0, d.err
	}
	st.meta = m
	return m, id, nil
}
