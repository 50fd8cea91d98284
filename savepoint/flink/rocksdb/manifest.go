package rocksdb

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// The MANIFEST is a log (db/log_format.h): 32 KiB blocks of records, each
// with a 7-byte header (masked crc32c of type and payload, u16 length,
// type) or an 11-byte one for recyclable records (plus a log number). A
// logical record is one FULL record or FIRST, MIDDLE…, LAST fragments.
const (
	logBlockSize     = 32768
	logHeaderLen     = 7
	logRecyclableLen = 11

	recZero           = 0
	recFull           = 1
	recFirst          = 2
	recMiddle         = 3
	recLast           = 4
	recRecyclableFull = 5
	recRecyclableLast = 8
	recSetCompression = 9
	recTimestampSize  = 10
	recRecyclableTS   = 11

	maxManifestSize = 1 << 30
)

// logRecord is one logical record and the file offset where it starts.
type logRecord struct {
	data []byte
	off  int64
}

// readLog splits a log file into its logical records. A record cut short
// (a truncated file) or with a bad checksum is an error: a MANIFEST missing
// an edit would silently drop files.
func readLog(name string, b []byte) ([]logRecord, error) {
	var out []logRecord
	var cur []byte
	curOff := int64(-1)
	for off := 0; off < len(b); {
		left := logBlockSize - off%logBlockSize
		if left < logHeaderLen {
			off += left // trailer padding of a block
			continue
		}
		if len(b)-off < logHeaderLen {
			if allZero(b[off:]) {
				break
			}
			return nil, corruptf(name, int64(off), "log record header cut short")
		}
		h := b[off : off+logHeaderLen]
		length := int(h[4]) | int(h[5])<<8
		typ := h[6]
		hdr := logHeaderLen
		if typ >= recRecyclableFull && typ <= recRecyclableLast || typ == recRecyclableTS {
			hdr = logRecyclableLen
		}
		if typ == recZero && length == 0 {
			// Preallocated, never written space.
			if allZero(b[off:min(len(b), off+left)]) {
				off += left
				continue
			}
			return nil, corruptf(name, int64(off), "zero-type log record followed by data")
		}
		if hdr > left || length > left-hdr || off+hdr+length > len(b) {
			return nil, corruptf(name, int64(off), "log record of %d bytes runs past its block or the file", length)
		}
		payload := b[off+hdr : off+hdr+length]
		want := le32(h[:4])
		c := crc32.Update(0, castagnoli, b[off+6:off+hdr])
		c = crc32.Update(c, castagnoli, payload)
		if maskCRC(c) != want {
			return nil, corruptf(name, int64(off), "log record checksum mismatch")
		}
		switch typ {
		case recFull, recRecyclableFull:
			if curOff >= 0 {
				return nil, corruptf(name, int64(off), "full log record inside a fragmented one")
			}
			out = append(out, logRecord{data: payload, off: int64(off)})
		case recFirst, recFirst + 4:
			if curOff >= 0 {
				return nil, corruptf(name, int64(off), "first fragment inside a fragmented record")
			}
			cur, curOff = append([]byte(nil), payload...), int64(off)
		case recMiddle, recMiddle + 4:
			if curOff < 0 {
				return nil, corruptf(name, int64(off), "middle fragment without a first one")
			}
			cur = append(cur, payload...)
		case recLast, recRecyclableLast:
			if curOff < 0 {
				return nil, corruptf(name, int64(off), "last fragment without a first one")
			}
			out = append(out, logRecord{data: append(cur, payload...), off: curOff})
			cur, curOff = nil, -1
		case recTimestampSize, recRecyclableTS:
			// Timestamp sizes of write-ahead logs: no meaning in a MANIFEST.
		case recSetCompression:
			return nil, unsupportedf(name, int64(off), "compressed log records")
		default:
			return nil, corruptf(name, int64(off), "log record type %d", typ)
		}
		off += hdr + length
	}
	if curOff >= 0 {
		return nil, corruptf(name, curOff, "fragmented log record cut short at the end of the file")
	}
	return out, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Tags of a serialized VersionEdit (db/version_edit.h).
const (
	tagComparator         = 1
	tagLogNumber          = 2
	tagNextFileNumber     = 3
	tagLastSequence       = 4
	tagCompactCursor      = 5
	tagDeletedFile        = 6
	tagNewFile            = 7
	tagPrevLogNumber      = 9
	tagMinLogNumberToKeep = 10
	tagNewFile2           = 100
	tagNewFile3           = 102
	tagNewFile4           = 103
	tagColumnFamily       = 200
	tagColumnFamilyAdd    = 201
	tagColumnFamilyDrop   = 202
	tagMaxColumnFamily    = 203
	tagInAtomicGroup      = 300
	tagBlobFileAddition   = 400
	tagBlobFileGarbage    = 401
	tagSafeIgnoreMask     = 1 << 13

	// Custom fields of kNewFile4.
	customTerminate       = 1
	customPathID          = 65
	customNonSafeIgnoreMk = 1 << 6

	numLevels = 64 // far more than RocksDB's 7: levels come from the file
)

// FileMeta is one live table file of a column family.
type FileMeta struct {
	Number            uint64
	Level             int
	Size              uint64
	Smallest, Largest []byte // internal keys
	SmallestSeq       uint64
	LargestSeq        uint64
	// EditOffset is where in the MANIFEST the file was added.
	EditOffset int64
}

// TableName is the file name RocksDB gives table number n.
func TableName(n uint64) string { return fmt.Sprintf("%06d.sst", n) }

// ColumnFamily is one column family of the live version.
type ColumnFamily struct {
	ID         uint32
	Name       string
	Comparator string
	// Levels[i] are the files of level i: level 0 newest first, the other
	// levels by smallest key.
	Levels [][]*FileMeta
}

// Version is the live state a MANIFEST describes.
type Version struct {
	Manifest       string
	ColumnFamilies []*ColumnFamily // by id
	LastSequence   uint64
	BlobFiles      int
}

// ReadManifest replays the version edits of a MANIFEST.
func ReadManifest(name string, b []byte) (*Version, error) {
	recs, err := readLog(name, b)
	if err != nil {
		return nil, err
	}
	v := &Version{Manifest: name}
	cfs := map[uint32]*ColumnFamily{0: {ID: 0, Name: "default"}}
	live := map[uint32]map[uint64]*FileMeta{0: {}}
	atomicLeft := -1
	for _, r := range recs {
		e := &editDecoder{name: name, base: r.off, b: r.data}
		cfID := uint32(0)
		var adds []*FileMeta
		type del struct {
			level  int
			number uint64
		}
		var dels []del
		var addName string
		var isAdd, isDrop bool
		var comparator string
		for e.more() && e.err == nil {
			tagAt := e.pos()
			tag := e.u32()
			switch tag {
			case tagComparator:
				comparator = string(e.slice())
			case tagLogNumber, tagNextFileNumber, tagPrevLogNumber, tagMinLogNumberToKeep:
				e.u64()
			case tagLastSequence:
				v.LastSequence = max(v.LastSequence, e.u64())
			case tagCompactCursor:
				e.u32()
				e.slice()
			case tagDeletedFile:
				lvl := e.level()
				dels = append(dels, del{lvl, e.u64()})
			case tagNewFile, tagNewFile2, tagNewFile3, tagNewFile4:
				f := &FileMeta{Level: e.level(), Number: e.u64(), EditOffset: tagAt}
				if tag == tagNewFile3 {
					if e.u32() != 0 && e.err == nil {
						e.failUnsupported(tagAt, "table file in another db_path")
					}
				}
				f.Size = e.u64()
				f.Smallest = bytes.Clone(e.ikey())
				f.Largest = bytes.Clone(e.ikey())
				if tag != tagNewFile {
					f.SmallestSeq, f.LargestSeq = e.u64(), e.u64()
				}
				if tag == tagNewFile4 {
					e.customFields(tagAt)
				}
				adds = append(adds, f)
			case tagColumnFamily:
				cfID = e.u32()
			case tagColumnFamilyAdd:
				addName, isAdd = string(e.slice()), true
			case tagColumnFamilyDrop:
				isDrop = true
			case tagMaxColumnFamily:
				e.u32()
			case tagInAtomicGroup:
				n := int(e.u32())
				if atomicLeft < 0 {
					atomicLeft = n
				}
				if n != atomicLeft {
					e.fail(tagAt, "atomic group counts %d, %d remaining expected", n, atomicLeft)
				}
			case tagBlobFileAddition:
				e.u64()
				e.u64()
				e.u64()
				e.slice()
				e.slice()
				e.customFields(tagAt)
				v.BlobFiles++
			case tagBlobFileGarbage:
				e.u64()
				e.u64()
				e.u64()
				e.customFields(tagAt)
			default:
				if tag&tagSafeIgnoreMask != 0 {
					e.slice()
					continue
				}
				e.fail(tagAt, "unknown version edit tag %d", tag)
			}
		}
		if e.err != nil {
			return nil, e.err
		}
		if atomicLeft >= 0 {
			atomicLeft--
		}
		switch {
		case isAdd:
			if _, ok := cfs[cfID]; ok && cfID != 0 {
				return nil, corruptf(name, r.off, "column family %d added twice", cfID)
			}
			cfs[cfID] = &ColumnFamily{ID: cfID, Name: addName, Comparator: comparator}
			live[cfID] = map[uint64]*FileMeta{}
		case isDrop:
			delete(cfs, cfID)
			delete(live, cfID)
			continue
		}
		cf, ok := cfs[cfID]
		if !ok {
			if len(adds) > 0 || len(dels) > 0 {
				return nil, corruptf(name, r.off, "version edit for unknown column family %d", cfID)
			}
			continue
		}
		if comparator != "" {
			cf.Comparator = comparator
		}
		files := live[cfID]
		for _, d := range dels {
			f, ok := files[d.number]
			if !ok || f.Level != d.level {
				return nil, corruptf(name, r.off, "deletes file %s at level %d, which is not live there", TableName(d.number), d.level)
			}
			delete(files, d.number)
		}
		for _, f := range adds {
			files[f.Number] = f
		}
	}
	if atomicLeft > 0 {
		return nil, corruptf(name, int64(len(b)), "atomic group of version edits cut short")
	}
	for id, cf := range cfs {
		if cf.Comparator != "" && cf.Comparator != bytewiseComparator {
			return nil, unsupportedf(name, 0, "column family %q uses comparator %q (only %s is read)", cf.Name, cf.Comparator, bytewiseComparator)
		}
		var levels [][]*FileMeta
		for _, f := range live[id] {
			for len(levels) <= f.Level {
				levels = append(levels, nil)
			}
			levels[f.Level] = append(levels[f.Level], f)
		}
		for l, fs := range levels {
			if l == 0 {
				slices.SortFunc(fs, func(a, b *FileMeta) int {
					if a.LargestSeq != b.LargestSeq {
						return cmpU64(b.LargestSeq, a.LargestSeq)
					}
					return cmpU64(b.Number, a.Number)
				})
				continue
			}
			slices.SortFunc(fs, func(a, b *FileMeta) int { return compareInternal(a.Smallest, b.Smallest) })
		}
		cf.Levels = levels
		v.ColumnFamilies = append(v.ColumnFamilies, cf)
	}
	slices.SortFunc(v.ColumnFamilies, func(a, b *ColumnFamily) int { return cmpU64(uint64(a.ID), uint64(b.ID)) })
	return v, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareInternal orders internal keys: user key ascending, then trailer
// (sequence number, type) descending.
func compareInternal(a, b []byte) int {
	if c := bytes.Compare(userKey(a), userKey(b)); c != 0 {
		return c
	}
	return cmpU64(trailer(b), trailer(a))
}

// editDecoder reads the fields of one version edit with sticky errors.
type editDecoder struct {
	name string
	base int64
	b    []byte
	off  int
	err  error
}

func (e *editDecoder) more() bool { return e.off < len(e.b) }
func (e *editDecoder) pos() int64 { return e.base + int64(e.off) }
func (e *editDecoder) fail(at int64, f string, args ...any) {
	if e.err == nil {
		e.err = corruptf(e.name, at, "version edit: "+f, args...)
	}
	e.off = len(e.b)
}
func (e *editDecoder) failUnsupported(at int64, f string, args ...any) {
	if e.err == nil {
		e.err = unsupportedf(e.name, at, "version edit: "+f, args...)
	}
	e.off = len(e.b)
}

func (e *editDecoder) u32() uint32 {
	if e.err != nil {
		return 0
	}
	v, n := uvarint32(e.b[e.off:])
	if n <= 0 {
		e.fail(e.pos(), "bad varint32")
		return 0
	}
	e.off += n
	return v
}

func (e *editDecoder) u64() uint64 {
	if e.err != nil {
		return 0
	}
	v, n := uvarint64(e.b[e.off:])
	if n <= 0 {
		e.fail(e.pos(), "bad varint64")
		return 0
	}
	e.off += n
	return v
}

func (e *editDecoder) slice() []byte {
	if e.err != nil {
		return nil
	}
	s, n := lengthPrefixed(e.b[e.off:])
	if n <= 0 {
		e.fail(e.pos(), "bad length-prefixed field")
		return nil
	}
	e.off += n
	return s
}

func (e *editDecoder) level() int {
	at := e.pos()
	l := e.u32()
	if e.err == nil && l >= numLevels {
		e.fail(at, "level %d", l)
	}
	return int(l)
}

func (e *editDecoder) ikey() []byte {
	at := e.pos()
	k := e.slice()
	if e.err == nil && len(k) < 8 {
		e.fail(at, "internal key of %d bytes", len(k))
	}
	return k
}

// customFields skips kNewFile4's (and blob records') tagged fields. A field
// whose tag has the non-safe-to-ignore bit set changes how the file must be
// read: refused, except the path id (0 = the db directory).
func (e *editDecoder) customFields(at int64) {
	for e.err == nil {
		if !e.more() {
			e.fail(at, "new-file record without its terminating tag")
			return
		}
		tag := e.u32()
		if tag == customTerminate {
			return
		}
		field := e.slice()
		if e.err != nil {
			return
		}
		if tag == customPathID {
			if len(field) != 1 || field[0] != 0 {
				e.failUnsupported(at, "table file in another db_path")
			}
			continue
		}
		if tag&customNonSafeIgnoreMk != 0 {
			e.failUnsupported(at, "new-file field %d that cannot be ignored", tag)
		}
	}
}

// ReadCurrent returns the MANIFEST name a CURRENT file points to.
func ReadCurrent(f File) (string, error) {
	if f.Size() > 4096 {
		return "", corruptf(f.Name(), 0, "CURRENT of %d bytes", f.Size())
	}
	b := make([]byte, f.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return "", &Error{File: f.Name(), Msg: err.Error(), Err: short(err)}
	}
	s, ok := bytes.CutSuffix(b, []byte("\n"))
	if !ok || !bytes.HasPrefix(s, []byte("MANIFEST-")) || bytes.ContainsAny(s, "/\\\n\x00") {
		return "", corruptf(f.Name(), 0, "CURRENT does not name a MANIFEST (%q)", b)
	}
	return string(s), nil
}
