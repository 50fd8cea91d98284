// Package session is the debugger core: it loads a job with its input and
// options and drives it with Next, StepInto, Continue, Back and the time
// commands; it keeps breakpoints, watches and in-memory checkpoints, takes
// and restores savepoints, and answers queries on live state. The TUI, the
// headless CLI and Go tests use only this package to reach the runtime (as
// delve's terminal uses only its service layer).
//
// It must never import tui. One command table (Commands) drives the TUI's
// command bar, its key help and the headless script commands.
//
// Invariants:
//   - Every Stop says why it stopped and what changed.
//   - Back gives the state of the original pass byte for byte: it restores
//     the nearest checkpoint at or before the target and replays the source
//     events and the time commands recorded since, deterministically.
package session
