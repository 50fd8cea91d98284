package state

import (
	"fmt"
	"sync"
	"unsafe"
)

// smallInts are the boxed int64s 0 to len-1, made once: counters, the
// most common state values, then go into a backend's boxed value without an
// allocation per update (Go itself only has the boxes of 0 to 255).
var smallInts = sync.OnceValue(func() []any {
	out := make([]any, 1<<16)
	for i := range out {
		out[i] = int64(i)
	}
	return out
})

// boxer returns how values of T become the boxed values tables take.
func boxer[T any]() func(T) any {
	var zero T
	if _, ok := any(zero).(int64); ok {
		ints := smallInts()
		return func(v T) any {
			// INVARIANT: T is int64 (checked above), so the cast is exact.
			i := *(*int64)(unsafe.Pointer(&v))
			if uint64(i) < uint64(len(ints)) {
				return ints[i]
			}
			return v
		}
	}
	return func(v T) any { return v }
}

// BoxInt64 is n as a Table value: boxed without an allocation for small
// values, as every int64 a codec decodes.
func BoxInt64(n int64) any {
	if ints := smallInts(); uint64(n) < uint64(len(ints)) {
		return ints[n]
	}
	return n
}

// box is boxer's conversion, for one value.
func box[T any](v T) any {
	var zero T
	if _, ok := any(zero).(int64); ok {
		// INVARIANT: T is int64 (checked above), so the cast is exact.
		i := *(*int64)(unsafe.Pointer(&v))
		if ints := smallInts(); uint64(i) < uint64(len(ints)) {
			return ints[i]
		}
	}
	return v
}

// Registry is where an operator declares its state: the runtime hands one to
// every rich function's Open and InitializeState.
type Registry interface {
	// KeyedTable declares a keyed state. It fails, naming the operator and
	// the remedy, when the operator's input is not keyed.
	KeyedTable(d StateDesc) (Table, error)
	// Operator returns the operator state of this subtask.
	Operator() *OperatorStore
}

// ValueDescriptor declares a ValueState.
type ValueDescriptor[T any] struct {
	Name  string
	Codec Codec[T]
}

// Value declares a single value per key (and namespace).
func Value[T any](name string, c Codec[T]) ValueDescriptor[T] {
	return ValueDescriptor[T]{Name: name, Codec: c}
}

// Desc erases the descriptor's types.
func (d ValueDescriptor[T]) Desc() StateDesc {
	return StateDesc{Meta: StateMeta{StateName: d.Name, Scope: ScopeKeyed, Kind: KindValue, ValueType: d.Codec.TypeName()}, Value: Erase(d.Codec)}
}

// Bind declares the state in r.
func (d ValueDescriptor[T]) Bind(r Registry) (*ValueState[T], error) {
	t, err := r.KeyedTable(d.Desc())
	if err != nil {
		return nil, err
	}
	return NewValueState[T](t), nil
}

// ValueState holds one value per key and namespace.
type ValueState[T any] struct {
	table Table
	ns    []byte
	box   func(T) any
	// i64 is table when T is int64 and the table keeps int64 values
	// unboxed: reads and writes then neither box nor unbox.
	i64 Int64Table
}

// NewValueState wraps a table registered from d.Desc(); the runtime's
// internal operators use it with namespaces.
func NewValueState[T any](t Table) *ValueState[T] {
	s := &ValueState[T]{table: t, box: boxer[T]()}
	var zero T
	if _, ok := any(zero).(int64); ok {
		s.i64, _ = t.(Int64Table)
	}
	return s
}

// SetNamespace sets the encoded namespace of following accesses.
func (s *ValueState[T]) SetNamespace(ns []byte) { s.ns = ns }

// Value returns the current key's value, and false when there is none.
func (s *ValueState[T]) Value() (T, bool, error) {
	if s.i64 != nil {
		n, ok, err := s.i64.GetInt64(s.ns)
		// INVARIANT: i64 is only set when T is int64 (NewValueState).
		return *(*T)(unsafe.Pointer(&n)), ok, err
	}
	v, ok, err := s.table.Get(s.ns)
	if !ok || err != nil {
		var zero T
		return zero, false, err
	}
	return v.(T), true, nil
}

// Update sets the current key's value.
func (s *ValueState[T]) Update(v T) error {
	if s.i64 != nil {
		// INVARIANT: i64 is only set when T is int64 (NewValueState).
		return s.i64.PutInt64(s.ns, *(*int64)(unsafe.Pointer(&v)))
	}
	return s.table.Put(s.ns, s.box(v))
}

// Clear removes the current key's value.
func (s *ValueState[T]) Clear() error { return s.table.Clear(s.ns) }

// ListDescriptor declares a ListState.
type ListDescriptor[T any] struct {
	Name  string
	Codec Codec[T]
}

// List declares a list of elements per key (and namespace).
func List[T any](name string, c Codec[T]) ListDescriptor[T] {
	return ListDescriptor[T]{Name: name, Codec: c}
}

