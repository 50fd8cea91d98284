package export

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Column chunks are written here, not through the library's row API
// (about 200 ns a row in dynamic values, levels and column buffers): each
// column appends its PLAIN values and definition levels to its page as the
// rows come, a full page is Snappy-compressed behind its header, and a row
// group writes its columns' pages one chunk after the other. The library
// still says what the file's metadata is: the schema elements and column
// orders are those it writes for the same schema (an empty file written
// once per schema), and page headers and the footer are its Thrift
// structures, encoded by its Thrift encoder.
//
// INVARIANT: a page holds the levels and values of the same rows for every
// value it counts; a chunk's statistics are the exact minimum, maximum and
// null count of its values (left out where they cannot be exact: NaN, a
// byte array longer than maxStatBytes).
//
// Pages are data pages of version 1: definition levels (bit width 1, the
// RLE/bit-packed hybrid: one RLE run when a page is all NULL or all set,
// bit-packed otherwise) behind their 4-byte length, then the PLAIN values
// of the set rows; no repetition levels (flat schema).

const (
	pageBytes     = 512 << 10 // a page is cut once its values reach this size
	maxStatBytes  = 64        // byte arrays longer than this get no min/max
	maxPageValues = 1 << 20   // a page of NULLs is cut here
)

// colBuf is one column of the file being written.
type colBuf struct {
	phys format.Type
	name string

	// Dictionary encoding (INT32 columns: key_group and subtask, a few
	// values that repeat in long runs): the chunk's dictionary, and the
	// page's values as runs of dictionary indices.
	dict     bool
	dictVals []int32
	dictIdx  map[int32]int32
	runs     []dictRun

	// The page being filled.
	defs    []byte // 0 (NULL) or 1 per value, once the page has both (mixed)
	mixed   bool
	vals    []byte // PLAIN values of the set ones
	bits    int    // booleans: bits used in the last byte of vals
	n       int
	present int

	// The row group's chunk: encoded pages.
	chunk        chunkBuf
	uncompressed int64
	values       int64
	nulls        int64

	// Statistics of the chunk.
	seen       bool // a value was set
	noMinMax   bool
	minI, maxI int64
	minF, maxF float64
	minB, maxB []byte

	body, comp, page, scratch []byte
}

func (c *colBuf) null() {
	if !c.mixed && c.present > 0 {
		c.mix(1)
	}
	if c.mixed {
		c.defs = append(c.defs, 0)
	}
	c.n++
	c.nulls++
}

func (c *colBuf) set() {
	if !c.mixed && c.present < c.n {
		c.mix(0)
	}
	if c.mixed {
		c.defs = append(c.defs, 1)
	}
	c.n++
	c.present++
}

// mix starts keeping levels: the n values so far were all d.
func (c *colBuf) mix(d byte) {
	c.mixed = true
	c.defs = c.defs[:0]
	for range c.n {
		c.defs = append(c.defs, d)
	}
}

func (c *colBuf) int32(v int32) {
	c.set()
	c.statInt(int64(v))
	if !c.dict {
		c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(v))
		return
	}
	if k := len(c.runs) - 1; k >= 0 && c.dictVals[c.runs[k].idx] == v {
		c.runs[k].n++
		return
	}
	i, ok := c.dictIdx[v]
	if !ok {
		if c.dictIdx == nil {
			c.dictIdx = map[int32]int32{}
		}
		i = int32(len(c.dictVals))
		c.dictIdx[v] = i
		c.dictVals = append(c.dictVals, v)
	}
	c.runs = append(c.runs, dictRun{idx: i, n: 1})
}

// dictRun is n values of one dictionary index.
type dictRun struct{ idx, n int32 }

// dictWidth is the bit width of the chunk's dictionary indices (at least
// 1: some readers mishandle 0).
func (c *colBuf) dictWidth() int { return max(1, bits.Len32(uint32(len(c.dictVals)-1))) }

func (c *colBuf) int64(v int64) {
	c.set()
	c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(v))
	c.statInt(v)
}

func (c *colBuf) statInt(v int64) {
	if !c.seen {
		c.seen, c.minI, c.maxI = true, v, v
		return
	}
	c.minI, c.maxI = min(c.minI, v), max(c.maxI, v)
}

func (c *colBuf) double(v float64) {
	c.set()
	c.vals = binary.LittleEndian.AppendUint64(c.vals, math.Float64bits(v))
	switch {
	case math.IsNaN(v):
		c.noMinMax = true
	case !c.seen:
		c.seen, c.minF, c.maxF = true, v, v
	default:
		c.minF, c.maxF = min(c.minF, v), max(c.maxF, v)
	}
	c.seen = true
}

