package pebblestate

import (
	"io"

	"github.com/cockroachdb/pebble/v2"
)

// listMerger is the merge operator of list state: operands are runs of
// length-prefixed elements, merged by concatenation, oldest first.
//
// pebble.DefaultMerger concatenates too, but it prepends every older operand
// into a new buffer: a read or compaction of a list of n appended elements
// copies O(n²) bytes. Reads see operands newest first, so that is the
// common case; this merger buffers older operands and joins them once.
var listMerger = &pebble.Merger{
	Name: "streamdbg.list.v1",
	Merge: func(_, value []byte) (pebble.ValueMerger, error) {
		m := &listValueMerger{}
		m.newer = append(m.newer, value...)
		return m, nil
	},
}

type listValueMerger struct {
	newer []byte // the first operand and every newer one, oldest first
	older []byte // operands older than the first, in arrival (newest-first) order
	ends  []int  // end offset of each operand in older
}

func (m *listValueMerger) MergeNewer(value []byte) error {
	m.newer = append(m.newer, value...)
	return nil
}

func (m *listValueMerger) MergeOlder(value []byte) error {
	m.older = append(m.older, value...)
	m.ends = append(m.ends, len(m.older))
	return nil
}

func (m *listValueMerger) Finish(bool) ([]byte, io.Closer, error) {
	if len(m.ends) == 0 {
		return m.newer, nil, nil
	}
	out := make([]byte, 0, len(m.older)+len(m.newer))
	for i := len(m.ends) - 1; i >= 0; i-- {
		start := 0
		if i > 0 {
			start = m.ends[i-1]
		}
		out = append(out, m.older[start:m.ends[i]]...)
	}
	return append(out, m.newer...), nil, nil
}
