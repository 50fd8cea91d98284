// Package tui is the terminal debugger: a Bubble Tea v2 program over a
// runtime/session.Session (the debug screen) or a session.Savepoint (the
// savepoint browser).
//
// It talks only to runtime/session, whose view values are plain copies,
// and to query for formatting and filters (as delve's terminal talks only
// to its service API): it imports no runtime, savepoint or state backend
// package (design_test.go checks it).
//
// The root model routes; the panes (plan, record, state, output, watches)
// and the overlays (help, details, query results, questions) are
// components with Update, View, SetSize and KeyMap, and ask the root for
// what needs the session with messages.
//
// Invariants:
//   - The session is not safe for concurrent use. While a command runs in
//     the background (a tea.Cmd goroutine), the UI does not call the
//     session: it renders the view taken at the last stop and the
//     session.Progress counters.
//   - View renders only what fits: tables hold one page of rows, read from
//     the state in Update, never in View, whatever the state size.
package tui
