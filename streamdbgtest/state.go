package streamdbgtest

import (
	"fmt"
	"reflect"

	"streamdbg/runtime"
	"streamdbg/state"
)

// stateRef names one keyed state of one operator; it is resolved when
// read, so readers can be made before the job starts.
type stateRef struct {
	d                   *Driver
	operator, name      string
	reader, kinds, want string // for messages: "ValueState[int64]", the kinds it reads
	// ns is the namespace read (In), for a state kept per namespace
	// (windows); hasNS tells In(nil) from no In.
	ns    any
	hasNS bool
}

// resolve finds the state in the running job and checks its kind and the
// Go type of its values (or, for maps, of its user keys too).
func (r stateRef) resolve(ok func(state.Kind) bool, valueType, userKeyType reflect.Type) *runtime.KeyedState {
	r.d.t.Helper()
	r.d.start()
	ks, err := r.d.sess.Executor().KeyedState(r.operator, r.name)
	if err != nil {
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q): %v%s", r.reader, r.operator, r.name, err, r.operatorStateHint())
	}
	if !ok(ks.Desc.Meta.Kind) {
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q): state %q of %q is %s state; %s reads %s state", r.reader, r.operator, r.name, r.name, r.operator, ks.Desc.Meta.Kind, r.reader, r.kinds)
	}
	if got := state.GoType(ks.Desc.Value); got != nil && got != valueType {
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q): state %q of %q holds %s, not %s", r.reader, r.operator, r.name, r.name, r.operator, got, valueType)
	}
	if userKeyType != nil {
		if got := state.GoType(ks.Desc.UserKey); got != nil && got != userKeyType {
			r.d.t.Fatalf("streamdbgtest: %s(%q, %q): state %q of %q is keyed by %s, not %s", r.reader, r.operator, r.name, r.name, r.operator, got, userKeyType)
		}
	}
	return ks
}

// operatorStateHint says how to read the state when it is operator state
// (a broadcast map, a source's offsets), which the keyed readers do not
// read.
func (r stateRef) operatorStateHint() string {
	for _, m := range r.d.sess.Catalog().States() {
		if m.OperatorName == r.operator && m.StateName == r.name && m.Scope == state.ScopeOperator {
			return fmt.Sprintf("; %q is operator state (%s): read it with Query(`SELECT subtask, key, value FROM %q.%q`)", r.name, m.Kind, r.operator, r.name)
		}
	}
	return ""
}

// at reads under key, failing the test on a wrong key type or an error;
// fn gets the table and the encoded namespace to read.
func (r stateRef) at(ks *runtime.KeyedState, key any, fn func(t state.Table, ns []byte) error) {
	r.d.t.Helper()
	ns := r.namespace(ks)
	if err := ks.At(key, func(t state.Table) error { return fn(t, ns) }); err != nil {
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q).Get(%v): %v", r.reader, r.operator, r.name, key, err)
	}
}

// namespace encodes the namespace In named: nil for a state without
// namespaces. A state kept per namespace (a window's) is read in one
// namespace only: without In the reader would find nothing, so it fails.
func (r stateRef) namespace(ks *runtime.KeyedState) []byte {
	r.d.t.Helper()
	c := ks.Desc.Namespace
	switch {
	case c == nil && r.hasNS:
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q).In(%v): state %q of %q has no namespaces; read it without In", r.reader, r.operator, r.name, r.ns, r.name, r.operator)
	case c == nil:
		return nil
	case !r.hasNS:
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q): state %q of %q is kept per namespace (%s): name one with In, e.g. .In(%s)", r.reader, r.operator, r.name, r.name, r.operator, c.TypeName(), nsExample(c))
	}
	if want := state.GoType(c); want != nil && reflect.TypeOf(r.ns) != want {
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q).In(%v): the namespace is a %T; state %q of %q is kept per %s", r.reader, r.operator, r.name, r.ns, r.ns, r.name, r.operator, want)
	}
	return c.AppendAny(nil, r.ns)
}

func nsExample(c state.AnyCodec) string {
	if state.GoType(c) == reflect.TypeFor[state.Window]() {
		return "state.Window{Start: …, End: …}"
	}
	return "a " + c.TypeName()
}

func (r stateRef) in(ns any) stateRef {
	r.ns, r.hasNS = ns, true
	return r
}

// cast checks a value read from a table against T.
func cast[T any](r stateRef, v any) T {
	r.d.t.Helper()
	out, ok := v.(T)
	if !ok {
		r.d.t.Fatalf("streamdbgtest: %s(%q, %q): state %q of %q holds a %T, not a %s", r.reader, r.operator, r.name, r.name, r.operator, v, typeName[T]())
	}
	return out
}

// Value reads a value, reducing or aggregating state (its accumulator).
type Value[V any] struct{ ref stateRef }

// ValueState reads the keyed state stateName of the operator named
// operator: a ValueState, or a ReducingState or AggregatingState (their
// accumulated value). V must be the state's value type.
func ValueState[V any](d *Driver, operator, stateName string) *Value[V] {
	return &Value[V]{stateRef{d: d, operator: operator, name: stateName, reader: "ValueState[" + typeName[V]() + "]", kinds: "value, reducing or aggregating"}}
}

