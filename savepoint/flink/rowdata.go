package flink

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"streamdbg/state"
)

// This file decodes Flink's binary table formats (flink-table-common's
// BinaryRowData, BinaryArrayData, BinaryMapData and the BinarySegmentUtils
// that read their fields), as RowDataSerializer, ArrayDataSerializer and
// MapDataSerializer write them.
//
// BinaryRowData: a header byte (the RowKind) and the null bits (bit i+8 is
// field i; LSB first in each byte) padded to 8-byte words, one 8-byte slot
// per field, then the variable-length part. Slots are little-endian (Flink
// writes them in the machine's order, and every Flink deployment is x86 or
// ARM little-endian). A slot holds a fixed-length value, or for
// variable-length values either the bytes themselves (at most 7: the top
// bit set, the length in the next 7 bits) or offset<<32|length relative to
// the start of the row.
//
// INVARIANT: every offset and length is checked against the enclosing
// bytes before use; nothing is allocated by a length that was not checked.

// rowKinds maps RowKind's byte value (RowKind.toByteValue) to the kind.
var rowKinds = [4]state.RowKind{state.Insert, state.UpdateBefore, state.UpdateAfter, state.Delete}

// DecimalData and TimestampData are compact (one long) up to these
// precisions.
const (
	maxCompactDecimal   = 18
	maxCompactTimestamp = 3
)

// rowLayout decodes the BinaryRowData of one row type.
type rowLayout struct {
	types    []*ltype
	names    []string
	schema   *state.RowSchema // names, shared by the rows decoded
	fields   []fieldCodec
	nullBits int // bytes of header and null bits
}

// fieldCodec decodes one field (or array element) of one type.
type fieldCodec struct {
	t      *ltype // DISTINCT types resolved to their source type
	root   typeRoot
	nested *rowLayout
	elem   *arrayLayout // ARRAY, MULTISET keys, MAP keys
	val    *arrayLayout // MAP values, MULTISET counts
	raw    serializer   // RAW: the inner serializer
}

type arrayLayout struct {
	codec fieldCodec
	size  int // bytes per element
}

// newRowLayout prepares the decoding of rows of these field types. sers
// are the field serializers of the RowDataSerializer's snapshot (nil for
// nested rows): RAW fields read their values with them.
func newRowLayout(types []*ltype, sers []serializer, names []string) (*rowLayout, error) {
	l := &rowLayout{types: types, nullBits: ((len(types) + 63 + 8) / 64) * 8}
	l.setNames(names)
	for i, t := range types {
		var s serializer
		if i < len(sers) {
			s = sers[i]
		}
		c, err := newFieldCodec(t, s, 0)
		if err != nil {
			return nil, err
		}
		l.fields = append(l.fields, c)
	}
	return l, nil
}

// setNames sets the field names of the rows decoded (nil: none).
func (l *rowLayout) setNames(names []string) {
	l.names, l.schema = names, nil
	if names != nil {
		l.schema = &state.RowSchema{Names: names}
	}
}

func newFieldCodec(t *ltype, s serializer, depth int) (fieldCodec, error) {
	if depth > maxNesting {
		return fieldCodec{}, fmt.Errorf("types nested too deep: %w", ErrCorrupt)
	}
	for t.root == rootDistinct && t.source != nil {
		t = t.source
	}
	c := fieldCodec{t: t, root: t.root}
	switch c.root {
	case rootRow, rootStructured:
		nested := make([]*ltype, len(t.fields))
		for i, f := range t.fields {
			nested[i] = f.typ
		}
		var sers []serializer
		if rs, ok := s.(*rowDataSer); ok && len(rs.layout.types) == len(nested) {
			sers = rs.fieldSers
		}
		l, err := newRowLayout(nested, sers, t.fieldNames())
		if err != nil {
			return fieldCodec{}, err
		}
		c.nested = l
	case rootArray:
		e, err := newArrayLayout(t.elem, elemSerOf(s), depth)
		if err != nil {
			return fieldCodec{}, err
		}
		c.elem = e
	case rootMultiset:
		e, err := newArrayLayout(t.elem, nil, depth)
		if err != nil {
			return fieldCodec{}, err
		}
		v, _ := newArrayLayout(&ltype{root: rootInteger, rootName: "INTEGER"}, nil, depth)
		c.elem, c.val = e, v
	case rootMap:
		var ks, vs serializer
		if ms, ok := s.(*mapDataSer); ok {
			ks, vs = ms.keySer, ms.valSer
		}
		k, err := newArrayLayout(t.key, ks, depth)
		if err != nil {
			return fieldCodec{}, err
		}
		v, err := newArrayLayout(t.val, vs, depth)
		if err != nil {
			return fieldCodec{}, err
		}
		c.elem, c.val = k, v
	case rootRaw:
		if rs, ok := s.(*rawValueDataSer); ok {
			c.raw = rs.inner
		} else {
			c.raw = t.rawSer
		}
		if c.raw == nil {
			name := t.rawSerName
			if name == "" {
				name = "unknown"
			}
			return fieldCodec{}, &UnknownSerializerError{Class: name + " (serializer of RAW('" + t.class + "'))"}
		}
	case rootTimestampTZ:
		return fieldCodec{}, fmt.Errorf("TIMESTAMP WITH TIME ZONE has no binary format: %w", ErrUnsupported)
	case rootUnknown, rootSymbol, rootDescriptor:
		return fieldCodec{}, fmt.Errorf("values of type %s: %w", t.rootName, ErrUnsupported)
	}
	return c, nil
}

