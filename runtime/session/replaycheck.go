package session

import (
	"fmt"
	"hash/fnv"

	"streamdbg/runtime"
)

// Back replays the job from a checkpoint and must give what the first run
// gave: that is how the runtime is built (DESIGN 3, determinism). A plain
// function that keeps state in a variable it captures (or in a global)
// breaks it, and back would silently show another past. With tracing on,
// the session keeps, per source position, a digest of what each operator
// emitted; an exact replay compares its own, and the first operator that
// emitted something else is named (ReplayError).

// emitDigest is what one operator subtask emitted at one position.
type emitDigest struct {
	operator string
	subtask  int
	sum      uint64
	records  int
}

// replayCheck holds the digests of the first run and of a replay.
type replayCheck struct {
	first map[int64][]emitDigest
	// replay is set during an exact replay.
	replay map[int64][]emitDigest
	newest int64
	// dropped is the newest position whose digests note may have dropped
	// for age: positions up to it replay unchecked. Back (forgetAfter)
	// lowers newest, never dropped: the digests are gone all the same.
	dropped int64
	// unchecked are ranges (from, to] of positions run without digests
	// (light runs): a replay there is not compared.
	unchecked [][2]int64
}

// skip marks the positions in (from, to] unchecked.
func (r *replayCheck) skip(from, to int64) {
	if to <= from {
		return
	}
	// Ranges older than the digests kept no longer matter (those
	// positions replay unchecked anyway).
	kept := r.unchecked[:0]
	for _, u := range r.unchecked {
		if u[1] > to-maxDigestPositions {
			kept = append(kept, u)
		}
	}
	r.unchecked = append(kept, [2]int64{from, to})
}

func (r *replayCheck) isUnchecked(pos int64) bool {
	for _, u := range r.unchecked {
		if pos > u[0] && pos <= u[1] {
			return true
		}
	}
	return false
}

// maxDigestPositions bounds the positions whose digests are kept (the
// most recent ones); an older position replays unchecked. A variable for
// tests only.
var maxDigestPositions int64 = 100_000

func (r *replayCheck) note(pos int64, e *runtime.TraceEvent) {
	m := &r.first
	if r.replay != nil {
		m = &r.replay
	}
	if *m == nil {
		*m = map[int64][]emitDigest{}
	}
	ds := (*m)[pos]
	i := len(ds) - 1
	for i >= 0 && (ds[i].operator != e.Operator || ds[i].subtask != e.Subtask) {
		i--
	}
	if i < 0 {
		ds = append(ds, emitDigest{operator: e.Operator, subtask: e.Subtask, sum: fnvOffset})
		i = len(ds) - 1
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%#v", ds[i].sum, e.Tag, e.Value)
	ds[i].sum = h.Sum64()
	ds[i].records++
	(*m)[pos] = ds
	if r.replay == nil && pos > r.newest {
		r.newest = pos
		if old := pos - maxDigestPositions; old >= 0 {
			delete(r.first, old)
			r.dropped = max(r.dropped, old)
			// A jump of newest (a light run in between) leaves older
			// positions that the line above never meets again: sweep
			// them once they are as many as the ones kept.
			if len(r.first) > 2*int(maxDigestPositions) {
				for p := range r.first {
					if p <= old {
						delete(r.first, p)
					}
				}
			}
		}
	}
}

const fnvOffset = 14695981039346656037

// forgetAfter drops the first run's digests after pos (a future that back
// or a restart undid).
func (r *replayCheck) forgetAfter(pos int64) {
	for p := range r.first {
		if p > pos {
			delete(r.first, p)
		}
	}
	r.newest = min(r.newest, pos)
	kept := r.unchecked[:0]
	for _, u := range r.unchecked {
		u[1] = min(u[1], pos)
		if u[1] > u[0] {
			kept = append(kept, u)
		}
	}
	r.unchecked = kept
}

// ReplayError is an exact replay (back) whose operator emitted other
// records than in the first run at the same source position.
type ReplayError struct {
	Position int64
	Operator string
	Subtask  int
	// First and Replayed are the numbers of records emitted each time.
	First, Replayed int
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("replaying record %d, operator %q (subtask %d) emitted other records than the first time (%d then, %d now): one of its functions keeps state outside the declared state (a variable a plain function captures, a global, a field), which back, savepoints and recovery do not bring back. Keep it in keyed state (state.Value, List, Map) or operator state",
		e.Position, e.Operator, e.Subtask, e.First, e.Replayed)
}

// compare ends a replay of the positions in (from, to]: the first
// position and operator whose digest differs from the first run's.
func (r *replayCheck) compare(from, to int64) error {
	replay := r.replay
	r.replay = nil
	for pos := max(from, r.dropped) + 1; pos <= to; pos++ {
		if r.isUnchecked(pos) {
			continue
		}
		first, ok := r.first[pos]
		if !ok && len(replay[pos]) > 0 && pos <= r.newest {
			d := replay[pos][0]
			return &ReplayError{Position: pos, Operator: d.operator, Subtask: d.subtask, Replayed: d.records}
		}
		if !ok {
			continue
		}
		got := replay[pos]
		for _, f := range first {
			var g emitDigest
			for _, x := range got {
				if x.operator == f.operator && x.subtask == f.subtask {
					g = x
				}
			}
			if g.sum != f.sum || g.records != f.records {
				return &ReplayError{Position: pos, Operator: f.operator, Subtask: f.subtask, First: f.records, Replayed: g.records}
			}
		}
		for _, g := range got {
			found := false
			for _, f := range first {
				found = found || f.operator == g.operator && f.subtask == g.subtask
			}
			if !found {
				return &ReplayError{Position: pos, Operator: g.operator, Subtask: g.subtask, Replayed: g.records}
			}
		}
	}
	return nil
}
