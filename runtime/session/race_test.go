//go:build race

package session

// raceEnabled: under the race detector (10× slower) the single-goroutine
// history tests run fewer of their variants; go test without -race runs
// them all.
const raceEnabled = true
