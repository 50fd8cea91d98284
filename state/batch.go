package state

import (
	"encoding/binary"
	"errors"
)

// Batch is entries of one key group decoded together by ReadBatch, for
// consumers of millions of entries (a restore, a diff, an export): one call
// per few hundred entries instead of one per entry, and no copy of each
// Entry through an iterator. Keys are copied into one buffer the batch
// keeps; namespaces, user keys and values are slices of the reader's bytes.
// A Batch is reused: its entries are valid until the next ReadBatch into it
// and while the reader's bytes are.
type Batch struct {
	Entries []Entry
	keys    []byte
}

const (
	// BatchEntries is the most entries ReadBatch puts in a batch (a
	// batch made with no capacity gets this one): enough to make the
	// per-batch costs small, few enough that a batch stays in a core's
	// cache (an Entry is 120 bytes).
	BatchEntries = 512
	// batchKeys bounds the key bytes of a batch: a key is the previous
	// key's prefix plus its suffix, so a section can decode into far more
	// key bytes than it holds, and memory must not grow with that.
	batchKeys = 16 << 10
	// keySlack lets the last keys of a batch be copied sixteen bytes at
	// a time past batchKeys.
	keySlack = 64
)

// errBatchReader: batches keep slices of the reader's bytes, which a
// reader of an io.Reader overwrites block by block.
var errBatchReader = errors.New("state: snapshot stream: ReadBatch needs a reader of bytes (NewStreamReaderBytes)")

// ReadBatch decodes the next entries of the current group into b, replacing
// what b held: up to cap(b.Entries) of them (BatchEntries when that is 0),
// fewer when their keys pass a few KiB or the group ends. It returns
// more=false at the group's end, as Read does, with the entries decoded
// before it; on an error, b holds the entries decoded before the bad one.
// The entries, their order checks and the errors are exactly Read's, one
// call at a time; Read and ReadBatch may be mixed. Bytes readers only.
func (r *StreamReader) ReadBatch(b *Batch) (more bool, err error) {
	if cap(b.Entries) == 0 {
		b.Entries = make([]Entry, 0, BatchEntries)
	}
	if cap(b.keys) == 0 {
		b.keys = make([]byte, 0, batchKeys+keySlack)
	}
	if r.r != nil {
		b.Entries = b.Entries[:0]
		return false, errBatchReader
	}
	es, keys := b.Entries[:0], b.keys[:0]
	// prev is the previous entry's key: r.key, or its copy in keys once a
	// run of common entries decoded it (then r.key is brought up to date
	// before Read runs and when the batch ends). No closure refers to
	// these locals, so they can stay in registers.
	prev := r.key
	inKeys := false
	// Not cap(keys): a key that did not fit grew it.
	for len(es) < cap(es) && len(keys) < batchKeys {
		// The most common entry, as ReadFiltered's fast path decodes it
		// (same checks, same result), with the reader's fields in locals
		// for a run of entries.
		if r.inGroup && !r.restart && !r.first && r.end >= 0 {
			buf := r.buf[:r.end]
			p := r.pos
			state, group, ns := r.state, r.group, r.ns
			n0 := len(es)
			// The keys are written through ka, all of keys' memory: kn
			// bytes are used; prevAt is where prev starts in it, or -1.
			ka, kn := keys[:cap(keys)], len(keys)
			prevAt := -1
			for p+3 < len(buf) && buf[p] == flagKey && len(es) < cap(es) && kn < batchKeys {
				shared, n := int(buf[p+1]), int(buf[p+2])
				q := p + 3 + n
				if shared > len(prev) || n == 0 || n >= 0x80 || q >= len(buf) || shared < len(prev) && buf[p+3] <= prev[shared] {
					break
				}
				vl := int(buf[q])
				if vl >= 0x80 || vl >= len(buf)-q {
					break
				}
				m := kn + shared + n
				if shared <= 16 && n <= 16 && prevAt >= 0 && kn+32 <= len(ka) && len(buf)-(p+3) >= 16 {
					// Sixteen bytes of each, whatever their lengths:
					// moves of a fixed size, no branch on a length that
					// changes from key to key. The prefix is loaded
					// before it is stored (the source may overlap).
					lo, hi := binary.LittleEndian.Uint64(ka[prevAt:]), binary.LittleEndian.Uint64(ka[prevAt+8:])
					binary.LittleEndian.PutUint64(ka[kn:], lo)
					binary.LittleEndian.PutUint64(ka[kn+8:], hi)
					lo, hi = binary.LittleEndian.Uint64(buf[p+3:]), binary.LittleEndian.Uint64(buf[p+11:])
					binary.LittleEndian.PutUint64(ka[kn+shared:], lo)
					binary.LittleEndian.PutUint64(ka[kn+shared+8:], hi)
				} else if m <= len(ka) {
					copy(ka[kn:], prev[:shared])
					copy(ka[kn+shared:m], buf[p+3:q])
				} else {
					break
				}
				prev, prevAt, kn = ka[kn:m:m], kn, m
				var value []byte
				if vl > 0 {
					value = buf[q+1 : q+1+vl : q+1+vl]
				}
				// Field by field into place: an Entry built aside and
				// copied in is read back wider than it was written,
				// which stalls the copy.
				es = es[:len(es)+1]
				e := &es[len(es)-1]
				e.State, e.KeyGroup, e.Key, e.Namespace, e.UserKey, e.Value = state, group, prev, ns, nil, value
				p = q + 1 + vl
			}
			keys = ka[:kn]
			if d := len(es) - n0; d > 0 {
				r.pos = p
				r.n += int64(d)
				r.uk = nil
				inKeys = true
			}
			if len(es) == cap(es) || len(keys) >= batchKeys {
				break
			}
		}
		// Anything else: one entry by Read.
		if inKeys {
			r.key = append(r.key[:0], prev...)
			inKeys = false
		}
		var e Entry
		ok, err := r.Read(&e)
		if err != nil || !ok {
			b.Entries, b.keys = es, keys
			return ok, err
		}
		if e.Key != nil {
			k := len(keys)
			keys = append(keys, e.Key...)
			e.Key = keys[k:len(keys):len(keys)]
			prev, inKeys = e.Key, true
		} else {
			prev = r.key
		}
		es = append(es, e)
	}
	if inKeys {
		r.key = append(r.key[:0], prev...)
	}
	b.Entries, b.keys = es, keys
	return true, nil
}

// copySmall copies src (at most 16 bytes) into dst of the same length,
// with two overlapping 8-byte moves when it has 8 or more.
func copySmall(dst, src []byte) {
	switch n := len(src); {
	case n >= 8:
		a, z := binary.LittleEndian.Uint64(src), binary.LittleEndian.Uint64(src[n-8:])
		binary.LittleEndian.PutUint64(dst, a)
		binary.LittleEndian.PutUint64(dst[n-8:], z)
	default:
		for i := range src {
			dst[i] = src[i]
		}
	}
}
