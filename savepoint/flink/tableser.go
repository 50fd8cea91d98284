package flink

import (
	"fmt"
	"math/big"
	"strings"

	"streamdbg/state"
)

// This file holds the serializers of Flink's table runtime
// (flink-table-runtime's typeutils, the table window namespaces, the data
// view placeholders) and the snapshot readers that build them.

// snapshotReader builds a serializer from a snapshot's payload (after its
// class name and version).
type snapshotReader func(d *decoder, depth, version int) serializer

// snapshotReaders are the snapshot classes with a payload, besides the
// DataStream ones in readVersionedSnapshot.
var snapshotReaders map[string]snapshotReader

func init() {
	snapshotReaders = map[string]snapshotReader{
		"org.apache.flink.table.runtime.typeutils.RowDataSerializer$RowDataSerializerSnapshot":             readRowDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.BinaryRowDataSerializer$BinaryRowDataSerializerSnapshot": readBinaryRowDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.TimestampDataSerializer$TimestampDataSerializerSnapshot": readTimestampDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.DecimalDataSerializer$DecimalSerializerSnapshot":         readDecimalDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.ArrayDataSerializer$ArrayDataSerializerSnapshot":         readArrayDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.MapDataSerializer$MapDataSerializerSnapshot":             readMapDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.RawValueDataSerializer$RawValueDataSerializerSnapshot":   readRawValueDataSnapshot,
		"org.apache.flink.table.runtime.typeutils.ExternalSerializer$ExternalSerializerSnapshot":           readExternalSnapshot,
		"org.apache.flink.table.runtime.typeutils.LinkedListSerializer$LinkedListSerializerSnapshot":       readLinkedListSnapshot,
		"org.apache.flink.table.runtime.typeutils.SortedMapSerializerSnapshot":                             readSortedMapSnapshot,
		"org.apache.flink.streaming.runtime.streamrecord.StreamElementSerializer$StreamElementSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
			n := readCompositeN(d, depth, nil, 1, "stream element")
			if n == nil {
				return nil
			}
			return &streamElementSer{value: n[0]}
		},
		"org.apache.flink.api.common.typeutils.base.EnumSerializer$EnumSerializerSnapshot":          readEnumSnapshot,
		"org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot":                   readKryoSnapshot,
		"org.apache.flink.api.java.typeutils.runtime.NullableSerializer$NullableSerializerSnapshot": readNullableSnapshot,
		"org.apache.flink.api.common.typeutils.base.GenericArraySerializerSnapshot":                 readGenericArraySnapshot,
	}
	// Flink 1.9 and 1.10 (the Blink planner) named RowData BaseRow and
	// StringData BinaryString; the formats are the same.
	snapshotReaders["org.apache.flink.table.runtime.typeutils.BaseRowSerializer$BaseRowSerializerSnapshot"] = readRowDataSnapshot
	tableSimpleSnapshots["org.apache.flink.table.runtime.typeutils.BinaryStringSerializer$BinaryStringSerializerSnapshot"] = stringDataSer
	for class, s := range tableSimpleSnapshots {
		simpleSnapshots[class] = s
	}
	for class, r := range cepSnapshotReaders {
		snapshotReaders[class] = r
	}
	for class, r := range scalaSnapshotReaders {
		snapshotReaders[class] = r
	}
	for class, r := range javaBaseSnapshotReaders {
		snapshotReaders[class] = r
	}
}

// tableSimpleSnapshots are the table runtime's snapshots without payload.
var tableSimpleSnapshots = map[string]serializer{
	"org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot":                             stringDataSer,
	"org.apache.flink.table.dataview.NullSerializer$NullSerializerSnapshot":                                                  nullSer,
	"org.apache.flink.table.runtime.operators.sink.SortedLongSerializer$SortedLongSerializerSnapshot":                        sortedLongSer,
	"org.apache.flink.table.runtime.operators.window.TimeWindow$Serializer$TimeWindowSerializerSnapshot":                     tableWindowSer,
	"org.apache.flink.table.runtime.operators.window.CountWindow$Serializer$CountWindowSerializerSnapshot":                   countWindowSer,
	"org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer$LongPrimitiveArraySerializerSnapshot":     longArraySer,
	"org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer$IntPrimitiveArraySerializerSnapshot":       intArraySer,
	"org.apache.flink.api.common.typeutils.base.array.DoublePrimitiveArraySerializer$DoublePrimitiveArraySerializerSnapshot": doubleArraySer,
}

