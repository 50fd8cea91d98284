package flink

import (
	"fmt"
	"math"
)

// This file reads Java's object serialization stream (the protocol of
// java.io.ObjectOutputStream, "Object Serialization Stream Protocol" of the
// Java specification): Flink writes LogicalTypes, DataTypes, comparators and
// some serializers this way inside serializer snapshots and values. The
// reader builds a generic object graph (classes, their field values in
// declaration order, custom writeObject data) and never instantiates or
// interprets anything by itself; logicaltype.go reads LogicalTypes out of
// the graph.
//
// INVARIANT: the reader is bounded whatever the bytes say: every length is
// checked against the bytes left, nesting is limited to maxJavaDepth, the
// handle table to maxJavaHandles, and array sizes to the bytes left.

// Stream protocol constants (java.io.ObjectStreamConstants).
const (
	jMagic          = 0xaced
	jVersion        = 5
	jTCNull         = 0x70
	jTCReference    = 0x71
	jTCClassDesc    = 0x72
	jTCObject       = 0x73
	jTCString       = 0x74
	jTCArray        = 0x75
	jTCClass        = 0x76
	jTCBlockData    = 0x77
	jTCEndBlockData = 0x78
	jTCReset        = 0x79
	jTCBlockDataLng = 0x7a
	jTCException    = 0x7b
	jTCLongString   = 0x7c
	jTCProxyDesc    = 0x7d
	jTCEnum         = 0x7e
	jBaseHandle     = 0x7e0000

	jSCWriteMethod    = 0x01
	jSCSerializable   = 0x02
	jSCExternalizable = 0x04
	jSCBlockData      = 0x08
	jSCEnum           = 0x10

	maxJavaDepth   = 64
	maxJavaHandles = 1 << 16
)

// jClassDesc is a serialized class descriptor.
type jClassDesc struct {
	name   string
	uid    int64
	flags  byte
	fields []jField
	super  *jClassDesc
	proxy  []string // interfaces of a dynamic proxy class
}

type jField struct {
	code  byte // B C D F I J S Z [ L
	name  string
	class string // field type of object and array fields (JVM signature)
}

// jObject is a deserialized object: per class of its hierarchy, from the
// topmost serializable superclass down, the field values and what a custom
// writeObject or writeExternal added (block data as []byte, objects).
type jObject struct {
	class *jClassDesc
	data  []jClassData
}

type jClassData struct {
	desc   *jClassDesc
	values []any
	annot  []any
}

// jEnum is an enum constant.
type jEnum struct {
	class *jClassDesc
	name  string
}

// jArray is an array; elements are int64, float64, bool, or objects.
type jArray struct {
	class *jClassDesc
	elems []any
}

// jClass is a java.lang.Class object (TC_CLASS).
type jClass struct{ desc *jClassDesc }

// field returns the value of the named field, searching the class
// hierarchy from the object's own class up.
func (o *jObject) field(name string) (any, bool) {
	for i := len(o.data) - 1; i >= 0; i-- {
		cd := o.data[i]
		for j, f := range cd.desc.fields {
			if f.name == name && j < len(cd.values) {
				return cd.values[j], true
			}
		}
	}
	return nil, false
}

// className is the object's class name.
func (o *jObject) className() string { return o.class.name }

// annotations returns what the custom writeObject of the named class (or
// of the object's own class when name is "") wrote after its fields.
func (o *jObject) annotations(name string) []any {
	for i := len(o.data) - 1; i >= 0; i-- {
		if name == "" || o.data[i].desc.name == name {
			return o.data[i].annot
		}
	}
	return nil
}

// javaReader reads one serialization stream from a decoder.
type javaReader struct {
	d       *decoder
	handles []any
	depth   int
}

// readJavaObject reads one Java serialization stream (magic, version and
// one top-level content element) from d, as InstantiationUtil.serializeObject
// writes it, and returns the element. Errors are left on d.
func readJavaObject(d *decoder) any {
	start := d.off
	if d.u16() != jMagic || d.u16() != jVersion {
		if d.err == nil {
			d.off = start
			d.fail("not a Java serialization stream")
		}
		return nil
	}
	r := &javaReader{d: d}
	v := r.content()
	if d.err != nil {
		return nil
	}
	return v
}

