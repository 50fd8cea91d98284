package pebblestate

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"

	"streamdbg/state"
)

// restoreBatchSize is the size at which Restore commits what it wrote.
const restoreBatchSize = 4 << 20

// Entries yields the entries of one key group in Entry order; a non-empty
// stateName restricts them to that state. States are visited by name and
// each state's key group is one pebble range whose byte order is Entry
// order (see keys.go), so nothing is buffered or sorted.
func (b *Backend) Entries(keyGroup int, stateName string) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		states, err := b.entryStates(keyGroup, stateName)
		if err != nil {
			yield(state.Entry{}, err)
			return
		}
		for _, si := range states {
			for e, err := range b.stateEntries(si, keyGroup, keyGroup) {
				if !yield(e, err) || err != nil {
					return
				}
			}
		}
	}
}

// entryStates are the states Entries(keyGroup, stateName) visits, in
// order, or the error it yields before any entry.
func (b *Backend) entryStates(keyGroup int, stateName string) ([]*stateInfo, error) {
	if b.closed {
		return nil, errClosed
	}
	if !b.groups.Contains(keyGroup) {
		return nil, fmt.Errorf("pebblestate: entries: key group %d outside %s", keyGroup, b.groups)
	}
	states := b.sorted
	if stateName != "" {
		si := b.byName[stateName]
		if si == nil {
			return nil, fmt.Errorf("pebblestate: entries of %q: %w", stateName, state.ErrNotRegistered)
		}
		states = []*stateInfo{si}
	}
	// Copy: the consumer may register states, which reorders b.sorted.
	return append([]*stateInfo(nil), states...), nil
}

// stateEntries yields one state's entries in key groups first to last, one
// range read. A list value is one pebble key; its elements come out as
// entries with their positions.
func (b *Backend) stateEntries(si *stateInfo, first, last int) iter.Seq2[state.Entry, error] {
	return b.readEntries(nil, si, first, last)
}

