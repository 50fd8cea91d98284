package pebblestate

import (
	"fmt"
	"io"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
)

// Pending writes. A write goes into an in-memory table of keys first, not
// into pebble: the table holds the newest write of each key (a value, a
// deletion, or merge operands to append to what the DB holds), so that a
// key written again and again (a counter) costs a map update, not an
// indexed-batch insert and a skiplist search per Get. The table is written
// to the DB in one batch, in the order the keys were first written, when
// its dirty bytes pass commitThreshold, before every iterator and every
// mark (whose pebble snapshot must hold everything written before it).
//
// After a commit the table keeps what it held as clean entries, a cache of
// the DB's values for the keys written last (Get serves them), unless it
// has grown past maxCached keys: then it starts empty. Every write of this
// package goes through the table, and Restore (which writes the DB
// directly) empties it, so a clean entry is always the DB's value.
//
// INVARIANT: a key's entry is its value as of now: a read of a pending
// key never goes to the DB, except for the base value under merge
// operands.

// pendKind says what a table entry holds.
type pendKind uint8

const (
	pendClean  pendKind = iota // the DB's value, val (nil: no such key)
	pendSet                    // a value not in the DB yet
	pendDelete                 // a deletion not in the DB yet
	pendMerge                  // merge operands (concatenated) for the DB's value
)

// pending is the table entry of one key.
type pending struct {
	key  string
	kind pendKind
	// absent: a clean entry for a key the DB does not hold.
	absent bool
	dirty  bool // listed in Backend.dirty
	val    []byte
	// notedGen is Backend.noteGen when the key was last noted for the
	// newest mark (checkpoints.go): a key written again in the same
	// segment is not noted again.
	notedGen uint64
}

// maxCached bounds the keys the table keeps as clean entries. (A variable
// so that tests drop them all the time.)
var maxCached = 1 << 16

// nopCloser closes the values the table serves.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// entry returns the table entry of k, making it (with kind kind) when
// there is none.
func (b *Backend) entry(k []byte, kind pendKind) (p *pending, isNew bool) {
	if p := b.last; p != nil && p.key == string(k) {
		return p, false // read-modify-write: the key the last get read
	}
	if p := b.pend[string(k)]; p != nil {
		return p, false
	}
	p = &pending{key: string(k), kind: kind}
	b.pend[p.key] = p
	return p, true
}

// markDirty lists p for the next commit and notes its key for the newest
// mark.
func (b *Backend) markDirty(p *pending) {
	if !p.dirty {
		p.dirty = true
		b.dirty = append(b.dirty, p)
		b.pendBytes += len(p.key) + 16
	}
	if len(b.marks) > 0 && !b.rollingBack && p.notedGen != b.noteGen {
		b.noteWrite(keyBytes(p.key))
		p.notedGen = b.noteGen
	}
}

// keyBytes views a table key as bytes; callers must not modify them.
func keyBytes(k string) []byte { return unsafe.Slice(unsafe.StringData(k), len(k)) }

// get reads one key. When ok, the caller must close c once done with v;
// v is valid until the key is written again.
func (b *Backend) get(k []byte) (v []byte, c io.Closer, ok bool, err error) {
	p := b.pend[string(k)]
	if p == nil {
		return b.dbGet(k)
	}
	b.last = p
	switch p.kind {
	case pendClean:
		if p.absent {
			return nil, nil, false, nil
		}
		return p.val, nopCloser{}, true, nil
	case pendSet:
		return p.val, nopCloser{}, true, nil
	case pendDelete:
		return nil, nil, false, nil
	}
	// Merge operands onto the DB's value: concatenated, as listMerger does.
	base, bc, ok, err := b.dbGet(k)
	if err != nil {
		return nil, nil, false, err
	}
	v = append([]byte(nil), base...)
	if ok {
		bc.Close()
	}
	return append(v, p.val...), nopCloser{}, true, nil
}

// dbGet reads one key from the DB.
func (b *Backend) dbGet(k []byte) ([]byte, io.Closer, bool, error) {
	v, c, err := b.db.Get(k)
	if err == pebble.ErrNotFound {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("pebblestate: get: %w", err)
	}
	return v, c, true, nil
}

func (b *Backend) exists(k []byte) (bool, error) {
	_, c, ok, err := b.get(k)
	if ok {
		c.Close()
	}
	return ok, err
}

func (b *Backend) set(k, v []byte) error {
	p, _ := b.entry(k, pendSet)
	b.pendBytes += len(v)
	p.kind, p.absent, p.val = pendSet, false, append(p.val[:0], v...)
	b.markDirty(p)
	return b.maybeCommit()
}

// merge appends the operand v to the key's value (listMerger: values are
// concatenations).
func (b *Backend) merge(k, v []byte) error {
	p, isNew := b.entry(k, pendMerge)
	b.pendBytes += len(v)
	switch {
	case isNew:
		p.val = append(p.val[:0], v...)
	case p.kind == pendClean && p.absent, p.kind == pendDelete:
		p.kind, p.absent, p.val = pendSet, false, append(p.val[:0], v...)
	case p.kind == pendClean:
		p.kind, p.val = pendSet, append(p.val, v...)
	default: // set or merge: the operand follows
		p.val = append(p.val, v...)
	}
	b.markDirty(p)
	return b.maybeCommit()
}

func (b *Backend) del(k []byte) error {
	p, _ := b.entry(k, pendDelete)
	p.kind, p.absent, p.val = pendDelete, false, p.val[:0]
	b.markDirty(p)
	return b.maybeCommit()
}

// fillBatch puts the dirty entries into b.batch, in the order their keys
// were first written (deterministic, unlike the map's).
func (b *Backend) fillBatch() error {
	for _, p := range b.dirty {
		k := keyBytes(p.key) // the batch copies it
		var err error
		switch p.kind {
		case pendSet:
			err = b.batch.Set(k, p.val, nil)
		case pendDelete:
			err = b.batch.Delete(k, nil)
		case pendMerge:
			err = b.batch.Merge(k, p.val, nil)
		}
		if err != nil {
			b.batch.Reset()
			return fmt.Errorf("pebblestate: commit: %w", err)
		}
	}
	return nil
}

// committed turns the dirty entries clean once the DB holds them (merge
// operands are dropped: the merged value is the DB's now).
func (b *Backend) committed() {
	if len(b.pend) > maxCached {
		b.pend, b.last = map[string]*pending{}, nil
	} else {
		for _, p := range b.dirty {
			p.dirty = false
			switch p.kind {
			case pendMerge:
				delete(b.pend, p.key)
				if b.last == p {
					b.last = nil
				}
			case pendDelete:
				p.kind, p.absent, p.val = pendClean, true, nil
			default:
				p.kind = pendClean
			}
		}
	}
	clear(b.dirty)
	b.dirty = b.dirty[:0]
	b.pendBytes = 0
}

// forgetPending empties the table (the DB was written around it).
func (b *Backend) forgetPending() {
	b.pend, b.last = map[string]*pending{}, nil
	clear(b.dirty)
	b.dirty = b.dirty[:0]
	b.pendBytes = 0
}
