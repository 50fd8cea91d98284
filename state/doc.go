// Package state is the state model shared by every part of streamdbg: typed
// descriptors and codecs, key groups, the keyed and operator backend
// interfaces, the backend-independent entry model that snapshots, savepoints
// and queries are built on, and the StateMeta that makes state readable
// without the job's code.
//
// It must never import another streamdbg package: everything else depends on
// it, never the reverse.
//
// Invariants:
//   - A key's key group is a pure function of its encoded bytes and the max
//     parallelism (KeyGroupFor); savepoints depend on it never changing.
//   - Entries (Entry) are ordered by key group, then state name, then key,
//     namespace and user key, all compared as bytes. Every backend produces
//     them in that order; every snapshot stream relies on it.
//   - Encoded keys and values are opaque bytes to backends; only codecs
//     interpret them.
package state
