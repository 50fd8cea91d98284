package flink

import "unsafe"

// Scalars a scan decodes by the million (Long keys and counts, BIGINT
// fields, ASCII strings) are boxed from blocks of a scan's rowSlab rather
// than by one allocation each: fewer allocations and far less garbage
// collector work per entry. A value a consumer keeps keeps its block alive
// (at most slabInts int64s or slabText bytes).
const (
	slabInts = 256
	// slabStrings is the string headers of a block (boxString).
	slabStrings = 128
	slabText    = 4 << 10
)

// int64Type is the type word of an interface holding an int64.
var int64Type = func() unsafe.Pointer {
	var x any = int64(1 << 40)
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[0]
}()

// stringType is the type word of an interface holding a string.
var stringType = func() unsafe.Pointer {
	var x any = "x"
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[0]
}()

// boxText is any(string(b)): the bytes as text copies them, the string
// header from the slab's current block of headers instead of an allocation
// of its own. A nil slab boxes as Go does.
func (s *rowSlab) boxText(b []byte) any {
	if s == nil {
		return string(b)
	}
	return s.boxString(s.text(b))
}

// boxString is any(str), the string header from the slab's current block
// of headers. A nil slab boxes as Go does.
func (s *rowSlab) boxString(str string) any {
	if s == nil || str == "" {
		return str // Go's box of "" allocates nothing
	}
	if len(s.strs) == cap(s.strs) {
		s.strs = make([]string, 0, slabStrings)
	}
	s.strs = append(s.strs, str)
	// INVARIANT: as for boxInt64, a header is written once, before it is
	// boxed, and never again.
	e := [2]unsafe.Pointer{stringType, unsafe.Pointer(&s.strs[len(s.strs)-1])}
	return *(*any)(unsafe.Pointer(&e))
}

// boxInt64 is any(v), its 8 bytes taken from the slab's current block. A
// nil slab boxes as Go does.
func (s *rowSlab) boxInt64(v int64) any {
	if s == nil || uint64(v) < 256 {
		return v // Go's own boxes of 0..255 allocate nothing
	}
	if len(s.ints) == cap(s.ints) {
		s.ints = make([]int64, 0, slabInts)
	}
	s.ints = append(s.ints, v)
	// INVARIANT: a slot of a block is written once, before it is boxed,
	// and never again (a full block is dropped, not reused), so the
	// interface's value cannot change under it. The interface's data word
	// points into the block, which keeps the block alive.
	e := [2]unsafe.Pointer{int64Type, unsafe.Pointer(&s.ints[len(s.ints)-1])}
	return *(*any)(unsafe.Pointer(&e))
}

// text is string(b), its bytes copied into the slab's current block when
// b is small. A nil slab allocates as Go does.
func (s *rowSlab) text(b []byte) string {
	if s == nil || len(b) > slabText/16 {
		return string(b)
	}
	if len(b) == 0 {
		return ""
	}
	if cap(s.txt)-len(s.txt) < len(b) {
		s.txt = make([]byte, 0, slabText)
	}
	start := len(s.txt)
	s.txt = append(s.txt, b...)
	// INVARIANT: as for ints, bytes of a block are written once and never
	// again, so the string is immutable.
	return unsafe.String(&s.txt[start], len(b))
}
