// Package flink reads real Apache Flink savepoints and retained checkpoints
// (the `_metadata` file, format versions 3 to 6, and the state files it
// points to) and presents them through state.Catalog, the same catalog as
// streamdbg's own savepoints, so queries, `savepoint inspect` and the TUI
// browser work on them unchanged.
//
// What it reads: operators (id, name and uid where stored, parallelism, max
// parallelism); operator list, union and broadcast state; keyed state of
// canonical savepoints and of heap (native) checkpoints and savepoints,
// Snappy-compressed key groups included; timers; the StateMeta of every
// state from its serializer snapshots. Values of Flink's common serializers
// are decoded into the shared dynamic values (see state.Hex); values of an
// unknown serializer are shown as state.Hex, never guessed. RocksDB native
// savepoints and incremental checkpoints (SST files, read by the
// rocksdb subpackage; native.go) and RocksDB full snapshots are read too.
// Changelog state and the in-flight data of unaligned checkpoints are
// listed on OperatorInfo.Unsupported, not read.
//
// It must never write into a savepoint (the one writer, Rewrite in
// rewrite.go, writes a changed copy of a canonical savepoint into a new
// directory: changed key groups encoded again with the state's own
// serializers, every other byte copied), never follow a path out of the savepoint
// directory (for the shared files of an incremental checkpoint: out of the
// checkpoint's parent directory), and never import a streamdbg package
// other than state and its own rocksdb subpackage.
//
// Invariants:
//   - Open reads `_metadata` only. State files are read when their states
//     are listed (headers) or scanned, one section at a time: one key group,
//     one header, one operator state element or broadcast map.
//   - No length, count or offset from a file is trusted: every allocation is
//     bounded by the bytes actually left (decoder), and every section by
//     maxSection/maxKeyGroupSize. No input makes the reader panic
//     (FuzzMetadata, FuzzKeyedState, FuzzOperatorState).
//   - Errors start with "flink:" and name the file and offset; they wrap
//     ErrCorrupt or ErrUnsupported (an unknown serializer class is an
//     UnknownSerializerError).
//   - A relative state file must resolve inside the savepoint directory; an
//     absolute one (a savepoint moved since it was written) is looked up by
//     its base name inside the directory.
//   - A serializer snapshot has no length prefix, so an unknown snapshot
//     class stops the reading of that one state file's header: the file is
//     reported unreadable (with the class) and every other file still opens.
//   - Iterators stop reading as soon as the consumer stops; a KeyedScan with
//     KeyGroups reads only those key groups' sections.
package flink
