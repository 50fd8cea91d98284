package pebblestate

import (
	"fmt"
	"iter"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"streamdbg/state"
)

// Incremental checkpoints use pebble's own snapshots instead of copying: a
// mark commits the write batch and takes a pebble snapshot (a sequence
// number; nothing is copied), and the backend notes the keys written after
// it. Rolling back rewrites only those keys with their values at the
// snapshot, so it costs what changed since the mark; a mark's state is read
// straight from its snapshot. Released marks free their snapshots, so that
// compactions can drop the versions only they needed; the keys noted after a
// released mark merge into the segment before it, each key once.

// pmark is one live mark.
type pmark struct {
	id   state.Mark
	snap *pebble.Snapshot
	// keys written after this mark (until the next one), concatenated;
	// ends[i] is where key i ends.
	keys []byte
	ends []int
	// seen dedups keys once a later segment merged into this one.
	seen map[string]struct{}
	// compactAt is the key count at which the segment is deduplicated.
	compactAt int
	// timers is each timer queue's length at the mark.
	timers map[*timerQueue]int
}

func (p *pmark) eachKey(fn func(k []byte)) {
	start := 0
	for _, end := range p.ends {
		fn(p.keys[start:end])
		start = end
	}
}

// noteWrite records a key written while marks are live (markDirty calls
// it once per key and segment).
func (b *Backend) noteWrite(k []byte) {
	if len(b.marks) == 0 || b.rollingBack {
		return
	}
	p := &b.marks[len(b.marks)-1]
	p.keys = append(p.keys, k...)
	p.ends = append(p.ends, len(p.keys))
	if len(p.ends) >= p.compactAt {
		p.dedup()
	}
}

// dedup keeps the first occurrence of each key: a key written often after
// a mark is rolled back once. Run when the segment doubled, it costs O(1)
// per write and bounds the segment by twice its distinct keys.
func (p *pmark) dedup() {
	seen := make(map[string]struct{}, len(p.ends))
	var keys []byte
	var ends []int
	p.eachKey(func(k []byte) {
		if _, ok := seen[string(k)]; ok {
			return
		}
		seen[string(k)] = struct{}{}
		keys = append(keys, k...)
		ends = append(ends, len(keys))
	})
	p.keys, p.ends, p.seen = keys, ends, nil
	p.compactAt = 2*len(ends) + 4096
}

// Mark commits pending writes and takes a pebble snapshot.
func (b *Backend) Mark() (state.Mark, error) {
	if b.closed {
		return 0, errClosed
	}
	if b.iters > 0 {
		return 0, fmt.Errorf("pebblestate: mark while %d iterators are open", b.iters)
	}
	if err := b.commit(); err != nil {
		return 0, err
	}
	b.nextMark++
	b.noteGen++ // keys written from now on are noted for this mark
	p := pmark{id: state.Mark(b.nextMark), snap: b.db.NewSnapshot(), timers: map[*timerQueue]int{}, compactAt: 4096}
	for _, si := range b.sorted {
		if si.queue != nil {
			p.timers[si.queue] = si.queue.n
		}
	}
	b.marks = append(b.marks, p)
	return p.id, nil
}

func (b *Backend) markIndex(m state.Mark) int {
	for i := range b.marks {
		if b.marks[i].id == m {
			return i
		}
	}
	return -1
}

// RollBack writes back, from m's snapshot, every key written after m.
func (b *Backend) RollBack(m state.Mark) error {
	if b.closed {
		return errClosed
	}
	i := b.markIndex(m)
	if i < 0 {
		return fmt.Errorf("pebblestate: roll back to mark %d: %w", m, state.ErrUnknownMark)
	}
	p := &b.marks[i]
	b.noteGen++ // m's segment starts over below: note every key again
	done := map[string]struct{}{}
	b.rollingBack = true
	defer func() { b.rollingBack = false }()
	var rerr error
	for j := i; j < len(b.marks) && rerr == nil; j++ {
		b.marks[j].eachKey(func(k []byte) {
			if rerr != nil {
				return
			}
			if _, ok := done[string(k)]; ok {
				return
			}
			done[string(k)] = struct{}{}
			v, c, err := p.snap.Get(k)
			switch {
			case err == pebble.ErrNotFound:
				rerr = b.del(k)
			case err != nil:
				rerr = fmt.Errorf("pebblestate: roll back: %w", err)
			default:
				rerr = b.set(k, v)
				c.Close()
			}
		})
	}
	if rerr != nil {
		return rerr
	}
	for j := i + 1; j < len(b.marks); j++ {
		b.marks[j].snap.Close()
	}
	b.marks = b.marks[:i+1]
	p.keys, p.ends, p.seen, p.compactAt = p.keys[:0], p.ends[:0], nil, 4096
	for _, si := range b.sorted {
		if q := si.queue; q != nil {
			q.n = p.timers[q]
			q.head, q.bound = nil, nil
		}
	}
	return nil
}

// Release frees m's snapshot; the keys written after it now count as
// written after the mark before it.
func (b *Backend) Release(m state.Mark) {
	i := b.markIndex(m)
	if i < 0 {
		return
	}
	p := b.marks[i]
	p.snap.Close()
	b.noteGen++
	if i > 0 {
		prev := &b.marks[i-1]
		if prev.seen == nil {
			prev.seen = make(map[string]struct{}, len(prev.ends))
			prev.eachKey(func(k []byte) { prev.seen[string(k)] = struct{}{} })
		}
		p.eachKey(func(k []byte) {
			if _, ok := prev.seen[string(k)]; ok {
				return
			}
			prev.seen[string(k)] = struct{}{}
			prev.keys = append(prev.keys, k...)
			prev.ends = append(prev.ends, len(prev.keys))
		})
		prev.compactAt = max(prev.compactAt, 2*len(prev.ends)+4096)
	}
	b.marks = slices.Delete(b.marks, i, i+1)
}

// Changes is the number of keys noted for the live marks.
func (b *Backend) Changes() int {
	n := 0
	for i := range b.marks {
		n += len(b.marks[i].ends)
	}
	return n
}

// MarkedEntries yields the entries of key group kg at mark m, read from
// its snapshot.
func (b *Backend) MarkedEntries(m state.Mark, kg int) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		if b.closed {
			yield(state.Entry{}, errClosed)
			return
		}
		i := b.markIndex(m)
		if i < 0 {
			yield(state.Entry{}, fmt.Errorf("pebblestate: entries at mark %d: %w", m, state.ErrUnknownMark))
			return
		}
		if !b.groups.Contains(kg) {
			yield(state.Entry{}, fmt.Errorf("pebblestate: entries: key group %d outside %s", kg, b.groups))
			return
		}
		snap := b.marks[i].snap
		for _, si := range append([]*stateInfo(nil), b.sorted...) {
			for e, err := range b.readEntries(snap, si, kg, kg) {
				if !yield(e, err) || err != nil {
					return
				}
			}
		}
	}
}

// closeMarks frees every snapshot (Close).
func (b *Backend) closeMarks() {
	for i := range b.marks {
		b.marks[i].snap.Close()
	}
	b.marks = nil
}
