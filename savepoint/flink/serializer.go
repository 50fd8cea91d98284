package flink

import (
	"fmt"
	"strings"

	"streamdbg/state"
)

// Magic numbers of Flink's composite snapshots
// (CompositeTypeSerializerSnapshot, NestedSerializersSnapshotDelegate) and
// of LinkedOptionalMapSerializer.
const (
	compositeMagic = 911108
	nestedMagic    = 1333245
	linkedMapMagic = 0x4F2C69A3D70
	maxNesting     = 32
	maxFields      = 1 << 12
)

// serializer decodes the values one Flink serializer wrote. It is built from
// the serializer's snapshot, which is all a savepoint keeps of a type.
type serializer interface {
	// decode reads one value; errors are left on d.
	decode(d *decoder) any
	// typeName is the name shown in StateMeta (Java class names).
	typeName() string
	// fixedLen is the serialized length, or -1 when it varies.
	fixedLen() int
}

// scalar is one of Flink's simple serializers.
type scalar struct {
	name string
	size int
	read func(d *decoder) any
}

func (s *scalar) decode(d *decoder) any { return s.read(d) }
func (s *scalar) typeName() string      { return s.name }
func (s *scalar) fixedLen() int         { return s.size }

var (
	longSer   = &scalar{"java.lang.Long", 8, func(d *decoder) any { return d.slab.boxInt64(d.i64()) }}
	intSer    = &scalar{"java.lang.Integer", 4, func(d *decoder) any { return d.slab.boxInt64(int64(d.i32())) }}
	shortSer  = &scalar{"java.lang.Short", 2, func(d *decoder) any { return int64(int16(d.u16())) }}
	byteSer   = &scalar{"java.lang.Byte", 1, func(d *decoder) any { return int64(int8(d.u8())) }}
	doubleSer = &scalar{"java.lang.Double", 8, func(d *decoder) any { return d.f64() }}
	floatSer  = &scalar{"java.lang.Float", 4, func(d *decoder) any { return float64(d.f32()) }}
	boolSer   = &scalar{"java.lang.Boolean", 1, func(d *decoder) any { return d.boolean() }}
	charSer   = &scalar{"java.lang.Character", 2, func(d *decoder) any { return string(rune(d.u16())) }}
	stringSer = &scalar{"java.lang.String", -1, func(d *decoder) any {
		s, ok := d.flinkString()
		if !ok {
			return nil
		}
		return d.slab.boxString(s)
	}}
	bytesSer = &scalar{"byte[]", -1, func(d *decoder) any {
		n := d.count("byte[] length", 1)
		return append([]byte(nil), d.take(n)...)
	}}
	voidSer   = &scalar{"java.lang.Void", 0, func(*decoder) any { return nil }}
	voidNSSer = &scalar{"VoidNamespace", 1, func(d *decoder) any { d.u8(); return nil }}
	windowSer = &scalar{"TimeWindow", 16, func(d *decoder) any {
		start, end := d.i64(), d.i64()
		return map[string]any{"start": state.MillisValue(start), "end": state.MillisValue(end)}
	}}
	globalWindowSer = &scalar{"GlobalWindow", 1, func(d *decoder) any { d.u8(); return nil }}
	javaSer         = &scalar{"java-serialized", -1, decodeJavaSerialized}
)

// simpleSnapshots maps the snapshot classes with an empty payload
// (SimpleTypeSerializerSnapshot and friends) to their serializers.
var simpleSnapshots = map[string]serializer{
	"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot":                                   longSer,
	"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot":                                     intSer,
	"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot":                                 shortSer,
	"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot":                                   byteSer,
	"org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot":                               doubleSer,
	"org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot":                                 floatSer,
	"org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot":                             boolSer,
	"org.apache.flink.api.common.typeutils.base.CharSerializer$CharSerializerSnapshot":                                   charSer,
	"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot":                               stringSer,
	"org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot": bytesSer,
	"org.apache.flink.api.common.typeutils.base.VoidSerializer$VoidSerializerSnapshot":                                   voidSer,
	"org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot":                             voidNSSer,
	"org.apache.flink.streaming.api.windowing.windows.TimeWindow$Serializer$TimeWindowSerializerSnapshot":                windowSer,
	"org.apache.flink.streaming.api.windowing.windows.GlobalWindow$Serializer$GlobalWindowSerializerSnapshot":            globalWindowSer,
	"org.apache.flink.runtime.state.JavaSerializer$JavaSerializerSnapshot":                                               javaSer,
	"org.apache.flink.api.java.typeutils.runtime.JavaSerializer$JavaSerializerSnapshot":                                  javaSer,
}

