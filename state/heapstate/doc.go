// Package heapstate is the heap keyed state backend: the keyed state of one
// operator subtask kept as Go values in Go maps, one map per state per key
// group, as Flink's HashMapStateBackend.
//
// Layout. A state's entries live in the map of their key group, under the
// composite uvarint(len(key)) + key + namespace, which is injective: the
// length prefix tells where the key ends. A value table also finds its cells
// through one index for all its key groups, under the located key
// uvarint(key group - first key group) + composite (the same string as the
// composite the key group's map has them under): one map lookup that stays in
// the cache, not one map per key group. Value, reducing and aggregating
// state map the composite to a cell holding the boxed value (an int64 value
// state keeps the int64 itself in the cell, which ValueState[int64] reads and
// writes through state.Int64Table without boxing); list state to
// the []any of its elements; map state to a nested map from encoded user key
// to cell. Cells let Put overwrite an existing value without allocating a
// map key; lookups use m[string(b)] on a reused buffer, so the hot path
// (SetCurrentKey, Get, Put of a present key) allocates nothing but what
// boxing the value costs the caller. A Put right after a Get of the same key
// and namespace (read-modify-write: counters, reducing and aggregating Add)
// reuses the cell Get found instead of looking it up again.
//
// Restore keeps a state's entries as bytes until Register declares it with
// codecs (or Timers asks for the queue), then decodes them; a restored state
// that is never declared stays bytes and comes out of Entries and States
// unchanged, so a savepoint of a job that dropped a state still carries it.
//
// Timers are a binary heap ordered by (timestamp, key group, key, namespace)
// with a per-key-group set for deduplication and per-key-group snapshots.
//
// States counts entries and bytes by encoding every value: it costs a full
// scan, like a snapshot.
//
// It must never: hand out its internal slices for callers to keep (Entries
// reuses one buffer per step), or iterate a Go map where order reaches the
// caller (Entries, MapRange and States sort).
//
// A Backend is not safe for concurrent use; the runtime is single-threaded.
package heapstate
