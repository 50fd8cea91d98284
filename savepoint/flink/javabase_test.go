package flink

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"streamdbg/state"
)

// TestJavaBaseSerializers decodes values of the java.math and java.time
// serializers, encoded by hand as Flink's serializers write them, nulls
// included; each must read exactly its bytes.
func TestJavaBaseSerializers(t *testing.T) {
	ts := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		ser   serializer
		bytes func(e *enc)
		want  any
	}{
		{bigIntSer, func(e *enc) { e.i32(0) }, nil},
		{bigIntSer, func(e *enc) { e.i32(1) }, state.Decimal("0")},
		{bigIntSer, func(e *enc) { e.i32(3) }, state.Decimal("10")},
		// 300 is 0x012c; -300 is 0xfed4 in two's complement.
		{bigIntSer, func(e *enc) { e.i32(6); e.Write([]byte{0x01, 0x2c}) }, state.Decimal("300")},
		{bigIntSer, func(e *enc) { e.i32(6); e.Write([]byte{0xfe, 0xd4}) }, state.Decimal("-300")},
		{bigIntSer, func(e *enc) { e.i32(5); e.Write([]byte{0x80}) }, state.Decimal("-128")},
		// 12.34 is 1234 (0x04d2) at scale 2; -0.05 is -5 (0xfb) at scale 2.
		{bigDecSer, func(e *enc) { e.i32(6); e.Write([]byte{0x04, 0xd2}); e.i32(2) }, state.Decimal("12.34")},
		{bigDecSer, func(e *enc) { e.i32(5); e.Write([]byte{0xfb}); e.i32(2) }, state.Decimal("-0.05")},
		{bigDecSer, func(e *enc) { e.i32(2); e.i32(0) }, state.Decimal("1")},
		{bigDecSer, func(e *enc) { e.i32(0) }, nil},
		{dateSer, func(e *enc) { e.i64(1714557600123) }, ts("2024-05-01T10:00:00.123Z")},
		{dateSer, func(e *enc) { e.i64(math.MinInt64) }, nil},
		{sqlTimeSer, func(e *enc) { e.i64(-1000) }, ts("1969-12-31T23:59:59Z")},
		// java.sql.Timestamp: the nanos replace the milliseconds' fraction.
		{sqlTimestampSer, func(e *enc) { e.i64(1714557600123); e.i32(123456789) }, ts("2024-05-01T10:00:00.123456789Z")},
		{sqlTimestampSer, func(e *enc) { e.i64(-1500); e.i32(500_000_000) }, ts("1969-12-31T23:59:58.5Z")},
		{sqlTimestampSer, func(e *enc) { e.i64(math.MinInt64); e.i32(0) }, nil},
		{instantSer, func(e *enc) { e.i64(1714557600); e.i32(5) }, ts("2024-05-01T10:00:00.000000005Z")},
		{instantSer, func(e *enc) { e.i64(math.MinInt64); e.i32(math.MinInt32) }, nil},
		{localDateSer, func(e *enc) { e.i32(2024); e.u8(2); e.u8(29) }, "2024-02-29"},
		{localDateSer, func(e *enc) { e.i32(math.MinInt32); e.u16(0x8000) }, nil},
		{localTimeSer, func(e *enc) { e.u8(10); e.u8(5); e.u8(0); e.i32(0) }, "10:05:00"},
		{localTimeSer, func(e *enc) { e.u8(23); e.u8(59); e.u8(59); e.i32(250_000_000) }, "23:59:59.25"},
		{localTimeSer, func(e *enc) { e.u8(0x80); e.u16(0x8000); e.i32(math.MinInt32) }, nil},
		{localDateTimeSer, func(e *enc) {
			e.i32(1999)
			e.u8(12)
			e.u8(31)
			e.u8(23)
			e.u8(0)
			e.u8(1)
			e.i32(0)
		}, "1999-12-31T23:00:01"},
		{localDateTimeSer, func(e *enc) { e.i32(math.MinInt32); e.u16(0x8000); e.u8(0x80); e.u16(0x8000); e.i32(math.MinInt32) }, nil},
	} {
		checkDecodes(t, c.ser, c.bytes, c.want)
	}
	// Values no serializer writes are errors naming what is wrong.
	for _, c := range []struct {
		ser   serializer
		bytes func(e *enc)
	}{
		{bigIntSer, func(e *enc) { e.i32(4) }},
		{bigIntSer, func(e *enc) { e.i32(100); e.u8(1) }},
		{bigIntSer, func(e *enc) { e.i32(-7) }},
		{localDateSer, func(e *enc) { e.i32(2023); e.u8(2); e.u8(29) }},
		{localDateSer, func(e *enc) { e.i32(2023); e.u8(13); e.u8(1) }},
		{localTimeSer, func(e *enc) { e.u8(24); e.u8(0); e.u8(0); e.i32(0) }},
		{instantSer, func(e *enc) { e.i64(0); e.i32(-1) }},
		{localDateTimeSer, func(e *enc) {
			e.i32(2024)
			e.u8(1)
			e.u8(1)
			e.u8(0x80)
			e.u16(0x8000)
			e.i32(math.MinInt32)
		}},
	} {
		var e enc
		c.bytes(&e)
		d := newDecoder("value", 0, e.Bytes())
		c.ser.decode(d)
		if !errors.Is(d.err, ErrCorrupt) {
			t.Errorf("%s % x: error %v, want a corrupt-data error", c.ser.typeName(), e.Bytes(), d.err)
		}
	}
	// The snapshots are known: a state of them is readable.
	for class, s := range javaBaseSnapshots {
		var e enc
		e.utf(class)
		e.i32(3)
		d := newDecoder("snapshot", 0, e.Bytes())
		if got := readVersionedSnapshot(d, 0); got != s || d.err != nil {
			t.Errorf("%s: %v, %v", class, got, d.err)
		}
	}
}

