package flink

import (
	"encoding/hex"
	"fmt"
	"math"
)

// Magic is the int that starts every Flink `_metadata` file.
const Magic = 0x4960672d

const masterStateMagic = 0xc96b1696

// Handle type bytes of MetadataV2V3SerializerBase.
const (
	handleNull                 = 0
	handleByteStream           = 1
	handleFile                 = 2
	handleKeyGroups            = 3
	handleOperatorState        = 4
	handleIncremental          = 5
	handleRelativeFile         = 6
	handleSavepointKeyGroups   = 7
	handleChangelog            = 8
	handleChangelogBytes       = 9
	handleChangelogFile        = 10
	handleIncrementalV2        = 11
	handleKeyGroupsV2          = 12
	handleChangelogFileV2      = 13
	handleChangelogV2          = 14
	maxHandleNesting           = 8
	maxOperators               = 1 << 16
	maxSubtasksPerOperator     = 1 << 16
	metadataSubtaskMinimumSize = 4 + 4 + 4 + 1 + 1
)

// MasterState is one master (coordinator-wide) state stored in `_metadata`.
type MasterState struct {
	Name    string
	Version int
	Size    int
}

// metadata is the parsed `_metadata`.
type metadata struct {
	version      int
	checkpointID int64
	masters      []MasterState
	operators    []*operatorMeta
}

type operatorMeta struct {
	id             string // 32 hex digits
	name, uid      string
	parallelism    int
	maxParallelism int
	coordinator    *streamHandle
	finished       bool // the whole operator finished: no subtask states
	subtasks       []subtaskMeta
	unsupported    []string
}

type subtaskMeta struct {
	index    int
	finished bool
	// managed state only: raw state has no meta information to read it by.
	operatorState *operatorStateHandle
	keyed         *keyGroupsHandle
	rawOperator   bool
	rawKeyed      bool
	// rawKeyedHandle is the raw keyed state's handle: legacy timers, or
	// state written by the operator itself.
	rawKeyedHandle *keyGroupsHandle
	// keyedGap says why the managed keyed state cannot be read when its
	// handle is of a kind this reader does not read.
	keyedGap string
}

// streamHandle is where a stream of bytes lives: inline in `_metadata` or
// in a file. Paths are resolved (and confined) when the savepoint opens.
type streamHandle struct {
	kind   byte
	name   string // inline handle name or the path as stored
	inline []byte
	path   string // resolved path inside the savepoint dir, "" when unresolved
	size   int64
	err    error // why path is empty
	// sizeAt is where the size is stored in _metadata (a big-endian int64),
	// for a rewrite to patch (rewrite.go); -1 when not stored there.
	sizeAt int64
}

type keyGroupsHandle struct {
	kind    byte // 3, 7 or 12
	first   int
	offsets []int64 // offsets[i] is the offset of key group first+i
	// offsetsAt is where offsets[0] is stored in _metadata, for a rewrite
	// to patch (rewrite.go).
	offsetsAt int64
	stream    *streamHandle
	// native is set for RocksDB native state (types 5 and 11): stream is
	// then its meta-data handle (see native.go).
	native *nativeHandle
	// changelog is set for the changelog state backend (types 8 and 14):
	// stream and offsets are then unset (see changelog.go).
	changelog *changelogHandle
}

// String says where the handle's state is, for messages.
func (h *keyGroupsHandle) String() string {
	if h.changelog != nil {
		return h.changelog.String()
	}
	return h.stream.String()
}

// opStateInfo is one named state of an operator state handle.
type opStateInfo struct {
	name    string
	mode    byte // 0 split, 1 union, 2 broadcast
	offsets []int64
}

type operatorStateHandle struct {
	states []opStateInfo
	stream *streamHandle
}

