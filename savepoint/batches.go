package savepoint

import (
	"iter"

	"streamdbg/state"
)

// batches.go is the bulk read of keyed entries (a restore, a whole-state
// read): each section is read and checked against its CRC32C while the
// one before is decoded (scanSections), and decoded into batches of
// entries (state.ReadBatch) in the consumer's goroutine, one batch reused.
//
// Decoding sections on every core, their batches handed to the consumer in
// order, was measured and dropped: decoded entries are four times the
// bytes of the section (an Entry is 120 bytes), and moving them from the
// core that made them to the consumer's cost more CPU than the decoding
// saved (BenchmarkSavepoint/entries on 2 cores: 33-44 ms of CPU and 37-50
// ms of wall per 1M entries in parallel, 23-26 ms and 23-26 ms decoded by
// the consumer, same load).

// decodeBatches decodes one checked section into bt, calling emit with
// every non-empty batch until emit returns false. The entries and errors
// are decodeSection's: the entries before a bad one come out, then the
// error.
func (s *Savepoint) decodeBatches(sr *state.StreamReader, f *KeyedFile, sec Section, b []byte, bt *state.Batch, emit func([]state.Entry) bool) (bool, error) {
	bad := func(err error) error { return s.sectionErr(f, sec, err) }
	if err := s.openSection(sr, f, sec, b); err != nil {
		return false, err
	}
	for {
		more, err := sr.ReadBatch(bt)
		if len(bt.Entries) > 0 && !emit(bt.Entries) {
			return false, nil
		}
		if err != nil {
			return false, bad(err)
		}
		if !more {
			break
		}
	}
	if err := s.closeSection(sr, f, sec, sr.GroupEntries()); err != nil {
		return false, err
	}
	return true, nil
}

// KeyedBatchesFor yields the keyed entries of one operator in the key
// groups of groups, as KeyedEntriesFor describes them, a batch (one key
// group's, of up to state.BatchEntries entries) at a time: what a restore
// of millions of entries reads. The next section is read and checked while
// a batch is consumed. A batch and the slices of its entries are only valid
// during its iteration step.
func (s *Savepoint) KeyedBatchesFor(operatorID string, groups state.KeyGroupRange) iter.Seq2[[]state.Entry, error] {
	return func(yield func([]state.Entry, error) bool) {
		var sr state.StreamReader
		bt := &state.Batch{}
		err := s.keyedSections(operatorID, groups, func(f *KeyedFile, secs []Section) (bool, error) {
			return s.scanSections(f, secs, true, func(sec Section, b []byte) (bool, error) {
				return s.decodeBatches(&sr, f, sec, b, bt, func(es []state.Entry) bool { return yield(es, nil) })
			})
		})
		if err != nil {
			yield(nil, err)
		}
	}
}