func elemSerOf(s serializer) serializer {
	if as, ok := s.(*arrayDataSer); ok {
		return as.elemSer
	}
	return nil
}

func newArrayLayout(t *ltype, s serializer, depth int) (*arrayLayout, error) {
	c, err := newFieldCodec(t, s, depth+1)
	if err != nil {
		return nil, err
	}
	size := 8
	switch c.root {
	case rootBoolean, rootTinyint:
		size = 1
	case rootSmallint:
		size = 2
	case rootInteger, rootFloat, rootDate, rootTime, rootIntervalYearMonth:
		size = 4
	}
	return &arrayLayout{codec: c, size: size}, nil
}

// binErr is a format error inside binary table data.
func binErr(format string, args ...any) error {
	return fmt.Errorf("flink: binary row data: "+format+": %w", append(args, ErrCorrupt)...)
}

// decodeRow decodes the row of size bytes at base in seg.
func (l *rowLayout) decodeRow(seg []byte, base, size int, slab *rowSlab) (*state.Row, error) {
	if base < 0 || size < 0 || base > len(seg) || size > len(seg)-base {
		return nil, binErr("row of %d bytes at %d outside %d bytes", size, base, len(seg))
	}
	fixed := l.nullBits + 8*len(l.fields)
	if size < fixed {
		return nil, binErr("row of %d fields in %d bytes (needs %d)", len(l.fields), size, fixed)
	}
	kind := seg[base]
	if kind > 3 {
		return nil, binErr("row kind byte %d", kind)
	}
	row := slab.newRow(len(l.fields))
	row.Kind, row.Schema = rowKinds[kind], l.schema
	end := base + size
	for i := range l.fields {
		bit := i + 8
		if seg[base+bit>>3]&(1<<(bit&7)) != 0 {
			continue // NULL
		}
		slot := base + l.nullBits + 8*i
		v, err := l.fields[i].decodeSlot(seg[:end], base, slot, 8, slab)
		if err != nil {
			return nil, fmt.Errorf("field %d (%s): %w", i, l.fields[i].t.sql(), err)
		}
		row.Values[i] = v
	}
	return row, nil
}

// Rows of a few fields are allocated with their values in one object, and
// by a scan's rowSlab in blocks of them: a scan decodes millions.
type (
	row1 struct {
		r state.Row
		v [1]any
	}
	row2 struct {
		r state.Row
		v [2]any
	}
	row4 struct {
		r state.Row
		v [4]any
	}
	row8 struct {
		r state.Row
		v [8]any
	}
)

// rowSlab hands out rows from blocks of slabRows. A row kept by a consumer
// keeps its block alive: at most slabRows small rows.
type rowSlab struct {
	r1 []row1
	r2 []row2
	r4 []row4
	r8 []row8
	// ints, strs and txt back boxInt64, boxText and text (slab.go).
	ints []int64
	strs []string
	txt  []byte
}

const slabRows = 64

