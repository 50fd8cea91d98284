package flink

import "strings"

// The serializers of Flink's Scala API (flink-scala), which jobs written
// in Scala keep their state in: case classes and Scala tuples, Option,
// Either, collections and Enumeration values. Their snapshots are
// composite (CompositeTypeSerializerSnapshot) but for the enumeration's.

var scalaSnapshotReaders = map[string]snapshotReader{
	"org.apache.flink.api.scala.typeutils.ScalaCaseClassSerializerSnapshot":  readCaseClassSnapshot,
	"org.apache.flink.api.scala.typeutils.Tuple2CaseClassSerializerSnapshot": readCaseClassSnapshot,
	"org.apache.flink.api.scala.typeutils.ScalaOptionSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		n := readCompositeN(d, depth, nil, 1, "Scala Option")
		if n == nil {
			return nil
		}
		return &optionSer{elem: n[0]}
	},
	"org.apache.flink.api.scala.typeutils.ScalaEitherSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		n := readCompositeN(d, depth, nil, 2, "Scala Either")
		if n == nil {
			return nil
		}
		return &eitherSer{left: n[0], right: n[1]}
	},
	"org.apache.flink.api.scala.typeutils.TraversableSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		var cbf string
		n := readCompositeN(d, depth, func(d *decoder, _ int) { cbf = d.utf() }, 1, "Scala collection")
		if n == nil {
			return nil
		}
		return &traversableSer{elem: n[0], collection: collectionOf(cbf)}
	},
	"org.apache.flink.api.scala.typeutils.ScalaEnumSerializerSnapshot": readScalaEnumSnapshot,
}

// caseClassSer is CaseClassSerializer: a case class or Scala tuple, its
// fields one after another, as a Java Tuple's (a list of the fields).
// Unlike a Java Tuple it is no key this reader can hash (Scala's
// hashCode of a Product differs), so a key literal never picks its key
// group: it is not a *tupleSer to javaHashCode and encodeKey.
type caseClassSer struct{ tupleSer }

// typeName names the case class in full (a Java Tuple's is TupleN).
func (c *caseClassSer) typeName() string {
	t := c.tupleSer.typeName()
	return c.class + t[strings.IndexByte(t, '<'):]
}

// readCaseClassSnapshot reads ScalaCaseClassSerializerSnapshot and
// Tuple2CaseClassSerializerSnapshot: the class name (writeUTF), then the
// fields' serializers.
func readCaseClassSnapshot(d *decoder, depth, _ int) serializer {
	var class string
	nested := readCompositeV(d, depth, func(d *decoder, _ int) { class = d.utf() })
	if d.err != nil {
		return nil
	}
	return &caseClassSer{tupleSer{class: class, fields: nested}}
}

// optionSer is OptionSerializer: a boolean (Some), then the value. None
// is NULL.
type optionSer struct{ elem serializer }

func (o *optionSer) decode(d *decoder) any {
	if !d.boolean() || d.err != nil {
		return nil
	}
	return o.elem.decode(d)
}
func (o *optionSer) typeName() string { return "Option<" + o.elem.typeName() + ">" }
func (o *optionSer) fixedLen() int    { return -1 }

// eitherSer is EitherSerializer: a boolean (Left), then the left or the
// right value, shown as an object of one field, left or right.
type eitherSer struct{ left, right serializer }

func (e *eitherSer) decode(d *decoder) any {
	isLeft := d.boolean()
	if d.err != nil {
		return nil
	}
	if isLeft {
		return map[string]any{"left": e.left.decode(d)}
	}
	return map[string]any{"right": e.right.decode(d)}
}
func (e *eitherSer) typeName() string {
	return "Either<" + e.left.typeName() + ", " + e.right.typeName() + ">"
}
func (e *eitherSer) fixedLen() int { return -1 }

// traversableSer is TraversableSerializer, for every Scala collection: an
// int count, then per element a boolean (not null) and the element.
// collection names it as the snapshot's CanBuildFrom code does.
type traversableSer struct {
	elem       serializer
	collection string
}

func (t *traversableSer) decode(d *decoder) any {
	return decodeFlagged(d, "Scala collection element", t.elem, true)
}
func (t *traversableSer) typeName() string { return t.collection + "<" + t.elem.typeName() + ">" }
func (t *traversableSer) fixedLen() int    { return -1 }

// collectionOf is the collection a CanBuildFrom's code builds, e.g. Seq
// for "implicitly[scala.collection.generic.CanBuildFrom[Seq[String],
// String, Seq[String]]]": the first type argument without its own.
func collectionOf(cbf string) string {
	_, rest, ok := strings.Cut(cbf, "CanBuildFrom[")
	if !ok {
		return "Traversable"
	}
	end := strings.IndexAny(rest, "[,]")
	if end <= 0 {
		return "Traversable"
	}
	name := strings.TrimSpace(rest[:end])
	return name[strings.LastIndexByte(name, '.')+1:]
}

// scalaEnumSer is EnumValueSerializer: the value's id, an int, shown as
// the name the snapshot gives it.
type scalaEnumSer struct {
	class string
	names map[int32]string
}

func (e *scalaEnumSer) decode(d *decoder) any {
	id := d.i32()
	if d.err != nil {
		return nil
	}
	name, ok := e.names[id]
	if !ok {
		d.off -= 4
		d.fail("Scala enumeration %s: no value of id %d among %d", e.class, id, len(e.names))
		return nil
	}
	return name
}
func (e *scalaEnumSer) typeName() string { return e.class }
func (e *scalaEnumSer) fixedLen() int    { return 4 }

// readScalaEnumSnapshot reads ScalaEnumSerializerSnapshot: the enumeration
// class, an int count, then per value its name (writeUTF) and id (int).
func readScalaEnumSnapshot(d *decoder, _, _ int) serializer {
	e := &scalaEnumSer{class: strings.TrimSuffix(d.utf(), "$"), names: map[int32]string{}}
	n := d.count("Scala enumeration value", 6)
	for range n {
		name, id := d.utf(), d.i32()
		if d.err != nil {
			return nil
		}
		if _, dup := e.names[id]; dup {
			d.off -= 4
			d.fail("Scala enumeration %s: id %d twice", e.class, id)
			return nil
		}
		e.names[id] = name
	}
	if d.err != nil {
		return nil
	}
	return e
}