func (c *colBuf) boolean(v bool) {
	c.set()
	if c.bits == 0 {
		c.vals = append(c.vals, 0)
	}
	if v {
		c.vals[len(c.vals)-1] |= 1 << c.bits
	}
	c.bits = (c.bits + 1) & 7
	b := int64(0)
	if v {
		b = 1
	}
	c.statInt(b)
}

func (c *colBuf) bytes(b []byte) {
	c.set()
	c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(b)))
	c.vals = append(c.vals, b...)
	switch {
	case c.noMinMax:
	case len(b) > maxStatBytes:
		c.noMinMax = true
	case !c.seen:
		c.minB, c.maxB = append(c.minB[:0], b...), append(c.maxB[:0], b...)
	case bytes.Compare(b, c.minB) < 0:
		c.minB = append(c.minB[:0], b...)
	case bytes.Compare(b, c.maxB) > 0:
		c.maxB = append(c.maxB[:0], b...)
	}
	c.seen = true
}

// full reports whether the page should be cut.
func (c *colBuf) full() bool {
	return len(c.vals)+len(c.defs)+8*len(c.runs) >= pageBytes || c.n >= maxPageValues
}

// flushPage encodes the page into the chunk.
func (c *colBuf) flushPage() error {
	if c.n == 0 {
		return nil
	}
	body := append(c.body[:0], 0, 0, 0, 0)
	switch {
	case !c.mixed: // one RLE run of n ones or zeros
		body = binary.AppendUvarint(body, uint64(c.n)<<1)
		body = append(body, byte(min(c.present, 1)))
	default: // bit-packed, 8 values a byte, the last one padded
		groups := (c.n + 7) / 8
		body = binary.AppendUvarint(body, uint64(groups)<<1|1)
		for g := range groups {
			var x byte
			for i, d := range c.defs[g*8 : min(g*8+8, c.n)] {
				x |= d << i
			}
			body = append(body, x)
		}
	}
	binary.LittleEndian.PutUint32(body, uint32(len(body)-4))
	enc := format.Plain
	if c.dict && c.present > 0 {
		// RLE runs of indices behind their bit width (a page without
		// values stays PLAIN: there may be no dictionary).
		enc = format.RLEDictionary
		w := c.dictWidth()
		body = append(body, byte(w))
		for _, r := range c.runs {
			body = binary.AppendUvarint(body, uint64(r.n)<<1)
			for b := 0; b < (w+7)/8; b++ {
				body = append(body, byte(r.idx>>(8*b)))
			}
		}
	} else {
		body = append(body, c.vals...)
	}
	c.body = body
	h := format.PageHeader{
		Type: format.DataPage,
		DataPageHeader: thrift.New(format.DataPageHeader{
			NumValues:               int32(c.n),
			Encoding:                enc,
			DefinitionLevelEncoding: format.RLE,
			RepetitionLevelEncoding: format.RLE,
			Statistics:              format.Statistics{NullCount: int64(c.n - c.present)},
		}),
	}
	page, err := c.encodePage(&h, body)
	if err != nil {
		return err
	}
	c.chunk.write(page)
	c.values += int64(c.n)
	c.defs, c.vals, c.bits, c.n, c.present, c.mixed = c.defs[:0], c.vals[:0], 0, 0, 0, false
	c.runs = c.runs[:0]
	return nil
}

// encodePage compresses a page's body behind its header h (sizes set
// here). The result is valid until the next call.
func (c *colBuf) encodePage(h *format.PageHeader, body []byte) ([]byte, error) {
	// S2's encoder writes the Snappy block format (EncodeSnappy), faster
	// than golang/snappy's.
	if n := s2.MaxEncodedLen(len(body)); cap(c.comp) < n {
		c.comp = make([]byte, n)
	}
	c.comp = s2.EncodeSnappy(c.comp[:cap(c.comp)], body)
	h.UncompressedPageSize, h.CompressedPageSize = int32(len(body)), int32(len(c.comp))
	hb, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		return nil, err
	}
	c.uncompressed += int64(len(hb) + len(body))
	c.page = append(append(c.page[:0], hb...), c.comp...)
	return c.page, nil
}

// dictPage is the chunk's dictionary page (nil without a dictionary).
func (c *colBuf) dictPage() ([]byte, error) {
	if !c.dict || len(c.dictVals) == 0 {
		return nil, nil
	}
	body := c.body[:0]
	for _, v := range c.dictVals {
		body = binary.LittleEndian.AppendUint32(body, uint32(v))
	}
	c.body = body
	h := format.PageHeader{
		Type:                 format.DictionaryPage,
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(c.dictVals)), Encoding: format.Plain}),
	}
	return c.encodePage(&h, body)
}

