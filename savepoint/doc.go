// Package savepoint writes and reads streamdbg's own savepoints: a directory
// that holds a job's keyed and operator state, readable without the job's
// code, restorable at any parallelism up to the max parallelism.
//
// Layout of a savepoint directory:
//
//	_metadata                JSON (see Metadata), indented, fields in a fixed order
//	<operator id>-<n>.keyed  keyed state of subtask n, one section per key group
//	<operator id>-<n>.opstate  operator state of subtask n, one section
//
// A keyed file is the concatenation of the groups of state's snapshot stream
// (state.StreamWriter), one per non-empty key group in key-group order, with
// no end tag; _metadata lists each group as a section: key group, offset,
// size, CRC32C and entry count. In format 2 (written since; format 1 is still
// read) every group is an indexed group (state.NewIndexedStreamWriter):
// blocks of about 4 KiB that decode alone, then a block index listing each
// block's first state and key, size, entry count and CRC32C; the section in
// _metadata also gives the index's size and CRC32C. A scan that wants some
// keys or one state of a large section reads the index and the blocks that
// can hold them only (lookup.go). An operator-state file is one operator
// stream (state.AppendOperatorEntries) with its size, CRC32C and count in
// _metadata. _metadata also holds the format name and version, the job's
// name and fingerprint, the checkpoint id, the creation time, the source
// positions, every operator's uid, name, parallelism, max parallelism and
// subtask key-group ranges, and the StateMeta table with entry counts and
// payload bytes (state.Entry.Size) per state.
//
// Invariants:
//   - Every byte of a state file belongs to exactly one section listed in
//     _metadata, so any flipped byte fails some section's checksum, and a
//     file of another size than recorded fails Open.
//   - A directory named as the target exists only once complete: files are
//     written into a sibling temporary directory, synced with it, then the
//     directory is renamed and its parent synced. _metadata is written last.
//   - Two writes of the same Snapshot give byte-identical directories:
//     operators are ordered by id, states by name, sources by name and
//     partition, and the creation time is the one given.
//   - Readers never trust the files: _metadata is bounded and validated
//     (names are plain names inside the directory, sections ordered and
//     covering their file, sizes bounded), every section read is checked
//     against its CRC32C before it is decoded, and decoding checks every
//     length against the bytes left. Errors name the file and the key group
//     or offset; corruption is never a panic and never wrong data.
//   - A point lookup (one key group) reads one section of one file, or in
//     format 2 that section's index and the blocks that can hold the key,
//     each checked against its own CRC32C before it is decoded.
//
// This package never modifies a savepoint once written, and never imports
// runtime: the runtime hands over a Snapshot and restores through
// KeyedBatchesFor (KeyedEntriesFor one entry at a time) and
// OperatorEntriesFor. KeyedBatchesFor reads and checks the next section
// while the consumer takes the batches of this one (batches.go). Checks against a job (missing,
// new, changed states, max parallelism) are the runtime's.
package savepoint