var (
	stringDataSer = &scalar{"STRING", -1, func(d *decoder) any {
		n := d.count("string byte", 1)
		b := d.take(n)
		if d.err != nil {
			return nil
		}
		return string(b)
	}}
	nullSer       = &scalar{"NULL", 1, func(d *decoder) any { d.u8(); return nil }}
	sortedLongSer = &scalar{"java.lang.Long (sorted)", 8, func(d *decoder) any { return d.i64() ^ -1<<63 }}
	// The table runtime's TimeWindow has the streaming one's layout.
	tableWindowSer = &scalar{"TimeWindow", 16, windowSer.read}
	countWindowSer = &scalar{"CountWindow", 8, func(d *decoder) any { return map[string]any{"id": d.i64()} }}
	longArraySer   = &scalar{"long[]", -1, func(d *decoder) any {
		n := d.count("long[] element", 8)
		out := make([]any, 0, n)
		for range n {
			out = append(out, d.i64())
		}
		return out
	}}
	intArraySer = &scalar{"int[]", -1, func(d *decoder) any {
		n := d.count("int[] element", 4)
		out := make([]any, 0, n)
		for range n {
			out = append(out, int64(d.i32()))
		}
		return out
	}}
	doubleArraySer = &scalar{"double[]", -1, func(d *decoder) any {
		n := d.count("double[] element", 8)
		out := make([]any, 0, n)
		for range n {
			out = append(out, d.f64())
		}
		return out
	}}
)

// readCompositeN reads a composite snapshot that must nest n serializers.
func readCompositeN(d *decoder, depth int, outer func(d *decoder, version int), n int, what string) []serializer {
	nested := readCompositeV(d, depth, outer)
	if d.err != nil {
		return nil
	}
	if len(nested) != n {
		d.fail("%s serializer with %d nested serializers, want %d", what, len(nested), n)
		return nil
	}
	return nested
}

// rowDataSer is RowDataSerializer: an int length, then a BinaryRowData.
type rowDataSer struct {
	layout    *rowLayout
	fieldSers []serializer
}

func (r *rowDataSer) decode(d *decoder) any {
	n := d.count("row byte", 1)
	b := d.take(n)
	if d.err != nil {
		return nil
	}
	row, err := r.layout.decodeRow(b, 0, len(b), d.slab)
	if err != nil {
		d.setErr(err)
		return nil
	}
	return row
}

func (r *rowDataSer) typeName() string { return rowSQL(r.layout.types, r.layout.names) }
func (r *rowDataSer) fixedLen() int    { return -1 }

// withNames returns a copy whose rows carry these field names.
func (r *rowDataSer) withNames(names []string) *rowDataSer {
	l := *r.layout
	l.setNames(userNames(names))
	return &rowDataSer{layout: &l, fieldSers: r.fieldSers}
}

// readRowDataSnapshot reads RowDataSerializerSnapshot: the field count,
// each field's LogicalType Java-serialized, then the field serializers'
// snapshots.
func readRowDataSnapshot(d *decoder, depth, _ int) serializer {
	n := d.count("row field", 4)
	if n > maxFields {
		d.fail("row of %d fields", n)
		return nil
	}
	types := make([]*ltype, 0, n)
	for range n {
		t := readLogicalType(d)
		if d.err != nil {
			return nil
		}
		types = append(types, t)
	}
	sers := readNested(d, depth)
	if d.err != nil {
		return nil
	}
	if len(sers) != n {
		d.fail("row of %d fields with %d field serializers", n, len(sers))
		return nil
	}
	l, err := newRowLayout(types, sers, nil)
	if err != nil {
		return &unreadableSer{name: rowSQL(types, nil), err: err}
	}
	return &rowDataSer{layout: l, fieldSers: sers}
}

// readBinaryRowDataSnapshot: BinaryRowDataSerializer stores only the
// field count, not the field types a row's slots need.
func readBinaryRowDataSnapshot(d *decoder, _, _ int) serializer {
	n := d.i32()
	if d.err != nil {
		return nil
	}
	return &unreadableSer{name: fmt.Sprintf("BinaryRowData(%d fields)", n),
		err: fmt.Errorf("BinaryRowDataSerializer's snapshot does not store the field types: %w", ErrUnsupported)}
}

type timestampDataSer struct{ precision int }

