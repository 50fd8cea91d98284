//go:build race

package query

// raceEnabled: the race detector's instrumentation moves values to the
// heap, so allocation bounds hold only without it.
const raceEnabled = true
