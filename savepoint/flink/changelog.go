package flink

import (
	"fmt"
	"math"
)

// This file parses the keyed state handles of Flink's changelog state
// backend (FLIP-158) out of `_metadata`. A ChangelogStateBackendHandle
// (handle types 8 and 14) holds the materialized state (keyed state handles
// of the nested backend: heap key groups or RocksDB incremental handles)
// and the non-materialized change log written since that materialization:
// InMemoryChangelogStateHandle (type 9: the changes inline, each with its
// key group) and ChangelogStateHandleStreamImpl (types 10 and 13: offsets
// into DSTL files, see dstl.go). The state is the materialized part with
// the change log applied over it, in order (changelogindex.go,
// changelogapply.go).

// changelogHandle is a ChangelogStateBackendHandle.
type changelogHandle struct {
	first, count      int // the key groups of the subtask
	materialized      []*keyGroupsHandle
	parts             []changelogPart // non-materialized, in order
	materializationID int64
	checkpointID      int64

	index *changelogIndex // built once (changelogindex.go), under Savepoint.mu
}

// changelogPart is one non-materialized handle: changes inline
// (InMemoryChangelogStateHandle) or change sets at offsets of DSTL files
// (ChangelogStateHandleStreamImpl).
type changelogPart struct {
	kind     byte
	from, to int64       // sequence numbers of an in-memory handle
	changes  []memChange // in-memory
	streams  []streamAt  // in files
}

// memChange is one change of an in-memory handle: its key group (-1 for
// metadata) and its bytes, which lie at offset at of `_metadata`.
type memChange struct {
	kg int32
	b  []byte
	at int64
}

// streamAt is a change set of a DSTL file: the file and the change set's
// offset in the file's uncompressed stream.
type streamAt struct {
	off int64
	h   *streamHandle
}

// metaKeyGroup is StateChange.META_KEY_GROUP, the key group of metadata
// changes (StateChangeLoggerImpl's COMMON_KEY_GROUP).
const metaKeyGroup = -1

func (c *changelogHandle) String() string {
	mem, files := 0, 0
	for _, p := range c.parts {
		if p.kind == handleChangelogBytes {
			mem++
		} else {
			files += len(p.streams)
		}
	}
	return fmt.Sprintf("change log (materialization %d: %d materialized handles, %d in-memory change logs, %d change sets in files)", c.materializationID, len(c.materialized), mem, files)
}

// parseChangelogHandle reads a ChangelogStateBackendHandle (type 8, or 14
// with the checkpoint id) as MetadataV2V3SerializerBase writes it: key-group
// range, checkpointed size, the materialized handles, the non-materialized
// handles, the materialization id, the checkpoint id (14) and the state
// handle id.
func parseChangelogHandle(d *decoder, op *operatorMeta, t byte, depth int) *keyGroupsHandle {
	c := &changelogHandle{first: int(d.i32()), count: int(d.i32())}
	if d.err == nil && (c.first < 0 || c.count < 0 || int64(c.first)+int64(c.count) > math.MaxInt16+1) {
		d.fail("changelog handle: key groups %d+%d out of range", c.first, c.count)
	}
	d.i64() // checkpointed size
	n := d.count("materialized handle", 1)
	for range n {
		at := d.pos()
		h, _ := parseKeyedHandle(d, op, depth+1)
		if d.err != nil {
			return nil
		}
		switch {
		case h == nil:
			// Flink logs and skips a null materialized handle.
		case h.changelog != nil:
			d.off = int(at - d.base)
			d.fail("changelog handle nested in a changelog handle")
			return nil
		default:
			c.materialized = append(c.materialized, h)
		}
	}
	n = d.count("change-log handle", 1)
	for range n {
		at := d.pos()
		kind := d.u8()
		if d.err != nil {
			return nil
		}
		if kind != handleChangelogBytes && kind != handleChangelogFile && kind != handleChangelogFileV2 {
			d.off = int(at - d.base)
			d.fail("changelog handle: non-materialized handle of type %d", kind)
			return nil
		}
		p := parseChangelogPart(d, kind)
		if d.err != nil {
			return nil
		}
		c.parts = append(c.parts, p)
	}
	c.materializationID = d.i64()
	c.checkpointID = c.materializationID
	if t == handleChangelogV2 {
		c.checkpointID = d.i64()
	}
	d.utf() // state handle id
	if d.err != nil {
		return nil
	}
	return &keyGroupsHandle{kind: t, first: c.first, changelog: c}
}

// parseChangelogPart reads a non-materialized handle after its type byte.
func parseChangelogPart(d *decoder, t byte) changelogPart {
	p := changelogPart{kind: t}
	d.i32() // key-group range: the changes carry their own key groups
	d.i32()
	switch t {
	case handleChangelogBytes:
		p.from, p.to = d.i64(), d.i64()
		if d.err == nil && (p.from < 0 || p.to < p.from) {
			d.off -= 16
			d.fail("in-memory change log of sequence numbers %d to %d", p.from, p.to)
		}
		n := d.count("changelog change", 8)
		p.changes = make([]memChange, 0, n)
		for range n {
			kg := d.i32()
			if d.err == nil && kg < metaKeyGroup {
				d.off -= 4
				d.fail("changelog change of key group %d", kg)
			}
			size := d.count("changelog change byte", 1)
			at := d.pos()
			b := d.take(size)
			if d.err != nil {
				return p
			}
			p.changes = append(p.changes, memChange{kg: kg, b: b, at: at})
		}
		d.utf() // state handle id
	default:
		n := d.count("changelog file", 9)
		p.streams = make([]streamAt, 0, n)
		for range n {
			off := d.i64()
			if d.err == nil && off < 0 {
				d.off -= 8
				d.fail("changelog file offset %d", off)
			}
			h := parseStreamHandle(d, 0)
			if d.err != nil {
				return p
			}
			if h == nil {
				d.fail("changelog file without a stream handle")
				return p
			}
			p.streams = append(p.streams, streamAt{off: off, h: h})
		}
		d.i64() // state size
		d.i64() // checkpointed size
		d.utf() // state handle id
		if t == handleChangelogFileV2 {
			d.utf() // storage identifier
		}
	}
	return p
}