func (t *timestampDataSer) decode(d *decoder) any {
	ms := d.i64()
	var nanos int64
	if t.precision > maxCompactTimestamp {
		nanos = int64(d.i32())
	}
	if d.err != nil {
		return nil
	}
	return formatTimestamp(ms, nanos, false)
}
func (t *timestampDataSer) typeName() string { return fmt.Sprintf("TIMESTAMP(%d)", t.precision) }
func (t *timestampDataSer) fixedLen() int {
	if t.precision > maxCompactTimestamp {
		return 12
	}
	return 8
}

func readTimestampDataSnapshot(d *decoder, _, _ int) serializer {
	p := d.i32()
	if d.err == nil && (p < 0 || p > 9) {
		d.fail("timestamp precision %d", p)
	}
	if d.err != nil {
		return nil
	}
	return &timestampDataSer{precision: int(p)}
}

type decimalDataSer struct{ precision, scale int }

func (s *decimalDataSer) decode(d *decoder) any {
	if s.precision <= maxCompactDecimal {
		v := d.i64()
		if d.err != nil {
			return nil
		}
		return state.NewDecimal(big.NewInt(v), s.scale)
	}
	b := d.take(d.count("decimal byte", 1))
	if d.err != nil {
		return nil
	}
	return state.NewDecimal(bigFromBytes(b), s.scale)
}
func (s *decimalDataSer) typeName() string {
	return fmt.Sprintf("DECIMAL(%d, %d)", s.precision, s.scale)
}
func (s *decimalDataSer) fixedLen() int {
	if s.precision <= maxCompactDecimal {
		return 8
	}
	return -1
}

func readDecimalDataSnapshot(d *decoder, _, _ int) serializer {
	p, sc := d.i32(), d.i32()
	if d.err == nil && (p < 1 || p > 38 || sc < 0 || sc > p) {
		d.fail("decimal precision %d, scale %d", p, sc)
	}
	if d.err != nil {
		return nil
	}
	return &decimalDataSer{precision: int(p), scale: int(sc)}
}

// arrayDataSer is ArrayDataSerializer: an int length, then a
// BinaryArrayData.
type arrayDataSer struct {
	elem    *ltype
	elemSer serializer
	layout  *arrayLayout
}

func (a *arrayDataSer) decode(d *decoder) any {
	b := d.take(d.count("array byte", 1))
	if d.err != nil {
		return nil
	}
	v, err := a.layout.decodeArray(b, 0, len(b), d.slab)
	if err != nil {
		d.setErr(err)
		return nil
	}
	return v
}
func (a *arrayDataSer) typeName() string { return "ARRAY<" + a.elem.sql() + ">" }
func (a *arrayDataSer) fixedLen() int    { return -1 }

// readArrayDataSnapshot reads the element LogicalType and the element
// serializer, both Java-serialized.
func readArrayDataSnapshot(d *decoder, _, _ int) serializer {
	t := readLogicalType(d)
	so := readJavaObject(d)
	if d.err != nil {
		return nil
	}
	es, _ := serializerFromJava(so)
	l, err := newArrayLayout(t, es, 0)
	if err != nil {
		return &unreadableSer{name: "ARRAY<" + t.sql() + ">", err: err}
	}
	return &arrayDataSer{elem: t, elemSer: es, layout: l}
}

// mapDataSer is MapDataSerializer: an int length, then a BinaryMapData.
type mapDataSer struct {
	key, val       *ltype
	keySer, valSer serializer
	codec          fieldCodec
}

func (m *mapDataSer) decode(d *decoder) any {
	b := d.take(d.count("map byte", 1))
	if d.err != nil {
		return nil
	}
	v, err := m.codec.decodeMap(b, 0, len(b), d.slab)
	if err != nil {
		d.setErr(err)
		return nil
	}
	return v
}
func (m *mapDataSer) typeName() string { return "MAP<" + m.key.sql() + ", " + m.val.sql() + ">" }
func (m *mapDataSer) fixedLen() int    { return -1 }

func readMapDataSnapshot(d *decoder, _, _ int) serializer {
	kt, vt := readLogicalType(d), readLogicalType(d)
	ko, vo := readJavaObject(d), readJavaObject(d)
	if d.err != nil {
		return nil
	}
	m := &mapDataSer{key: kt, val: vt}
	m.keySer, _ = serializerFromJava(ko)
	m.valSer, _ = serializerFromJava(vo)
	c, err := newFieldCodec(&ltype{root: rootMap, rootName: "MAP", key: kt, val: vt}, m, 0)
	if err != nil {
		return &unreadableSer{name: m.typeName(), err: err}
	}
	m.codec = c
	return m
}

