package rocksdb

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
)

// A sequential scan loads its data blocks a few batches ahead on other
// goroutines: one read of a batch's bytes, then every block's checksum
// verified, decompressed and parsed, while the iterator decodes and merges
// the entries of the batches before it. The iterator still walks its own
// index and checks every handle as before; a batch only supplies the bytes
// of blocks it would read anyway. Whatever a batch could not load (a read
// error, a checksum mismatch, a handle that does not match) is read again
// the ordinary way, which reports it exactly as without batches.
//
// INVARIANT: a batch holds only blocks the iterator will read next: the
// index entries after the last one scheduled, up to the iterator's upper
// bound (the block whose index key reaches the bound is the last) and the
// end of the current index partition, contiguous in the file. Reading
// ahead starts only after three block loads since the last positioning, so
// a point lookup never reads ahead.
//
// INVARIANT: a slot is written by at most one loader at a time, and is
// refilled only when it is neither queued nor being served and at least two
// blocks have been loaded since it served its last one: a value stays valid
// while its iterator loads two more blocks (see gen).
//
// A loader never blocks: it loads its batch and exits, so an iterator
// dropped mid-scan leaves no goroutine behind. A batch is loaded by
// whoever claims it first: its loader, or the iterator when it needs the
// batch before any loader has started on it (the other cores are busy):
// the iterator then loads it itself, as fast as one goroutine can, instead
// of waiting for a goroutine to be scheduled and its blocks to move over
// from another core's cache.
//
// INVARIANT: the buffers of all slots of the process hold about
// prefetchMemory bytes at most: a batch is launched only while the budget
// is not spent (a loader may overshoot it by one batch), and the buffers
// of an iterator dropped are given back when the garbage collector frees
// them.

const (
	prefetchAhead  = 2 // batches loading ahead of the one being served
	prefetchSlots  = prefetchAhead + 2
	prefetchMin    = 64 << 10         // the first batch after a positioning
	prefetchMax    = readaheadMax     // batches grow to this many bytes
	prefetchDecMax = 16 * prefetchMax // a window of decompressed blocks, at most (16:1)
	prefetchBlocks = 256              // blocks per batch at most
	prefetchMemory = 64 << 20
)

// prefetchBudget is what the slots of the process may still allocate.
var prefetchBudget atomic.Int64

func init() { prefetchBudget.Store(prefetchMemory) }

// prefetchAcct counts the bytes one prefetch's slots hold.
type prefetchAcct struct{ n atomic.Int64 }

func (a *prefetchAcct) hold(n int) {
	a.n.Add(int64(n))
	prefetchBudget.Add(-int64(n))
}

type prefetchBlock struct {
	h   blockHandle
	b   block
	err error
}

type prefetchSlot struct {
	handles []blockHandle
	blocks  []prefetchBlock // set by the loader
	raw     []byte
	dec     []byte // the decompressed blocks, one after the other
	acct    *prefetchAcct
	t       *Table        // the table of the handles
	claim   atomic.Bool   // set by whoever loads the batch (a loader or the iterator)
	wait    chan struct{} // closed when the batch is loaded; nil before the first
	busy    bool          // queued or being served
	served  uint64        // prefetch.loads when it served its last block
}

// prefetch is the reading ahead of the tables of one merge input (a level,
// or one L0 file): its slots outlive each table's iterator, so a scan over
// many files reuses the same buffers.
type prefetch struct {
	slots    [prefetchSlots]prefetchSlot
	cur      *prefetchSlot // being served
	pos      int           // next block of cur
	queue    []*prefetchSlot
	ahead    blockIter // index walker at the last handle scheduled
	aheadOK  bool
	lastOff  uint64 // offset of the last handle scheduled
	window   int
	seqLoads int    // data blocks loaded since the last positioning
	loads    uint64 // data blocks loaded, ever
	acct     *prefetchAcct
}

// reset stops reading ahead (a new positioning). Loaders still running
// finish into their slots, which are waited for before reuse.
func (p *prefetch) reset() {
	if p.cur != nil {
		p.cur.busy = false
		p.cur = nil
	}
	for _, sl := range p.queue {
		sl.busy = false
	}
	p.queue = p.queue[:0]
	p.pos = 0
	p.aheadOK = false
	p.seqLoads = 0
}

