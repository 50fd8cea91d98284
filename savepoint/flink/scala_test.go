package flink

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const intSnapshot = "org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot"

// compositeWith writes a CompositeTypeSerializerSnapshot's payload: the magic,
// the outer version, the outer payload, then the nested snapshots (class
// and version each, with their own payload).
func (e *enc) compositeWith(outerVersion int32, outer func(), nested ...func()) {
	e.i32(compositeMagic)
	e.i32(outerVersion)
	if outer != nil {
		outer()
	}
	e.i32(nestedMagic)
	e.i32(1)
	e.i32(int32(len(nested)))
	for _, n := range nested {
		n()
	}
}

// scalaClickSnapshot is the snapshot of a Scala case class Click(id: Long,
// page: Option[String], scores: List[Int], tag: Either[Int, String],
// color: Color.Value) as flink-scala writes it (ScalaCaseClassSerializer
// and its fields' serializers), written from Flink's sources.
func scalaClickSnapshot(e *enc) {
	simple := func(class string) func() { return func() { e.utf(class); e.i32(3) } }
	e.utf("org.apache.flink.api.scala.typeutils.ScalaCaseClassSerializerSnapshot")
	e.i32(2)
	e.compositeWith(2, func() { e.utf("com.example.Click") },
		simple(longSnapshot),
		func() {
			e.utf("org.apache.flink.api.scala.typeutils.ScalaOptionSerializerSnapshot")
			e.i32(2)
			e.compositeWith(2, nil, simple(stringSnapshot))
		},
		func() {
			e.utf("org.apache.flink.api.scala.typeutils.TraversableSerializerSnapshot")
			e.i32(2)
			e.compositeWith(2, func() {
				e.utf("implicitly[scala.collection.generic.CanBuildFrom[List[Int], Int, List[Int]]]")
			}, simple(intSnapshot))
		},
		func() {
			e.utf("org.apache.flink.api.scala.typeutils.ScalaEitherSerializerSnapshot")
			e.i32(1)
			e.compositeWith(1, nil, simple(intSnapshot), simple(stringSnapshot))
		},
		func() {
			e.utf("org.apache.flink.api.scala.typeutils.ScalaEnumSerializerSnapshot")
			e.i32(3)
			e.utf("com.example.Color$")
			e.i32(2)
			e.utf("Red")
			e.i32(0)
			e.utf("Blue")
			e.i32(7)
		})
}

// TestScalaSerializers decodes values of a Scala case class with an
// Option, a List, an Either and an Enumeration value, each encoded as
// Flink's Scala serializers write them (CaseClassSerializer: the fields in
// order; OptionSerializer: a boolean, then the value; TraversableSerializer:
// an int count, then a not-null boolean and the element each;
// EitherSerializer: a boolean (left), then the side; EnumValueSerializer:
// the int id).
func TestScalaSerializers(t *testing.T) {
	var snap enc
	scalaClickSnapshot(&snap)
	d := newDecoder("snapshot", 0, snap.Bytes())
	s := readVersionedSnapshot(d, 0)
	if d.err != nil || d.remaining() != 0 {
		t.Fatalf("snapshot: %v, %d bytes left", d.err, d.remaining())
	}
	if got, want := s.typeName(), "com.example.Click<java.lang.Long, Option<java.lang.String>, List<java.lang.Integer>, Either<java.lang.Integer, java.lang.String>, com.example.Color>"; got != want {
		t.Errorf("type %q, want %q", got, want)
	}
	if err := problemOf(s, 0); err != nil {
		t.Errorf("problem: %v", err)
	}
	str := func(e *enc, s string) { e.u8(byte(len(s) + 1)); e.WriteString(s) } // StringValue: length+1, then the chars (ASCII: one byte each)
	for _, c := range []struct {
		value func(e *enc)
		want  any
	}{
		{func(e *enc) {
			e.i64(42)
			e.u8(1)
			str(e, "hi")
			e.i32(3)
			e.u8(1)
			e.i32(1)
			e.u8(0)
			e.u8(1)
			e.i32(3)
			e.u8(0)
			str(e, "x")
			e.i32(7)
		}, []any{int64(42), "hi", []any{int64(1), nil, int64(3)}, map[string]any{"right": "x"}, "Blue"}},
		{func(e *enc) {
			e.i64(-1)
			e.u8(0) // None
			e.i32(0)
			e.u8(1) // Left
			e.i32(5)
			e.i32(0)
		}, []any{int64(-1), nil, []any{}, map[string]any{"left": int64(5)}, "Red"}},
	} {
		var v enc
		c.value(&v)
		vd := newDecoder("value", 0, v.Bytes())
		got := s.decode(vd)
		if vd.err != nil || vd.remaining() != 0 || !reflect.DeepEqual(got, c.want) {
			t.Errorf("decoded %#v (%v, %d bytes left), want %#v", got, vd.err, vd.remaining(), c.want)
		}
	}
	// An id the enumeration does not have is an error at its offset.
	var bad enc
	bad.i64(1)
	bad.u8(0)
	bad.i32(0)
	bad.u8(1)
	bad.i32(5)
	bad.i32(3)
	vd := newDecoder("value", 0, bad.Bytes())
	s.decode(vd)
	if vd.err == nil || !errors.Is(vd.err, ErrCorrupt) {
		t.Errorf("enum id 3: error %v, want a corrupt-data error", vd.err)
	}
	// A case class is no key whose group this reader computes (Scala's
	// hashCode of a Product is not a Java Tuple's).
	if _, ok := javaHashCode(s, []any{int64(42)}); ok {
		t.Error("javaHashCode of a case class key")
	}
	if _, ok := encodeKey(s, []any{int64(42)}); ok {
		t.Error("encodeKey of a case class key")
	}
}

// A Scala serializer around one this reader cannot decode (an Option of
// a Kryo-serialized class) names it as the state's problem.
func TestScalaSerializerProblem(t *testing.T) {
	var e enc
	e.utf("org.apache.flink.api.scala.typeutils.ScalaOptionSerializerSnapshot")
	e.i32(2)
	e.compositeWith(2, nil, func() {
		e.utf("org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot")
		e.i32(2)
		e.utf("com.example.Blob")
		for range 3 {
			e.i64(linkedMapMagic)
			e.i32(0)
		}
	})
	d := newDecoder("snapshot", 0, e.Bytes())
	s := readVersionedSnapshot(d, 0)
	if d.err != nil || d.remaining() != 0 {
		t.Fatalf("snapshot: %v, %d bytes left", d.err, d.remaining())
	}
	err := problemOf(s, 0)
	if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "com.example.Blob") {
		t.Fatalf("problem %v, want the Kryo class named", err)
	}
}

func TestCollectionOf(t *testing.T) {
	for cbf, want := range map[string]string{
		"implicitly[scala.collection.generic.CanBuildFrom[List[Int], Int, List[Int]]]":                                   "List",
		"implicitly[scala.collection.generic.CanBuildFrom[scala.collection.immutable.Seq[String], String, Seq[String]]]": "Seq",
		"implicitly[scala.collection.generic.CanBuildFrom[Set[Long], Long, Set[Long]]]":                                  "Set",
		"something else": "Traversable",
		"":               "Traversable",
	} {
		if got := collectionOf(cbf); got != want {
			t.Errorf("collectionOf(%q) = %q, want %q", cbf, got, want)
		}
	}
}