// rawValueDataSer is RawValueDataSerializer: an int length, then the
// inner serializer's bytes.
type rawValueDataSer struct{ inner serializer }

func (r *rawValueDataSer) decode(d *decoder) any {
	b := d.take(d.count("raw value byte", 1))
	if d.err != nil {
		return nil
	}
	v, err := decodeWhole(r.inner, d.file, d.pos()-int64(len(b)), b)
	if err != nil {
		d.setErr(err)
		return nil
	}
	return v
}
func (r *rawValueDataSer) typeName() string { return "RAW<" + r.inner.typeName() + ">" }
func (r *rawValueDataSer) fixedLen() int    { return -1 }

func readRawValueDataSnapshot(d *decoder, depth, _ int) serializer {
	n := readCompositeN(d, depth, nil, 1, "raw value")
	if n == nil {
		return nil
	}
	return &rawValueDataSer{inner: n[0]}
}

// externalSer is ExternalSerializer: values are written by the serializer
// of their internal data structure; the DataType names the SQL type.
type externalSer struct {
	dataType *ltype
	internal serializer
}

func (e *externalSer) decode(d *decoder) any { return e.internal.decode(d) }
func (e *externalSer) typeName() string {
	if e.dataType != nil {
		return e.dataType.sql()
	}
	return e.internal.typeName()
}
func (e *externalSer) fixedLen() int { return e.internal.fixedLen() }

// readExternalSnapshot reads ExternalSerializerSnapshot: a composite whose
// outer payload is the DataType (Java-serialized) and whether the input is
// already internal, nesting the internal serializer.
func readExternalSnapshot(d *decoder, depth, _ int) serializer {
	var dt *ltype
	n := readCompositeN(d, depth, func(d *decoder, _ int) {
		v := readJavaObject(d)
		if d.err != nil {
			return
		}
		o, ok := v.(*jObject)
		if !ok {
			d.fail("external serializer: data type is %s", describeJava(v))
			return
		}
		lt, _ := o.field("logicalType")
		t, err := logicalTypeOf(lt, 0)
		if err != nil {
			d.setErr(err)
			return
		}
		dt = t
		d.boolean() // isInternalInput
	}, 1, "external")
	if n == nil {
		return nil
	}
	internal := n[0]
	if rs, ok := internal.(*rowDataSer); ok && dt != nil && (dt.root == rootRow || dt.root == rootStructured) {
		if names := dt.fieldNames(); len(names) == len(rs.layout.types) {
			internal = rs.withNames(names)
		}
	}
	return &externalSer{dataType: dt, internal: internal}
}

// linkedListSer is LinkedListSerializer: an int count, a null mask when
// the snapshot says so, then the non-null elements.
type linkedListSer struct {
	elem     serializer
	nullMask bool
}

func (l *linkedListSer) decode(d *decoder) any {
	n := d.count("list element", 0)
	if n > d.remaining()*8+8 {
		d.fail("linked list of %d elements in %d bytes", n, d.remaining())
		return nil
	}
	var mask []byte
	if l.nullMask {
		mask = d.take((n + 7) / 8)
	}
	out := make([]any, 0, min(n, 1024))
	for i := range n {
		if d.err != nil {
			return nil
		}
		// MaskUtils writes the mask most significant bit first.
		if mask != nil && mask[i/8]&(0x80>>(i%8)) != 0 {
			out = append(out, nil)
			continue
		}
		if mask == nil && d.remaining() == 0 {
			d.fail("linked list of %d elements ends after %d", n, i)
			return nil
		}
		out = append(out, l.elem.decode(d))
	}
	return out
}
func (l *linkedListSer) typeName() string { return "LinkedList<" + l.elem.typeName() + ">" }
func (l *linkedListSer) fixedLen() int    { return -1 }

func readLinkedListSnapshot(d *decoder, depth, _ int) serializer {
	mask := true
	n := readCompositeN(d, depth, func(d *decoder, v int) {
		switch {
		case v < 2:
			mask = false
		case v > 2:
			mask = d.boolean()
		}
	}, 1, "linked list")
	if n == nil {
		return nil
	}
	return &linkedListSer{elem: n[0], nullMask: mask}
}

// sortedMapSer is SortedMapSerializer (AbstractMapSerializer): an int
// count, then per entry the key, a null flag and the value.
type sortedMapSer struct{ key, value serializer }

