package rocksdb

import "bytes"

// Table magic numbers (table/block_based/block_based_table_builder.cc and
// the plain and cuckoo tables, which this reader names but does not read).
const (
	magicBlockBased       = 0x88e241b785f4cff7
	magicLegacyBlockBased = 0xdb4775248b80fb57
	magicPlain            = 0x8242229663bf9564
	magicLegacyPlain      = 0x4f3418eb7a8f13b8
	magicCuckoo           = 0x926789d0c5f17873
)

const (
	footerLen       = 53 // format_version >= 1
	legacyFooterLen = 48 // format_version 0
	blockTrailerLen = 5  // compression type + checksum
)

var extendedMagic = []byte{0x3e, 0x00, 0x7a, 0x00}

// footer is the fixed-size end of a block-based table (table/format.cc).
type footer struct {
	formatVersion uint32
	checksum      byte
	metaindex     blockHandle
	index         blockHandle // zero in format_version 6: it is in the metaindex
	baseContext   uint32      // format_version 6: mixed into every block checksum
}

// readFooter decodes the footer of a table of the given size; tail holds
// the last bytes of the file (at most footerLen), ending at size.
func readFooter(file string, size int64, tail []byte) (footer, error) {
	var f footer
	if len(tail) < legacyFooterLen {
		return f, corruptf(file, 0, "file of %d bytes is too short to be an SST file", size)
	}
	magicAt := size - 8
	magic := le64(tail[len(tail)-8:])
	switch magic {
	case magicBlockBased:
	case magicLegacyBlockBased:
		b := tail[len(tail)-legacyFooterLen:]
		f.checksum = checksumCRC32C
		var n1, n2 int
		f.metaindex, n1 = decodeHandle(b)
		if n1 > 0 {
			f.index, n2 = decodeHandle(b[n1:])
		}
		if n1 <= 0 || n2 <= 0 {
			return f, corruptf(file, size-legacyFooterLen, "bad block handle in the footer")
		}
		return f, nil
	case magicPlain, magicLegacyPlain:
		return f, unsupportedf(file, magicAt, "plain table format (only block-based tables are read)")
	case magicCuckoo:
		return f, unsupportedf(file, magicAt, "cuckoo table format (only block-based tables are read)")
	default:
		return f, corruptf(file, magicAt, "not an SST file (magic %#016x)", magic)
	}
	if len(tail) < footerLen {
		return f, corruptf(file, 0, "file of %d bytes is too short to be an SST file", size)
	}
	b := tail[len(tail)-footerLen:]
	start := size - footerLen
	f.formatVersion = le32(b[footerLen-12:])
	if f.formatVersion < 1 || f.formatVersion > 7 {
		return f, corruptf(file, size-12, "format_version %d (1 to 7 are known)", f.formatVersion)
	}
	f.checksum = b[0]
	if f.checksum > checksumXXH3 {
		return f, corruptf(file, start, "checksum type %d", f.checksum)
	}
	if f.formatVersion >= 6 {
		if !bytes.Equal(b[1:5], extendedMagic) {
			return f, corruptf(file, start+1, "bad extended magic %x of a format_version %d footer", b[1:5], f.formatVersion)
		}
		stored := le32(b[5:9])
		f.baseContext = le32(b[9:13])
		if f.checksum != checksumNone {
			var c [footerLen]byte
			copy(c[:], b)
			clear(c[5:9])
			want := wholeChecksum(f.checksum, c[:]) + contextModifier(f.baseContext, uint64(start))
			if want != stored {
				return f, corruptf(file, start, "footer checksum mismatch (stored %#x, computed %#x)", stored, want)
			}
		}
		metaSize := uint64(le32(b[13:17]))
		end := uint64(start) - blockTrailerLen
		if metaSize > end {
			return f, corruptf(file, start+13, "metaindex of %d bytes does not fit before the footer", metaSize)
		}
		f.metaindex = blockHandle{end - metaSize, metaSize}
		if le64(b[33:41]) != 0 {
			return f, unsupportedf(file, start+33, "footer uses a future feature (reserved bytes set)")
		}
		return f, nil
	}
	var n1, n2 int
	f.metaindex, n1 = decodeHandle(b[1:])
	if n1 > 0 {
		f.index, n2 = decodeHandle(b[1+n1:])
	}
	if n1 <= 0 || n2 <= 0 || 1+n1+n2 > 41 {
		return f, corruptf(file, start+1, "bad block handle in the footer")
	}
	return f, nil
}
