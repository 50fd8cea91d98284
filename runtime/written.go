package runtime

import "hash/maphash"

// WrittenEntries remembers which keyed state entries traced executors
// wrote (Options.Written): a set of 64-bit hashes of each entry's operator,
// subtask, state, key, namespace and user key bytes. A debugger shares one
// among the executors of a session, so that a light run can tell an entry
// written for the first time in the session (LightEntryFresh: nothing in
// the session can know it yet) from one it may have seen, without printing
// its key. It errs one way only: an entry it has not seen was never
// written (a hash collision makes a new entry look seen, never the
// reverse), and once it holds maxWritten hashes it stops adding and says
// seen for every entry. Not safe for concurrent use: one executor runs at
// a time.
type WrittenEntries struct {
	// slots is an open-addressing table of hashes (0: empty; a hash of 0
	// is kept as 1), a power of two long and at most half full.
	slots []uint64
	n     int
	full  bool
}

// maxWritten bounds the hashes a WrittenEntries keeps (64 MiB of slots; a
// variable for tests).
var maxWritten = 1 << 22

// NewWrittenEntries returns an empty set.
func NewWrittenEntries() *WrittenEntries { return &WrittenEntries{} }

// add puts h in the set and reports whether it was there already (or the
// set is full).
func (w *WrittenEntries) add(h uint64) (seen bool) {
	if w.full {
		return true
	}
	if h == 0 {
		h = 1
	}
	if len(w.slots) == 0 {
		w.grow()
	}
	mask := uint64(len(w.slots) - 1)
	i := h & mask
	for ; w.slots[i] != 0; i = (i + 1) & mask {
		if w.slots[i] == h {
			return true
		}
	}
	if w.n >= maxWritten {
		w.full, w.slots, w.n = true, nil, 0
		return true
	}
	w.slots[i] = h
	if w.n++; 2*w.n > len(w.slots) {
		w.grow()
	}
	return false
}

// touch reads the slot where h would go (flushWritten reads ahead).
func (w *WrittenEntries) touch(h uint64) uint64 {
	if len(w.slots) == 0 {
		return 0
	}
	return w.slots[h&uint64(len(w.slots)-1)]
}

// grow doubles the table (1024 slots at first).
func (w *WrittenEntries) grow() {
	old := w.slots
	w.slots = make([]uint64, max(2*len(old), 1024))
	mask := uint64(len(w.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for w.slots[i] != 0 {
			i = (i + 1) & mask
		}
		w.slots[i] = h
	}
}

var writtenSeed = maphash.MakeSeed()

// entryHash is the hash WrittenEntries keeps for the entry of key,
// namespace ns and user key uk (nil: none) of t: the same for every
// executor of a job, since it hashes names and bytes only.
func (t *tracedTable) entryHash(key, ns, uk []byte) uint64 {
	if t.idHash == 0 {
		op, sub := "", 0
		if t.inst.ctx != nil {
			op, sub = t.inst.info.Name, t.inst.ctx.st.index
		}
		h := maphash.String(writtenSeed, op)
		h = (h ^ maphash.String(writtenSeed, t.Table.Desc().Meta.StateName)) * 0x9e3779b97f4a7c15
		t.idHash = (h^uint64(sub))*0xbf58476d1ce4e5b9 | 1
	}
	h := (t.idHash ^ maphash.Bytes(writtenSeed, key)) * 0x9e3779b97f4a7c15
	h = (h ^ maphash.Bytes(writtenSeed, ns)) * 0xbf58476d1ce4e5b9
	if uk != nil {
		h = (h ^ maphash.Bytes(writtenSeed, uk) ^ 0x5bd1e995) * 0x9e3779b97f4a7c15
	}
	return h ^ h>>29
}

// wrote adds the entry of key, ns and uk to the executor's WrittenEntries
// (a traced write: light runs add theirs in batches, flushWritten).
func (t *tracedTable) wrote(key, ns, uk []byte) {
	if w := t.exec.opts.Written; w != nil {
		w.add(t.entryHash(key, ns, uk))
	}
}
