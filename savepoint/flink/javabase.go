package flink

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"streamdbg/state"
)

// Flink's serializers of java.math and java.time values and of the old
// java.util and java.sql dates (flink-core's typeutils.base), each with an
// empty snapshot payload. The formats are those the serializers write;
// NULL is each one's null marker.

var javaBaseSnapshots = map[string]serializer{
	"org.apache.flink.api.common.typeutils.base.BigIntSerializer$BigIntSerializerSnapshot":               bigIntSer,
	"org.apache.flink.api.common.typeutils.base.BigDecSerializer$BigDecSerializerSnapshot":               bigDecSer,
	"org.apache.flink.api.common.typeutils.base.DateSerializer$DateSerializerSnapshot":                   dateSer,
	"org.apache.flink.api.common.typeutils.base.SqlDateSerializer$SqlDateSerializerSnapshot":             sqlDateSer,
	"org.apache.flink.api.common.typeutils.base.SqlTimeSerializer$SqlTimeSerializerSnapshot":             sqlTimeSer,
	"org.apache.flink.api.common.typeutils.base.SqlTimestampSerializer$SqlTimestampSerializerSnapshot":   sqlTimestampSer,
	"org.apache.flink.api.common.typeutils.base.InstantSerializer$InstantSerializerSnapshot":             instantSer,
	"org.apache.flink.api.common.typeutils.base.LocalDateSerializer$LocalDateSerializerSnapshot":         localDateSer,
	"org.apache.flink.api.common.typeutils.base.LocalTimeSerializer$LocalTimeSerializerSnapshot":         localTimeSer,
	"org.apache.flink.api.common.typeutils.base.LocalDateTimeSerializer$LocalDateTimeSerializerSnapshot": localDateTimeSer,
	// The primitive arrays tableser.go does not read already, String[]
	// and UUID.
	"org.apache.flink.api.common.typeutils.base.array.BooleanPrimitiveArraySerializer$BooleanPrimitiveArraySerializerSnapshot": boolArraySer,
	"org.apache.flink.api.common.typeutils.base.array.CharPrimitiveArraySerializer$CharPrimitiveArraySerializerSnapshot":       charArraySer,
	"org.apache.flink.api.common.typeutils.base.array.ShortPrimitiveArraySerializer$ShortPrimitiveArraySerializerSnapshot":     shortArraySer,
	"org.apache.flink.api.common.typeutils.base.array.FloatPrimitiveArraySerializer$FloatPrimitiveArraySerializerSnapshot":     floatArraySer,
	"org.apache.flink.api.common.typeutils.base.array.StringArraySerializer$StringArraySerializerSnapshot":                     stringArraySer,
	"org.apache.flink.api.common.typeutils.base.UuidSerializer$UuidSerializerSnapshot":                                         uuidSer,
}

func init() {
	for class, s := range javaBaseSnapshots {
		simpleSnapshots[class] = s
	}
}