// release ends reading ahead for a scan that has ended: batches no loader
// has started are dropped, loaders running are waited for (they never
// block), and the slots' buffers go to the spare buffers of the process,
// for the next scans. No block of the slots is in use: the scan's Key and
// Value are no longer valid.
func (p *prefetch) release() {
	p.reset()
	for i := range p.slots {
		sl := &p.slots[i]
		if sl.wait != nil {
			if sl.claim.CompareAndSwap(false, true) {
				close(sl.wait) // not started: nothing to wait for
			}
			<-sl.wait
		}
		clear(sl.blocks)
		sl.blocks = sl.blocks[:0]
		for _, b := range []struct {
			buf  *[]byte
			pool *sync.Pool
		}{{&sl.raw, &spareRaw}, {&sl.dec, &spareDec}} {
			if cap(*b.buf) > 0 {
				sl.acct.hold(-cap(*b.buf))
				buf := (*b.buf)[:0]
				b.pool.Put(&buf)
				*b.buf = nil
			}
		}
	}
}

// spareRaw and spareDec hold the read and decompression buffers of the
// slots of scans that ended (*[]byte), for the slots of later scans: a
// scan after a scan allocates no new buffers, so the collector runs less
// often during scans. They are not counted in prefetchBudget: they belong
// to no slot, and the collector frees them when they stay unused.
var spareRaw, spareDec sync.Pool

// spareBuf returns a spare buffer of at least n bytes, or nil.
func spareBuf(pool *sync.Pool, n int) []byte {
	b, ok := pool.Get().(*[]byte)
	if !ok || cap(*b) < n {
		return nil // a smaller one is left to the collector
	}
	return (*b)[:cap(*b)]
}

// loaded counts a block loaded the ordinary way.
func (p *prefetch) loaded() {
	p.loads++
	p.seqLoads++
}

// prefetched returns the block at h if the batches hold it, moving to the
// next batch (and launching more) when the current one is used up.
func (it *tableIter) prefetched(h blockHandle) (block, bool) {
	p := it.pf
	if p == nil {
		return block{}, false
	}
	for {
		if c := p.cur; c != nil {
			if p.pos < len(c.blocks) {
				pb := &c.blocks[p.pos]
				if pb.h != h || pb.err != nil {
					p.reset()
					return block{}, false
				}
				p.pos++
				p.loads++
				p.seqLoads++
				c.served = p.loads
				return pb.b, true
			}
			c.busy = false
			p.cur = nil
			if p.pos < len(c.handles) {
				// The loader stopped early (an error): read the rest the
				// ordinary way.
				p.reset()
				return block{}, false
			}
		}
		if len(p.queue) == 0 {
			return block{}, false
		}
		next := p.queue[0]
		if next.claim.CompareAndSwap(false, true) {
			next.t.loadBatch(next) // no loader has started on it
		}
		<-next.wait
		p.cur, p.pos = next, 0
		p.queue = append(p.queue[:0], p.queue[1:]...)
		it.launch()
	}
}

// startPrefetch is called after a data block was read the ordinary way:
// from the third load since the last positioning on, it starts reading
// ahead from the index entry of that block.
func (it *tableIter) startPrefetch() {
	p := it.pf
	if p == nil || p.seqLoads < 3 || len(p.queue) > 0 || p.cur != nil || noPrefetch {
		return
	}
	ix := it.idx()
	p.ahead = *ix
	p.ahead.key = append(p.ahead.key[:0:0], ix.key...)
	p.aheadOK = ix.err == nil
	p.lastOff = ix.handle.offset
	p.window = min(prefetchMin, prefetchMax)
	it.launch()
}

// launch starts loaders for the next batches, while slots are free.
func (it *tableIter) launch() {
	p := it.pf
	if p.acct == nil {
		p.acct = new(prefetchAcct)
		runtime.AddCleanup(p, func(a *prefetchAcct) { prefetchBudget.Add(a.n.Load()) }, p.acct)
	}
	for p.aheadOK && len(p.queue) < prefetchAhead && prefetchBudget.Load() > 0 {
		var sl *prefetchSlot
		for i := range p.slots {
			if s := &p.slots[i]; !s.busy && p.loads >= s.served+2 {
				sl = s
				break
			}
		}
		if sl == nil {
			return // a slot frees up when the next batch is taken
		}
		if sl.wait != nil {
			<-sl.wait // the loader of an abandoned batch may still be writing
		}
		if !it.schedule(sl) {
			return
		}
		sl.busy = true
		sl.acct = p.acct
		sl.t = it.t
		sl.blocks = sl.blocks[:0]
		sl.wait = make(chan struct{})
		sl.claim.Store(false)
		p.queue = append(p.queue, sl)
		go sl.run()
	}
}