func (r *javaReader) failf(format string, args ...any) {
	r.d.fail("Java serialization: "+format, args...)
}

func (r *javaReader) newHandle(v any) int {
	if len(r.handles) >= maxJavaHandles {
		r.failf("more than %d objects", maxJavaHandles)
		return 0
	}
	r.handles = append(r.handles, v)
	return len(r.handles) - 1
}

func (r *javaReader) enter() bool {
	r.depth++
	if r.depth > maxJavaDepth {
		r.failf("objects nested deeper than %d", maxJavaDepth)
		return false
	}
	return true
}

func (r *javaReader) leave() { r.depth-- }

// content reads one content element: an object or block data.
func (r *javaReader) content() any {
	d := r.d
	if d.err != nil {
		return nil
	}
	if !r.enter() {
		return nil
	}
	defer r.leave()
	for {
		tc := d.u8()
		if d.err != nil {
			return nil
		}
		switch tc {
		case jTCNull:
			return nil
		case jTCReference:
			h := int(d.i32()) - jBaseHandle
			if d.err != nil {
				return nil
			}
			if h < 0 || h >= len(r.handles) {
				r.failf("reference to unknown handle %#x", h+jBaseHandle)
				return nil
			}
			return r.handles[h]
		case jTCClassDesc, jTCProxyDesc:
			d.off--
			return r.classDesc()
		case jTCObject:
			return r.object()
		case jTCString:
			s := decodeModifiedUTF8(d.take(int(d.u16())))
			if d.err != nil {
				return nil
			}
			r.newHandle(s)
			return s
		case jTCLongString:
			n := d.i64()
			if d.err == nil && (n < 0 || n > int64(d.remaining())) {
				r.failf("long string of %d bytes", n)
				return nil
			}
			s := decodeModifiedUTF8(d.take(int(n)))
			if d.err != nil {
				return nil
			}
			r.newHandle(s)
			return s
		case jTCArray:
			return r.array()
		case jTCClass:
			desc := r.classDescValue()
			c := &jClass{desc: desc}
			r.newHandle(c)
			return c
		case jTCEnum:
			desc := r.classDescValue()
			e := &jEnum{class: desc}
			r.newHandle(e)
			name, ok := r.content().(string)
			if d.err != nil {
				return nil
			}
			if !ok {
				r.failf("enum constant of %s is not a string", className(desc))
				return nil
			}
			e.name = name
			return e
		case jTCBlockData:
			return append([]byte(nil), d.take(int(d.u8()))...)
		case jTCBlockDataLng:
			n := d.count("Java block data byte", 1)
			return append([]byte(nil), d.take(n)...)
		case jTCReset:
			r.handles = r.handles[:0]
			continue
		case jTCException:
			r.failf("stream holds an exception written while serializing")
			return nil
		case jTCEndBlockData:
			d.off--
			r.failf("unexpected end of block data")
			return nil
		default:
			d.off--
			r.failf("unknown type code %#x", tc)
			return nil
		}
	}
}

func className(c *jClassDesc) string {
	if c == nil {
		return "<null class>"
	}
	return c.name
}

// classDescValue reads a class descriptor element (new, proxy, null or a
// reference to one).
func (r *javaReader) classDescValue() *jClassDesc {
	v := r.content()
	if r.d.err != nil || v == nil {
		return nil
	}
	c, ok := v.(*jClassDesc)
	if !ok {
		r.failf("expected a class descriptor, found %T", v)
		return nil
	}
	return c
}

