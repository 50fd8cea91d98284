package savepoint

import (
	"fmt"
	"iter"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"

	"streamdbg/state"
)

// batches.go is the bulk read of keyed entries (a restore, a whole-state
// read): sections are read, checked and decoded into batches of entries
// (state.ReadBatch) on as many goroutines as there are cores, one section
// per unit of work, and the batches come out in section order. A unit's
// batches go through a channel of unitAhead, and at most maxAhead units per
// worker are claimed and not yet consumed, so memory stays bounded however
// many entries a section decodes into.

// unitAhead is how many decoded batches of one section wait for the
// consumer before its worker waits: most of a section of a few hundred
// KiB, so that the worker of the next section is not held up by the
// consumer of this one (with a few, the workers took turns instead of
// running together). Batches are made when needed, so small sections
// cost a few.
const unitAhead = 32

// batchSectionsAhead bounds the sections per worker decoded (or being
// decoded) ahead of the consumer.
const batchSectionsAhead = 4

// batchUnit is one section of one subtask's keyed file.
type batchUnit struct {
	file *KeyedFile
	sec  Section
}

// batchOut is what a worker made of a unit: its batches, then (once the
// channel is closed) why it stopped, and the section buffer they point
// into, to reuse once they are consumed.
type batchOut struct {
	batches chan *state.Batch
	err     error
	buf     []byte
}

// batchUnits lists the sections of an operator in groups, in the order
// KeyedEntriesFor yields them.
func (s *Savepoint) batchUnits(operatorID string, groups state.KeyGroupRange) []batchUnit {
	op, ok := s.byID[operatorID]
	if !ok || groups.Len() == 0 {
		return nil
	}
	var units []batchUnit
	for _, sub := range op.meta.Subtasks {
		if sub.Keyed == nil || sub.KeyGroups.End < groups.Start || sub.KeyGroups.Start > groups.End {
			continue
		}
		lo, _ := slices.BinarySearchFunc(sub.Keyed.Sections, groups.Start, func(s Section, kg int) int { return s.KeyGroup - kg })
		hi, _ := slices.BinarySearchFunc(sub.Keyed.Sections, groups.End+1, func(s Section, kg int) int { return s.KeyGroup - kg })
		for _, sec := range sub.Keyed.Sections[lo:hi] {
			units = append(units, batchUnit{file: sub.Keyed, sec: sec})
		}
	}
	return units
}

// decodeBatches decodes one checked section into batches, calling emit
// with each non-empty one (and the batch to decode the next into) until
// emit returns nil. The entries and errors are decodeSection's: the
// entries before a bad one come out, then the error.
func (s *Savepoint) decodeBatches(sr *state.StreamReader, f *KeyedFile, sec Section, b []byte, bt *state.Batch, emit func(*state.Batch) *state.Batch) (bool, error) {
	bad := func(err error) error {
		return fmt.Errorf("savepoint: %s: key group %d: %w", s.fs.PathJoin(s.dir, f.Name), sec.KeyGroup, err)
	}
	sr.ResetBytes(b, sec.Offset)
	kg, ok, err := sr.NextKeyGroup()
	if err != nil {
		return false, bad(err)
	}
	if !ok || kg != sec.KeyGroup {
		return false, bad(fmt.Errorf("section holds key group %d: %w", kg, state.ErrCorrupt))
	}
	if err := s.checkGroupKind(sr, sec); err != nil {
		return false, bad(err)
	}
	for {
		more, err := sr.ReadBatch(bt)
		if len(bt.Entries) > 0 {
			if bt = emit(bt); bt == nil {
				return false, nil
			}
		}
		if err != nil {
			return false, bad(err)
		}
		if !more {
			break
		}
	}
	if n := sr.GroupEntries(); !sr.Done() || n != sec.Entries {
		return false, bad(fmt.Errorf("offset %d: %d entries, _metadata says %d, or bytes after them: %w", sr.Offset(), n, sec.Entries, state.ErrCorrupt))
	}
	return true, nil
}

