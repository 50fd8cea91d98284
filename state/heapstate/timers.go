package heapstate

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"streamdbg/state"
)

// timerItem is one timer in the heap; idx is its heap position.
type timerItem struct {
	t   state.Timer
	id  string
	idx int
	seg uint64 // the log segment that recorded it last (changelog.go)
}

// timerQueue is a binary min-heap of timers with one dedup set per key group
// (timers of a key group are what one snapshot step needs).
type timerQueue struct {
	b    *Backend
	name string
	meta state.StateMeta
	heap []*timerItem
	// byKG maps a timer's id, timestamp + composite of key and namespace,
	// to its item, per key group (index kg - Start).
	byKG    []map[string]*timerItem
	scratch []byte
}

var _ state.TimerQueue = (*timerQueue)(nil)

func newTimerQueue(b *Backend, name string, meta state.StateMeta) *timerQueue {
	return &timerQueue{b: b, name: name, meta: meta, byKG: make([]map[string]*timerItem, b.groups.Len())}
}

func (q *timerQueue) describe() state.StateMeta { return q.meta }

// id encodes the dedup identity of t into the scratch buffer.
func (q *timerQueue) id(t state.Timer) []byte {
	buf := binary.BigEndian.AppendUint64(q.scratch[:0], uint64(t.Timestamp))
	buf = binary.AppendUvarint(buf, uint64(len(t.Key)))
	buf = append(buf, t.Key...)
	buf = append(buf, t.Namespace...)
	q.scratch = buf
	return buf
}

func (q *timerQueue) index(t state.Timer) (int, error) {
	if !q.b.groups.Contains(t.KeyGroup) {
		return 0, fmt.Errorf("heapstate: timers %q: key group %d outside this backend's key groups %s",
			q.meta.StateName, t.KeyGroup, q.b.groups)
	}
	return t.KeyGroup - q.b.groups.Start, nil
}

// Add registers a timer; it reports false when it was already there.
func (q *timerQueue) Add(t state.Timer) (bool, error) {
	i, err := q.index(t)
	if err != nil {
		return false, err
	}
	id := q.id(t)
	if q.byKG[i][string(id)] != nil {
		return false, nil
	}
	if q.byKG[i] == nil {
		q.byKG[i] = map[string]*timerItem{}
	}
	t.Key, t.Namespace = bytes.Clone(t.Key), bytes.Clone(t.Namespace)
	it := &timerItem{t: t, id: string(id), idx: len(q.heap)}
	q.byKG[i][it.id] = it
	q.heap = append(q.heap, it)
	q.up(it.idx)
	if q.b.logging() {
		q.b.record(change{kind: chTimer, kg: int32(i), q: q, key: it.id})
		it.seg = q.b.seg
	}
	return true, nil
}

// Delete removes a timer if present.
func (q *timerQueue) Delete(t state.Timer) error {
	i, err := q.index(t)
	if err != nil {
		return err
	}
	it := q.byKG[i][string(q.id(t))]
	if it == nil {
		return nil
	}
	q.logRemove(i, it)
	delete(q.byKG[i], it.id)
	q.remove(it.idx)
	return nil
}

// Peek returns the earliest timer.
func (q *timerQueue) Peek() (state.Timer, bool, error) {
	if len(q.heap) == 0 {
		return state.Timer{}, false, nil
	}
	return q.heap[0].t, true, nil
}

// Pop removes and returns the earliest timer.
func (q *timerQueue) Pop() (state.Timer, bool, error) {
	if len(q.heap) == 0 {
		return state.Timer{}, false, nil
	}
	it := q.heap[0]
	i := it.t.KeyGroup - q.b.groups.Start
	q.logRemove(i, it)
	delete(q.byKG[i], it.id)
	q.remove(0)
	return it.t, true, nil
}

func (q *timerQueue) Len() int { return len(q.heap) }

func (q *timerQueue) logRemove(i int, it *timerItem) {
	if q.b.logging() && it.seg != q.b.seg {
		q.b.record(change{kind: chTimer, kg: int32(i), q: q, key: it.id, ti: it})
		it.seg = q.b.seg
	}
}

// compareTimers is the firing order of every TimerQueue.
var compareTimers = state.CompareTimers

func (q *timerQueue) less(i, j int) bool { return compareTimers(q.heap[i].t, q.heap[j].t) < 0 }

func (q *timerQueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.heap[i].idx, q.heap[j].idx = i, j
}

func (q *timerQueue) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

func (q *timerQueue) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && q.less(r, l) {
			j = r
		}
		if !q.less(j, i) {
			return
		}
		q.swap(i, j)
		i = j
	}
}

// remove takes the item at heap position i out of the heap.
func (q *timerQueue) remove(i int) {
	n := len(q.heap) - 1
	if i != n {
		q.swap(i, n)
	}
	q.heap[n] = nil
	q.heap = q.heap[:n]
	if i != n {
		q.down(i)
		q.up(i)
	}
}

// load adds one snapshotted timer entry.
func (q *timerQueue) load(e state.Entry) error {
	ts, err := state.Int64.Decode(e.UserKey)
	if err != nil {
		return fmt.Errorf("heapstate: restore %s key group %d key %x: timestamp: %w", q.meta.StateName, e.KeyGroup, e.Key, err)
	}
	_, err = q.Add(state.Timer{Timestamp: ts, KeyGroup: e.KeyGroup, Key: e.Key, Namespace: e.Namespace})
	return err
}

// entries yields the timers of key group kg in Entry order: key, namespace,
// timestamp.
func (q *timerQueue) entries(kg int, arena *[]byte, yield func(state.Entry) bool) bool {
	m := q.byKG[kg-q.b.groups.Start]
	items := make([]*timerItem, 0, len(m))
	for _, it := range m {
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *timerItem) int {
		if c := bytes.Compare(a.t.Key, b.t.Key); c != 0 {
			return c
		}
		if c := bytes.Compare(a.t.Namespace, b.t.Namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.t.Timestamp, b.t.Timestamp)
	})
	var ts []byte
	for _, it := range items {
		if arena != nil {
			at := len(*arena)
			*arena = state.Int64.Append(*arena, it.t.Timestamp)
			ts = (*arena)[at:len(*arena):len(*arena)]
		} else {
			ts = state.Int64.Append(ts[:0], it.t.Timestamp)
		}
		e := state.Entry{State: q.meta.StateName, KeyGroup: kg, Key: it.t.Key, Namespace: it.t.Namespace, UserKey: ts}
		if !yield(e) {
			return false
		}
	}
	return true
}
