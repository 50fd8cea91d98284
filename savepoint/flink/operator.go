package flink

import (
	"fmt"
	"iter"

	"streamdbg/state"
)

// OperatorState streams operator state rows: one row per list element
// (Position), one row per broadcast map entry (Key). Each element or map is
// read on its own from its offset in the state file.
func (sp *Savepoint) OperatorState(scan state.OperatorScan) iter.Seq2[state.OperatorRow, error] {
	return func(yield func(state.OperatorRow, error) bool) {
		for _, op := range sp.md.operators {
			if !sp.matchOperator(op, scan.OperatorID) {
				continue
			}
			name := sp.opName(op)
			for _, st := range op.subtasks {
				h := st.operatorState
				if h == nil {
					continue
				}
				wanted := false
				for _, s := range h.states {
					wanted = wanted || scan.StateName == "" || s.name == scan.StateName
				}
				if !wanted {
					continue
				}
				oh := sp.operatorHeaderOf(op, h)
				explicit := scan.OperatorID != "" || scan.StateName != ""
				if oh.err != nil && len(oh.states) == 0 {
					if explicit && !yield(state.OperatorRow{}, oh.err) {
						return
					}
					continue
				}
				base := state.OperatorRow{OperatorID: op.id, OperatorName: name, Subtask: st.index}
				if !sp.operatorRows(h, oh, scan.StateName, explicit, base, yield) {
					return
				}
			}
		}
	}
}

// operatorRows yields the rows of one operator state file; false when the
// consumer stopped. A state that cannot be read (its status) gives an error
// when the scan names it or its operator (explicit), no rows otherwise.
func (sp *Savepoint) operatorRows(h *operatorStateHandle, oh *operatorHeader, stateSel string, explicit bool, base state.OperatorRow, yield func(state.OperatorRow, error) bool) bool {
	sec, c, err := h.stream.open()
	if err != nil {
		return yield(state.OperatorRow{}, err)
	}
	defer c.Close()
	all := make([][]int64, 0, len(h.states))
	for _, s := range h.states {
		all = append(all, s.offsets)
	}
	sorted := sortedOffsets(all...)
	for _, s := range h.states {
		if stateSel != "" && s.name != stateSel {
			continue
		}
		m := oh.find(s.name)
		if m == nil {
			// Listed by _metadata, not by the file's header (which may
			// have stopped at an unknown serializer): its status says so.
			err := fmt.Errorf("flink: %s: no meta information for operator state %q: %w", sec.name(), s.name, ErrCorrupt)
			if oh.err != nil {
				err = fmt.Errorf("flink: %s: operator state %q: %w", sec.name(), s.name, oh.err)
			}
			if explicit && !yield(state.OperatorRow{}, err) {
				return false
			}
			continue
		}
		if st := m.statusErr(); st != nil {
			if explicit && !yield(state.OperatorRow{}, &FormatError{File: sec.name(), Msg: fmt.Sprintf("operator state %q cannot be read: %s", s.name, st), Err: st}) {
				return false
			}
			continue
		}
		row := base
		row.StateName, row.Kind = s.name, m.kind()
		for i, off := range s.offsets {
			b, err := sp.readSection(sec, off, sectionEnd(sorted, off, sec.size()))
			if err != nil {
				return yield(state.OperatorRow{}, err)
			}
			if oh.compressed {
				if b, err = unsnappy(b, sec.name(), off, fmt.Sprintf("operator state %q element %d", s.name, i)); err != nil {
					return yield(state.OperatorRow{}, err)
				}
			}
			if row.Kind == state.KindBroadcast {
				if !broadcastRows(sec.name(), off, b, m, row, yield) {
					return false
				}
				continue
			}
			if m.unreadable != "" {
				row.Position, row.Value = i, state.Hex(b)
			} else {
				row.Position = i
				d := newDecoder(sec.name(), off, b)
				row.Value = m.value.decode(d)
				if d.err != nil {
					if !isUnknownSerializer(d.err) {
						return yield(state.OperatorRow{}, d.err)
					}
					row.Value = state.Hex(b)
				}
			}
			if !yield(row, nil) {
				return false
			}
		}
	}
	return true
}

// broadcastRows decodes HeapBroadcastState's layout: int count, then
// (key, value) pairs with no null flags.
func broadcastRows(file string, off int64, b []byte, m *stateMeta, row state.OperatorRow, yield func(state.OperatorRow, error) bool) bool {
	if m.key == nil || m.unreadable != "" {
		row.Value = state.Hex(b)
		return yield(row, nil)
	}
	d := newDecoder(file, off, b)
	n := d.count("broadcast entry", max(m.key.fixedLen()+m.value.fixedLen(), 1))
	for i := range n {
		row.Position = i
		row.Key = m.key.decode(d)
		row.Value = m.value.decode(d)
		if d.err != nil {
			return yield(state.OperatorRow{}, d.err)
		}
		if !yield(row, nil) {
			return false
		}
	}
	if d.err != nil {
		return yield(state.OperatorRow{}, d.err)
	}
	return true
}