// readEntries is stateEntries over the live state (snap nil) or a snapshot.
func (b *Backend) readEntries(snap *pebble.Snapshot, si *stateInfo, first, last int) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		if last < first {
			return
		}
		name, kind := si.meta.StateName, si.meta.Kind
		kg := first
		fail := func(err error) {
			yield(state.Entry{}, fmt.Errorf("pebblestate: state %q key group %d: %w", name, kg, err))
		}
		lo := appendPrefix(nil, si.id, first)
		hi := successor(nil, appendPrefix(nil, si.id, last))
		var it *pebble.Iterator
		var err error
		if snap == nil {
			it, err = b.newIter(lo, hi)
		} else {
			it, err = snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		}
		if err != nil {
			fail(err)
			return
		}
		if snap == nil {
			defer b.closeIter(it)
		} else {
			defer it.Close()
		}
		var buf, pos []byte
		for valid := it.First(); valid; valid = it.Next() {
			var p keyParts
			if p, buf, err = splitKey(it.Key(), buf[:0]); err != nil {
				fail(err)
				return
			}
			kg = p.kg
			v, err := it.ValueAndErr()
			if err != nil {
				fail(err)
				return
			}
			e := state.Entry{State: name, KeyGroup: kg, Key: p.key, Namespace: p.ns, UserKey: p.rest, Value: v}
			switch kind {
			case state.KindValue, state.KindReducing, state.KindAggregating:
				e.UserKey = nil
			case state.KindTimers:
				e.Value = nil
			case state.KindList:
				for i := int64(0); len(v) > 0; i++ {
					if e.Value, v, err = nextElement(v); err != nil {
						fail(err)
						return
					}
					pos = state.Position.Append(pos[:0], i)
					e.UserKey = pos
					if !yield(e, nil) {
						return
					}
				}
				continue
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// Restore loads snapshotted entries before any state is registered. Values
// stay in their stored encoding, which is the one pebble keeps, so entries
// go straight under their state's id; Register checks the codecs later.
func (b *Backend) Restore(metas []state.StateMeta, entries iter.Seq2[state.Entry, error]) error {
	return b.RestoreBatches(metas, state.Singles(entries))
}

var _ state.BatchRestorer = (*Backend)(nil)

// RestoreBatches is Restore from batches of entries
// (savepoint.KeyedBatchesFor): the same checks and the same state, without
// an iterator step per entry.
func (b *Backend) RestoreBatches(metas []state.StateMeta, batches iter.Seq2[[]state.Entry, error]) error {
	r, err := b.beginRestore(metas)
	if err != nil {
		return err
	}
	defer r.batch.Close()
	for es, err := range batches {
		if err != nil {
			return fmt.Errorf("pebblestate: restore: %w", err)
		}
		for i := range es {
			if err := r.add(&es[i]); err != nil {
				return err
			}
		}
	}
	return r.end()
}

// beginRestore registers metas and returns the restorer of the entries;
// its batch must be closed.
func (b *Backend) beginRestore(metas []state.StateMeta) (*restorer, error) {
	if b.closed {
		return nil, errClosed
	}
	for _, m := range metas {
		m.Entries, m.Bytes = 0, 0
		if si := b.byName[m.StateName]; si != nil {
			// Restored again, or declared first: either way the stored
			// encoding must be readable as the state is known.
			if why := m.Compatible(si.meta); why != "" {
				return nil, fmt.Errorf("pebblestate: restore: state %q cannot be read as known: %s", m.StateName, why)
			}
			continue
		}
		if state.TimerDomain(m.StateName) != "" {
			m.Kind = state.KindTimers
		}
		m.Scope = state.ScopeKeyed
		if _, err := b.addState(m); err != nil {
			return nil, err
		}
	}
	if err := b.commit(); err != nil {
		return nil, err
	}
	b.forgetPending() // the restorer writes the DB directly
	return &restorer{b: b, batch: b.db.NewBatch()}, nil
}

// end writes what the restore gathered and recounts the timer queues.
func (r *restorer) end() error {
	b := r.b
	if err := r.flushList(); err != nil {
		return err
	}
	if err := r.batch.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("pebblestate: restore: %w", err)
	}
	for _, si := range b.sorted {
		if si.queue != nil {
			if err := si.queue.recount(); err != nil {
				return err
			}
		}
	}
	return nil
}

// restorer writes restored entries through a plain batch, gathering the
// consecutive elements of one list into one value.
type restorer struct {
	b      *Backend
	batch  *pebble.Batch
	kbuf   []byte
	inList bool   // a list is being gathered under list
	list   []byte // key of the list being gathered
	elems  []byte
}

func (r *restorer) add(e *state.Entry) error {
	b := r.b
	si := b.byName[e.State]
	if si == nil {
		return fmt.Errorf("pebblestate: restore: entry of state %q without metadata", e.State)
	}
	if !b.groups.Contains(e.KeyGroup) {
		return fmt.Errorf("pebblestate: restore: state %q: key group %d outside %s", e.State, e.KeyGroup, b.groups)
	}
	k := appendPrefix(r.kbuf[:0], si.id, e.KeyGroup)
	k = appendEscaped(k, e.Key)
	k = appendEscaped(k, e.Namespace)
	r.kbuf = k
	switch si.meta.Kind {
	case state.KindList:
		if r.inList && !bytes.Equal(r.list, k) {
			if err := r.flushList(); err != nil {
				return err
			}
		}
		if !r.inList {
			r.inList, r.list = true, append(r.list[:0], k...)
		}
		r.elems = appendElement(r.elems, e.Value)
		return nil
	case state.KindMap:
		k = append(k, e.UserKey...)
		r.kbuf = k
	case state.KindTimers:
		ts, err := state.Int64.Decode(e.UserKey)
		if err != nil {
			return fmt.Errorf("pebblestate: restore: timer state %q: timestamp: %w", e.State, err)
		}
		if err := r.flushList(); err != nil {
			return err
		}
		ek, ok, err := si.queue.keys(state.Timer{Timestamp: ts, KeyGroup: e.KeyGroup, Key: e.Key, Namespace: e.Namespace})
		if err != nil {
			return err
		}
		if err := r.set(ek, nil); err != nil {
			return err
		}
		return r.set(ok, nil)
	}
	if err := r.flushList(); err != nil {
		return err
	}
	return r.set(k, e.Value)
}

// flushList writes the gathered list. A merge, not a set: elements of one
// list that arrive apart are still all kept, in arrival order.
func (r *restorer) flushList() error {
	if !r.inList {
		return nil
	}
	err := r.batch.Merge(r.list, r.elems, nil)
	r.inList, r.elems = false, r.elems[:0]
	if err != nil {
		return fmt.Errorf("pebblestate: restore: %w", err)
	}
	return r.commitIfLarge()
}

func (r *restorer) set(k, v []byte) error {
	if err := r.batch.Set(k, v, nil); err != nil {
		return fmt.Errorf("pebblestate: restore: %w", err)
	}
	return r.commitIfLarge()
}

func (r *restorer) commitIfLarge() error {
	if r.batch.Len() < restoreBatchSize {
		return nil
	}
	if err := r.batch.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("pebblestate: restore: %w", err)
	}
	r.batch.Reset()
	return nil
}
