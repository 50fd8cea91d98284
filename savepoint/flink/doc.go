// Package flink reads real Apache Flink savepoints and retained checkpoints
// (the `_metadata` file, format versions 2 to 7, and the state files it
// points to) and presents them through state.Catalog, the same catalog as
// streamdbg's own savepoints, so queries, `savepoint inspect` and the TUI
// browser work on them unchanged.
//
// What it reads: operators (id, name and uid where stored, parallelism, max
// parallelism); operator list, union and broadcast state; keyed state of
// canonical savepoints and of heap (native) checkpoints and savepoints,
// Snappy-compressed key groups and operator state included; timers (and
// the legacy timers of raw keyed state, legacytimers.go); the StateMeta of
// every state from its serializer snapshots. Values of Flink's common
// serializers are decoded into the shared dynamic values (see state.Hex,
// state.Row); so are Flink SQL's: RowData and the table runtime's
// serializers (rowdata.go, tableser.go, cep.go), whose LogicalTypes are read
// from Java serialization streams (javaser.go, logicaltype.go). A compiled
// SQL plan names operators and key fields (plan.go). RocksDB native
// savepoints and incremental checkpoints (SST files, read by the rocksdb
// subpackage; native.go) and RocksDB full snapshots are read too, and so
// are the changelog state backend's checkpoints: the materialized part (any
// of those handles) with the change log (in `_metadata` or in DSTL files,
// dstl.go) replayed over it one key group at a time (changelog.go,
// changelogindex.go, changelogapply.go); an operator's key serializer that
// such a checkpoint does not store can be named (SetKeyType). What
// cannot be read is listed: StateMeta.Status (gaps.go); the in-flight data
// of unaligned checkpoints on OperatorInfo.Unsupported.
//
// Decoding a value: readSnapshot (or readVersionedSnapshot) turns a
// serializer snapshot's bytes into a serializer; decodeWhole(s, file,
// offset, bytes) decodes one value that must fill its bytes (a serializer's
// decode reads one value from a decoder). serializerProblem says why a
// serializer's values cannot be decoded.
//
// It must never write into a savepoint (the one writer, Rewrite in
// rewrite.go, writes a changed copy of a canonical savepoint into a new
// directory: changed key groups encoded again with the state's own
// serializers, every other byte copied), never follow a path out of the savepoint
// directory (for the shared files of an incremental checkpoint and the
// DSTL files of a changelog checkpoint: out of the checkpoint's parent
// directory; they are looked up and opened through os.Root, regular files
// only, files.go), and never import a streamdbg package
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
//     UnknownSerializerError), whatever wraps them: the rocksdb package's
//     kinds carry ours too, a state file _metadata names and the directory
//     lacks is ErrCorrupt (and fs.ErrNotExist), and every StateMeta.Status
//     has its marked StateMeta.Cause, which query.UnreadableError unwraps.
//     Only the file system's own errors (EIO, EACCES) carry just their own
//     kind.
//   - A relative state file must resolve inside the savepoint directory; an
//     absolute one (a savepoint moved since it was written) is looked up by
//     its base name inside the directory.
//   - A serializer snapshot has no length prefix, so an unknown snapshot
//     class stops the reading of that one state file's header: the states
//     read before it stay readable, it and the states after it are listed
//     with a Status (the class), and every other file still opens.
//   - No silent gaps: every state that exists is in States, readable or
//     with a Status; scans yield no rows for a state with a Status and an
//     error when the scan names it or its operator.
//   - The Java serialization reader is bounded (depth, handles, lengths
//     against the bytes left) and interprets nothing by itself
//     (FuzzJavaSerialization, FuzzSerializerSnapshot, FuzzBinaryRow).
//   - Iterators stop reading as soon as the consumer stops; a KeyedScan with
//     KeyGroups reads only those key groups' sections.
package flink
