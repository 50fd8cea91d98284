package session

import "hash/maphash"

// entryIndex is the history's histories by EntryID (history.byID): a map
// from a 64-bit hash of the EntryID to a chain of the histories with that
// hash (histEntry.next), each compared by its whole EntryID. An EntryID is
// 88 bytes; a map keyed by it moves and compares those on every insertion
// and growth, where this one moves 16 bytes a slot.
type entryIndex struct {
	m map[uint64]*histEntry
	n int // histories in the index
	// narrow, when not 0, keys by the hash modulo narrow (tests: most
	// EntryIDs then share a chain).
	narrow uint64
}

// key is the map key of id.
func (x *entryIndex) key(id *EntryID) uint64 {
	if x.narrow != 0 {
		return hashEntry(id) % x.narrow
	}
	return hashEntry(id)
}

var entrySeed = maphash.MakeSeed()

// hashEntry is the hash of id the index keys it by.
func hashEntry(id *EntryID) uint64 {
	h := maphash.String(entrySeed, id.Key)
	for _, s := range [...]string{id.Operator, id.State, id.Namespace, id.UserKey} {
		h = (h ^ maphash.String(entrySeed, s)) * 0x9e3779b97f4a7c15
	}
	return (h ^ uint64(id.Subtask)) * 0xbf58476d1ce4e5b9
}

// get returns the history of id (nil: none).
func (x *entryIndex) get(id EntryID) *histEntry { return x.find(x.key(&id), &id) }

// find returns the history of id in the chain of key k (nil: none).
func (x *entryIndex) find(k uint64, id *EntryID) *histEntry {
	for e := x.m[k]; e != nil; e = e.next {
		if e.id == *id {
			return e
		}
	}
	return nil
}

// link puts he (its id set, not in the index) at the head of its chain.
func (x *entryIndex) link(he *histEntry) { x.linkAt(x.key(&he.id), he) }

func (x *entryIndex) linkAt(k uint64, he *histEntry) {
	if x.m == nil {
		x.m = map[uint64]*histEntry{}
	}
	he.next, he.indexed = x.m[k], true
	x.m[k] = he
	x.n++
}

// lookup returns the history of id, or makes one in spare (a new one when
// nil), puts it and returns it (made).
func (x *entryIndex) lookup(id EntryID, spare *histEntry) (_ *histEntry, made bool) {
	k := x.key(&id)
	if e := x.find(k, &id); e != nil {
		return e, false
	}
	return x.makeAt(k, id, spare), true
}

// makeAt makes the history of id, whose key is k and which the index does
// not hold, in spare (a new one when nil) and puts it.
func (x *entryIndex) makeAt(k uint64, id EntryID, spare *histEntry) *histEntry {
	he := spare
	if he == nil {
		he = &histEntry{}
	}
	*he = histEntry{id: id}
	x.linkAt(k, he)
	return he
}

// put puts he (its id set) in the index, unless another history of its id
// is there: put returns that one and leaves the index as it is.
func (x *entryIndex) put(he *histEntry) (other *histEntry) {
	k := x.key(&he.id)
	if e := x.find(k, &he.id); e != nil {
		return e
	}
	x.linkAt(k, he)
	return nil
}

// del takes he out of the index (when it is in it).
func (x *entryIndex) del(he *histEntry) {
	k := x.key(&he.id)
	for p := x.m[k]; p != nil; p = p.next {
		if p == he {
			x.m[k] = he.next // he is the head
			if he.next == nil {
				delete(x.m, k)
			}
			he.next = nil
			x.n--
			return
		}
		if p.next == he {
			p.next = he.next
			he.next = nil
			x.n--
			return
		}
	}
}

// filter keeps the histories keep returns true for, in no particular
// order; it calls drop for each of the others once it is out.
func (x *entryIndex) filter(keep func(*histEntry) bool, drop func(*histEntry)) {
	for k, head := range x.m {
		var kept *histEntry
		for e := head; e != nil; {
			next := e.next
			if keep(e) {
				e.next = kept
				kept = e
			} else {
				e.next = nil
				x.n--
				drop(e)
			}
			e = next
		}
		if kept == nil {
			delete(x.m, k)
		} else {
			x.m[k] = kept
		}
	}
}

// each calls fn for every history in the index, in no particular order.
func (x *entryIndex) each(fn func(*histEntry)) {
	for _, head := range x.m {
		for e := head; e != nil; {
			next := e.next
			fn(e)
			e = next
		}
	}
}
