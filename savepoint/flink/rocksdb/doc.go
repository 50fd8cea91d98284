// Package rocksdb reads RocksDB instances in pure Go, read-only: the
// block-based table (SST) files of format_version 1 to 6 as RocksDB and
// Flink's FRocksDB write them, the MANIFEST that names the live files of
// each column family, and the merge of all levels into the live value of
// every key. It knows nothing of Flink: savepoint/flink maps Flink's states
// to column families and decodes keys and values.
//
// Tables: footer (legacy, format 1-5, and format 6 with its footer checksum
// and context-dependent block checksums), metaindex, properties (column
// family name, index layout, global sequence number of ingested files),
// index blocks (binary search, with first keys, partitioned; handles
// delta-encoded from format 4), data blocks with restart points, prefix
// compression and the optional hash index, range deletion blocks. Block
// checksums are verified (crc32c, xxHash, xxHash64, XXH3 as the footer
// says); blocks are decompressed (Snappy, LZ4/LZ4HC, ZSTD, Zlib, BZip2).
// Plain and cuckoo tables, blob files, dictionary compression, user-defined
// timestamps and wide columns are refused with ErrUnsupported.
//
// It must never write, never trust a length, offset or count from a file,
// and never panic on any input.
//
// Invariants:
//   - Errors start with "rocksdb:" and name the file and offset; they wrap
//     ErrCorrupt (bytes that break the format, a checksum mismatch, a table
//     shorter than the MANIFEST says), ErrUnsupported, or the file
//     system's error (fs.ErrNotExist for a missing file).
//   - Allocation is bounded by the file: a block is read only when it lies
//     inside its file, and decompresses to at most decompressLimit of its
//     size (FuzzBlock, FuzzTable, FuzzManifest).
//   - The newest version of a key wins by sequence number (the global one
//     of an ingested file), whatever file or level holds it; a deletion or
//     a range deletion with a higher sequence number hides older versions;
//     merge operands newer than the newest value or deletion are merged
//     onto it, oldest first.
//   - Iterators read only the files whose key range overlaps their bounds,
//     only the index entries from their lower bound on, and no block past
//     their upper bound; point lookups read exact blocks. A scan reads its
//     first three blocks exactly, then the next ones in batches loaded
//     (read, verified, decompressed) on other goroutines a few batches
//     ahead (prefetch.go), or by the iterator itself when no goroutine has
//     started on the batch it needs, within a process-wide memory budget;
//     a scan that ends hands its buffers on to the next scans.
//   - Key and Value of an iterator are valid until its next move (after a
//     move that ends the scan, not at all).
package rocksdb
