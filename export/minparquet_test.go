package export_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/golang/snappy"
)

// A minimal Parquet reader, written from the format specification for this
// test only, sharing no code with the library the exporter uses: the
// footer and page headers in Thrift's compact protocol, data pages of
// version 1, PLAIN values or dictionary indices (a PLAIN dictionary page,
// RLE/bit-packed indices), RLE/bit-packed definition levels, flat schemas
// of optional columns, and Snappy or no compression. Anything else is an
// error, never a guess.

var errMin = errors.New("minparquet")

type thrift struct {
	b   []byte
	pos int
}

func (t *thrift) fail(format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", errMin, t.pos, fmt.Sprintf(format, args...))
}

func (t *thrift) uvarint() (uint64, error) {
	v, n := binary.Uvarint(t.b[t.pos:])
	if n <= 0 {
		return 0, t.fail("bad varint")
	}
	t.pos += n
	return v, nil
}

func (t *thrift) zigzag() (int64, error) {
	u, err := t.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// value reads one value of a compact-protocol type: structs as map[field
// id]any, lists as []any, binaries as []byte, integers as int64.
func (t *thrift) value(typ byte, depth int) (any, error) {
	if depth > 32 {
		return nil, t.fail("nested too deeply")
	}
	switch typ {
	case 1:
		return true, nil
	case 2:
		return false, nil
	case 3:
		if t.pos >= len(t.b) {
			return nil, t.fail("eof")
		}
		t.pos++
		return int64(int8(t.b[t.pos-1])), nil
	case 4, 5, 6:
		return t.zigzag()
	case 7:
		if len(t.b)-t.pos < 8 {
			return nil, t.fail("eof")
		}
		t.pos += 8
		return math.Float64frombits(binary.LittleEndian.Uint64(t.b[t.pos-8:])), nil
	case 8:
		n, err := t.uvarint()
		if err != nil || n > uint64(len(t.b)-t.pos) {
			return nil, t.fail("bad binary")
		}
		t.pos += int(n)
		return t.b[t.pos-int(n) : t.pos], nil
	case 9, 10:
		if t.pos >= len(t.b) {
			return nil, t.fail("eof")
		}
		h := t.b[t.pos]
		t.pos++
		n := uint64(h >> 4)
		if n == 15 {
			var err error
			if n, err = t.uvarint(); err != nil {
				return nil, err
			}
		}
		if n > uint64(len(t.b)) {
			return nil, t.fail("list of %d", n)
		}
		out := make([]any, 0, n)
		for range n {
			v, err := t.value(h&0x0f, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case 12:
		return t.strct(depth + 1)
	}
	return nil, t.fail("thrift type %d", typ)
}

func (t *thrift) strct(depth int) (map[int]any, error) {
	out := map[int]any{}
	id := 0
	for {
		if t.pos >= len(t.b) {
			return nil, t.fail("eof in struct")
		}
		h := t.b[t.pos]
		t.pos++
		if h == 0 {
			return out, nil
		}
		if d := int(h >> 4); d != 0 {
			id += d
		} else {
			v, err := t.zigzag()
			if err != nil {
				return nil, err
			}
			id = int(v)
		}
		v, err := t.value(h&0x0f, depth)
		if err != nil {
			return nil, err
		}
		out[id] = v
	}
}

// minColumn is one column as this reader decodes it: nil for NULL, int64
// (INT32, INT64), float64, bool, or []byte.
type minColumn struct {
	name   string
	ptype  int64
	values []any
}

func i64(m map[int]any, id int) int64 { v, _ := m[id].(int64); return v }

// readMinParquet decodes every column of a flat file of optional columns.
func readMinParquet(path string) ([]minColumn, int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 12 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		return nil, 0, fmt.Errorf("%w: not a parquet file", errMin)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > len(b)-12 {
		return nil, 0, fmt.Errorf("%w: footer of %d bytes", errMin, n)
	}
	t := &thrift{b: b[len(b)-8-n : len(b)-8]}
	meta, err := t.strct(0)
	if err != nil {
		return nil, 0, err
	}
	schema, _ := meta[2].([]any)
	var cols []minColumn
	for i, e := range schema {
		el := e.(map[int]any)
		if i == 0 {
			continue // the root
		}
		if rep := i64(el, 3); rep != 1 {
			return nil, 0, fmt.Errorf("%w: column %s has repetition %d, want optional", errMin, el[4], rep)
		}
		cols = append(cols, minColumn{name: string(el[4].([]byte)), ptype: i64(el, 1)})
	}
	numRows := i64(meta, 3)
	groups, _ := meta[4].([]any)
	for _, g := range groups {
		chunks, _ := g.(map[int]any)[1].([]any)
		if len(chunks) != len(cols) {
			return nil, 0, fmt.Errorf("%w: %d chunks for %d columns", errMin, len(chunks), len(cols))
		}
		for ci, c := range chunks {
			cm := c.(map[int]any)[3].(map[int]any)
			codec := i64(cm, 4)
			want := i64(cm, 5)
			off := i64(cm, 9)
			if _, ok := cm[11]; ok {
				off = i64(cm, 11) // the dictionary page comes first
			}
			var dict []any
			var got int64
			for got < want {
				if off < 0 || off >= int64(len(b)) {
					return nil, 0, fmt.Errorf("%w: page at %d", errMin, off)
				}
				pt := &thrift{b: b[off:]}
				ph, err := pt.strct(0)
				if err != nil {
					return nil, 0, err
				}
				size := i64(ph, 3)
				start := off + int64(pt.pos)
				if size < 0 || start+size > int64(len(b)) {
					return nil, 0, fmt.Errorf("%w: page of %d bytes", errMin, size)
				}
				body := b[start : start+size]
				off = start + size
				typ := i64(ph, 1)
				if typ != 0 && typ != 2 {
					return nil, 0, fmt.Errorf("%w: page type %d, only data pages v1 and dictionary pages", errMin, typ)
				}
				switch codec {
				case 0:
				case 1:
					if body, err = snappy.Decode(nil, body); err != nil {
						return nil, 0, fmt.Errorf("%w: snappy: %v", errMin, err)
					}
				default:
					return nil, 0, fmt.Errorf("%w: codec %d", errMin, codec)
				}
				if typ == 2 {
					dh, _ := ph[7].(map[int]any)
					if dict != nil || dh == nil || i64(dh, 2) != 0 {
						return nil, 0, fmt.Errorf("%w: a second dictionary page, or one not PLAIN", errMin)
					}
					if dict, err = plainValues(body, int(i64(dh, 1)), cols[ci].ptype); err != nil {
						return nil, 0, err
					}
					continue
				}
				dph := ph[5].(map[int]any)
				enc := i64(dph, 2)
				if enc != 0 && enc != 8 && enc != 2 {
					return nil, 0, fmt.Errorf("%w: value encoding %d, only PLAIN and dictionary indices", errMin, enc)
				}
				if enc != 0 && dict == nil {
					return nil, 0, fmt.Errorf("%w: dictionary indices without a dictionary", errMin)
				}
				nv := int(i64(dph, 1))
				vals, err := decodePage(body, nv, cols[ci].ptype, enc != 0, dict)
				if err != nil {
					return nil, 0, err
				}
				cols[ci].values = append(cols[ci].values, vals...)
				got += int64(nv)
			}
		}
	}
	for _, c := range cols {
		if int64(len(c.values)) != numRows {
			return nil, 0, fmt.Errorf("%w: column %s has %d values for %d rows", errMin, c.name, len(c.values), numRows)
		}
	}
	return cols, numRows, nil
}

// hybrid decodes n values of the RLE/bit-packed hybrid of the given bit
// width (at most 32).
func hybrid(b []byte, n, width int) ([]uint32, []byte, error) {
	if width < 0 || width > 32 {
		return nil, nil, fmt.Errorf("%w: bit width %d", errMin, width)
	}
	out := make([]uint32, 0, n)
	for len(out) < n {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, nil, fmt.Errorf("%w: bad run header", errMin)
		}
		b = b[k:]
		if h&1 == 0 { // RLE run: the value in ceil(width/8) bytes
			w := (width + 7) / 8
			if len(b) < w {
				return nil, nil, fmt.Errorf("%w: bad RLE run", errMin)
			}
			var v uint32
			for i := range w {
				v |= uint32(b[i]) << (8 * i)
			}
			b = b[w:]
			for range h >> 1 {
				out = append(out, v)
			}
			continue
		}
		g := int(h >> 1) // groups of 8 values, width bits each, LSB first
		if len(b) < g*width {
			return nil, nil, fmt.Errorf("%w: bad bit-packed run", errMin)
		}
		for i := 0; i < g*8; i++ {
			var v uint32
			for j := range width {
				bit := i*width + j
				v |= uint32(b[bit/8]>>(bit%8)&1) << j
			}
			out = append(out, v)
		}
		b = b[g*width:]
	}
	return out[:n], b, nil
}

// decodePage reads definition levels (bit width 1) and PLAIN values, or
// dictionary indices into dict.
func decodePage(b []byte, n int, ptype int64, indexed bool, dict []any) ([]any, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: page too short", errMin)
	}
	ln := int(binary.LittleEndian.Uint32(b))
	if ln > len(b)-4 {
		return nil, fmt.Errorf("%w: levels of %d bytes", errMin, ln)
	}
	lv, b := b[4:4+ln], b[4+ln:]
	defs, _, err := hybrid(lv, n, 1)
	if err != nil {
		return nil, err
	}
	set := 0
	for _, d := range defs {
		if d > 1 {
			return nil, fmt.Errorf("%w: definition level %d", errMin, d)
		}
		set += int(d)
	}
	var vals []any
	if indexed {
		if len(b) < 1 {
			return nil, fmt.Errorf("%w: no bit width", errMin)
		}
		idx, _, err := hybrid(b[1:], set, int(b[0]))
		if err != nil {
			return nil, err
		}
		for _, i := range idx {
			if int(i) >= len(dict) {
				return nil, fmt.Errorf("%w: index %d of a dictionary of %d", errMin, i, len(dict))
			}
			vals = append(vals, dict[i])
		}
	} else if vals, err = plainValues(b, set, ptype); err != nil {
		return nil, err
	}
	out := make([]any, n)
	j := 0
	for i, d := range defs {
		if d == 1 {
			out[i] = vals[j]
			j++
		}
	}
	return out, nil
}

// plainValues reads n PLAIN values of a physical type.
func plainValues(b []byte, n int, ptype int64) ([]any, error) {
	out := make([]any, 0, n)
	bit := 0
	for range n {
		need := map[int64]int{1: 4, 2: 8, 5: 8}[ptype]
		switch ptype {
		case 0:
			if bit/8 >= len(b) {
				return nil, fmt.Errorf("%w: booleans run out", errMin)
			}
			out = append(out, b[bit/8]>>(bit%8)&1 == 1)
			bit++
			continue
		case 6:
			if len(b) < 4 || int(binary.LittleEndian.Uint32(b)) > len(b)-4 {
				return nil, fmt.Errorf("%w: bad byte array", errMin)
			}
			l := int(binary.LittleEndian.Uint32(b))
			out = append(out, b[4:4+l])
			b = b[4+l:]
			continue
		case 1, 2, 5:
		default:
			return nil, fmt.Errorf("%w: physical type %d", errMin, ptype)
		}
		if len(b) < need {
			return nil, fmt.Errorf("%w: values run out", errMin)
		}
		switch ptype {
		case 1:
			out = append(out, int64(int32(binary.LittleEndian.Uint32(b))))
		case 2:
			out = append(out, int64(binary.LittleEndian.Uint64(b)))
		case 5:
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
		b = b[need:]
	}
	return out, nil
}