// newRow returns a row of n nil values; a nil slab allocates each row on
// its own.
func (s *rowSlab) newRow(n int) *state.Row {
	switch {
	case n == 0:
		return &state.Row{}
	case n == 1:
		if s == nil {
			s = &rowSlab{}
		}
		if len(s.r1) == 0 {
			s.r1 = make([]row1, slabRows)
		}
		x := &s.r1[0]
		s.r1 = s.r1[1:]
		x.r.Values = x.v[:]
		return &x.r
	case n == 2:
		if s == nil {
			s = &rowSlab{}
		}
		if len(s.r2) == 0 {
			s.r2 = make([]row2, slabRows)
		}
		x := &s.r2[0]
		s.r2 = s.r2[1:]
		x.r.Values = x.v[:]
		return &x.r
	case n <= 4:
		if s == nil {
			x := &row4{}
			x.r.Values = x.v[:n:n]
			return &x.r
		}
		if len(s.r4) == 0 {
			s.r4 = make([]row4, slabRows)
		}
		x := &s.r4[0]
		s.r4 = s.r4[1:]
		x.r.Values = x.v[:n:n]
		return &x.r
	case n <= 8:
		if s == nil {
			x := &row8{}
			x.r.Values = x.v[:n:n]
			return &x.r
		}
		if len(s.r8) == 0 {
			s.r8 = make([]row8, slabRows/2)
		}
		x := &s.r8[0]
		s.r8 = s.r8[1:]
		x.r.Values = x.v[:n:n]
		return &x.r
	}
	return &state.Row{Values: make([]any, n)}
}

// decodeSlot decodes the value of one field or array element: its
// fixed-length slot of width bytes at slot; variable-length parts are
// relative to base (the start of the enclosing row or array) and must lie
// within seg.
func (c *fieldCodec) decodeSlot(seg []byte, base, slot, width int, slab *rowSlab) (any, error) {
	if slot < 0 || slot+width > len(seg) {
		return nil, binErr("slot at %d outside %d bytes", slot, len(seg))
	}
	le := binary.LittleEndian
	switch c.root {
	case rootBoolean:
		return seg[slot] != 0, nil
	case rootTinyint:
		return int64(int8(seg[slot])), nil
	case rootSmallint:
		return int64(int16(le.Uint16(seg[slot:]))), nil
	case rootInteger, rootIntervalYearMonth:
		return slab.boxInt64(int64(int32(le.Uint32(seg[slot:])))), nil
	case rootDate:
		return formatDate(int64(int32(le.Uint32(seg[slot:])))), nil
	case rootTime:
		return formatTime(int64(int32(le.Uint32(seg[slot:])))), nil
	case rootFloat:
		return float64(math.Float32frombits(le.Uint32(seg[slot:]))), nil
	case rootBigint, rootIntervalDayTime:
		return slab.boxInt64(int64(le.Uint64(seg[slot:]))), nil
	case rootDouble:
		return math.Float64frombits(le.Uint64(seg[slot:])), nil
	case rootNull:
		return nil, nil
	}
	v := le.Uint64(seg[slot:])
	switch c.root {
	case rootDecimal:
		if c.t.precision <= maxCompactDecimal {
			return state.NewDecimal(big.NewInt(int64(v)), c.t.scale), nil
		}
		b, err := varPart(seg, base, v)
		if err != nil {
			return nil, err
		}
		return state.NewDecimal(bigFromBytes(b), c.t.scale), nil
	case rootTimestamp, rootTimestampLTZ:
		if c.t.precision <= maxCompactTimestamp {
			return formatTimestamp(int64(v), 0, c.root == rootTimestampLTZ), nil
		}
		off := base + int(v>>32)
		if off < 0 || off+8 > len(seg) {
			return nil, binErr("timestamp at %d outside %d bytes", off, len(seg))
		}
		nanos := int64(int32(uint32(v)))
		return formatTimestamp(int64(le.Uint64(seg[off:])), nanos, c.root == rootTimestampLTZ), nil
	}
	// Variable-length values.
	b, err := smallOrVarPart(seg, base, slot, v)
	if err != nil {
		return nil, err
	}
	switch c.root {
	case rootChar, rootVarchar:
		return slab.boxText(b), nil
	case rootBinary, rootVarbinary:
		return append([]byte(nil), b...), nil
	case rootRow, rootStructured:
		off := base + int(v>>32)
		return c.nested.decodeRow(seg, off, int(uint32(v)), slab)
	case rootArray:
		off := base + int(v>>32)
		return c.elem.decodeArray(seg, off, int(uint32(v)), slab)
	case rootMap, rootMultiset:
		off := base + int(v>>32)
		return c.decodeMap(seg, off, int(uint32(v)), slab)
	case rootRaw:
		return decodeWhole(c.raw, "RAW value", 0, b)
	case rootVariant:
		return state.Hex(append([]byte(nil), b...)), nil
	}
	return nil, fmt.Errorf("values of type %s: %w", c.t.rootName, ErrUnsupported)
}