// parseMetadata reads `_metadata` bytes. File handles are not resolved here.
func parseMetadata(file string, b []byte) (*metadata, error) {
	d := newDecoder(file, 0, b)
	if m := d.i32(); d.err == nil && m != Magic {
		d.off = 0
		d.fail("not a Flink _metadata file (magic %#x)", uint32(m))
	}
	md := &metadata{version: int(d.i32())}
	if d.err == nil && (md.version < 2 || md.version > 7) {
		d.off -= 4
		d.failErr(ErrUnsupported, "metadata format version %d not supported (2 to 7 are)", md.version)
	}
	md.checkpointID = d.i64()
	if d.err == nil && md.checkpointID < 0 {
		d.fail("negative checkpoint id %d", md.checkpointID)
	}
	nMasters := d.count("master state", 8)
	for range nMasters {
		if uint32(d.i32()) != masterStateMagic && d.err == nil {
			d.fail("bad master state magic")
		}
		n := d.count("master state byte", 1)
		s := d.sub(n)
		ms := MasterState{Version: int(s.i32()), Name: s.utf()}
		sz := s.count("master state payload byte", 1)
		s.take(sz)
		ms.Size = sz
		if s.err != nil {
			return nil, s.err
		}
		md.masters = append(md.masters, ms)
	}
	nOps := d.count("operator", 16+8+1+4)
	if nOps > maxOperators {
		d.fail("%d operators", nOps)
	}
	for range nOps {
		op := parseOperator(d, md.version)
		if d.err != nil {
			return nil, d.err
		}
		md.operators = append(md.operators, op)
	}
	// Version 4+ ends with Java-serialized CheckpointProperties: skipped.
	if d.err != nil {
		return nil, d.err
	}
	return md, nil
}

func parseOperator(d *decoder, version int) *operatorMeta {
	op := &operatorMeta{}
	if version >= 5 {
		op.name = d.utf()
		op.uid = d.utf()
	}
	id := d.take(16)
	op.id = hex.EncodeToString(id)
	op.parallelism = int(d.i32())
	op.maxParallelism = int(d.i32())
	if d.err == nil && (op.parallelism < 0 || op.maxParallelism < 0 || op.maxParallelism > 1<<15) {
		d.fail("operator %s: parallelism %d, max parallelism %d", op.id, op.parallelism, op.maxParallelism)
	}
	if version == 2 {
		// MetadataV2Serializer (Flink 1.8 to 1.10): the unused "chain
		// length" instead of coordinator state.
		d.i32()
	} else {
		op.coordinator = parseStreamHandle(d, 0)
	}
	n := d.i32()
	if n == -1 && version >= 3 {
		op.finished = true
		return op
	}
	if d.err == nil && (n < 0 || n > maxSubtasksPerOperator || int64(n)*metadataSubtaskMinimumSize > int64(d.remaining())) {
		d.fail("operator %s: %d subtask states", op.id, n)
	}
	for range int(max(n, 0)) {
		if d.err != nil {
			break
		}
		idx := d.i32()
		st := subtaskMeta{index: int(idx)}
		if idx < 0 && version >= 3 {
			// A finished subtask is stored as -(index+1) with no state.
			st.index = int(-(int64(idx) + 1))
			st.finished = true
			op.subtasks = append(op.subtasks, st)
			continue
		}
		if version == 2 {
			d.i64() // "duration", unused
			if legacy := d.i32(); legacy != 0 && d.err == nil {
				d.failErr(ErrUnsupported, "operator %s: %d legacy (Flink 1.1 Checkpointed) states", op.id, legacy)
			}
		}
		if d.i32() != 0 {
			st.operatorState = parseOperatorStateHandle(d)
		}
		if d.i32() != 0 {
			st.rawOperator = parseOperatorStateHandle(d) != nil
		}
		st.keyed, st.keyedGap = parseKeyedHandle(d, op, 0)
		if raw, gap := parseKeyedHandle(d, op, 0); raw != nil || gap != "" {
			st.rawKeyed, st.rawKeyedHandle = true, raw
		}
		if version >= 3 {
			// Channel state of unaligned checkpoints: this reader has
			// no use for it, and savepoints never hold any.
			skipChannelState(d, op)
		}
		if version >= 7 {
			// MetadataV7Serializer: an optional regional checkpoint
			// reference id.
			if d.u8() == 1 {
				d.i64()
			}
		}
		op.subtasks = append(op.subtasks, st)
	}
	return op
}