func (m *sortedMapSer) decode(d *decoder) any { return decodePairs(d, m.key, m.value) }
func (m *sortedMapSer) typeName() string {
	return "SortedMap<" + m.key.typeName() + ", " + m.value.typeName() + ">"
}
func (m *sortedMapSer) fixedLen() int { return -1 }

// readSortedMapSnapshot reads the comparator (Java-serialized, not used)
// and the key and value serializers' snapshots.
func readSortedMapSnapshot(d *decoder, depth, _ int) serializer {
	readJavaObject(d)
	n := readNested(d, depth)
	if d.err != nil {
		return nil
	}
	if len(n) != 2 {
		d.fail("sorted map serializer with %d nested serializers", len(n))
		return nil
	}
	return &sortedMapSer{key: n[0], value: n[1]}
}

// decodePairs reads MapSerializer's layout into ordered pairs.
func decodePairs(d *decoder, ks, vs serializer) state.Pairs {
	n := d.count("map entry", max(ks.fixedLen(), 0)+1)
	out := make(state.Pairs, 0, min(n, 1024))
	for range n {
		if d.err != nil {
			return nil
		}
		k := ks.decode(d)
		var v any
		if !d.boolean() {
			v = vs.decode(d)
		}
		out = append(out, state.Pair{Key: k, Value: v})
	}
	if d.err != nil {
		return nil
	}
	return out
}

// streamElementSer is StreamElementSerializer: a tag byte, then a record
// (with or without its timestamp), a watermark, a watermark status, a
// latency marker or record attributes.
type streamElementSer struct{ value serializer }

var (
	streamRecordSchema     = state.NewSchema("StreamRecord", "timestamp", "value")
	watermarkSchema        = state.NewSchema("Watermark", "timestamp")
	internalWatermarkSch   = state.NewSchema("Watermark", "timestamp", "subpartition")
	watermarkStatusSchema  = state.NewSchema("WatermarkStatus", "status")
	latencyMarkerSchema    = state.NewSchema("LatencyMarker", "marked_time", "operator_lower", "operator_upper", "subtask")
	recordAttributesSchema = state.NewSchema("RecordAttributes", "backlog")
)

func (s *streamElementSer) decode(d *decoder) any {
	tag := d.u8()
	if d.err != nil {
		return nil
	}
	switch tag {
	case 0:
		ts := d.i64()
		return &state.Row{Schema: streamRecordSchema, Values: []any{ts, s.value.decode(d)}}
	case 1:
		return &state.Row{Schema: streamRecordSchema, Values: []any{nil, s.value.decode(d)}}
	case 2:
		return &state.Row{Schema: watermarkSchema, Values: []any{d.i64()}}
	case 6:
		sub := int64(d.i32())
		return &state.Row{Schema: internalWatermarkSch, Values: []any{d.i64(), sub}}
	case 4:
		return &state.Row{Schema: watermarkStatusSchema, Values: []any{int64(d.i32())}}
	case 3:
		vals := []any{d.i64(), d.i64(), d.i64(), int64(d.i32())}
		return &state.Row{Schema: latencyMarkerSchema, Values: vals}
	case 5:
		return &state.Row{Schema: recordAttributesSchema, Values: []any{d.boolean()}}
	}
	d.off--
	d.fail("stream element tag %d", tag)
	return nil
}
func (s *streamElementSer) typeName() string { return "StreamElement<" + s.value.typeName() + ">" }
func (s *streamElementSer) fixedLen() int    { return -1 }

// enumSer is EnumSerializer: the constant's ordinal as an int.
type enumSer struct {
	class     string
	constants []string
}

func (e *enumSer) decode(d *decoder) any {
	i := d.i32()
	if d.err != nil {
		return nil
	}
	if i < 0 || int(i) >= len(e.constants) {
		d.off -= 4
		d.fail("enum %s: ordinal %d of %d constants", e.class, i, len(e.constants))
		return nil
	}
	return e.constants[i]
}
func (e *enumSer) typeName() string { return e.class }
func (e *enumSer) fixedLen() int    { return 4 }

// readEnumSnapshot reads EnumSerializerSnapshot: the enum class, then its
// constants' names in ordinal order.
func readEnumSnapshot(d *decoder, _, _ int) serializer {
	e := &enumSer{class: d.utf()}
	n := d.count("enum constant", 2)
	for range n {
		e.constants = append(e.constants, d.utf())
	}
	if d.err != nil {
		return nil
	}
	return e
}

