package flink

import "fmt"

// This file says what cannot be read and why, so that StateMeta.Status
// lists every gap instead of a scan silently leaving it out.

// unreadableSer stands for a serializer whose snapshot was read but whose
// values this reader cannot decode (a RAW type with an unknown serializer,
// a type without a binary format). Its snapshot is skipped correctly, so
// the states after it in a file header stay readable.
type unreadableSer struct {
	name string
	err  error
}

func (u *unreadableSer) decode(d *decoder) any {
	d.setErr(u.err)
	return nil
}
func (u *unreadableSer) typeName() string { return u.name }
func (u *unreadableSer) fixedLen() int    { return -1 }

// serializerProblem says why values of s cannot be decoded, or "".
func serializerProblem(s serializer) string {
	return problemOf(s, 0)
}

func problemOf(s serializer, depth int) string {
	if depth > maxNesting {
		return ""
	}
	p := func(ss ...serializer) string {
		for _, x := range ss {
			if x == nil {
				continue
			}
			if msg := problemOf(x, depth+1); msg != "" {
				return msg
			}
		}
		return ""
	}
	switch x := s.(type) {
	case nil:
		return ""
	case *opaqueSer:
		return "unknown serializer " + x.name
	case *unreadableSer:
		return fmt.Sprintf("%s: %v", x.name, x.err)
	case *tupleSer:
		return p(x.fields...)
	case *listSer:
		return p(x.elem)
	case *mapSer:
		return p(x.key, x.value)
	case *timerSer:
		return p(x.key, x.namespace)
	case *ttlSer:
		return p(x.value)
	case *pojoSer:
		for i, f := range x.fields {
			if f == nil {
				return fmt.Sprintf("POJO %s: field %s has no serializer", x.class, x.names[i])
			}
		}
		return p(x.fields...)
	case *rowDataSer:
		return p(x.fieldSers...)
	case *externalSer:
		return p(x.internal)
	case *rawValueDataSer:
		return p(x.inner)
	case *linkedListSer:
		return p(x.elem)
	case *sortedMapSer:
		return p(x.key, x.value)
	case *streamElementSer:
		return p(x.value)
	case *lockableSer:
		return p(x.elem)
	case *sharedBufferNodeSer:
		return p(x.edge)
	case *sharedBufferEdgeSer:
		return p(x.nodeID, x.version)
	case *nfaStateSer:
		return p(x.version, x.nodeID, x.eventID)
	case *nodeIDSer:
		return p(x.eventID)
	case *nullableSer:
		return p(x.inner)
	case *genericArraySer:
		return p(x.elem)
	case *arrayDataSer:
		return p(x.elemSer)
	case *mapDataSer:
		return p(x.keySer, x.valSer)
	}
	return ""
}

// status is why a state cannot be read, or "".
func (m *stateMeta) status() string { return m.problem }

// findProblem is status, computed: an unknown serializer snapshot (which
// also ends the file's header), or serializers whose values cannot be
// decoded.
func (m *stateMeta) findProblem() string {
	if m.unreadable != "" {
		return "unknown serializer " + m.unreadable
	}
	for _, s := range []serializer{m.value, m.namespace, m.key} {
		if msg := serializerProblem(s); msg != "" {
			return msg
		}
	}
	return ""
}