// schedule walks the index on from the last handle scheduled and fills the
// slot's handles with one window's worth of contiguous blocks.
func (it *tableIter) schedule(sl *prefetchSlot) bool {
	p := it.pf
	sl.handles = sl.handles[:0]
	size := 0
	var end uint64
	for len(sl.handles) < prefetchBlocks {
		if len(sl.handles) > 0 && size+int(min(p.ahead.handle.size, maxBlockSize))+blockTrailerLen > p.window {
			break // the next block, likely of the same size, would not fit
		}
		if it.pastUpper(&p.ahead) || !p.ahead.next() {
			p.aheadOK = false
			break
		}
		h := p.ahead.handle
		if h.offset <= p.lastOff || h.size > maxBlockSize || h.offset > uint64(it.t.size) || h.size+blockTrailerLen > uint64(it.t.size)-h.offset ||
			len(sl.handles) > 0 && h.offset != end {
			// A bad handle (the iterator reports it when it gets there),
			// or a gap between blocks, which RocksDB does not write:
			// the rest is read the ordinary way.
			p.aheadOK = false
			break
		}
		sl.handles = append(sl.handles, h)
		p.lastOff = h.offset
		end = h.offset + h.size + blockTrailerLen
		size += int(h.size) + blockTrailerLen
	}
	if p.ahead.err != nil {
		p.aheadOK = false
	}
	p.window = min(p.window*2, prefetchMax)
	return len(sl.handles) > 0
}

// run is a loader: it loads the slot's batch unless the iterator (or, for
// a slot refilled since, another loader) claimed it first.
func (sl *prefetchSlot) run() {
	if sl.claim.CompareAndSwap(false, true) {
		sl.t.loadBatch(sl)
	}
}

// loadBatch reads the blocks of a slot's handles (contiguous) with one read
// and verifies, decompresses and parses each. It runs on a loader's
// goroutine or the iterator's, for whoever claimed the slot, and touches
// only the slot and the table's immutable fields.
func (t *Table) loadBatch(sl *prefetchSlot) {
	defer close(sl.wait)
	hs := sl.handles
	start := hs[0].offset
	last := hs[len(hs)-1]
	n := int(last.offset + last.size + blockTrailerLen - start)
	// The window grows to prefetchMax, and never past the table's size.
	window := int(min(int64(prefetchMax), t.size))
	if cap(sl.raw) < n {
		buf := spareBuf(&spareRaw, n)
		if buf == nil {
			buf = make([]byte, max(n, window)) // allocate once for the whole window
		}
		sl.acct.hold(cap(buf) - cap(sl.raw))
		sl.raw = buf
	}
	raw := sl.raw[:n]
	if m, err := t.f.ReadAt(raw, int64(start)); err != nil && !(err == io.EOF && m == n) {
		return // no blocks: the iterator reads them itself
	}
	// One buffer for the decompressed blocks, sized from their headers
	// (a header that lies gets the block its own buffer, or its error).
	need := 0
	for _, h := range hs {
		b := raw[h.offset-start : h.offset-start+h.size+blockTrailerLen]
		need += decompressedLen(b[h.size], b[:h.size])
	}
	if cap(sl.dec) < need {
		buf := spareBuf(&spareDec, need)
		if buf == nil {
			// Sized for a full window of blocks like these, with some
			// room, but not past prefetchDecMax: blocks that say they
			// decompress to far more than their size (highly compressible
			// data, or a header that lies) get buffers of their own
			// size, batch by batch.
			buf = make([]byte, max(need, min(int(int64(need)*int64(window)/int64(n)), prefetchDecMax))*9/8)
		}
		sl.acct.hold(cap(buf) - cap(sl.dec))
		sl.dec = buf
	}
	free := sl.dec[:cap(sl.dec)]
	for _, h := range hs {
		b := raw[h.offset-start : h.offset-start+h.size+blockTrailerLen]
		var dst []byte
		if m := decompressedLen(b[h.size], b[:h.size]); m <= len(free) {
			dst, free = free[:0:m], free[m:]
		}
		blk, err := t.decodeBlock(h, "data", b, &dst)
		sl.blocks = append(sl.blocks, prefetchBlock{h: h, b: blk, err: err})
		if err != nil {
			return
		}
	}
}

// decompressedLen is the size a block of compression type typ says it
// decompresses to (0 when it is not compressed or says nothing usable).
func decompressedLen(typ byte, b []byte) int {
	var n int
	switch typ {
	case compressionNone:
		return 0
	case compressionSnappy:
		m, err := s2.DecodedLen(b)
		if err != nil {
			return 0
		}
		n = m
	default:
		m, k := uvarint32(b)
		if k <= 0 {
			return 0
		}
		n = int(m)
	}
	if n < 0 || n > decompressLimit(len(b)) {
		return 0
	}
	return n
}

// noPrefetch turns reading ahead off (tests compare both ways).
var noPrefetch bool