// In reads the state in one namespace: the window of a window's state
// (state.Window), as Flink's harness reads it with setCurrentNamespace.
// A state kept per namespace can only be read so.
func (s *Value[V]) In(namespace any) *Value[V] { return &Value[V]{s.ref.in(namespace)} }

// Get returns the value for key (a value of the operator's key type);
// false when the key has none.
func (s *Value[V]) Get(key any) (V, bool) {
	s.ref.d.t.Helper()
	ks := s.ref.resolve(func(k state.Kind) bool {
		return k == state.KindValue || k == state.KindReducing || k == state.KindAggregating
	}, reflect.TypeFor[V](), nil)
	var v any
	var found bool
	s.ref.at(ks, key, func(t state.Table, ns []byte) (err error) {
		v, found, err = t.Get(ns)
		return err
	})
	if !found {
		var zero V
		return zero, false
	}
	return cast[V](s.ref, v), true
}

// List reads a list state.
type List[V any] struct{ ref stateRef }

// ListState reads the list state stateName of the operator named
// operator; V is the type of its elements.
func ListState[V any](d *Driver, operator, stateName string) *List[V] {
	return &List[V]{stateRef{d: d, operator: operator, name: stateName, reader: "ListState[" + typeName[V]() + "]", kinds: "list"}}
}

// In reads the state in one namespace, as Value.In.
func (s *List[V]) In(namespace any) *List[V] { return &List[V]{s.ref.in(namespace)} }

// Get returns the list for key; false when the key has none.
func (s *List[V]) Get(key any) ([]V, bool) {
	s.ref.d.t.Helper()
	ks := s.ref.resolve(func(k state.Kind) bool { return k == state.KindList }, reflect.TypeFor[V](), nil)
	var vs []any
	s.ref.at(ks, key, func(t state.Table, ns []byte) (err error) {
		vs, err = t.ListGet(ns)
		return err
	})
	if len(vs) == 0 {
		return nil, false
	}
	out := make([]V, len(vs))
	for i, v := range vs {
		out[i] = cast[V](s.ref, v)
	}
	return out, true
}

// Map reads a map state.
type Map[K comparable, V any] struct{ ref stateRef }

// MapState reads the map state stateName of the operator named operator;
// K is the type of its user keys, V of its values.
func MapState[K comparable, V any](d *Driver, operator, stateName string) *Map[K, V] {
	return &Map[K, V]{stateRef{d: d, operator: operator, name: stateName, reader: "MapState[" + typeName[K]() + ", " + typeName[V]() + "]", kinds: "map"}}
}

// In reads the state in one namespace, as Value.In.
func (s *Map[K, V]) In(namespace any) *Map[K, V] { return &Map[K, V]{s.ref.in(namespace)} }

// Get returns the value of userKey in key's map; false when absent.
func (s *Map[K, V]) Get(key any, userKey K) (V, bool) {
	s.ref.d.t.Helper()
	m := s.All(key)
	v, ok := m[userKey]
	return v, ok
}

// All returns key's whole map (empty when the key has none).
func (s *Map[K, V]) All(key any) map[K]V {
	s.ref.d.t.Helper()
	ks := s.ref.resolve(func(k state.Kind) bool { return k == state.KindMap }, reflect.TypeFor[V](), reflect.TypeFor[K]())
	out := map[K]V{}
	var failure error
	s.ref.at(ks, key, func(t state.Table, ns []byte) error {
		return t.MapRange(ns, func(uk []byte, v any) bool {
			k, err := ks.Desc.UserKey.DecodeAny(uk)
			if err != nil {
				failure = err
				return false
			}
			out[cast[K](s.ref, k)] = cast[V](s.ref, v)
			return true
		})
	})
	if failure != nil {
		s.ref.d.t.Fatalf("streamdbgtest: %s(%q, %q): user key: %v", s.ref.reader, s.ref.operator, s.ref.name, failure)
	}
	return out
}

// Timer is a timer of an operator.
type Timer struct {
	Key       any
	Namespace any // nil for the void namespace; a state.Window for windows
	Domain    runtime.TimeDomain
	// Timestamp is when it fires, in epoch milliseconds.
	Timestamp int64
	Subtask   int
}

func (t Timer) String() string {
	if t.Namespace != nil {
		return fmt.Sprintf("%s timer of %v in %v at %d", t.Domain, t.Key, t.Namespace, t.Timestamp)
	}
	return fmt.Sprintf("%s timer of %v at %d", t.Domain, t.Key, t.Timestamp)
}

// Timers lists the timers of the operator named operator: event time
// first, each domain in firing order.
func Timers(d *Driver, operator string) []Timer {
	d.t.Helper()
	d.start()
	ts, err := d.sess.Executor().Timers(operator)
	if err != nil {
		d.t.Fatalf("streamdbgtest: Timers(%q): %v", operator, err)
	}
	out := make([]Timer, len(ts))
	for i, t := range ts {
		out[i] = Timer{Key: t.Key, Namespace: t.Namespace, Domain: t.Domain, Timestamp: t.Timestamp, Subtask: t.Subtask}
	}
	return out
}