// Desc erases the descriptor's types.
func (d ListDescriptor[T]) Desc() StateDesc {
	return StateDesc{Meta: StateMeta{StateName: d.Name, Scope: ScopeKeyed, Kind: KindList, ValueType: d.Codec.TypeName(), UserKeyType: Position.TypeName()}, Value: Erase(d.Codec)}
}

// Bind declares the state in r.
func (d ListDescriptor[T]) Bind(r Registry) (*ListState[T], error) {
	t, err := r.KeyedTable(d.Desc())
	if err != nil {
		return nil, err
	}
	return &ListState[T]{table: t}, nil
}

// ListState holds a list per key and namespace.
type ListState[T any] struct {
	table Table
	ns    []byte
}

// NewListState wraps a table registered from a ListDescriptor's Desc.
func NewListState[T any](t Table) *ListState[T] { return &ListState[T]{table: t} }

// SetNamespace sets the encoded namespace of following accesses.
func (s *ListState[T]) SetNamespace(ns []byte) { s.ns = ns }

// Get returns the current key's elements (nil when empty).
func (s *ListState[T]) Get() ([]T, error) {
	vs, err := s.table.ListGet(s.ns)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = v.(T)
	}
	return out, nil
}

// Add appends one element.
func (s *ListState[T]) Add(v T) error { return s.table.ListAppend(s.ns, v) }

// Update replaces the list.
func (s *ListState[T]) Update(vs []T) error {
	as := make([]any, len(vs))
	for i, v := range vs {
		as[i] = v
	}
	return s.table.ListPut(s.ns, as)
}

// Clear empties the list.
func (s *ListState[T]) Clear() error { return s.table.Clear(s.ns) }

// MapDescriptor declares a MapState.
type MapDescriptor[K, V any] struct {
	Name       string
	KeyCodec   Codec[K]
	ValueCodec Codec[V]
}

// Map declares a map per key (and namespace); each map entry is stored
// separately.
func Map[K, V any](name string, kc Codec[K], vc Codec[V]) MapDescriptor[K, V] {
	return MapDescriptor[K, V]{Name: name, KeyCodec: kc, ValueCodec: vc}
}

// Desc erases the descriptor's types.
func (d MapDescriptor[K, V]) Desc() StateDesc {
	return StateDesc{Meta: StateMeta{StateName: d.Name, Scope: ScopeKeyed, Kind: KindMap, UserKeyType: d.KeyCodec.TypeName(), ValueType: d.ValueCodec.TypeName()},
		UserKey: Erase(d.KeyCodec), Value: Erase(d.ValueCodec)}
}

// Bind declares the state in r.
func (d MapDescriptor[K, V]) Bind(r Registry) (*MapState[K, V], error) {
	t, err := r.KeyedTable(d.Desc())
	if err != nil {
		return nil, err
	}
	return &MapState[K, V]{table: t, kc: d.KeyCodec}, nil
}

// MapState holds a map per key and namespace.
type MapState[K, V any] struct {
	table Table
	kc    Codec[K]
	ns    []byte
	buf   []byte
}

// SetNamespace sets the encoded namespace of following accesses.
func (s *MapState[K, V]) SetNamespace(ns []byte) { s.ns = ns }

func (s *MapState[K, V]) encode(k K) []byte {
	s.buf = s.kc.Append(s.buf[:0], k)
	return s.buf
}

// Get returns the value under k.
func (s *MapState[K, V]) Get(k K) (V, bool, error) {
	v, ok, err := s.table.MapGet(s.ns, s.encode(k))
	if !ok || err != nil {
		var zero V
		return zero, false, err
	}
	return v.(V), true, nil
}

// Put sets the value under k.
func (s *MapState[K, V]) Put(k K, v V) error { return s.table.MapPut(s.ns, s.encode(k), v) }

// Remove deletes k.
func (s *MapState[K, V]) Remove(k K) error { return s.table.MapDelete(s.ns, s.encode(k)) }

// Range calls fn for each entry in key byte order until it returns false.
func (s *MapState[K, V]) Range(fn func(K, V) bool) error {
	var derr error
	err := s.table.MapRange(s.ns, func(uk []byte, v any) bool {
		k, err := s.kc.Decode(uk)
		if err != nil {
			derr = fmt.Errorf("state %s: map key: %w", s.table.Desc().Meta.StateName, err)
			return false
		}
		return fn(k, v.(V))
	})
	if err != nil {
		return err
	}
	return derr
}

// Clear removes the whole map.
func (s *MapState[K, V]) Clear() error { return s.table.Clear(s.ns) }

// ReducingDescriptor declares a ReducingState.
type ReducingDescriptor[T any] struct {
	Name   string
	Codec  Codec[T]
	Reduce func(a, b T) T
}

// Reducing declares a value per key that every Add folds in with reduce.
func Reducing[T any](name string, c Codec[T], reduce func(a, b T) T) ReducingDescriptor[T] {
	return ReducingDescriptor[T]{Name: name, Codec: c, Reduce: reduce}
}

