package state

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// OperatorEntry is one element of operator state in its snapshot form: a
// list element (Position) or a broadcast map entry (Key).
type OperatorEntry struct {
	State    string
	Kind     Kind
	Position int
	Key      []byte
	Value    []byte
}

// OperatorStore holds the operator state of one operator subtask. It is
// always on the heap, as in Flink. It is not safe for concurrent use; the
// runtime is single-threaded.
type OperatorStore struct {
	operatorID, operatorName string
	states                   map[string]*opState
	// restored holds snapshotted states not declared yet, as bytes.
	restored map[string]*restoredOp
}

type opState struct {
	meta  StateMeta
	key   AnyCodec
	value AnyCodec
	list  []any
	m     map[string]any // broadcast: encoded key -> value
}

type restoredOp struct {
	meta    StateMeta
	entries []OperatorEntry
}

// NewOperatorStore makes an empty store for one operator subtask.
func NewOperatorStore(operatorID, operatorName string) *OperatorStore {
	return &OperatorStore{operatorID: operatorID, operatorName: operatorName,
		states: map[string]*opState{}, restored: map[string]*restoredOp{}}
}

func (s *OperatorStore) declare(meta StateMeta, key, value AnyCodec) (*opState, error) {
	meta.OperatorID, meta.OperatorName, meta.Scope = s.operatorID, s.operatorName, ScopeOperator
	if st, ok := s.states[meta.StateName]; ok {
		if why := st.meta.Compatible(meta); why != "" {
			return nil, fmt.Errorf("state: operator %s: state %q declared twice: %s", s.operatorName, meta.StateName, why)
		}
		return st, nil
	}
	st := &opState{meta: meta, key: key, value: value}
	if meta.Kind == KindBroadcast {
		st.m = map[string]any{}
	}
	if r, ok := s.restored[meta.StateName]; ok {
		if why := r.meta.Compatible(meta); why != "" {
			return nil, fmt.Errorf("state: operator %s: restored state %q: %s", s.operatorName, meta.StateName, why)
		}
		for _, e := range r.entries {
			v, err := value.DecodeAny(e.Value)
			if err != nil {
				return nil, fmt.Errorf("state: operator %s: restored state %q element %d: %w", s.operatorName, meta.StateName, e.Position, err)
			}
			if st.m != nil {
				st.m[string(e.Key)] = v
			} else {
				st.list = append(st.list, v)
			}
		}
		delete(s.restored, meta.StateName)
	}
	s.states[meta.StateName] = st
	return st, nil
}

// OperatorListState is operator list state: split (redistributed round-robin
// on restore) or union (every subtask gets all elements).
type OperatorListState[T any] struct{ st *opState }

// SplitList declares split list state (Flink's getListState).
func SplitList[T any](s *OperatorStore, name string, c Codec[T]) (*OperatorListState[T], error) {
	return operatorList(s, name, c, KindSplitList)
}

// UnionList declares union list state (Flink's getUnionListState).
func UnionList[T any](s *OperatorStore, name string, c Codec[T]) (*OperatorListState[T], error) {
	return operatorList(s, name, c, KindUnionList)
}

func operatorList[T any](s *OperatorStore, name string, c Codec[T], kind Kind) (*OperatorListState[T], error) {
	st, err := s.declare(StateMeta{StateName: name, Kind: kind, ValueType: c.TypeName()}, nil, Erase(c))
	if err != nil {
		return nil, err
	}
	return &OperatorListState[T]{st}, nil
}

// Get returns the elements.
func (l *OperatorListState[T]) Get() []T {
	out := make([]T, len(l.st.list))
	for i, v := range l.st.list {
		out[i] = v.(T)
	}
	return out
}

// Update replaces the elements.
func (l *OperatorListState[T]) Update(vs []T) {
	l.st.list = l.st.list[:0]
	for _, v := range vs {
		l.st.list = append(l.st.list, v)
	}
}

// Add appends one element.
func (l *OperatorListState[T]) Add(v T) { l.st.list = append(l.st.list, v) }

// Clear removes all elements.
func (l *OperatorListState[T]) Clear() { l.st.list = nil }

// BroadcastState is a map that every subtask holds whole.
type BroadcastState[K, V any] struct {
	st *opState
	kc Codec[K]
}

// Broadcast declares broadcast map state.
func Broadcast[K, V any](s *OperatorStore, name string, kc Codec[K], vc Codec[V]) (*BroadcastState[K, V], error) {
	st, err := s.declare(StateMeta{StateName: name, Kind: KindBroadcast, UserKeyType: kc.TypeName(), ValueType: vc.TypeName()}, Erase(kc), Erase(vc))
	if err != nil {
		return nil, err
	}
	return &BroadcastState[K, V]{st: st, kc: kc}, nil
}

