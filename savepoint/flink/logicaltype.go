package flink

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// typeRoot is Flink's LogicalTypeRoot: what kind of SQL type a LogicalType
// is. The names are the Java enum's constant names.
type typeRoot uint8

const (
	rootUnknown typeRoot = iota
	rootChar
	rootVarchar
	rootBoolean
	rootBinary
	rootVarbinary
	rootDecimal
	rootTinyint
	rootSmallint
	rootInteger
	rootBigint
	rootFloat
	rootDouble
	rootDate
	rootTime
	rootTimestamp
	rootTimestampTZ
	rootTimestampLTZ
	rootIntervalYearMonth
	rootIntervalDayTime
	rootArray
	rootMultiset
	rootMap
	rootRow
	rootDistinct
	rootStructured
	rootNull
	rootRaw
	rootSymbol
	rootVariant
	rootDescriptor
)

var rootNames = map[string]typeRoot{
	"CHAR":                           rootChar,
	"VARCHAR":                        rootVarchar,
	"BOOLEAN":                        rootBoolean,
	"BINARY":                         rootBinary,
	"VARBINARY":                      rootVarbinary,
	"DECIMAL":                        rootDecimal,
	"TINYINT":                        rootTinyint,
	"SMALLINT":                       rootSmallint,
	"INTEGER":                        rootInteger,
	"BIGINT":                         rootBigint,
	"FLOAT":                          rootFloat,
	"DOUBLE":                         rootDouble,
	"DATE":                           rootDate,
	"TIME_WITHOUT_TIME_ZONE":         rootTime,
	"TIMESTAMP_WITHOUT_TIME_ZONE":    rootTimestamp,
	"TIMESTAMP_WITH_TIME_ZONE":       rootTimestampTZ,
	"TIMESTAMP_WITH_LOCAL_TIME_ZONE": rootTimestampLTZ,
	"INTERVAL_YEAR_MONTH":            rootIntervalYearMonth,
	"INTERVAL_DAY_TIME":              rootIntervalDayTime,
	"ARRAY":                          rootArray,
	"MULTISET":                       rootMultiset,
	"MAP":                            rootMap,
	"ROW":                            rootRow,
	"DISTINCT_TYPE":                  rootDistinct,
	"STRUCTURED_TYPE":                rootStructured,
	"NULL":                           rootNull,
	"RAW":                            rootRaw,
	"SYMBOL":                         rootSymbol,
	"VARIANT":                        rootVariant,
	"DESCRIPTOR":                     rootDescriptor,
}

// ltype is a Flink LogicalType as a savepoint stores it (Java-serialized):
// enough to lay out and print its values.
type ltype struct {
	root      typeRoot
	rootName  string
	nullable  bool
	length    int    // CHAR, VARCHAR, BINARY, VARBINARY
	precision int    // DECIMAL, TIME, TIMESTAMP*; INTERVAL: year or day precision
	scale     int    // DECIMAL; INTERVAL DAY TO SECOND: fractional precision
	kind      string // TIMESTAMP*: REGULAR, ROWTIME or PROCTIME; INTERVAL: resolution
	fields    []ltField
	elem      *ltype // ARRAY, MULTISET
	key, val  *ltype // MAP
	source    *ltype // DISTINCT_TYPE
	class     string // RAW: the value class; STRUCTURED: the implementation class
	name      string // DISTINCT and STRUCTURED: the catalog identifier, when any
	// rawSer is a RAW type's serializer, from the Java-serialized
	// serializer object; nil when this reader does not know it.
	rawSer     serializer
	rawSerName string
}

type ltField struct {
	name string
	typ  *ltype
}

// maxVarLen is the length of STRING (VARCHAR(2147483647)) and BYTES.
const maxVarLen = math.MaxInt32

// readLogicalType reads one Java-serialized LogicalType from d.
func readLogicalType(d *decoder) *ltype {
	v := readJavaObject(d)
	if d.err != nil {
		return nil
	}
	t, err := logicalTypeOf(v, 0)
	if err != nil {
		d.setErr(err)
		return nil
	}
	return t
}

