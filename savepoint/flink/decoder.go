package flink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
)

// ErrCorrupt marks bytes that do not follow Flink's format.
var ErrCorrupt = errors.New("flink: corrupt data")

// ErrUnsupported marks data in a format this reader does not decode
// (native RocksDB, changelog, file merging, unknown serializers).
var ErrUnsupported = errors.New("flink: unsupported")

// marked reports whether err carries one of the package's kinds.
func marked(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported)
}

// markErr is err with kind (ErrCorrupt or ErrUnsupported) added when it
// carries neither yet; its message stays err's. An error of the file
// system keeps its own kind too (errors.Is(err, fs.ErrNotExist)).
func markErr(err, kind error) error {
	if err == nil || marked(err) {
		return err
	}
	return &kindError{err: err, kind: kind}
}

type kindError struct{ err, kind error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// FormatError names the file and offset where reading failed.
type FormatError struct {
	File   string
	Offset int64
	Msg    string
	Err    error // ErrCorrupt, ErrUnsupported or a more precise error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("flink: %s at offset %d: %s", e.File, e.Offset, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// UnknownSerializerError reports a serializer snapshot class this reader
// does not know. Snapshots carry no length, so reading stops there.
type UnknownSerializerError struct {
	Class string
}

func (e *UnknownSerializerError) Error() string {
	return "unknown serializer snapshot class " + e.Class
}

func (e *UnknownSerializerError) Unwrap() error { return ErrUnsupported }

// decoder reads Flink's big-endian DataOutputStream encoding from a byte
// slice. Errors are sticky: after the first one every read returns zero
// values and d.err keeps the first error, so parsers check once at the end
// of a unit instead of after every field.
//
// INVARIANT: no read allocates more than the bytes left in b, whatever a
// length field says.
type decoder struct {
	b    []byte
	off  int
	base int64 // file offset of b[0], for error messages
	file string
	err  error
	// slab, when set, allocates the rows decoded (a scan's, reused).
	slab *rowSlab
}

// reset makes d a decoder over b, writing only the fields that change: a
// scan resets its decoders for every value, and each pointer written costs
// a write barrier while the garbage collector runs.
func (d *decoder) reset(b []byte, base int64, file string, slab *rowSlab) {
	d.b, d.off, d.base = b, 0, base
	if d.err != nil {
		d.err = nil
	}
	if d.file != file {
		d.file = file
	}
	if d.slab != slab {
		d.slab = slab
	}
}

func newDecoder(file string, base int64, b []byte) *decoder {
	return &decoder{b: b, base: base, file: file}
}

func (d *decoder) pos() int64 { return d.base + int64(d.off) }

func (d *decoder) remaining() int {
	if d.err != nil {
		return 0
	}
	return len(d.b) - d.off
}

// fail records a corruption error at the current offset.
func (d *decoder) fail(format string, args ...any) {
	d.failErr(ErrCorrupt, format, args...)
}

func (d *decoder) failErr(kind error, format string, args ...any) {
	if d.err == nil {
		d.err = &FormatError{File: d.file, Offset: d.pos(), Msg: fmt.Sprintf(format, args...), Err: kind}
	}
}

// setErr records an error that is not a format error (e.g. an unknown
// serializer), wrapping it with the position; one that carries no kind is
// corrupt (it comes from decoding these bytes).
func (d *decoder) setErr(err error) {
	if d.err == nil && err != nil {
		d.err = &FormatError{File: d.file, Offset: d.pos(), Msg: err.Error(), Err: markErr(err, ErrCorrupt)}
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.fail("need %d bytes, %d left", n, len(d.b)-d.off)
		return nil
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return p
}

func (d *decoder) u8() byte {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *decoder) boolean() bool { return d.u8() != 0 }

func (d *decoder) u16() uint16 {
	p := d.take(2)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint16(p)
}

func (d *decoder) i32() int32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

func (d *decoder) i64() int64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

func (d *decoder) f32() float32 { return math.Float32frombits(uint32(d.i32())) }
func (d *decoder) f64() float64 { return math.Float64frombits(uint64(d.i64())) }

// count reads an int count of items that take at least minSize bytes each,
// refusing counts that cannot fit in the bytes left.
func (d *decoder) count(what string, minSize int) int {
	n := d.i32()
	if d.err != nil {
		return 0
	}
	// A bad count is reported at its own offset.
	if n < 0 {
		d.off -= 4
		d.fail("negative %s count %d", what, n)
		return 0
	}
	if minSize > 0 && int64(n)*int64(minSize) > int64(d.remaining()) {
		left := d.remaining()
		d.off -= 4
		d.fail("%s count %d does not fit in the %d bytes left", what, n, left)
		return 0
	}
	return int(n)
}

// utf reads Java's writeUTF: u16 length, then modified UTF-8.
func (d *decoder) utf() string {
	n := int(d.u16())
	p := d.take(n)
	if p == nil {
		return ""
	}
	return decodeModifiedUTF8(p)
}

// decodeModifiedUTF8 decodes Java's modified UTF-8 (NUL as two bytes,
// supplementary characters as surrogate pairs). Invalid bytes become U+FFFD.
func decodeModifiedUTF8(p []byte) string {
	ascii := true
	for _, c := range p {
		if c >= 0x80 || c == 0 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(p)
	}
	units := make([]uint16, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xe0 == 0xc0 && i+1 < len(p):
			units = append(units, uint16(c&0x1f)<<6|uint16(p[i+1]&0x3f))
			i += 2
		case c&0xf0 == 0xe0 && i+2 < len(p):
			units = append(units, uint16(c&0x0f)<<12|uint16(p[i+1]&0x3f)<<6|uint16(p[i+2]&0x3f))
			i += 3
		default:
			units = append(units, 0xfffd)
			i++
		}
	}
	return string(utf16.Decode(units))
}

// varUint reads a little-endian base-128 integer of at most 5 groups, as
// Flink's StringValue and CompositeKeySerializationUtils write them.
func (d *decoder) varUint() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := d.u8()
		if d.err != nil {
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	d.fail("variable-length integer too long")
	return 0
}

// flinkString reads StringValue.writeString: varint length+1 (0 = null),
// then each UTF-16 code unit as a varint. ok=false for null.
func (d *decoder) flinkString() (s string, ok bool) {
	n := d.varUint()
	if d.err != nil || n == 0 {
		return "", false
	}
	n--
	// Every code unit takes at least one byte.
	if int64(n) > int64(d.remaining()) {
		d.fail("string of %d chars does not fit in the %d bytes left", n, d.remaining())
		return "", false
	}
	// ASCII, the common case: each code unit is one byte below 0x80, the
	// string is those bytes.
	if p := d.b[d.off : d.off+int(n)]; asciiBytes(p) {
		d.off += int(n)
		return d.slab.text(p), true
	}
	units := make([]uint16, 0, n)
	ascii := true
	for range n {
		c := d.varUint()
		if d.err != nil {
			return "", false
		}
		if c >= 0x80 {
			ascii = false
		}
		units = append(units, uint16(c))
	}
	if ascii {
		b := make([]byte, len(units))
		for i, u := range units {
			b[i] = byte(u)
		}
		return string(b), true
	}
	return string(utf16.Decode(units)), true
}

// asciiBytes reports whether every byte of p is below 0x80.
func asciiBytes(p []byte) bool {
	for len(p) >= 8 {
		if binary.LittleEndian.Uint64(p)&0x8080808080808080 != 0 {
			return false
		}
		p = p[8:]
	}
	for _, c := range p {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// sub returns a decoder over the next n bytes and advances past them.
func (d *decoder) sub(n int) *decoder {
	start := d.pos()
	p := d.take(n)
	s := newDecoder(d.file, start, p)
	if d.err != nil {
		s.err = d.err
	}
	return s
}
