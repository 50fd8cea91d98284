// Package pebblestate is the pebble keyed state backend: the keyed state of
// one operator subtask in an embedded LSM (github.com/cockroachdb/pebble/v2),
// the role RocksDB plays in Flink. It implements state.KeyedBackend exactly
// as heapstate does; the state/statetest suite runs against both.
//
// Key layout. Every state (and every timer queue) gets a 2-byte id when it
// is registered or restored; ids are local to one backend and never leave
// it (snapshots name states). Keys are
//
//	[state id:2][key group:2][esc(key)][esc(namespace)][user key]
//
// so one key group of one state is one contiguous range. esc escapes 0x00 as
// 0x00 0xff and terminates with 0x00 0x01: it is unambiguous like a length
// prefix, but it also keeps byte order, so a range read comes out ordered by
// (key, namespace, user key) exactly as state.CompareEntries wants. Entries
// visits states by name and streams each range: no buffering, no sorting,
// memory independent of state size. The user key is last and needs no
// escaping: map entries put their encoded map key there.
//
// Values are the StateDesc codecs' encodings, as in a snapshot, so Restore
// writes entries under their state id as they come, before any codec is
// known, and Register only checks StateMeta.Compatible.
//
// Map state stores each map entry as its own key (Flink's RocksDB backend
// does the same): MapGet/MapPut touch one entry, MapRange is a prefix scan.
//
// List state is one key per list whose value is the concatenation of the
// elements, each [uvarint length][encoding], with a concatenating merge
// operator (listMerger; pebble.DefaultMerger concatenates too but is
// quadratic in the number of operands on reads) — Flink's RocksDB backend
// uses RocksDB's string-append operator the same way. ListAppend is a blind
// Merge: it never reads the list, and merging namespaces merges one whole
// list value onto another. Per-element keys were the alternative; they need
// a seek to find the next position on every append, and snapshots would
// still renumber positions, so they buy nothing here.
//
// Timers live in pebble too, twice: the entry key
// [id][key group][esc key][esc ns][timestamp], which deduplicates and which
// snapshots read in Entry order, and the order key
// [order id][timestamp][key group][esc key][esc ns], which gives firing
// order with the deterministic tie-break. The earliest order keys are cached
// in memory (as Flink caches the head of its RocksDB timer queues); pebble
// stays the source of truth and of snapshots.
//
// Reads and writes go through a table of pending writes (writes.go): the
// newest write of each key, committed to the DB in one batch when it
// passes commitThreshold, before iterators and at marks; after a commit it
// keeps the values as a cache of the keys written last. The WAL is off and
// Open refuses an existing store: state is only ever rebuilt from a
// snapshot. The logger is silent (pebble's would write over the TUI).
//
// Invariants:
//   - A state's key group is the range [id][kg] .. [id][kg+1], ordered as
//     Entry order; nothing else is stored under an id.
//   - A list value is always a sequence of length-prefixed elements, so
//     concatenation is append.
//   - Every live timer has both of its keys, and the in-memory head holds
//     the smallest order keys (see timerQueue).
//
// It must never: write a key outside its KeyGroups; keep a pebble value
// slice past its closer or iterator step (codecs copy what they decode);
// use range deletions on the hot path (tombstones in the memtable would slow
// every read); write the DB around the table of pending writes (Restore
// empties it); or log to stdout/stderr.
//
// A Backend is not safe for concurrent use; the runtime is single-threaded.
package pebblestate