// logicalTypeOf reads a LogicalType out of a Java object graph.
func logicalTypeOf(v any, depth int) (*ltype, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("logical type nested too deep: %w", ErrCorrupt)
	}
	o, ok := v.(*jObject)
	if !ok {
		return nil, fmt.Errorf("logical type: expected a LogicalType object, found %s: %w", describeJava(v), ErrCorrupt)
	}
	rootName, ok := javaEnum(o, "typeRoot")
	if !ok {
		return nil, fmt.Errorf("logical type: %s has no typeRoot: %w", o.className(), ErrUnsupported)
	}
	t := &ltype{root: rootNames[rootName], rootName: rootName}
	t.nullable, _ = javaBool(o, "isNullable")
	need := func(name string) int {
		n, found := javaInt(o, name)
		if !found {
			ok = false
		}
		return n
	}
	ok = true
	switch t.root {
	case rootChar, rootVarchar, rootBinary, rootVarbinary:
		t.length = need("length")
	case rootDecimal:
		t.precision, t.scale = need("precision"), need("scale")
	case rootTime:
		t.precision = need("precision")
	case rootTimestamp, rootTimestampTZ, rootTimestampLTZ:
		t.precision = need("precision")
		t.kind, _ = javaEnum(o, "kind")
	case rootIntervalYearMonth:
		t.kind, _ = javaEnum(o, "resolution")
		t.precision = need("yearPrecision")
	case rootIntervalDayTime:
		t.kind, _ = javaEnum(o, "resolution")
		t.precision, t.scale = need("dayPrecision"), need("fractionalPrecision")
	case rootArray, rootMultiset:
		e, _ := o.field("elementType")
		elem, err := logicalTypeOf(e, depth+1)
		if err != nil {
			return nil, err
		}
		t.elem = elem
	case rootMap:
		k, _ := o.field("keyType")
		val, _ := o.field("valueType")
		var err error
		if t.key, err = logicalTypeOf(k, depth+1); err != nil {
			return nil, err
		}
		if t.val, err = logicalTypeOf(val, depth+1); err != nil {
			return nil, err
		}
	case rootRow, rootStructured:
		listField, itemClass := "fields", "RowField"
		if t.root == rootStructured {
			listField, itemClass = "attributes", "StructuredAttribute"
			if c, found := o.field("implementationClass"); found {
				if jc, isClass := c.(*jClass); isClass {
					t.class = className(jc.desc)
				}
			}
			if t.class == "" {
				t.class, _ = javaString(o, "className")
			}
			t.name = objectIdentifier(o)
		}
		lv, _ := o.field(listField)
		items, isList := javaList(lv)
		if !isList {
			return nil, fmt.Errorf("logical type %s: %s is %s, not a list: %w", rootName, listField, describeJava(lv), ErrUnsupported)
		}
		if len(items) > maxFields {
			return nil, fmt.Errorf("logical type %s with %d fields: %w", rootName, len(items), ErrCorrupt)
		}
		for _, it := range items {
			fo, isObj := it.(*jObject)
			if !isObj || !strings.HasSuffix(fo.className(), itemClass) {
				return nil, fmt.Errorf("logical type %s: field is %s: %w", rootName, describeJava(it), ErrUnsupported)
			}
			name, _ := javaString(fo, "name")
			ft, _ := fo.field("type")
			typ, err := logicalTypeOf(ft, depth+1)
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, ltField{name: name, typ: typ})
		}
	case rootDistinct:
		s, _ := o.field("sourceType")
		src, err := logicalTypeOf(s, depth+1)
		if err != nil {
			return nil, err
		}
		t.source = src
		t.name = objectIdentifier(o)
	case rootRaw:
		if c, found := o.field("clazz"); found {
			if jc, isClass := c.(*jClass); isClass {
				t.class = className(jc.desc)
			}
		}
		if s, found := o.field("serializer"); found {
			t.rawSer, t.rawSerName = serializerFromJava(s)
		}
		if _, found := o.field("typeInfo"); found && t.class == "" {
			// TypeInformationRawType: a legacy type information, no
			// serializer of its own to read values with.
			t.class = "TypeInformation"
		}
	case rootNull, rootSymbol, rootVariant, rootDescriptor, rootBoolean, rootTinyint, rootSmallint,
		rootInteger, rootBigint, rootFloat, rootDouble, rootDate:
	default:
		// A type root of a newer Flink (BITMAP, UUID, GEOGRAPHY…): the
		// type is kept by name and its values are not decoded
		// (newFieldCodec), so the snapshot, and the states after it,
		// still read.
		t.root = rootUnknown
	}
	if !ok {
		return nil, fmt.Errorf("logical type %s (%s): fields missing: %w", rootName, o.className(), ErrUnsupported)
	}
	if err := t.checkBounds(); err != nil {
		return nil, err
	}
	return t, nil
}