// Get returns the value under k.
func (b *BroadcastState[K, V]) Get(k K) (V, bool) {
	v, ok := b.st.m[string(b.kc.Append(nil, k))]
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Put sets the value under k.
func (b *BroadcastState[K, V]) Put(k K, v V) { b.st.m[string(b.kc.Append(nil, k))] = v }

// Remove deletes k.
func (b *BroadcastState[K, V]) Remove(k K) { delete(b.st.m, string(b.kc.Append(nil, k))) }

// Contains reports whether k has a value.
func (b *BroadcastState[K, V]) Contains(k K) bool {
	_, ok := b.st.m[string(b.kc.Append(nil, k))]
	return ok
}

// Len is the number of entries.
func (b *BroadcastState[K, V]) Len() int { return len(b.st.m) }

// Clear removes every entry.
func (b *BroadcastState[K, V]) Clear() { clear(b.st.m) }

// Range calls fn for each entry in encoded key order until fn returns
// false. fn must not change the state.
func (b *BroadcastState[K, V]) Range(fn func(K, V) bool) error {
	keys := make([]string, 0, len(b.st.m))
	for k := range b.st.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, ek := range keys {
		k, err := b.kc.Decode([]byte(ek))
		if err != nil {
			return fmt.Errorf("state: operator %s: broadcast state %q: key %x: %w", b.st.meta.OperatorName, b.st.meta.StateName, ek, err)
		}
		if !fn(k, b.st.m[ek].(V)) {
			return nil
		}
	}
	return nil
}

// ReadOnly is a view of the state that cannot change it: what the
// non-broadcast side of a broadcast process function gets.
func (b *BroadcastState[K, V]) ReadOnly() ReadOnlyBroadcastState[K, V] {
	return ReadOnlyBroadcastState[K, V]{b: b}
}

// ReadOnlyBroadcastState is broadcast state that can only be read (Flink's
// ReadOnlyBroadcastState).
type ReadOnlyBroadcastState[K, V any] struct{ b *BroadcastState[K, V] }

// Get returns the value under k.
func (r ReadOnlyBroadcastState[K, V]) Get(k K) (V, bool) { return r.b.Get(k) }

// Contains reports whether k has a value.
func (r ReadOnlyBroadcastState[K, V]) Contains(k K) bool { return r.b.Contains(k) }

// Len is the number of entries.
func (r ReadOnlyBroadcastState[K, V]) Len() int { return r.b.Len() }

// Range calls fn for each entry in encoded key order until fn returns false.
func (r ReadOnlyBroadcastState[K, V]) Range(fn func(K, V) bool) error { return r.b.Range(fn) }

// DeclareBroadcast declares a broadcast map state from a map state's
// erased descriptor (as a BroadcastStream's states are given).
func DeclareBroadcast(s *OperatorStore, d StateDesc) error {
	if d.UserKey == nil || d.Value == nil {
		return fmt.Errorf("state: operator %s: broadcast state %q needs a key and a value codec", s.operatorName, d.Meta.StateName)
	}
	_, err := s.declare(StateMeta{StateName: d.Meta.StateName, Kind: KindBroadcast, UserKeyType: d.UserKey.TypeName(), ValueType: d.Value.TypeName()}, d.UserKey, d.Value)
	return err
}

// States lists declared and restored operator states ordered by name.
func (s *OperatorStore) States() []StateMeta {
	var out []StateMeta
	for _, st := range s.states {
		m := st.meta
		m.Entries, m.Bytes = int64(len(st.list)+len(st.m)), 0
		// Bytes counts encoded keys and values, as a savepoint's _metadata does.
		for k, v := range st.m {
			m.Bytes += int64(len(k) + len(st.value.AppendAny(nil, v)))
		}
		for _, v := range st.list {
			m.Bytes += int64(len(st.value.AppendAny(nil, v)))
		}
		out = append(out, m)
	}
	for _, r := range s.restored {
		m := r.meta
		m.Entries, m.Bytes = int64(len(r.entries)), 0
		for _, e := range r.entries {
			m.Bytes += int64(len(e.Key) + len(e.Value))
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StateName < out[j].StateName })
	return out
}

// Entries returns all operator state in snapshot form, ordered by state name,
// then position or key. Restored states never declared are kept as they were.
func (s *OperatorStore) Entries() []OperatorEntry {
	var out []OperatorEntry
	for _, st := range s.states {
		if st.m != nil {
			keys := make([]string, 0, len(st.m))
			for k := range st.m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for i, k := range keys {
				out = append(out, OperatorEntry{State: st.meta.StateName, Kind: st.meta.Kind, Position: i, Key: []byte(k), Value: st.value.AppendAny(nil, st.m[k])})
			}
			continue
		}
		for i, v := range st.list {
			out = append(out, OperatorEntry{State: st.meta.StateName, Kind: st.meta.Kind, Position: i, Value: st.value.AppendAny(nil, v)})
		}
	}
	for _, r := range s.restored {
		out = append(out, r.entries...)
	}
	slices.SortStableFunc(out, func(a, b OperatorEntry) int {
		if c := strings.Compare(a.State, b.State); c != 0 {
			return c
		}
		if a.Kind == KindBroadcast {
			return bytes.Compare(a.Key, b.Key)
		}
		return a.Position - b.Position
	})
	return out
}

// Restore loads snapshotted operator state (already redistributed for this
// subtask) before any state is declared.
func (s *OperatorStore) Restore(metas []StateMeta, entries []OperatorEntry) error {
	for _, m := range metas {
		if m.Scope != ScopeOperator {
			continue
		}
		s.restored[m.StateName] = &restoredOp{meta: m}
	}
	for _, e := range entries {
		r, ok := s.restored[e.State]
		if !ok {
			return fmt.Errorf("state: operator %s: restored entry of undescribed state %q", s.operatorName, e.State)
		}
		e.Position = len(r.entries)
		r.entries = append(r.entries, e)
	}
	return nil
}
