package pebblestate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"streamdbg/state"
)

// headSize is how many of the earliest timers the queue keeps in memory
// (Flink's RocksDB timer cache does the same for the head of each key group).
const headSize = 128

// timerQueue is a state.TimerQueue in pebble. Each timer is two keys: its
// entry under id, [id][key group][esc key][esc ns][ts], which snapshots read
// in Entry order and which deduplicates; and its place in firing order
// under orderID, [orderID][ts][key group][esc key][esc ns].
//
// The earliest order keys are cached in head. INVARIANT: every timer whose
// order key is not in head sorts after bound (nil: before everything), so a
// refill starts after bound and never walks over the tombstones of popped
// timers.
type timerQueue struct {
	b           *Backend
	name        string
	id, orderID uint16
	n           int
	head        [][]byte // sorted order keys
	bound       []byte
	ebuf, obuf  []byte
}

var _ state.TimerQueue = (*timerQueue)(nil)

// keys builds both keys of t in q's buffers.
func (q *timerQueue) keys(t state.Timer) (entry, order []byte, err error) {
	if q.b.closed {
		return nil, nil, errClosed
	}
	if !q.b.groups.Contains(t.KeyGroup) {
		return nil, nil, fmt.Errorf("pebblestate: timer at %s: key group %d outside %s",
			state.FormatMillis(t.Timestamp), t.KeyGroup, q.b.groups)
	}
	e := appendPrefix(q.ebuf[:0], q.id, t.KeyGroup)
	e = appendEscaped(e, t.Key)
	e = appendEscaped(e, t.Namespace)
	e = state.Int64.Append(e, t.Timestamp)
	o := state.Int64.Append(appendID(q.obuf[:0], q.orderID), t.Timestamp)
	o = binary.BigEndian.AppendUint16(o, uint16(t.KeyGroup))
	o = appendEscaped(o, t.Key)
	o = appendEscaped(o, t.Namespace)
	q.ebuf, q.obuf = e, o
	return e, o, nil
}

// Add registers a timer; it reports false when it was already there.
func (q *timerQueue) Add(t state.Timer) (bool, error) {
	e, o, err := q.keys(t)
	if err != nil {
		return false, err
	}
	if ok, err := q.b.exists(e); ok || err != nil {
		return false, err
	}
	if err := q.b.set(e, nil); err != nil {
		return false, err
	}
	if err := q.b.set(o, nil); err != nil {
		return false, err
	}
	q.n++
	q.noteAdded(o)
	return true, nil
}

// noteAdded keeps the head invariant for a new order key.
func (q *timerQueue) noteAdded(o []byte) {
	if q.bound == nil || bytes.Compare(o, q.bound) > 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(q.head, o, bytes.Compare)
	q.head = slices.Insert(q.head, i, bytes.Clone(o))
	if len(q.head) > 2*headSize {
		clear(q.head[headSize:])
		q.head = q.head[:headSize]
		q.bound = q.head[headSize-1]
	}
}

// Delete removes a timer if present.
func (q *timerQueue) Delete(t state.Timer) error {
	e, o, err := q.keys(t)
	if err != nil {
		return err
	}
	if ok, err := q.b.exists(e); !ok || err != nil {
		return err
	}
	if i, ok := slices.BinarySearchFunc(q.head, o, bytes.Compare); ok {
		q.head = slices.Delete(q.head, i, i+1)
	}
	return q.remove(e, o)
}

func (q *timerQueue) remove(e, o []byte) error {
	if err := q.b.del(e); err != nil {
		return err
	}
	if err := q.b.del(o); err != nil {
		return err
	}
	q.n--
	return nil
}

// Peek returns the earliest timer.
func (q *timerQueue) Peek() (state.Timer, bool, error) {
	o, err := q.first()
	if o == nil || err != nil {
		return state.Timer{}, false, err
	}
	t, err := decodeOrderKey(o)
	return t, err == nil, err
}

// Pop removes and returns the earliest timer.
func (q *timerQueue) Pop() (state.Timer, bool, error) {
	o, err := q.first()
	if o == nil || err != nil {
		return state.Timer{}, false, err
	}
	t, err := decodeOrderKey(o)
	if err != nil {
		return state.Timer{}, false, err
	}
	q.head = q.head[1:]
	e, _, err := q.keys(t)
	if err != nil {
		return state.Timer{}, false, err
	}
	if err := q.remove(e, o); err != nil {
		return state.Timer{}, false, err
	}
	return t, true, nil
}

func (q *timerQueue) Len() int { return q.n }

// first returns the earliest order key, refilling head from pebble when it
// ran dry.
func (q *timerQueue) first() ([]byte, error) {
	if q.b.closed {
		return nil, errClosed
	}
	if q.n == 0 {
		return nil, nil
	}
	if len(q.head) == 0 {
		if err := q.refill(); err != nil {
			return nil, err
		}
		if len(q.head) == 0 {
			return nil, fmt.Errorf("pebblestate: timer state %q holds %d timers but none in pebble: %w", q.name, q.n, state.ErrCorrupt)
		}
	}
	return q.head[0], nil
}

func (q *timerQueue) refill() error {
	lo := appendID(nil, q.orderID)
	hi := appendID(nil, q.orderID+1)
	if q.bound != nil {
		lo = append(bytes.Clone(q.bound), 0) // the next key after bound
	}
	it, err := q.b.newIter(lo, hi)
	if err != nil {
		return err
	}
	q.head = q.head[:0]
	for valid := it.First(); valid && len(q.head) < headSize; valid = it.Next() {
		q.head = append(q.head, bytes.Clone(it.Key()))
	}
	if err := q.b.closeIter(it); err != nil {
		return err
	}
	if len(q.head) > 0 {
		q.bound = q.head[len(q.head)-1]
	}
	return q.b.maybeCommit()
}

// recount forgets the head and counts the timers after a restore wrote
// them behind the queue's back.
func (q *timerQueue) recount() error {
	q.head, q.bound, q.n = nil, nil, 0
	it, err := q.b.newIter(appendID(nil, q.orderID), appendID(nil, q.orderID+1))
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		q.n++
	}
	return q.b.closeIter(it)
}

// decodeOrderKey turns an order key back into a timer with its own copies
// of key and namespace.
func decodeOrderKey(o []byte) (state.Timer, error) {
	if len(o) < idLen+tsLen+kgLen {
		return state.Timer{}, fmt.Errorf("pebblestate: timer key of %d bytes: %w", len(o), state.ErrCorrupt)
	}
	ts, _ := state.Int64.Decode(o[idLen : idLen+tsLen])
	kg := int(binary.BigEndian.Uint16(o[idLen+tsLen:]))
	rest := o[idLen+tsLen+kgLen:]
	var buf []byte
	key, rest, buf, err := cutEscaped(rest, buf)
	if err != nil {
		return state.Timer{}, err
	}
	ns, rest, _, err := cutEscaped(rest, buf)
	if err != nil {
		return state.Timer{}, err
	}
	if len(rest) != 0 {
		return state.Timer{}, fmt.Errorf("pebblestate: %d trailing bytes in timer key: %w", len(rest), state.ErrCorrupt)
	}
	return state.Timer{Timestamp: ts, KeyGroup: kg, Key: bytes.Clone(key), Namespace: bytes.Clone(ns)}, nil
}
