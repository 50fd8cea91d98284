package session

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"streamdbg/runtime"
)

// TestLogFoldMatchesLogWrite: a fold's writes go into the log through
// logFold, which must leave the log logWrite would, write by write: the
// same writes (position and history, in order) after every fold. Folds of
// random lengths, from shorter than the log's bound to many times it, are
// mixed with single writes (traced steps), back (truncate, which also
// empties the log when it reaches past it) and the log's array being
// dropped (nil).
func TestLogFoldMatchesLogWrite(t *testing.T) {
	defer func(l int) { historyLog = l }(historyLog)
	hes := make([]*histEntry, 7)
	for i := range hes {
		hes[i] = &histEntry{}
	}
	for _, bound := range []int{1, 2, 3, 7, 64} {
		t.Run(fmt.Sprint("log", bound), func(t *testing.T) {
			historyLog = bound
			r := rand.New(rand.NewPCG(15, uint64(bound)))
			var got, want history
			pos := int64(0)
			for step := range 400 {
				switch k := r.IntN(10); {
				case k < 6:
					n := r.IntN(5 * bound * (1 + r.IntN(3)))
					ws := make([]runtime.LightRec, n)
					slots := make([]foldSlot, n)
					for i := range ws {
						pos += int64(r.IntN(2))
						ws[i].Position = pos
						slots[i].he = hes[r.IntN(len(hes))]
						want.logWrite(ws[i].Position, slots[i].he)
					}
					got.logFold(ws, slots)
				case k < 8:
					pos++
					he := hes[r.IntN(len(hes))]
					want.logWrite(pos, he)
					got.logWrite(pos, he)
				case k < 9:
					back := pos - int64(r.IntN(3*bound+1))
					want.truncate(back)
					got.truncate(back)
				default:
					if r.IntN(4) == 0 {
						want.log, got.log = nil, nil
					}
				}
				if !slices.Equal(got.log, want.log) {
					t.Fatalf("step %d: log %v, want %v", step, got.log, want.log)
				}
				if len(got.log) > 2*bound {
					t.Fatalf("step %d: log holds %d writes, more than %d", step, len(got.log), 2*bound)
				}
				if tail := got.log[len(got.log):cap(got.log)]; slices.ContainsFunc(tail, func(l logged) bool { return l.e != nil }) {
					t.Fatalf("step %d: the log's array holds writes beyond it (kept alive)", step)
				}
			}
		})
	}
}
