// Package tui is the terminal debugger: a Bubble Tea v2 program over a
// runtime/session.Session (the debug screen) or a state.Catalog (the
// savepoint browser).
//
// It must never import a state backend package, and it reaches the runtime
// only through runtime/session (read-only views of the executor included).
//
// Invariants:
//   - The session is not safe for concurrent use. While a command runs in
//     the background (a tea.Cmd goroutine), the UI does not call the
//     session: it renders the snapshot taken at the last stop and the
//     session.Progress counters.
//   - View renders only what fits: tables hold one page of rows, read from
//     the catalog iterator in Update, never in View, whatever the state size.
package tui