// checkBounds refuses precisions, scales and lengths outside what Flink's
// types allow (DecimalType, TimeType, the timestamp types, the interval
// types): values are formatted with them (a DECIMAL scale of 2^31-1 made
// one value a 2 GB string).
func (t *ltype) checkBounds() error {
	bad := func(what string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("logical type %s: %s %d outside [%d, %d]: %w", t.rootName, what, v, lo, hi, ErrCorrupt)
		}
		return nil
	}
	switch t.root {
	case rootDecimal:
		return cmp.Or(bad("precision", t.precision, 1, 38), bad("scale", t.scale, 0, t.precision))
	case rootTime, rootTimestamp, rootTimestampTZ, rootTimestampLTZ:
		return bad("precision", t.precision, 0, 9)
	case rootIntervalYearMonth:
		return bad("year precision", t.precision, 1, 4)
	case rootIntervalDayTime:
		return cmp.Or(bad("day precision", t.precision, 1, 6), bad("fractional precision", t.scale, 0, 9))
	case rootChar, rootVarchar, rootBinary, rootVarbinary:
		return bad("length", t.length, 0, maxVarLen)
	}
	return nil
}

// objectIdentifier prints a user-defined type's catalog identifier.
func objectIdentifier(o *jObject) string {
	v, _ := o.field("objectIdentifier")
	id, ok := v.(*jObject)
	if !ok {
		return ""
	}
	var parts []string
	for _, f := range []string{"catalogName", "databaseName", "objectName"} {
		if s, ok := javaString(id, f); ok && s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ".")
}

// sql prints the type as Flink SQL does: BIGINT NOT NULL, STRING,
// ROW<a INT, b STRING>, TIMESTAMP(3) *ROWTIME*.
func (t *ltype) sql() string {
	var b strings.Builder
	t.appendSQL(&b)
	return b.String()
}

func (t *ltype) appendSQL(b *strings.Builder) {
	if t == nil {
		b.WriteString("?")
		return
	}
	p := func(name string, n int) {
		b.WriteString(name)
		b.WriteByte('(')
		b.WriteString(strconv.Itoa(n))
		b.WriteByte(')')
	}
	switch t.root {
	case rootChar:
		p("CHAR", t.length)
	case rootVarchar:
		if t.length == maxVarLen {
			b.WriteString("STRING")
		} else {
			p("VARCHAR", t.length)
		}
	case rootBinary:
		p("BINARY", t.length)
	case rootVarbinary:
		if t.length == maxVarLen {
			b.WriteString("BYTES")
		} else {
			p("VARBINARY", t.length)
		}
	case rootDecimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.precision, t.scale)
	case rootTime:
		p("TIME", t.precision)
	case rootTimestamp:
		p("TIMESTAMP", t.precision)
	case rootTimestampTZ:
		fmt.Fprintf(b, "TIMESTAMP(%d) WITH TIME ZONE", t.precision)
	case rootTimestampLTZ:
		p("TIMESTAMP_LTZ", t.precision)
	case rootIntervalYearMonth:
		b.WriteString("INTERVAL " + strings.ReplaceAll(t.kind, "_", " "))
	case rootIntervalDayTime:
		b.WriteString("INTERVAL " + strings.ReplaceAll(t.kind, "_", " "))
	case rootArray, rootMultiset:
		b.WriteString(map[typeRoot]string{rootArray: "ARRAY<", rootMultiset: "MULTISET<"}[t.root])
		t.elem.appendSQL(b)
		b.WriteByte('>')
	case rootMap:
		b.WriteString("MAP<")
		t.key.appendSQL(b)
		b.WriteString(", ")
		t.val.appendSQL(b)
		b.WriteByte('>')
	case rootRow, rootStructured:
		if t.root == rootStructured {
			b.WriteString("STRUCTURED<")
		} else {
			b.WriteString("ROW<")
		}
		for i, f := range t.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			if f.name != "" {
				b.WriteString(f.name)
				b.WriteByte(' ')
			}
			f.typ.appendSQL(b)
		}
		b.WriteByte('>')
	case rootDistinct:
		if t.name != "" {
			b.WriteString(t.name)
		} else {
			t.source.appendSQL(b)
		}
	case rootRaw:
		b.WriteString("RAW('" + shortClass(t.class) + "')")
	case rootTinyint:
		b.WriteString("TINYINT")
	case rootSmallint:
		b.WriteString("SMALLINT")
	case rootInteger:
		b.WriteString("INT")
	default:
		b.WriteString(t.rootName)
	}
	switch t.kind {
	case "ROWTIME", "PROCTIME":
		b.WriteString(" *" + t.kind + "*")
	}
	if !t.nullable && t.root != rootNull {
		b.WriteString(" NOT NULL")
	}
}