func (r *javaReader) classDesc() *jClassDesc {
	d := r.d
	tc := d.u8()
	c := &jClassDesc{}
	if tc == jTCProxyDesc {
		r.newHandle(c)
		n := d.count("proxy interface", 2)
		for range n {
			c.proxy = append(c.proxy, d.utf())
		}
		c.name = "$Proxy"
		c.flags = jSCSerializable
	} else {
		c.name = d.utf()
		c.uid = d.i64()
		r.newHandle(c)
		c.flags = d.u8()
		n := int(d.u16())
		if d.err == nil && n*3 > d.remaining() {
			r.failf("class %s: %d fields in %d bytes", c.name, n, d.remaining())
			return nil
		}
		for range n {
			f := jField{code: d.u8(), name: d.utf()}
			switch f.code {
			case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
			case '[', 'L':
				s, ok := r.content().(string)
				if d.err != nil {
					return nil
				}
				if !ok {
					r.failf("class %s: field %s has no type name", c.name, f.name)
					return nil
				}
				f.class = s
			default:
				if d.err == nil {
					r.failf("class %s: field %s has type code %#x", c.name, f.name, f.code)
				}
				return nil
			}
			c.fields = append(c.fields, f)
		}
	}
	r.annotation() // class annotation: written by annotateClass, normally empty
	c.super = r.classDescValue()
	if d.err != nil {
		return nil
	}
	return c
}

// annotation reads content elements up to TC_ENDBLOCKDATA.
func (r *javaReader) annotation() []any {
	d := r.d
	var out []any
	for d.err == nil {
		if d.remaining() == 0 {
			r.failf("block data without its end marker")
			return nil
		}
		if d.b[d.off] == jTCEndBlockData {
			d.off++
			return out
		}
		out = append(out, r.content())
	}
	return nil
}

func (r *javaReader) object() any {
	d := r.d
	desc := r.classDescValue()
	if d.err != nil {
		return nil
	}
	if desc == nil {
		r.failf("object without a class")
		return nil
	}
	o := &jObject{class: desc}
	r.newHandle(o)
	var chain []*jClassDesc
	for c := desc; c != nil; c = c.super {
		if len(chain) > maxJavaDepth {
			r.failf("class hierarchy of %s deeper than %d", desc.name, maxJavaDepth)
			return nil
		}
		chain = append(chain, c)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		cd := jClassData{desc: c}
		switch {
		case c.flags&jSCExternalizable != 0:
			if c.flags&jSCBlockData == 0 {
				d.failErr(ErrUnsupported, "Java serialization: externalizable class %s written with protocol version 1", c.name)
				return nil
			}
			cd.annot = r.annotation()
		case c.flags&jSCSerializable != 0:
			cd.values = r.values(c)
			if c.flags&jSCWriteMethod != 0 {
				cd.annot = r.annotation()
			}
		}
		if d.err != nil {
			return nil
		}
		o.data = append(o.data, cd)
	}
	return o
}

