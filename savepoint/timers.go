package savepoint

import (
	"iter"

	"streamdbg/state"
)

// TimerStateReader is implemented by catalogs that read the timers of one
// timer state without reading the others (*Savepoint, Flink's savepoints):
// an operator may keep several timer states of one domain (Flink's process
// table functions do).
type TimerStateReader interface {
	TimersOfState(scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error]
}

// TimersOfState streams the timers of cat's timer state stateName: the
// state's own where cat is a TimerStateReader, else the timers of the
// operator whose StateName is stateName.
func TimersOfState(cat state.Catalog, scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error] {
	if r, ok := cat.(TimerStateReader); ok {
		return r.TimersOfState(scan, stateName)
	}
	return func(yield func(state.TimerRow, error) bool) {
		for t, err := range cat.Timers(scan) {
			if err == nil && t.StateName != stateName {
				continue
			}
			if !yield(t, err) {
				return
			}
		}
	}
}
