// Package diff compares the state of two catalogs — two savepoints (ours,
// Apache Flink's, or one of each) or live state and a savepoint — operator
// by operator and state by state: the entries added, removed and changed,
// with their old and new values, and a summary per state.
//
// How it reads, from cheapest to dearest:
//   - Two of our savepoints with the same max parallelism: the raw entries of
//     both are merged in snapshot-stream order (key group, state, key,
//     namespace, user key); bytes are compared, and only differing entries
//     are decoded.
//   - Two catalogs that place keys in key groups alike (both Flink's, or ours
//     and live state) with the same max parallelism: decoded rows are read in
//     key-group order on both sides and compared one key group at a time.
//   - Otherwise (ours against Flink's, or a changed max parallelism, where the
//     same key lies in different key groups): rows are spilled into hash
//     buckets on disk and compared one bucket at a time.
//
// Memory is bounded by one key group (or one bucket) of one state on each
// side, never by the size of the savepoints. Operator state (lists and
// broadcast maps, small by design) is compared in memory.
//
// It must never report "no differences" for what it could not read: a state
// that fails to read, an operator whose state a reader does not support, are
// listed on the Result and make it incomplete.
//
// Operators are matched by operator id (the hash of the uid, alike in ours
// and Flink's), then by uid or name.
package diff
