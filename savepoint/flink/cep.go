package flink

import (
	"strconv"
	"strings"

	"streamdbg/state"
)

// This file holds the serializers of what Flink's CEP library (and so SQL's
// MATCH_RECOGNIZE) keeps in state: the NFA's computation states, the shared
// buffer's events and nodes (flink-cep's NFAStateSerializer,
// SharedBufferNodeSerializer, Lockable, NodeId, EventId, DeweyNumber).

var cepSnapshotReaders = map[string]snapshotReader{
	"org.apache.flink.cep.nfa.NFAStateSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		prevTS := true
		n := readCompositeN(d, depth, func(d *decoder, v int) {
			// Version 2 added the previous timestamp and a flag for it.
			if v < 2 {
				prevTS = false
			} else {
				prevTS = d.boolean()
			}
		}, 3, "NFA state")
		if n == nil {
			return nil
		}
		return &nfaStateSer{version: n[0], nodeID: n[1], eventID: n[2], prevTimestamp: prevTS}
	},
	"org.apache.flink.cep.nfa.sharedbuffer.NodeId$NodeIdSerializer$NodeIdSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		n := readCompositeN(d, depth, nil, 1, "node id")
		if n == nil {
			return nil
		}
		return &nodeIDSer{eventID: n[0]}
	},
	"org.apache.flink.cep.nfa.sharedbuffer.LockableTypeSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		n := readCompositeN(d, depth, nil, 1, "lockable")
		if n == nil {
			return nil
		}
		return &lockableSer{elem: n[0]}
	},
	"org.apache.flink.cep.nfa.sharedbuffer.SharedBufferNodeSerializerSnapshotV2": func(d *decoder, depth, _ int) serializer {
		n := readCompositeN(d, depth, nil, 1, "shared buffer node")
		if n == nil {
			return nil
		}
		return &sharedBufferNodeSer{edge: n[0]}
	},
	"org.apache.flink.cep.nfa.sharedbuffer.SharedBufferEdge$SharedBufferEdgeSerializer$SharedBufferEdgeSerializerSnapshot": func(d *decoder, depth, _ int) serializer {
		n := readCompositeN(d, depth, nil, 2, "shared buffer edge")
		if n == nil {
			return nil
		}
		return &sharedBufferEdgeSer{nodeID: n[0], version: n[1]}
	},
}

func init() {
	simpleSnapshots["org.apache.flink.cep.nfa.sharedbuffer.EventId$EventIdSerializer$EventIdSerializerSnapshot"] = eventIDSer
	simpleSnapshots["org.apache.flink.cep.nfa.DeweyNumber$DeweyNumberSerializer$DeweyNumberSerializerSnapshot"] = deweySer
}

var (
	eventIDSchema = state.NewSchema("", "id", "timestamp")
	nodeIDSchema  = state.NewSchema("", "event_id", "page")
	// ComputationState's fields, named as the reference notation of the
	// samples (sql/README.md) prints them.
	computationSchema = state.NewSchema("", "state", "prev", "version", "start", "prevTs", "startEvent")
	nfaSchema         = state.NewSchema("", "partial", "completed")
	lockableSchema    = state.NewSchema("Lockable", "ref_count", "element")
	edgeSchema        = state.NewSchema("", "target", "version")
)

// eventIDSer is EventId's serializer: int id, long timestamp.
var eventIDSer = &scalar{"EventId", 12, func(d *decoder) any {
	id := int64(d.i32())
	ts := d.i64()
	if d.err != nil {
		return nil
	}
	return &state.Row{Schema: eventIDSchema, Values: []any{id, ts}}
}}

// deweySer is DeweyNumber's serializer: an int count of digits, then each
// as an int. The value prints as Flink prints it, digits joined by dots.
var deweySer = &scalar{"DeweyNumber", -1, func(d *decoder) any {
	n := d.count("Dewey number digit", 4)
	parts := make([]string, 0, n)
	for range n {
		parts = append(parts, strconv.Itoa(int(d.i32())))
	}
	if d.err != nil {
		return nil
	}
	return strings.Join(parts, ".")
}}

// nodeIDSer is NodeId's serializer: a byte 0 for null, else 1, the event
// id and the page name (a Flink string).
type nodeIDSer struct{ eventID serializer }