// Desc erases the descriptor's types.
func (d ReducingDescriptor[T]) Desc() StateDesc {
	return StateDesc{Meta: StateMeta{StateName: d.Name, Scope: ScopeKeyed, Kind: KindReducing, ValueType: d.Codec.TypeName()},
		Value: Erase(d.Codec), Merge: func(a, b any) any { return d.Reduce(a.(T), b.(T)) }}
}

// Bind declares the state in r.
func (d ReducingDescriptor[T]) Bind(r Registry) (*ReducingState[T], error) {
	t, err := r.KeyedTable(d.Desc())
	if err != nil {
		return nil, err
	}
	return NewReducingState(t, d.Reduce), nil
}

// ReducingState folds added values into one.
type ReducingState[T any] struct {
	table  Table
	reduce func(a, b T) T
	ns     []byte
	box    func(T) any
}

// NewReducingState wraps a table registered from a ReducingDescriptor's Desc.
func NewReducingState[T any](t Table, reduce func(a, b T) T) *ReducingState[T] {
	return &ReducingState[T]{table: t, reduce: reduce, box: boxer[T]()}
}

// SetNamespace sets the encoded namespace of following accesses.
func (s *ReducingState[T]) SetNamespace(ns []byte) { s.ns = ns }

// Get returns the reduced value.
func (s *ReducingState[T]) Get() (T, bool, error) {
	v, ok, err := s.table.Get(s.ns)
	if !ok || err != nil {
		var zero T
		return zero, false, err
	}
	return v.(T), true, nil
}

// Add folds v into the value.
func (s *ReducingState[T]) Add(v T) error {
	old, ok, err := s.table.Get(s.ns)
	if err != nil {
		return err
	}
	if ok {
		v = s.reduce(old.(T), v)
	}
	return s.table.Put(s.ns, s.box(v))
}

// Clear removes the value.
func (s *ReducingState[T]) Clear() error { return s.table.Clear(s.ns) }

// AggregateFunction is Flink's AggregateFunction: an accumulator that inputs
// are added to, merged for merging windows, and read as a result.
type AggregateFunction[IN, ACC, OUT any] interface {
	CreateAccumulator() ACC
	Add(in IN, acc ACC) ACC
	Result(acc ACC) OUT
	Merge(a, b ACC) ACC
}

// AggregatingDescriptor declares an AggregatingState.
type AggregatingDescriptor[IN, ACC, OUT any] struct {
	Name     string
	AccCodec Codec[ACC]
	Func     AggregateFunction[IN, ACC, OUT]
}

// Aggregating declares an accumulator per key that inputs are added to.
func Aggregating[IN, ACC, OUT any](name string, acc Codec[ACC], f AggregateFunction[IN, ACC, OUT]) AggregatingDescriptor[IN, ACC, OUT] {
	return AggregatingDescriptor[IN, ACC, OUT]{Name: name, AccCodec: acc, Func: f}
}

// Desc erases the descriptor's types.
func (d AggregatingDescriptor[IN, ACC, OUT]) Desc() StateDesc {
	return StateDesc{Meta: StateMeta{StateName: d.Name, Scope: ScopeKeyed, Kind: KindAggregating, ValueType: d.AccCodec.TypeName()},
		Value: Erase(d.AccCodec), Merge: func(a, b any) any { return d.Func.Merge(a.(ACC), b.(ACC)) }}
}

// Bind declares the state in r.
func (d AggregatingDescriptor[IN, ACC, OUT]) Bind(r Registry) (*AggregatingState[IN, ACC, OUT], error) {
	t, err := r.KeyedTable(d.Desc())
	if err != nil {
		return nil, err
	}
	return NewAggregatingState(t, d.Func), nil
}

// AggregatingState adds inputs to an accumulator.
type AggregatingState[IN, ACC, OUT any] struct {
	table Table
	f     AggregateFunction[IN, ACC, OUT]
	ns    []byte
}

// NewAggregatingState wraps a table registered from an AggregatingDescriptor's Desc.
func NewAggregatingState[IN, ACC, OUT any](t Table, f AggregateFunction[IN, ACC, OUT]) *AggregatingState[IN, ACC, OUT] {
	return &AggregatingState[IN, ACC, OUT]{table: t, f: f}
}

// SetNamespace sets the encoded namespace of following accesses.
func (s *AggregatingState[IN, ACC, OUT]) SetNamespace(ns []byte) { s.ns = ns }

// Get returns the result of the accumulator.
func (s *AggregatingState[IN, ACC, OUT]) Get() (OUT, bool, error) {
	v, ok, err := s.table.Get(s.ns)
	if !ok || err != nil {
		var zero OUT
		return zero, false, err
	}
	return s.f.Result(v.(ACC)), true, nil
}

// Add adds one input.
func (s *AggregatingState[IN, ACC, OUT]) Add(in IN) error {
	old, ok, err := s.table.Get(s.ns)
	if err != nil {
		return err
	}
	acc := s.f.CreateAccumulator()
	if ok {
		acc = old.(ACC)
	}
	return s.table.Put(s.ns, s.f.Add(in, acc))
}

// Clear removes the accumulator.
func (s *AggregatingState[IN, ACC, OUT]) Clear() error { return s.table.Clear(s.ns) }
