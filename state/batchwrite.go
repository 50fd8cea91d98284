package state

import (
	"iter"
	"sync"
)

// WriteRun writes the leading entries of es that have es[0]'s state (all
// of es when they share it) to the current group and returns how many it
// wrote: a caller counting entries per state learns where the state
// changes without comparing every entry's itself. The bytes, the checks
// and the errors are exactly those of WriteEntry called on each entry in
// turn; on an error, n entries were written before the bad one. WriteRun
// neither changes nor retains es.
//
// It is for batches of entries (a backend's EntryBatches): the most common
// entry is encoded in a loop that keeps the writer's fields in locals and
// takes the previous key from es instead of copying every key.
func (w *StreamWriter) WriteRun(es []Entry) (n int, err error) {
	if len(es) == 0 {
		return 0, nil
	}
	if err := w.WriteEntry(&es[0]); err != nil {
		return 0, err
	}
	st := es[0].State
	i := 1
	for i < len(es) {
		// A run of the most common entry, as WriteEntry's fast path
		// encodes it (same conditions, same bytes): a new key of the same
		// state inside an open block, no namespace or user key (nor
		// before), one-byte lengths. w.prevState is st here: es[i-1] was
		// written and has state st.
		if w.blockStart >= 0 && len(w.prevNS)|len(w.prevUK) == 0 {
			b := w.buf
			blockStart, target, kg := w.blockStart, w.target, w.group.KeyGroup
			prev := w.prevKey // the previous entry's key: w.prevKey, then es[j-1].Key
			j := i
			var payload int64
			for j < len(es) {
				e := &es[j]
				k, v := e.Key, e.Value
				if e.State != st || e.KeyGroup != kg || len(k) >= 0x80 || len(v) >= 0x80 || len(e.Namespace)|len(e.UserKey) != 0 {
					break
				}
				shared := commonPrefix(k, prev)
				if shared == len(k) || shared < len(prev) && k[shared] < prev[shared] {
					break // out of order or repeated: WriteEntry says so
				}
				b = append(b, flagKey, byte(shared), byte(len(k)-shared))
				b = append(b, k[shared:]...)
				b = append(b, byte(len(v)))
				b = append(b, v...)
				payload += int64(len(k) + len(v))
				prev = k
				j++
				if len(b)-blockStart >= target {
					break
				}
			}
			if j > i {
				w.buf = b
				w.prevKey = append(w.prevKey[:0], prev...)
				w.group.Entries += int64(j - i)
				w.payload += payload
				i = j
				if len(b)-blockStart >= target {
					w.closeBlock()
					if len(w.buf) >= flushTarget {
						if err := w.flush(); err != nil {
							// As WriteEntry: the entry that
							// filled the buffer failed.
							return i - 1, err
						}
					}
				}
				continue
			}
		}
		e := &es[i]
		if e.State != st {
			break
		}
		if err := w.WriteEntry(e); err != nil {
			return i, err
		}
		i++
	}
	return i, nil
}

// EntryBatcher is a KeyedBackend that also hands its entries over in
// batches, for a savepoint writer that encodes millions of them
// (savepoint.SubtaskSnapshot.KeyedBatches): one iterator step per batch
// instead of one per entry.
type EntryBatcher interface {
	KeyedBackend
	// EntryBatches yields what Entries(keyGroup, stateName) yields, the
	// same entries in the same order with the same errors, in batches of
	// up to BatchEntries. A batch and its slices are valid until the
	// next iteration step.
	EntryBatches(keyGroup int, stateName string) iter.Seq2[[]Entry, error]
}

// batchArena bounds the bytes a Batcher keeps for one batch: a batch of
// large values is handed over before it holds more.
const batchArena = 256 << 10

// Batcher gathers entries into batches for an EntryBatches: Add an entry
// whose slices stay valid until the batch is handed over (Arena's bytes,
// or the backend's own), Flush at the end, Release when done.
type Batcher struct {
	// Arena is where a backend appends the bytes of the entries it adds
	// (keys, encoded values); it is emptied when a batch is handed over.
	// Entries added before Arena grew keep the old array: they stay
	// valid.
	Arena   []byte
	es      []Entry
	yield   func([]Entry, error) bool
	stopped bool
}

var batchers = sync.Pool{New: func() any {
	return &Batcher{es: make([]Entry, 0, BatchEntries), Arena: make([]byte, 0, 16<<10)}
}}

// NewBatcher returns a Batcher that hands its batches to yield.
func NewBatcher(yield func([]Entry, error) bool) *Batcher {
	b := batchers.Get().(*Batcher)
	b.yield, b.stopped = yield, false
	return b
}

// Add adds e to the batch, handing the batch over when it is full (by
// entries or bytes); it returns false once the consumer stopped.
func (b *Batcher) Add(e Entry) bool {
	b.es = append(b.es, e)
	if len(b.es) == cap(b.es) || len(b.Arena) >= batchArena {
		return b.Flush()
	}
	return true
}

// AddCopy is Add of a copy of e, its bytes in Arena: for entries whose
// bytes are valid only until the source's next step. Nil slices stay nil.
func (b *Batcher) AddCopy(e Entry) bool {
	at := len(b.Arena)
	a := append(b.Arena, e.Key...)
	a = append(a, e.Namespace...)
	a = append(a, e.UserKey...)
	a = append(a, e.Value...)
	b.Arena = a
	cut := func(p []byte) []byte {
		if p == nil {
			return nil
		}
		s := a[at : at+len(p) : at+len(p)]
		at += len(p)
		return s
	}
	e.Key, e.Namespace, e.UserKey, e.Value = cut(e.Key), cut(e.Namespace), cut(e.UserKey), cut(e.Value)
	return b.Add(e)
}

// Flush hands over what the batch holds, if anything; false once the
// consumer stopped.
func (b *Batcher) Flush() bool {
	if b.stopped {
		return false
	}
	if len(b.es) > 0 {
		if !b.yield(b.es, nil) {
			b.stopped = true
		}
		b.es, b.Arena = b.es[:0], b.Arena[:0]
	}
	return !b.stopped
}

// Fail hands over err (unless the consumer stopped), after the entries
// before it.
func (b *Batcher) Fail(err error) {
	if b.Flush() {
		b.stopped = true
		b.yield(nil, err)
	}
}

// Release returns b for reuse; it must not be used after.
func (b *Batcher) Release() {
	// No pointers into a backend's memory kept while b waits in the pool.
	clear(b.es[:cap(b.es)])
	b.es, b.yield = b.es[:0], nil
	if cap(b.Arena) > 4*batchArena {
		b.Arena = nil
	}
	b.Arena = b.Arena[:0]
	batchers.Put(b)
}