// statistics are the chunk's, PLAIN-encoded as the format wants them.
func (c *colBuf) statistics() format.Statistics {
	s := format.Statistics{NullCount: c.nulls}
	if !c.seen || c.noMinMax {
		return s
	}
	switch c.phys {
	case format.Int32:
		s.MinValue = binary.LittleEndian.AppendUint32(nil, uint32(c.minI))
		s.MaxValue = binary.LittleEndian.AppendUint32(nil, uint32(c.maxI))
	case format.Int64:
		s.MinValue = binary.LittleEndian.AppendUint64(nil, uint64(c.minI))
		s.MaxValue = binary.LittleEndian.AppendUint64(nil, uint64(c.maxI))
	case format.Boolean:
		s.MinValue, s.MaxValue = []byte{byte(c.minI)}, []byte{byte(c.maxI)}
	case format.Double:
		// The format's rule for zeros: a minimum of zero is written -0, a
		// maximum of zero +0.
		lo, hi := c.minF, c.maxF
		if lo == 0 {
			lo = math.Copysign(0, -1)
		}
		if hi == 0 {
			hi = 0
		}
		s.MinValue = binary.LittleEndian.AppendUint64(nil, math.Float64bits(lo))
		s.MaxValue = binary.LittleEndian.AppendUint64(nil, math.Float64bits(hi))
	case format.ByteArray:
		s.MinValue, s.MaxValue = bytes.Clone(c.minB), bytes.Clone(c.maxB)
		if s.MinValue == nil {
			s.MinValue = []byte{}
		}
		if s.MaxValue == nil {
			s.MaxValue = []byte{}
		}
	}
	return s
}

var colBufs = sync.Pool{New: func() any { return new(colBuf) }}

// release empties the column and gives it back to colBufs, keeping its
// buffers.
func (c *colBuf) release() {
	c.resetChunk()
	*c = colBuf{defs: c.defs[:0], vals: c.vals[:0], chunk: c.chunk, minB: c.minB[:0], maxB: c.maxB[:0], body: c.body[:0], comp: c.comp[:0], scratch: c.scratch[:0],
		dictVals: c.dictVals[:0], dictIdx: c.dictIdx, runs: c.runs[:0]}
	colBufs.Put(c)
}

// resetChunk starts the next row group's chunk.
func (c *colBuf) resetChunk() {
	c.chunk.reset()
	c.dictVals = c.dictVals[:0]
	clear(c.dictIdx)
	c.uncompressed, c.values, c.nulls = 0, 0, 0
	c.seen, c.noMinMax = false, false
	c.minB, c.maxB = c.minB[:0], c.maxB[:0]
}

// fileTemplate is the metadata the library writes for a schema: its schema
// elements, column orders and format version.
func fileTemplate(s *parquet.Schema) (*format.FileMetaData, error) {
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, s, parquet.CreatedBy("streamdbg", "", ""))
	if err := w.Close(); err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	m := f.Metadata()
	if len(m.Schema) != len(s.Columns())+1 {
		return nil, fmt.Errorf("export: the library's schema has %d elements for %d columns", len(m.Schema), len(s.Columns()))
	}
	return m, nil
}

// chunkBuf holds a column chunk in blocks taken from a pool: a chunk grows
// without copying what it holds, and the blocks serve the next chunk.
type chunkBuf struct {
	blocks [][]byte
	n      int
}

const chunkBlock = 1 << 20

var chunkBlocks = sync.Pool{New: func() any { b := make([]byte, 0, chunkBlock); return &b }}

func (c *chunkBuf) write(b []byte) {
	c.n += len(b)
	for len(b) > 0 {
		if len(c.blocks) == 0 || len(c.blocks[len(c.blocks)-1]) == chunkBlock {
			c.blocks = append(c.blocks, (*chunkBlocks.Get().(*[]byte))[:0])
		}
		last := &c.blocks[len(c.blocks)-1]
		k := min(len(b), chunkBlock-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

func (c *chunkBuf) len() int { return c.n }

func (c *chunkBuf) writeTo(w interface{ Write([]byte) (int, error) }) {
	for _, b := range c.blocks {
		w.Write(b)
	}
}

// reset gives the blocks back to the pool.
func (c *chunkBuf) reset() {
	for i, b := range c.blocks {
		b = b[:0]
		chunkBlocks.Put(&b)
		c.blocks[i] = nil
	}
	c.blocks, c.n = c.blocks[:0], 0
}