// readSnapshot reads TypeSerializerSnapshotSerializationUtil's framing (int
// 2, then a versioned snapshot).
func readSnapshot(d *decoder) serializer {
	if v := d.i32(); d.err == nil && v != 2 {
		d.off -= 4
		d.failErr(ErrUnsupported, "serializer snapshot framing version %d not supported", v)
		return nil
	}
	return readVersionedSnapshot(d, 0)
}

// readVersionedSnapshot reads a snapshot class name, its version and its
// payload. An unknown class leaves an UnknownSerializerError on d: the
// payload has no length, so nothing after it can be read.
func readVersionedSnapshot(d *decoder, depth int) serializer {
	if depth > maxNesting {
		d.fail("serializer snapshots nested too deep")
		return nil
	}
	class := d.utf()
	version := d.i32()
	if d.err != nil {
		return nil
	}
	if s, ok := simpleSnapshots[class]; ok {
		return s
	}
	switch class {
	case "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot":
		var tupleClass string
		nested := readComposite(d, depth, func(d *decoder) { tupleClass = d.utf() })
		return &tupleSer{class: tupleClass, fields: nested}
	case "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot",
		"org.apache.flink.runtime.state.ArrayListSerializerSnapshot":
		nested := readComposite(d, depth, nil)
		if len(nested) != 1 {
			d.fail("list serializer with %d nested serializers", len(nested))
			return nil
		}
		return &listSer{elem: nested[0]}
	case "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot":
		nested := readComposite(d, depth, nil)
		if len(nested) != 2 {
			d.fail("map serializer with %d nested serializers", len(nested))
			return nil
		}
		return &mapSer{key: nested[0], value: nested[1]}
	case "org.apache.flink.streaming.api.operators.TimerSerializerSnapshot":
		nested := readComposite(d, depth, nil)
		if len(nested) != 2 {
			d.fail("timer serializer with %d nested serializers", len(nested))
			return nil
		}
		return &timerSer{key: nested[0], namespace: nested[1]}
	case "org.apache.flink.runtime.state.ttl.TtlStateFactory$TtlSerializerSnapshot":
		nested := readComposite(d, depth, nil)
		if len(nested) != 2 {
			d.fail("TTL serializer with %d nested serializers", len(nested))
			return nil
		}
		return &ttlSer{value: nested[1]}
	case "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot":
		return readPojoSnapshot(d, depth, int(version))
	case "org.apache.flink.formats.avro.typeutils.AvroSerializerSnapshot":
		return readAvroSnapshot(d, int(version))
	}
	if r, ok := snapshotReaders[class]; ok {
		return r(d, depth, int(version))
	}
	d.setErr(&UnknownSerializerError{Class: class})
	return nil
}

// readComposite reads a CompositeTypeSerializerSnapshot payload: magic,
// outer version, the class's own outer payload, then the nested snapshots.
func readComposite(d *decoder, depth int, outer func(d *decoder)) []serializer {
	var withVersion func(d *decoder, version int)
	if outer != nil {
		withVersion = func(d *decoder, _ int) { outer(d) }
	}
	return readCompositeV(d, depth, withVersion)
}

// readCompositeV is readComposite for outer payloads that depend on the
// outer snapshot version.
func readCompositeV(d *decoder, depth int, outer func(d *decoder, version int)) []serializer {
	if m := d.i32(); d.err == nil && m != compositeMagic {
		d.off -= 4
		d.failErr(ErrUnsupported, "composite serializer snapshot without magic (legacy snapshot format)")
		return nil
	}
	v := d.i32() // outer version
	if outer != nil && d.err == nil {
		outer(d, int(v))
	}
	if d.err != nil {
		return nil
	}
	return readNested(d, depth)
}

