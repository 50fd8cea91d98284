//go:build race

package tui

// raceEnabled: under the race detector (10× slower) the random walk takes
// fewer keys; go test without -race takes the full walk.
const raceEnabled = true