func (n *nodeIDSer) decode(d *decoder) any {
	if d.u8() == 0 || d.err != nil {
		return nil
	}
	ev := n.eventID.decode(d)
	page, _ := d.flinkString()
	if d.err != nil {
		return nil
	}
	return &state.Row{Schema: nodeIDSchema, Values: []any{ev, page}}
}
func (n *nodeIDSer) typeName() string { return "NodeId<" + n.eventID.typeName() + ">" }
func (n *nodeIDSer) fixedLen() int    { return -1 }

// lockableSer is Lockable's serializer: an int reference count, then the
// element.
type lockableSer struct{ elem serializer }

func (l *lockableSer) decode(d *decoder) any {
	rc := int64(d.i32())
	v := l.elem.decode(d)
	if d.err != nil {
		return nil
	}
	return &state.Row{Schema: lockableSchema, Values: []any{rc, v}}
}
func (l *lockableSer) typeName() string { return "Lockable<" + l.elem.typeName() + ">" }
func (l *lockableSer) fixedLen() int {
	if n := l.elem.fixedLen(); n >= 0 {
		return 4 + n
	}
	return -1
}

// sharedBufferNodeSer is SharedBufferNodeSerializer: an int count of
// edges, then per edge its reference count and the edge.
type sharedBufferNodeSer struct{ edge serializer }

func (s *sharedBufferNodeSer) decode(d *decoder) any {
	n := d.count("shared buffer edge", 4)
	out := make([]any, 0, min(n, 1024))
	for range n {
		rc := int64(d.i32())
		e := s.edge.decode(d)
		if d.err != nil {
			return nil
		}
		out = append(out, &state.Row{Schema: lockableSchema, Values: []any{rc, e}})
	}
	return out
}
func (s *sharedBufferNodeSer) typeName() string {
	return "SharedBufferNode<" + s.edge.typeName() + ">"
}
func (s *sharedBufferNodeSer) fixedLen() int { return -1 }

// sharedBufferEdgeSer is SharedBufferEdge's serializer: the target node
// id, then the Dewey number.
type sharedBufferEdgeSer struct{ nodeID, version serializer }

func (s *sharedBufferEdgeSer) decode(d *decoder) any {
	t := s.nodeID.decode(d)
	v := s.version.decode(d)
	if d.err != nil {
		return nil
	}
	return &state.Row{Schema: edgeSchema, Values: []any{t, v}}
}
func (s *sharedBufferEdgeSer) typeName() string {
	return "SharedBufferEdge<" + s.nodeID.typeName() + ", " + s.version.typeName() + ">"
}
func (s *sharedBufferEdgeSer) fixedLen() int { return -1 }

// nfaStateSer is NFAStateSerializer: the partial matches, then the
// completed ones, each an int count of computation states.
type nfaStateSer struct {
	version, nodeID, eventID serializer
	prevTimestamp            bool
}

func (s *nfaStateSer) decode(d *decoder) any {
	partial := s.states(d)
	completed := s.states(d)
	if d.err != nil {
		return nil
	}
	return &state.Row{Schema: nfaSchema, Values: []any{partial, completed}}
}

// states reads computation states: the state name (a Flink string), the
// previous buffer entry (node id), the version, the start timestamp, the
// previous timestamp (snapshot version 2 on), then a flag and the start
// event id.
func (s *nfaStateSer) states(d *decoder) []any {
	n := d.count("computation state", 2+1+8+1)
	out := make([]any, 0, min(n, 1024))
	for range n {
		name, _ := d.flinkString()
		prev := s.nodeID.decode(d)
		version := s.version.decode(d)
		start := d.i64()
		var prevTS any
		if s.prevTimestamp {
			prevTS = d.i64()
		}
		var startEvent any
		if d.u8() == 1 {
			startEvent = s.eventID.decode(d)
		}
		if d.err != nil {
			return nil
		}
		out = append(out, &state.Row{Schema: computationSchema,
			Values: []any{name, prev, version, start, prevTS, startEvent}})
	}
	return out
}
func (s *nfaStateSer) typeName() string {
	return "NFAState<" + s.version.typeName() + ", " + s.nodeID.typeName() + ", " + s.eventID.typeName() + ">"
}
func (s *nfaStateSer) fixedLen() int { return -1 }