type tupleSer struct {
	class  string
	fields []serializer
}

func (t *tupleSer) decode(d *decoder) any {
	out := make([]any, 0, len(t.fields))
	for _, f := range t.fields {
		out = append(out, f.decode(d))
	}
	return out
}

func (t *tupleSer) typeName() string {
	names := make([]string, len(t.fields))
	for i, f := range t.fields {
		names[i] = f.typeName()
	}
	short := t.class[strings.LastIndexByte(t.class, '.')+1:]
	return short + "<" + strings.Join(names, ", ") + ">"
}

func (t *tupleSer) fixedLen() int {
	n := 0
	for _, f := range t.fields {
		l := f.fixedLen()
		if l < 0 {
			return -1
		}
		n += l
	}
	return n
}

type listSer struct{ elem serializer }

func (l *listSer) decode(d *decoder) any {
	n := d.count("list element", max(l.elem.fixedLen(), 1))
	out := make([]any, 0, min(n, 1024))
	for range n {
		if d.err != nil {
			return nil
		}
		out = append(out, l.elem.decode(d))
	}
	return out
}
func (l *listSer) typeName() string { return "List<" + l.elem.typeName() + ">" }
func (l *listSer) fixedLen() int    { return -1 }

type mapSer struct{ key, value serializer }

// decode reads MapSerializer's layout: int count, then per entry the key, a
// null flag and the value when not null. Keys are stringified.
func (m *mapSer) decode(d *decoder) any {
	n := d.count("map entry", max(m.key.fixedLen(), 0)+1)
	out := make(map[string]any, min(n, 1024))
	for range n {
		if d.err != nil {
			return nil
		}
		k := m.key.decode(d)
		var v any
		if !d.boolean() {
			v = m.value.decode(d)
		}
		out[keyString(k)] = v
	}
	return out
}
func (m *mapSer) typeName() string {
	return "Map<" + m.key.typeName() + ", " + m.value.typeName() + ">"
}
func (m *mapSer) fixedLen() int { return -1 }

// keyString stringifies a map key for map[string]any values.
func keyString(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case nil:
		return "null"
	}
	return fmt.Sprint(k)
}

type timerSer struct{ key, namespace serializer }

// timer is a decoded Flink timer.
type timer struct {
	timestamp      int64
	key, namespace any
}

func (t *timerSer) decodeTimer(d *decoder) timer {
	ts := d.i64() ^ -1<<63 // stored with the sign bit flipped
	k := t.key.decode(d)
	return timer{timestamp: ts, key: k, namespace: t.namespace.decode(d)}
}

func (t *timerSer) decode(d *decoder) any {
	tm := t.decodeTimer(d)
	return map[string]any{"timestamp": tm.timestamp, "key": tm.key, "namespace": tm.namespace}
}
func (t *timerSer) typeName() string {
	return "Timer<" + t.key.typeName() + ", " + t.namespace.typeName() + ">"
}
func (t *timerSer) fixedLen() int {
	k, n := t.key.fixedLen(), t.namespace.fixedLen()
	if k < 0 || n < 0 {
		return -1
	}
	return 8 + k + n
}

// ttlSer is TtlSerializer (TTL state): the last access timestamp, then the
// value; both are shown, as a Ttl record.
type ttlSer struct{ value serializer }

var ttlSchema = state.NewSchema("Ttl", "last_access", "value")

func (t *ttlSer) decode(d *decoder) any {
	ts := d.i64()
	v := t.value.decode(d)
	if d.err != nil {
		return nil
	}
	return &state.Row{Schema: ttlSchema, Values: []any{ts, v}}
}
func (t *ttlSer) typeName() string { return "TTL<" + t.value.typeName() + ">" }
func (t *ttlSer) fixedLen() int {
	if n := t.value.fixedLen(); n >= 0 {
		return 8 + n
	}
	return -1
}