// readKryoSnapshot reads KryoSerializerSnapshot: the type class, then
// three LinkedOptionalMaps (registrations, default serializers, default
// serializer classes) with length-framed entries. Values are Kryo's own
// encoding of the class, which this reader does not decode; the snapshot is
// read to its end so the states after it stay readable.
func readKryoSnapshot(d *decoder, _, _ int) serializer {
	class := d.utf()
	for range 3 {
		skipOptionalMap(d, class)
	}
	if d.err != nil {
		return nil
	}
	return &unreadableSer{name: "Kryo<" + class + ">",
		err: fmt.Errorf("values serialized by Kryo (class %s) are not decoded: %w", class, ErrUnsupported)}
}

// skipOptionalMap reads past a LinkedOptionalMapSerializer map: header,
// count, then per entry a name and two optional length-framed parts.
func skipOptionalMap(d *decoder, what string) {
	if h := d.i64(); d.err == nil && h != linkedMapMagic {
		d.fail("%s: bad optional map header %#x", what, h)
		return
	}
	n := d.count("optional map entry", 4)
	for range n {
		d.utf()
		for range 2 {
			if d.boolean() {
				d.take(d.count("framed byte", 1))
			}
		}
		if d.err != nil {
			return
		}
	}
}

// nullableSer is NullableSerializer: a null flag, padding bytes after a
// null when the original serializer has a fixed length, else the value.
type nullableSer struct {
	inner   serializer
	padding int
}

func (n *nullableSer) decode(d *decoder) any {
	if d.boolean() {
		d.take(n.padding)
		return nil
	}
	return n.inner.decode(d)
}
func (n *nullableSer) typeName() string { return n.inner.typeName() }
func (n *nullableSer) fixedLen() int {
	if l := n.inner.fixedLen(); l >= 0 && n.padding == l {
		return 1 + l
	}
	return -1
}

func readNullableSnapshot(d *decoder, depth, _ int) serializer {
	pad := 0
	nested := readCompositeN(d, depth, func(d *decoder, _ int) {
		pad = int(d.i32())
		if d.err == nil && (pad < 0 || pad > 1<<16) {
			d.fail("nullable serializer padding of %d bytes", pad)
		}
	}, 1, "nullable")
	if nested == nil {
		return nil
	}
	return &nullableSer{inner: nested[0], padding: pad}
}

// genericArraySer is GenericArraySerializer: an int length, then per
// element a flag (true: present) and the element.
type genericArraySer struct {
	class string
	elem  serializer
}

func (g *genericArraySer) decode(d *decoder) any {
	return decodeFlagged(d, "array element", g.elem, true)
}

// decodeFlagged reads an int count, then per element a boolean flag and,
// when the flag says the element is there (true when present is true,
// false otherwise), the element; NULL otherwise. Generic arrays, Scala
// collections and sets are written so.
func decodeFlagged(d *decoder, what string, elem serializer, present bool) any {
	n := d.count(what, 1)
	out := make([]any, 0, min(n, 1024))
	for range n {
		if d.err != nil {
			return nil
		}
		if d.boolean() != present {
			out = append(out, nil)
			continue
		}
		out = append(out, elem.decode(d))
	}
	if d.err != nil {
		return nil
	}
	return out
}
func (g *genericArraySer) typeName() string { return g.class + "[]" }
func (g *genericArraySer) fixedLen() int    { return -1 }

func readGenericArraySnapshot(d *decoder, depth, _ int) serializer {
	var class string
	nested := readCompositeN(d, depth, func(d *decoder, _ int) { class = d.utf() }, 1, "generic array")
	if nested == nil {
		return nil
	}
	return &genericArraySer{class: class, elem: nested[0]}
}

// readNested reads NestedSerializersSnapshotDelegate: magic, version,
// count, then each snapshot.
func readNested(d *decoder, depth int) []serializer {
	if m := d.i32(); d.err == nil && m != nestedMagic {
		d.off -= 4
		d.fail("nested serializer snapshots: bad magic %d", m)
		return nil
	}
	d.i32() // version
	n := d.count("nested serializer", 6)
	if n > maxFields {
		d.fail("%d nested serializers", n)
		return nil
	}
	out := make([]serializer, 0, n)
	for range n {
		s := readVersionedSnapshot(d, depth+1)
		if d.err != nil {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// sqlTypeOf is the SQL-ish name of a serializer's values for StateMeta.
func sqlTypeOf(s serializer) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(s.typeName())
}