var (
	// BigIntSerializer: an int, 0 for null, 1, 2 and 3 for 0, 1 and 10,
	// otherwise 4 plus the length of the two's-complement big-endian
	// bytes that follow. Shown as an exact decimal.
	bigIntSer = &scalar{"java.math.BigInteger", -1, func(d *decoder) any {
		n, ok := readBigInteger(d)
		if !ok {
			return nil
		}
		return state.NewDecimal(n, 0)
	}}
	// BigDecSerializer: the unscaled value as BigIntSerializer writes it,
	// then (not for null) the int scale.
	bigDecSer = &scalar{"java.math.BigDecimal", -1, func(d *decoder) any {
		n, ok := readBigInteger(d)
		if !ok {
			return nil
		}
		scale := d.i32()
		if d.err != nil {
			return nil
		}
		return state.NewDecimal(n, int(scale))
	}}
	// DateSerializer, SqlDateSerializer and SqlTimeSerializer: the epoch
	// milliseconds, Long.MIN_VALUE for null.
	dateSer    = &scalar{"java.util.Date", 8, readMillis}
	sqlDateSer = &scalar{"java.sql.Date", 8, readMillis}
	sqlTimeSer = &scalar{"java.sql.Time", 8, readMillis}
	// SqlTimestampSerializer: the epoch milliseconds, then the int nanos
	// of the second (which replace the milliseconds' fraction). Null is
	// Long.MIN_VALUE and an int 0: twelve bytes, as the serializer writes
	// them (its reader stops after the eight).
	sqlTimestampSer = &scalar{"java.sql.Timestamp", 12, func(d *decoder) any {
		ms, nanos := d.i64(), d.i32()
		if d.err != nil || ms == math.MinInt64 {
			return nil
		}
		if nanos < 0 || nanos > 999_999_999 {
			d.off -= 4
			d.fail("java.sql.Timestamp: %d nanoseconds", nanos)
			return nil
		}
		return time.Unix(floorDiv(ms, 1000), int64(nanos)).UTC()
	}}
	// InstantSerializer: the epoch seconds and the int nanos; null is
	// Long.MIN_VALUE and Integer.MIN_VALUE.
	instantSer = &scalar{"java.time.Instant", 12, func(d *decoder) any {
		sec, nanos := d.i64(), d.i32()
		if d.err != nil || sec == math.MinInt64 && nanos == math.MinInt32 {
			return nil
		}
		if nanos < 0 || nanos > 999_999_999 {
			d.off -= 4
			d.fail("java.time.Instant: %d nanoseconds", nanos)
			return nil
		}
		return time.Unix(sec, int64(nanos)).UTC()
	}}
	// LocalDateSerializer: the int year, then the month and the day as
	// bytes; null is Integer.MIN_VALUE and a short. Shown as
	// LocalDate.toString prints it: 2024-05-01.
	localDateSer = &scalar{"java.time.LocalDate", 6, func(d *decoder) any {
		s, ok := readLocalDate(d)
		if !ok {
			return nil
		}
		return s
	}}
	// LocalTimeSerializer: hour, minute and second as bytes, then the int
	// nanos; null is Byte.MIN_VALUE, a short and an int. Shown as
	// 10:15:30, with the fraction when it has one (10:15:30.25).
	localTimeSer = &scalar{"java.time.LocalTime", 7, func(d *decoder) any {
		s, ok := readLocalTime(d)
		if !ok {
			return nil
		}
		return s
	}}
	// LocalDateTimeSerializer: a LocalDate, then a LocalTime, both null
	// for null. Shown as 2024-05-01T10:15:30.
	localDateTimeSer = &scalar{"java.time.LocalDateTime", 13, func(d *decoder) any {
		date, ok1 := readLocalDate(d)
		tm, ok2 := readLocalTime(d)
		if d.err != nil {
			return nil
		}
		if ok1 != ok2 {
			d.fail("java.time.LocalDateTime: exactly one of its date and time is null")
			return nil
		}
		if !ok1 {
			return nil
		}
		return date + "T" + tm
	}}
)