type pojoSer struct {
	class  string
	names  []string
	fields []serializer // nil entry: the field's class is gone
}

const (
	pojoIsNull     = 1
	pojoNoSubclass = 2
)

func (p *pojoSer) decode(d *decoder) any {
	flags := d.u8()
	if d.err != nil || flags&pojoIsNull != 0 {
		return nil
	}
	if flags&pojoNoSubclass == 0 {
		d.failErr(ErrUnsupported, "POJO %s: value of a subclass (flags %#x) not supported", p.class, flags)
		return nil
	}
	out := make(map[string]any, len(p.fields))
	for i, f := range p.fields {
		if d.boolean() {
			out[p.names[i]] = nil
			continue
		}
		if f == nil {
			d.failErr(ErrUnsupported, "POJO %s: field %s has no serializer", p.class, p.names[i])
			return nil
		}
		out[p.names[i]] = f.decode(d)
	}
	return out
}
func (p *pojoSer) typeName() string { return p.class }
func (p *pojoSer) fixedLen() int    { return -1 }

// readPojoSnapshot reads PojoSerializerSnapshot (version 2): the class name,
// then three LinkedOptionalMaps (fields, registered subclasses, other
// subclasses) whose entries are length-framed.
func readPojoSnapshot(d *decoder, depth, version int) serializer {
	if version != 2 {
		d.failErr(ErrUnsupported, "POJO serializer snapshot version %d not supported", version)
		return nil
	}
	p := &pojoSer{class: d.utf()}
	for m := range 3 {
		if h := d.i64(); d.err == nil && h != linkedMapMagic {
			d.fail("POJO %s: bad optional map header %#x", p.class, h)
			return nil
		}
		n := d.count("POJO map entry", 4)
		if n > maxFields {
			d.fail("POJO %s: %d fields", p.class, n)
			return nil
		}
		for range n {
			name := d.utf()
			if d.boolean() {
				d.take(d.count("framed key byte", 1))
			}
			var s serializer
			if d.boolean() {
				fd := d.sub(d.count("framed snapshot byte", 1))
				if m == 0 {
					s = readVersionedSnapshot(fd, depth+1)
					if fd.err != nil {
						// Field snapshots are framed: an unknown one only
						// makes that field unreadable.
						if !isUnknownSerializer(fd.err) {
							d.setErr(fd.err)
							return nil
						}
						s = &opaqueSer{name: unknownClass(fd.err)}
					}
				}
			}
			if m == 0 {
				p.names = append(p.names, name)
				p.fields = append(p.fields, s)
			}
		}
	}
	if d.err != nil {
		return nil
	}
	return p
}

// opaqueSer stands for a serializer whose class is unknown. It cannot read
// a value; a caller that has a value's exact bytes shows them as state.Hex.
type opaqueSer struct{ name string }

func (o *opaqueSer) decode(d *decoder) any {
	d.setErr(&UnknownSerializerError{Class: o.name})
	return nil
}
func (o *opaqueSer) typeName() string { return o.name }
func (o *opaqueSer) fixedLen() int    { return -1 }

// decodeWhole decodes a value that must fill b exactly. When the serializer
// cannot read it, the bytes are shown as hex rather than guessed.
func decodeWhole(s serializer, file string, base int64, b []byte) (any, error) {
	var d decoder
	return decodeWholeWith(&d, s, file, base, b)
}

// decodeWholeWith is decodeWhole with a decoder to reuse (a scan decodes
// millions of values: one allocation less per value).
func decodeWholeWith(d *decoder, s serializer, file string, base int64, b []byte) (any, error) {
	if _, ok := s.(*opaqueSer); ok {
		return state.Hex(append([]byte(nil), b...)), nil
	}
	d.reset(b, base, file, d.slab)
	v := s.decode(d)
	if d.err != nil {
		if isUnknownSerializer(d.err) {
			return state.Hex(append([]byte(nil), b...)), nil
		}
		return nil, d.err
	}
	if d.remaining() != 0 {
		d.fail("%d bytes left after a %s value", d.remaining(), s.typeName())
		return nil, d.err
	}
	return v, nil
}
