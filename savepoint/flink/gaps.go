package flink

import (
	"fmt"

	"streamdbg/state"
)

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

// statusError is why a state cannot be read: its message is the state's
// StateMeta.Status, and it wraps the kind (StateMeta.Cause): ErrUnsupported
// for what this reader does not decode, or the marked error that made the
// state unreadable.
type statusError struct {
	msg string
	err error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.err }

// statusf is a statusError of kind: ErrUnsupported, ErrCorrupt or an
// error that carries one of them.
func statusf(kind error, format string, args ...any) error {
	return &statusError{msg: fmt.Sprintf(format, args...), err: kind}
}

// setStatus marks m unreadable because of why (nil: readable).
func setStatus(m *state.StateMeta, why error) {
	m.Status, m.Cause = "", nil
	if why != nil {
		m.Status, m.Cause = why.Error(), why
	}
}

// serializerProblem says why values of s cannot be decoded, or "".
func serializerProblem(s serializer) string {
	if err := problemOf(s, 0); err != nil {
		return err.Error()
	}
	return ""
}

// problemOf is serializerProblem as a statusError, of its kind.

func problemOf(s serializer, depth int) error {
	if depth > maxNesting {
		return nil
	}
	p := func(ss ...serializer) error {
		for _, x := range ss {
			if x == nil {
				continue
			}
			if err := problemOf(x, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := s.(type) {
	case nil:
		return nil
	case *opaqueSer:
		return statusf(ErrUnsupported, "unknown serializer %s", x.name)
	case *unreadableSer:
		return statusf(x.err, "%s: %v", x.name, x.err)
	case *tupleSer:
		return p(x.fields...)
	case *caseClassSer:
		return p(x.fields...)
	case *rowSer:
		return p(x.fields...)
	case *optionSer:
		return p(x.elem)
	case *eitherSer:
		return p(x.left, x.right)
	case *traversableSer:
		return p(x.elem)
	case *setSer:
		return p(x.elem)
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
				return statusf(ErrUnsupported, "POJO %s: field %s has no serializer", x.class, x.names[i])
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
	return nil
}

// status is why a state cannot be read, or "".
func (m *stateMeta) status() string { return m.problem }

// statusErr is status as a statusError of its kind (m.cause; an unknown
// serializer class; else ErrUnsupported), or nil.
func (m *stateMeta) statusErr() error {
	switch {
	case m.problem == "":
		return nil
	case m.cause != nil:
		return &statusError{msg: m.problem, err: m.cause}
	case m.unreadable != "":
		return &statusError{msg: m.problem, err: &UnknownSerializerError{Class: m.unreadable}}
	}
	return &statusError{msg: m.problem, err: ErrUnsupported}
}

// setProblem makes why (nil: nothing) the state's status and its kind.
func (m *stateMeta) setProblem(why error) {
	m.problem, m.cause = "", nil
	if why != nil {
		m.problem, m.cause = why.Error(), why
	}
}

// findProblem is status, computed: an unknown serializer snapshot (which
// also ends the file's header), or serializers whose values cannot be
// decoded.
func (m *stateMeta) findProblem() string {
	if err := m.findProblemErr(); err != nil {
		return err.Error()
	}
	return ""
}

// findProblemErr is findProblem as a statusError of its kind.
func (m *stateMeta) findProblemErr() error {
	if m.unreadable != "" {
		return statusf(&UnknownSerializerError{Class: m.unreadable}, "unknown serializer %s", m.unreadable)
	}
	for _, s := range []serializer{m.value, m.namespace, m.key} {
		if err := problemOf(s, 0); err != nil {
			return err
		}
	}
	// Values cannot be decoded without their serializer (FuzzKeyedState and
	// FuzzOperatorState: states without one made the readers dereference
	// nil).
	if m.value == nil {
		return statusf(ErrCorrupt, "no value serializer in the state's meta information")
	}
	if m.key == nil && m.backendType == backendBroadcast {
		return statusf(ErrCorrupt, "no key serializer in the broadcast state's meta information")
	}
	return nil
}