func shortClass(c string) string {
	return c[strings.LastIndexAny(c, ".")+1:]
}

// rowSQL prints a row of field types, with names where known.
func rowSQL(types []*ltype, names []string) string {
	var b strings.Builder
	b.WriteString("ROW<")
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		if i < len(names) && names[i] != "" {
			b.WriteString(names[i])
			b.WriteByte(' ')
		}
		t.appendSQL(&b)
	}
	b.WriteByte('>')
	return b.String()
}

// fieldNames lists a ROW or STRUCTURED type's field names (nil when none
// has a name).
func (t *ltype) fieldNames() []string {
	names := make([]string, len(t.fields))
	for i, f := range t.fields {
		names[i] = f.name
	}
	return userNames(names)
}

// userNames keeps the names a user gave: Flink's planner names the columns
// it makes up "$f3", "$g_1", "$SUM0"…; those fields are shown by position
// (f3 for the fourth field) instead. nil when no name is left.
func userNames(names []string) []string {
	out := make([]string, len(names))
	has := false
	for i, n := range names {
		if n != "" && !strings.HasPrefix(n, "$") {
			out[i] = n
			has = true
		}
	}
	if !has {
		return nil
	}
	return out
}

// fieldTypes lists a ROW or STRUCTURED type's field types.
func (t *ltype) fieldTypes() []*ltype {
	out := make([]*ltype, len(t.fields))
	for i, f := range t.fields {
		out[i] = f.typ
	}
	return out
}

// serializerFromJava maps a Java-serialized TypeSerializer object (a RAW
// type's serializer, ArrayDataSerializer's element serializer) to this
// reader's serializer, for the serializers whose objects carry no
// configuration or only what is read here. It returns the class name and
// nil when the serializer is not known.
func serializerFromJava(v any) (serializer, string) {
	o, ok := v.(*jObject)
	if !ok {
		return nil, describeJava(v)
	}
	class := o.className()
	if s, ok := javaSingletons[class]; ok {
		return s, class
	}
	return nil, class
}

// javaSingletons maps the class names of serializers without configuration
// (TypeSerializerSingleton subclasses) to their serializers.
var javaSingletons = map[string]serializer{
	"org.apache.flink.api.common.typeutils.base.LongSerializer":                       longSer,
	"org.apache.flink.api.common.typeutils.base.IntSerializer":                        intSer,
	"org.apache.flink.api.common.typeutils.base.ShortSerializer":                      shortSer,
	"org.apache.flink.api.common.typeutils.base.ByteSerializer":                       byteSer,
	"org.apache.flink.api.common.typeutils.base.DoubleSerializer":                     doubleSer,
	"org.apache.flink.api.common.typeutils.base.FloatSerializer":                      floatSer,
	"org.apache.flink.api.common.typeutils.base.BooleanSerializer":                    boolSer,
	"org.apache.flink.api.common.typeutils.base.CharSerializer":                       charSer,
	"org.apache.flink.api.common.typeutils.base.StringSerializer":                     stringSer,
	"org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer":   bytesSer,
	"org.apache.flink.api.common.typeutils.base.VoidSerializer":                       voidSer,
	"org.apache.flink.table.dataview.NullSerializer":                                  nullSer,
	"org.apache.flink.table.runtime.typeutils.StringDataSerializer":                   stringDataSer,
	"org.apache.flink.table.runtime.operators.sink.SortedLongSerializer":              sortedLongSer,
	"org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer":   longArraySer,
	"org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer":    intArraySer,
	"org.apache.flink.api.common.typeutils.base.array.DoublePrimitiveArraySerializer": doubleArraySer,
}