// values reads the serializable fields of one class, in descriptor order.
func (r *javaReader) values(c *jClassDesc) []any {
	d := r.d
	out := make([]any, 0, len(c.fields))
	for _, f := range c.fields {
		var v any
		switch f.code {
		case 'B':
			v = int64(int8(d.u8()))
		case 'C':
			v = int64(d.u16())
		case 'D':
			v = d.f64()
		case 'F':
			v = float64(d.f32())
		case 'I':
			v = int64(d.i32())
		case 'J':
			v = d.i64()
		case 'S':
			v = int64(int16(d.u16()))
		case 'Z':
			v = d.boolean()
		default:
			v = r.content()
		}
		if d.err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

func (r *javaReader) array() any {
	d := r.d
	desc := r.classDescValue()
	if d.err != nil {
		return nil
	}
	a := &jArray{class: desc}
	r.newHandle(a)
	n := d.i32()
	if d.err != nil {
		return nil
	}
	name := className(desc)
	if len(name) < 2 || name[0] != '[' {
		r.failf("array of class %s", name)
		return nil
	}
	elem := name[1]
	size := map[byte]int{'B': 1, 'Z': 1, 'C': 2, 'S': 2, 'I': 4, 'F': 4, 'J': 8, 'D': 8}[elem]
	minSize := max(size, 1)
	if n < 0 || int64(n)*int64(minSize) > int64(d.remaining()) {
		r.failf("array %s of %d elements in %d bytes", name, n, d.remaining())
		return nil
	}
	if elem == 'B' {
		a.elems = []any{append([]byte(nil), d.take(int(n))...)}
		return a
	}
	a.elems = make([]any, 0, n)
	for range n {
		var v any
		switch elem {
		case 'Z':
			v = d.boolean()
		case 'C':
			v = int64(d.u16())
		case 'S':
			v = int64(int16(d.u16()))
		case 'I':
			v = int64(d.i32())
		case 'F':
			v = float64(d.f32())
		case 'J':
			v = d.i64()
		case 'D':
			v = d.f64()
		case 'L', '[':
			v = r.content()
		default:
			r.failf("array of element type %q", elem)
		}
		if d.err != nil {
			return nil
		}
		a.elems = append(a.elems, v)
	}
	return a
}

// javaList returns the elements of a serialized java.util list (ArrayList,
// LinkedList, Arrays$ArrayList, the Collections wrappers and the immutable
// lists of List.of), or ok=false.
func javaList(v any) (elems []any, ok bool) {
	for range 8 { // wrappers around wrappers
		o, isObj := v.(*jObject)
		if !isObj {
			if a, isArr := v.(*jArray); isArr {
				return a.elems, true
			}
			return nil, v == nil
		}
		switch o.className() {
		case "java.util.ArrayList", "java.util.LinkedList", "java.util.Vector":
			// writeObject: the size field (ArrayList, Vector via
			// elementData), then, after a block with the size or
			// capacity, the elements.
			if o.className() == "java.util.Vector" {
				if ed, ok := o.field("elementData"); ok {
					a, _ := ed.(*jArray)
					n, _ := o.field("elementCount")
					cnt, _ := n.(int64)
					if a == nil || cnt < 0 || cnt > int64(len(a.elems)) {
						return nil, false
					}
					return a.elems[:cnt], true
				}
			}
			var out []any
			for _, x := range o.annotations(o.className()) {
				if _, isBlock := x.([]byte); isBlock {
					continue
				}
				out = append(out, x)
			}
			return out, true
		case "java.util.Arrays$ArrayList":
			a, _ := o.field("a")
			arr, isArr := a.(*jArray)
			if !isArr {
				return nil, false
			}
			return arr.elems, true
		case "java.util.Collections$UnmodifiableRandomAccessList", "java.util.Collections$UnmodifiableList",
			"java.util.Collections$SynchronizedRandomAccessList", "java.util.Collections$SynchronizedList",
			"java.util.Collections$UnmodifiableCollection":
			inner, found := o.field("list")
			if !found {
				inner, _ = o.field("c")
			}
			v = inner
			continue
		case "java.util.Collections$EmptyList":
			return nil, true
		case "java.util.Collections$SingletonList":
			e, _ := o.field("element")
			return []any{e}, true
		case "java.util.CollSer", "java.util.ImmutableCollections$ListN", "java.util.ImmutableCollections$List12":
			// List.of: CollSer writes the array in the field "array" via
			// writeObject (a count then the elements).
			var out []any
			for _, x := range o.annotations("java.util.CollSer") {
				if _, isBlock := x.([]byte); isBlock {
					continue
				}
				out = append(out, x)
			}
			return out, true
		}
		return nil, false
	}
	return nil, false
}

// javaString returns a String field's value.
func javaString(o *jObject, name string) (string, bool) {
	v, ok := o.field(name)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// javaInt returns an int-like field's value.
func javaInt(o *jObject, name string) (int, bool) {
	v, ok := o.field(name)
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// javaBool returns a boolean field's value.
func javaBool(o *jObject, name string) (bool, bool) {
	v, ok := o.field(name)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	return b, ok
}

// javaEnum returns an enum field's constant name.
func javaEnum(o *jObject, name string) (string, bool) {
	v, ok := o.field(name)
	if !ok {
		return "", false
	}
	e, ok := v.(*jEnum)
	if !ok {
		return "", false
	}
	return e.name, true
}

// describeJava is a short description of a Java value for messages.
func describeJava(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case *jObject:
		return "an object of " + x.className()
	case *jEnum:
		return "enum " + className(x.class) + "." + x.name
	case *jArray:
		return "an array " + className(x.class)
	case string:
		return fmt.Sprintf("the string %q", x)
	}
	return fmt.Sprintf("%T", v)
}