func parseStreamHandle(d *decoder, depth int) *streamHandle {
	t := d.u8()
	if d.err != nil {
		return nil
	}
	switch t {
	case handleNull:
		return nil
	case handleByteStream:
		name := d.utf()
		n := d.count("inline byte", 1)
		return &streamHandle{kind: t, name: name, inline: d.take(n), size: int64(n), sizeAt: -1}
	case handleFile:
		at := d.pos()
		size := d.i64()
		return &streamHandle{kind: t, size: size, name: d.utf(), sizeAt: at}
	case handleRelativeFile:
		name := d.utf()
		at := d.pos()
		return &streamHandle{kind: t, name: name, size: d.i64(), sizeAt: at}
	case handleKeyGroups:
		// A key-groups handle used as a plain stream: its delegate holds
		// the bytes.
		if depth >= maxHandleNesting {
			d.fail("handles nested too deep")
			return nil
		}
		d.i32()
		n := d.count("key group offset", 8)
		d.take(8 * n)
		return parseStreamHandle(d, depth+1)
	}
	d.off--
	d.failErr(ErrUnsupported, "stream handle type %d not supported", t)
	return nil
}

func parseOperatorStateHandle(d *decoder) *operatorStateHandle {
	t := d.u8()
	switch {
	case d.err != nil || t == handleNull:
		return nil
	case t != handleOperatorState:
		d.off--
		d.failErr(ErrUnsupported, "operator state handle type %d not supported", t)
		return nil
	}
	h := &operatorStateHandle{}
	n := d.count("operator state", 2+1+4)
	for range n {
		s := opStateInfo{name: d.utf(), mode: d.u8()}
		if d.err == nil && s.mode > 2 {
			d.fail("operator state %q: distribution mode %d", s.name, s.mode)
		}
		k := d.count("operator state offset", 8)
		s.offsets = make([]int64, 0, k)
		for range k {
			s.offsets = append(s.offsets, d.i64())
		}
		h.states = append(h.states, s)
	}
	h.stream = parseStreamHandle(d, 0)
	if d.err != nil {
		return nil
	}
	return h
}

// parseKeyedHandle reads a keyed state handle. Kinds this reader cannot
// read are parsed past, recorded on op.unsupported and returned as a gap:
// why the keyed state cannot be read.
func parseKeyedHandle(d *decoder, op *operatorMeta, depth int) (*keyGroupsHandle, string) {
	t := d.u8()
	if d.err != nil {
		return nil, ""
	}
	if depth >= maxHandleNesting {
		d.fail("handles nested too deep")
		return nil, ""
	}
	gap := func(msg string) (*keyGroupsHandle, string) {
		op.addUnsupported("keyed state: " + msg)
		return nil, msg
	}
	switch t {
	case handleNull:
		return nil, ""
	case handleKeyGroups, handleSavepointKeyGroups, handleKeyGroupsV2:
		h := &keyGroupsHandle{kind: t, first: int(d.i32())}
		n := d.count("key group offset", 8)
		if d.err == nil && (h.first < 0 || int64(h.first)+int64(n) > math.MaxInt16+1) {
			d.fail("key groups %d+%d out of range", h.first, n)
		}
		h.offsets = make([]int64, 0, n)
		h.offsetsAt = d.pos()
		for range n {
			h.offsets = append(h.offsets, d.i64())
		}
		h.stream = parseStreamHandle(d, 0)
		if t == handleKeyGroupsV2 {
			d.utf() // state handle id
		}
		if d.err != nil {
			return nil, ""
		}
		return h, ""
	case handleIncremental, handleIncrementalV2:
		return parseIncrementalHandle(d, t), ""
	case handleChangelog, handleChangelogV2:
		return parseChangelogHandle(d, op, t, depth), ""
	case handleChangelogBytes, handleChangelogFile, handleChangelogFileV2:
		// A change log outside a ChangelogStateBackendHandle: Flink
		// writes none; its changes have no materialized state to apply to.
		parseChangelogPart(d, t)
		if d.err != nil {
			return nil, ""
		}
		return gap(fmt.Sprintf("a change-log handle (type %d) outside a changelog state backend handle", t))
	}
	d.off--
	d.failErr(ErrUnsupported, "keyed state handle type %d (file merging?) not supported", t)
	return nil, ""
}

func (op *operatorMeta) addUnsupported(msg string) {
	for _, m := range op.unsupported {
		if m == msg {
			return
		}
	}
	op.unsupported = append(op.unsupported, msg)
}

func (h *streamHandle) String() string {
	if h == nil {
		return "(no state handle)"
	}
	switch h.kind {
	case handleByteStream:
		return fmt.Sprintf("_metadata (inline %s)", h.name)
	}
	return h.name
}