// TestRowSerializer: a DataStream Row's mask (the RowKind's two bits since
// outer version 3, then one bit per null field, most significant first)
// and its fields, from snapshots of both versions.
func TestRowSerializer(t *testing.T) {
	snapshot := func(version int32) serializer {
		var e enc
		e.utf("org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot")
		e.i32(3)
		e.compositeWith(version, nil,
			func() { e.utf(longSnapshot); e.i32(3) },
			func() { e.utf(stringSnapshot); e.i32(3) },
			func() { e.utf(longSnapshot); e.i32(3) })
		d := newDecoder("snapshot", 0, e.Bytes())
		s := readVersionedSnapshot(d, 0)
		if d.err != nil || d.remaining() != 0 {
			t.Fatalf("snapshot v%d: %v, %d bytes left", version, d.err, d.remaining())
		}
		return s
	}
	withKind, legacy := snapshot(3), snapshot(2)
	if got := withKind.typeName(); got != "Row(java.lang.Long, java.lang.String, java.lang.Long)" {
		t.Errorf("type %q", got)
	}
	for _, c := range []struct {
		ser   serializer
		bytes func(e *enc)
		want  *state.Row
	}{
		// +U (kind 2: mask[0] = kind&1 = 0, mask[1] = kind&2 = 1), field 1 null: bits 0 1, 0 1 0.
		{withKind, func(e *enc) { e.u8(0b01010000); e.i64(7); e.i64(9) }, &state.Row{Values: []any{int64(7), nil, int64(9)}, Kind: state.UpdateAfter}},
		// -D (kind 3: 11), no nulls.
		{withKind, func(e *enc) { e.u8(0b11000000); e.i64(1); e.u8(2); e.WriteString("a"); e.i64(2) }, &state.Row{Values: []any{int64(1), "a", int64(2)}, Kind: state.Delete}},
		// Legacy: no kind bits; fields 0 and 2 null: 0b101_00000.
		{legacy, func(e *enc) { e.u8(0b10100000); e.u8(3); e.WriteString("bc") }, &state.Row{Values: []any{nil, "bc", nil}, Kind: state.Insert}},
	} {
		var e enc
		c.bytes(&e)
		d := newDecoder("value", 0, e.Bytes())
		got := c.ser.decode(d)
		if d.err != nil || d.remaining() != 0 || !reflect.DeepEqual(got, c.want) {
			t.Errorf("% x: %#v (%v, %d bytes left), want %#v", e.Bytes(), got, d.err, d.remaining(), c.want)
		}
	}
}