// smallOrVarPart returns the bytes of a variable-length value: inline in
// its slot (top bit set; length in bits 56-62; bytes from the slot start,
// little-endian) or offset<<32|length from base.
func smallOrVarPart(seg []byte, base, slot int, v uint64) ([]byte, error) {
	if v&(1<<63) != 0 {
		n := int(v >> 56 & 0x7f)
		if n > 7 {
			return nil, binErr("inline value of %d bytes", n)
		}
		return seg[slot : slot+n], nil
	}
	return varPart(seg, base, v)
}

func varPart(seg []byte, base int, v uint64) ([]byte, error) {
	off, n := int(v>>32), int(uint32(v))
	start := base + off
	if off < 0 || n < 0 || start < 0 || start > len(seg) || n > len(seg)-start {
		return nil, binErr("%d bytes at offset %d outside %d bytes", n, off, len(seg)-base)
	}
	return seg[start : start+n], nil
}

// bigFromBytes reads a BigInteger's two's-complement big-endian bytes.
func bigFromBytes(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// decodeArray decodes a BinaryArrayData: an int count, null bits padded to
// 4-byte words, elements of a fixed width, then the variable part.
func (a *arrayLayout) decodeArray(seg []byte, base, size int, slab *rowSlab) ([]any, error) {
	if base < 0 || size < 4 || base > len(seg) || size > len(seg)-base {
		return nil, binErr("array of %d bytes at %d outside %d bytes", size, base, len(seg))
	}
	n := int(int32(binary.LittleEndian.Uint32(seg[base:])))
	if n < 0 || int64(n)*int64(a.size) > int64(size) {
		return nil, binErr("array of %d elements in %d bytes", n, size)
	}
	header := 4 + ((n+31)/32)*4
	if header+n*a.size > size {
		return nil, binErr("array of %d elements in %d bytes", n, size)
	}
	end := base + size
	out := make([]any, n)
	for i := range n {
		if seg[base+4+i>>3]&(1<<(i&7)) != 0 {
			continue
		}
		v, err := a.codec.decodeSlot(seg[:end], base, base+header+i*a.size, a.size, slab)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// decodeMap decodes a BinaryMapData: the key array's size in bytes, the
// key array, the value array.
func (c *fieldCodec) decodeMap(seg []byte, base, size int, slab *rowSlab) (state.Pairs, error) {
	if base < 0 || size < 4 || base > len(seg) || size > len(seg)-base {
		return nil, binErr("map of %d bytes at %d outside %d bytes", size, base, len(seg))
	}
	kn := int(int32(binary.LittleEndian.Uint32(seg[base:])))
	if kn < 0 || kn > size-4 {
		return nil, binErr("map key array of %d bytes in %d", kn, size)
	}
	keys, err := c.elem.decodeArray(seg, base+4, kn, slab)
	if err != nil {
		return nil, fmt.Errorf("map keys: %w", err)
	}
	vals, err := c.val.decodeArray(seg, base+4+kn, size-4-kn, slab)
	if err != nil {
		return nil, fmt.Errorf("map values: %w", err)
	}
	if len(keys) != len(vals) {
		return nil, binErr("map of %d keys and %d values", len(keys), len(vals))
	}
	out := make(state.Pairs, len(keys))
	for i := range keys {
		out[i] = state.Pair{Key: keys[i], Value: vals[i]}
	}
	return out, nil
}

// formatDate prints days since the epoch as YYYY-MM-DD.
func formatDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format(time.DateOnly)
}

// formatTime prints milliseconds of the day as HH:MM:SS[.fff].
func formatTime(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	if ms%1000 == 0 {
		return t.Format(time.TimeOnly)
	}
	return t.Format("15:04:05.000")
}

// formatTimestamp prints a TimestampData as Flink SQL does: YYYY-MM-DD
// HH:MM:SS, then the fraction without trailing zeros; an instant
// (TIMESTAMP_LTZ) ends in Z, being printed in UTC.
func formatTimestamp(millis, nanoOfMilli int64, instant bool) string {
	secs := millis / 1000
	ms := millis % 1000
	if ms < 0 {
		secs--
		ms += 1000
	}
	t := time.Unix(secs, 0).UTC()
	b := make([]byte, 0, 32)
	b = t.AppendFormat(b, "2006-01-02 15:04:05")
	if frac := ms*1_000_000 + nanoOfMilli; frac != 0 {
		s := strconv.FormatInt(1_000_000_000+frac, 10)[1:]
		for len(s) > 0 && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		b = append(b, '.')
		b = append(b, s...)
	}
	if instant {
		b = append(b, 'Z')
	}
	return string(b)
}
