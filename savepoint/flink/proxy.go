package flink

import (
	"fmt"
	"strings"

	"streamdbg/state"
)

// Backend state types of StateMetaInfoSnapshot.BackendStateType.
const (
	backendKeyValue      = 0
	backendOperator      = 1
	backendBroadcast     = 2
	backendPriorityQueue = 3
)

const (
	maxStatesPerFile = 1 << 12
	maxOptions       = 1 << 10
	// headerProbe is how much of a state file is read for its header when
	// no offset says where the header ends.
	headerProbe = 4 << 20
)

// stateMeta is one StateMetaInfoSnapshot: a state's name, type, options
// and serializers, as a state file's header stores it.
type stateMeta struct {
	name        string
	backendType int32
	options     map[string]string
	value       serializer // VALUE_SERIALIZER
	namespace   serializer // NAMESPACE_SERIALIZER
	key         serializer // KEY_SERIALIZER (broadcast state)
	// unreadable is the class of a serializer snapshot this reader does not
	// know; set on the last state of a header that stops there.
	unreadable string
	index      int    // position in its header (the state id of the layouts)
	problem    string // status(), computed once when the header is read
	cause      error  // the kind of problem (statusErr); nil: ErrUnsupported
	kindOf     state.Kind
}

// kind maps the meta info to the shared model's kind (a scan asks for
// every entry: it is computed once, when the options are read).
func (m *stateMeta) kind() state.Kind { return m.kindOf }

func (m *stateMeta) kindFromOptions() state.Kind {
	switch m.backendType {
	case backendPriorityQueue:
		return state.KindTimers
	case backendBroadcast:
		return state.KindBroadcast
	case backendOperator:
		if m.options["OPERATOR_STATE_DISTRIBUTION_MODE"] == "UNION" {
			return state.KindUnionList
		}
		return state.KindSplitList
	}
	switch m.options["KEYED_STATE_TYPE"] {
	case "LIST":
		return state.KindList
	case "MAP":
		return state.KindMap
	case "REDUCING":
		return state.KindReducing
	case "AGGREGATING":
		return state.KindAggregating
	}
	return state.KindValue
}

// userKey and element serializers of map and list state: the snapshot's
// value serializer is a MapSerializer or ListSerializer around them.
func (m *stateMeta) mapParts() (*mapSer, bool) {
	ms, ok := unwrapTTL(m.value).(*mapSer)
	return ms, ok
}

func (m *stateMeta) listElem() (serializer, bool) {
	ls, ok := unwrapTTL(m.value).(*listSer)
	if !ok {
		return nil, false
	}
	return ls.elem, true
}

func unwrapTTL(s serializer) serializer {
	if t, ok := s.(*ttlSer); ok {
		return t.value
	}
	return s
}

// domain is "event" or "processing" for timer states, from Flink's
// "_timer_state/event_<name>" and "_timer_state/processing_<name>".
func (m *stateMeta) domain() string {
	n := strings.TrimPrefix(m.name, "_timer_state/")
	switch {
	case strings.HasPrefix(n, "event_"):
		return "event"
	case strings.HasPrefix(n, "processing_"):
		return "processing"
	}
	return ""
}

// readStateMeta reads one StateMetaInfoSnapshot (the version 6 layout).
func readStateMeta(d *decoder) *stateMeta {
	m := &stateMeta{name: d.utf(), backendType: d.i32(), options: map[string]string{}}
	if d.err == nil && (m.backendType < 0 || m.backendType > backendPriorityQueue) {
		d.fail("state %q: backend state type %d", m.name, m.backendType)
		return nil
	}
	n := d.count("state option", 4)
	if n > maxOptions {
		d.fail("state %q: %d options", m.name, n)
		return nil
	}
	for range n {
		k := d.utf()
		m.options[k] = d.utf()
	}
	m.kindOf = m.kindFromOptions()
	n = d.count("serializer", 2+4)
	if n > maxOptions {
		d.fail("state %q: %d serializers", m.name, n)
		return nil
	}
	for range n {
		k := d.utf()
		s := readSnapshot(d)
		if d.err != nil {
			if isUnknownSerializer(d.err) {
				m.unreadable = unknownClass(d.err)
				return m
			}
			return nil
		}
		switch k {
		case "VALUE_SERIALIZER":
			m.value = s
		case "NAMESPACE_SERIALIZER":
			m.namespace = s
		case "KEY_SERIALIZER":
			m.key = s
		}
	}
	if d.err != nil {
		return nil
	}
	if m.value == nil {
		d.fail("state %q has no value serializer", m.name)
		return nil
	}
	return m
}

// keyedHeader is KeyedBackendSerializationProxy: the head of a keyed state
// file. When a serializer snapshot is unknown, states holds what was read
// before it and err says which class stopped the reading.
type keyedHeader struct {
	compressed bool
	key        serializer
	states     []*stateMeta
	declared   int // states the header declares; more than listed when err stopped it
	err        error
}

// complete reports whether the header lists every state it declares.
func (h *keyedHeader) complete() bool { return h.err == nil }

// gap says what of a keyed state file cannot be listed, or "".
func (h *keyedHeader) gap() string {
	if err := h.gapError(); err != nil {
		return err.Error()
	}
	return ""
}

// gapError is gap as an error wrapping the header's.
func (h *keyedHeader) gapError() error {
	switch {
	case h.err == nil:
		return nil
	case h.key == nil:
		return fmt.Errorf("keyed state unreadable: %w", h.err)
	case h.declared > len(h.states):
		return fmt.Errorf("%d of %d states not listed: %w", h.declared-len(h.states), h.declared, h.err)
	}
	return nil
}

func readKeyedHeader(d *decoder) *keyedHeader {
	h := &keyedHeader{}
	if v := d.i32(); d.err == nil && v != 6 {
		d.off -= 4
		d.failErr(ErrUnsupported, "keyed state file version %d not supported (6 is)", v)
	}
	h.compressed = d.boolean()
	h.key = readSnapshot(d)
	if d.err != nil {
		h.err = d.err
		return h
	}
	n := int(d.u16())
	if n > maxStatesPerFile {
		d.fail("%d states", n)
	}
	h.declared = n
	for range n {
		if d.err != nil {
			break
		}
		m := readStateMeta(d)
		if m != nil {
			m.index = len(h.states)
			m.setProblem(m.findProblemErr())
			h.states = append(h.states, m)
		}
	}
	h.err = d.err
	return h
}

// operatorHeader is OperatorBackendSerializationProxy: list states, then
// broadcast states.
type operatorHeader struct {
	compressed bool
	states     []*stateMeta
	err        error
}

func readOperatorHeader(d *decoder) *operatorHeader {
	h := &operatorHeader{}
	v := d.i32()
	if d.err == nil && (v < 5 || v > 6) {
		d.off -= 4
		d.failErr(ErrUnsupported, "operator state file version %d not supported (5 and 6 are)", v)
	}
	if v >= 6 {
		h.compressed = d.boolean()
	}
	for range 2 { // list states, then broadcast states
		n := int(d.u16())
		if n > maxStatesPerFile {
			d.fail("%d states", n)
		}
		for range n {
			if d.err != nil {
				break
			}
			if m := readStateMeta(d); m != nil {
				m.index = len(h.states)
				m.setProblem(m.findProblemErr())
				h.states = append(h.states, m)
			}
		}
	}
	h.err = d.err
	return h
}

func (h *operatorHeader) find(name string) *stateMeta {
	for _, m := range h.states {
		if m.name == name {
			return m
		}
	}
	return nil
}