// readBigInteger reads BigIntSerializer's value (ok false: null or an
// error on d).
func readBigInteger(d *decoder) (*big.Int, bool) {
	n := d.i32()
	if d.err != nil {
		return nil, false
	}
	switch n {
	case 0:
		return nil, false
	case 1, 2, 3:
		return big.NewInt([]int64{0, 1, 10}[n-1]), true
	}
	if n == 4 || n < 0 || int64(n-4) > int64(d.remaining()) {
		d.off -= 4
		d.fail("java.math.BigInteger of %d bytes", int64(n)-4)
		return nil, false
	}
	b := d.take(int(n - 4))
	if d.err != nil {
		return nil, false
	}
	v := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 { // two's complement: negative
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v, true
}

func readMillis(d *decoder) any {
	ms := d.i64()
	if d.err != nil || ms == math.MinInt64 {
		return nil
	}
	return time.UnixMilli(ms).UTC()
}

// readLocalDate reads LocalDateSerializer's value as its text (ok false:
// null or an error on d).
func readLocalDate(d *decoder) (string, bool) {
	year := d.i32()
	if d.err != nil {
		return "", false
	}
	if year == math.MinInt32 {
		d.u16()
		return "", false
	}
	month, day := int(int8(d.u8())), int(int8(d.u8()))
	if d.err != nil {
		return "", false
	}
	t := time.Date(int(year), time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if month < 1 || month > 12 || day < 1 || t.Day() != day {
		d.off -= 2
		d.fail("java.time.LocalDate: %d-%d-%d is no date", year, month, day)
		return "", false
	}
	switch {
	case year > 9999:
		return fmt.Sprintf("+%d-%02d-%02d", year, month, day), true
	case year < 0:
		return fmt.Sprintf("-%04d-%02d-%02d", -int64(year), month, day), true
	}
	return fmt.Sprintf("%04d-%02d-%02d", year, month, day), true
}

// readLocalTime reads LocalTimeSerializer's value as its text.
func readLocalTime(d *decoder) (string, bool) {
	hour := int8(d.u8())
	if d.err != nil {
		return "", false
	}
	if hour == math.MinInt8 {
		d.u16()
		d.i32()
		return "", false
	}
	minute, second, nanos := int8(d.u8()), int8(d.u8()), d.i32()
	if d.err != nil {
		return "", false
	}
	if hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || nanos < 0 || nanos > 999_999_999 {
		d.off -= 7
		d.fail("java.time.LocalTime: %d:%d:%d.%09d is no time of day", hour, minute, second, nanos)
		return "", false
	}
	s := fmt.Sprintf("%02d:%02d:%02d", hour, minute, second)
	if nanos > 0 {
		frac := fmt.Sprintf("%09d", nanos)
		for len(frac) > 1 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		s += "." + frac
	}
	return s, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// rowSer is the DataStream API's RowSerializer (org.apache.flink.types.Row):
// a bit mask, most significant bit first, of the RowKind's two bits
// (since outer snapshot version 3; none before) and one bit per field
// that is null, then the fields that are not. Shown as a row of that
// kind (+I[…]), its fields by position.
type rowSer struct {
	fields   []serializer
	withKind bool
}

func (r *rowSer) decode(d *decoder) any {
	off := 0
	if r.withKind {
		off = 2
	}
	n := off + len(r.fields)
	mask := d.take((n + 7) / 8)
	if d.err != nil {
		return nil
	}
	bit := func(i int) bool { return mask[i/8]&(0x80>>(i%8)) != 0 }
	kind := state.Insert
	if r.withKind {
		k := 0
		if bit(0) {
			k |= 1
		}
		if bit(1) {
			k |= 2
		}
		kind = rowKinds[k]
	}
	row := &state.Row{Values: make([]any, len(r.fields)), Kind: kind}
	for i, f := range r.fields {
		if bit(off + i) {
			continue
		}
		row.Values[i] = f.decode(d)
		if d.err != nil {
			return nil
		}
	}
	return row
}

func (r *rowSer) typeName() string {
	names := make([]string, len(r.fields))
	for i, f := range r.fields {
		names[i] = f.typeName()
	}
	return "Row(" + strings.Join(names, ", ") + ")"
}
func (r *rowSer) fixedLen() int { return -1 }

// readRowSnapshot reads RowSerializerSnapshot: no outer payload, the
// fields' serializers; outer version 3 and later write the RowKind.
func readRowSnapshot(d *decoder, depth, _ int) serializer {
	withKind := false
	nested := readCompositeV(d, depth, func(_ *decoder, version int) { withKind = version >= 3 })
	if d.err != nil {
		return nil
	}
	return &rowSer{fields: nested, withKind: withKind}
}

// readJavaEitherSnapshot reads the DataStream API's EitherSerializer's
// snapshot (org.apache.flink.types.Either): its values are a boolean
// (left), then the side, as Scala's Either.
func readJavaEitherSnapshot(d *decoder, depth, _ int) serializer {
	n := readCompositeN(d, depth, nil, 2, "Either")
	if n == nil {
		return nil
	}
	return &eitherSer{left: n[0], right: n[1]}
}

var javaBaseSnapshotReaders = map[string]snapshotReader{
	"org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot": readRowSnapshot,
	"org.apache.flink.api.java.typeutils.runtime.JavaEitherSerializerSnapshot":        readJavaEitherSnapshot,
	"org.apache.flink.api.common.typeutils.base.SetSerializerSnapshot":                readSetSnapshot,
}

// primitiveArray is a serializer of a primitive array: an int length,
// then the elements, each of size bytes (read by elem).
func primitiveArray(name string, size int, elem func(d *decoder) any) *scalar {
	return &scalar{name, -1, func(d *decoder) any {
		n := d.count(name+" element", size)
		out := make([]any, 0, n)
		for range n {
			out = append(out, elem(d))
		}
		if d.err != nil {
			return nil
		}
		return out
	}}
}

var (
	boolArraySer  = primitiveArray("boolean[]", 1, func(d *decoder) any { return d.boolean() })
	charArraySer  = primitiveArray("char[]", 2, func(d *decoder) any { return string(rune(d.u16())) })
	shortArraySer = primitiveArray("short[]", 2, func(d *decoder) any { return int64(int16(d.u16())) })
	floatArraySer = primitiveArray("float[]", 4, func(d *decoder) any { return float64(d.f32()) })
	// StringArraySerializer: an int length, then each element as
	// StringValue writes it (null included).
	stringArraySer = primitiveArray("String[]", 1, func(d *decoder) any {
		s, ok := d.flinkString()
		if !ok {
			return nil
		}
		return s
	})
)

// uuidSer is UuidSerializer: the most and then the least significant 64
// bits, shown as the UUID's canonical text.
var uuidSer = &scalar{"java.util.UUID", 16, func(d *decoder) any {
	b := d.take(16)
	if d.err != nil {
		return nil
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}}

// setSer is SetSerializer: an int count, then per element a boolean (true:
// null) and the element when not null. Shown as a list, in the order
// written (a HashSet's).
type setSer struct{ elem serializer }

func (s *setSer) decode(d *decoder) any { return decodeFlagged(d, "set element", s.elem, false) }
func (s *setSer) typeName() string      { return "Set<" + s.elem.typeName() + ">" }
func (s *setSer) fixedLen() int         { return -1 }

func readSetSnapshot(d *decoder, depth, _ int) serializer {
	n := readCompositeN(d, depth, nil, 1, "set")
	if n == nil {
		return nil
	}
	return &setSer{elem: n[0]}
}