// TestPrimitiveArrays: an int length, then the elements.
func TestPrimitiveArrays(t *testing.T) {
	for _, c := range []struct {
		ser   serializer
		bytes func(e *enc)
		want  any
	}{
		{boolArraySer, func(e *enc) { e.i32(3); e.u8(1); e.u8(0); e.u8(1) }, []any{true, false, true}},
		{charArraySer, func(e *enc) { e.i32(2); e.u16('h'); e.u16(0x00e9) }, []any{"h", "é"}},
		{shortArraySer, func(e *enc) { e.i32(2); e.u16(0xffff); e.u16(300) }, []any{int64(-1), int64(300)}},
		{floatArraySer, func(e *enc) { e.i32(1); e.i32(int32(math.Float32bits(2.5))) }, []any{2.5}},
		{stringArraySer, func(e *enc) { e.i32(3); e.u8(3); e.WriteString("ab"); e.u8(0); e.u8(1) }, []any{"ab", nil, ""}},
		{floatArraySer, func(e *enc) { e.i32(0) }, []any{}},
	} {
		checkDecodes(t, c.ser, c.bytes, c.want)
	}
	var e enc
	e.i32(5)
	e.u8(1)
	d := newDecoder("value", 0, e.Bytes())
	boolArraySer.decode(d)
	if !errors.Is(d.err, ErrCorrupt) {
		t.Errorf("5 booleans in 1 byte: error %v", d.err)
	}
}

// TestUUIDAndSet: UuidSerializer's two longs as the canonical text;
// SetSerializer's count, then per element a null flag (true: null) and
// the element, from its snapshot.
func TestUUIDAndSet(t *testing.T) {
	var u enc
	u.Write([]byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00})
	d := newDecoder("value", 0, u.Bytes())
	if got := uuidSer.decode(d); got != "123e4567-e89b-12d3-a456-426614174000" || d.err != nil {
		t.Errorf("uuid %v, %v", got, d.err)
	}
	var snap enc
	snap.utf("org.apache.flink.api.common.typeutils.base.SetSerializerSnapshot")
	snap.i32(1)
	snap.compositeWith(1, nil, func() { snap.utf(longSnapshot); snap.i32(3) })
	d = newDecoder("snapshot", 0, snap.Bytes())
	s := readVersionedSnapshot(d, 0)
	if d.err != nil || d.remaining() != 0 || s.typeName() != "Set<java.lang.Long>" {
		t.Fatalf("set snapshot: %v, %v", s, d.err)
	}
	var v enc
	v.i32(3)
	v.u8(0)
	v.i64(5)
	v.u8(1)
	v.u8(0)
	v.i64(-2)
	vd := newDecoder("value", 0, v.Bytes())
	if got, want := s.decode(vd), []any{int64(5), nil, int64(-2)}; !reflect.DeepEqual(got, want) || vd.err != nil || vd.remaining() != 0 {
		t.Errorf("set %#v (%v), want %#v", got, vd.err, want)
	}
}

// checkDecodes decodes the bytes enc writes with ser: they must give want
// and be read to their end.
func checkDecodes(t *testing.T, ser serializer, bytes func(e *enc), want any) {
	t.Helper()
	var e enc
	bytes(&e)
	d := newDecoder("value", 0, e.Bytes())
	got := ser.decode(d)
	if d.err != nil || d.remaining() != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("%s % x: %#v (%v, %d bytes left), want %#v", ser.typeName(), e.Bytes(), got, d.err, d.remaining(), want)
	}
}

// TestJavaEither: JavaEitherSerializerSnapshot's two nested serializers;
// a value is a boolean (left), then that side.
func TestJavaEither(t *testing.T) {
	var snap enc
	snap.utf("org.apache.flink.api.java.typeutils.runtime.JavaEitherSerializerSnapshot")
	snap.i32(1)
	snap.compositeWith(1, nil, func() { snap.utf(longSnapshot); snap.i32(3) }, func() { snap.utf(stringSnapshot); snap.i32(3) })
	d := newDecoder("snapshot", 0, snap.Bytes())
	s := readVersionedSnapshot(d, 0)
	if d.err != nil || d.remaining() != 0 || s.typeName() != "Either<java.lang.Long, java.lang.String>" {
		t.Fatalf("snapshot: %v, %v", s, d.err)
	}
	checkDecodes(t, s, func(e *enc) { e.u8(1); e.i64(3) }, map[string]any{"left": int64(3)})
	checkDecodes(t, s, func(e *enc) { e.u8(0); e.u8(3); e.WriteString("no") }, map[string]any{"right": "no"})
}
