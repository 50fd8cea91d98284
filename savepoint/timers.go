package savepoint

import (
	"iter"

	"streamdbg/state"
)

// TimerStateReader is implemented by catalogs that read the timers of one
// timer state (*Savepoint, Flink's savepoints): an operator may keep
// several timer states of one domain (Flink's process table functions do),
// which a state.TimerRow does not tell apart.
type TimerStateReader interface {
	TimersOfState(scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error]
}

// TimersOfState streams the timers of cat's timer state stateName: the
// state's own where cat is a TimerStateReader, else (a live job: one timer
// state per domain) the timers of the state's domain.
func TimersOfState(cat state.Catalog, scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error] {
	if r, ok := cat.(TimerStateReader); ok {
		return r.TimersOfState(scan, stateName)
	}
	dom := state.TimerDomain(stateName)
	return func(yield func(state.TimerRow, error) bool) {
		for t, err := range cat.Timers(scan) {
			if err == nil && t.Domain != dom {
				continue
			}
			if !yield(t, err) {
				return
			}
		}
	}
}