// KeyedBatchesFor yields the entries KeyedEntriesFor yields, in the same
// order and with the same errors, a batch (one key group's, of up to
// state.BatchEntries entries) at a time: what a restore of millions of
// entries reads. The sections are decoded on every core while the consumer
// works. A batch and the slices of its entries are only valid during its
// iteration step.
func (s *Savepoint) KeyedBatchesFor(operatorID string, groups state.KeyGroupRange) iter.Seq2[[]state.Entry, error] {
	return func(yield func([]state.Entry, error) bool) {
		units := s.batchUnits(operatorID, groups)
		if workers := min(goruntime.GOMAXPROCS(0), len(units)); workers > 1 {
			s.batchesParallel(units, workers, yield)
			return
		}
		// One section (a point read) or one core: no goroutine per
		// section, the next section read while this one is decoded.
		var sr state.StreamReader
		bt := &state.Batch{}
		for len(units) > 0 {
			f := units[0].file
			n := 1
			for n < len(units) && units[n].file == f {
				n++
			}
			secs := make([]Section, n)
			for i := range secs {
				secs[i] = units[i].sec
			}
			units = units[n:]
			more, err := s.scanSections(f, secs, true, func(sec Section, b []byte) (bool, error) {
				return s.decodeBatches(&sr, f, sec, b, bt, func(bt *state.Batch) *state.Batch {
					if !yield(bt.Entries, nil) {
						return nil
					}
					return bt
				})
			})
			if err != nil {
				yield(nil, err)
				return
			}
			if !more {
				return
			}
		}
	}
}

// batchesParallel yields the batches of units in order, decoding them on
// workers goroutines.
func (s *Savepoint) batchesParallel(units []batchUnit, workers int, yield func([]state.Entry, error) bool) {
	outs := make([]batchOut, len(units))
	for i := range outs {
		outs[i].batches = make(chan *state.Batch, unitAhead)
	}
	var next atomic.Int64 // the next unit to claim
	// tokens bound the units claimed and not yet consumed: a few per
	// worker, so that on a busy machine a worker whose thread is not
	// scheduled for a while does not hold the others up for long.
	tokens := make(chan struct{}, workers*batchSectionsAhead)
	for range cap(tokens) {
		tokens <- struct{}{}
	}
	// Batches and section buffers the consumer is done with. Each is at
	// most what can be in flight, so a put never blocks.
	freeBatches := make(chan *state.Batch, cap(tokens)*(unitAhead+1)+1)
	freeBufs := make(chan []byte, cap(tokens)+1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r *sectionReader
			defer func() {
				if r != nil {
					r.close()
				}
			}()
			var sr state.StreamReader
			// cur is the batch the worker decodes into next.
			var cur *state.Batch
			getBatch := func() *state.Batch {
				select {
				case bt := <-freeBatches:
					return bt
				default:
					return &state.Batch{}
				}
			}
			for {
				select {
				case <-stop:
					return
				case <-tokens:
				}
				i := int(next.Add(1) - 1)
				if i >= len(units) {
					return
				}
				u, out := units[i], &outs[i]
				if r == nil || r.name != u.file.Name {
					if r != nil {
						r.close()
					}
					r = &sectionReader{s: s, name: u.file.Name}
				}
				var dst []byte
				select {
				case dst = <-freeBufs:
				default:
				}
				err := r.open()
				var b []byte
				if err == nil {
					b, err = r.readInto(dst, u.sec.Offset, u.sec.Size, u.sec.CRC32C, section{kg: u.sec.KeyGroup})
				}
				if b == nil {
					b = dst
				}
				out.buf = b
				stopped := false
				if err == nil {
					if cur == nil {
						cur = getBatch()
					}
					_, err = s.decodeBatches(&sr, u.file, u.sec, b, cur, func(bt *state.Batch) *state.Batch {
						select {
						case out.batches <- bt:
							cur = getBatch()
							return cur
						case <-stop:
							stopped = true
							return nil
						}
					})
				}
				if stopped {
					return
				}
				out.err = err
				close(out.batches)
			}
		}()
	}
	// INVARIANT: the workers have returned before this function does: they
	// hold no file open and touch no batch after.
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for i := range outs {
		out := &outs[i]
		for bt := range out.batches {
			if !yield(bt.Entries, nil) {
				return
			}
			select {
			case freeBatches <- bt:
			default:
			}
		}
		if out.err != nil {
			yield(nil, out.err)
			return
		}
		if out.buf != nil {
			select {
			case freeBufs <- out.buf:
			default:
			}
			out.buf = nil
		}
		tokens <- struct{}{}
	}
}

// KeyedEntriesFor yields the keyed entries of one operator in the key groups
// of groups, from every old subtask whose range overlaps them: a restore at
// any parallelism reads its range with it. Key groups come in increasing
// order, entries in Entry order. The slices of an entry are only valid
// during its iteration step. An operator the savepoint does not hold yields
// nothing. It is KeyedBatchesFor one entry at a time.
func (s *Savepoint) KeyedEntriesFor(operatorID string, groups state.KeyGroupRange) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		for es, err := range s.KeyedBatchesFor(operatorID, groups) {
			if err != nil {
				yield(state.Entry{}, err)
				return
			}
			for i := range es {
				if !yield(es[i], nil) {
					return
				}
			}
		}
	}
}
