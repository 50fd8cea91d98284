package state

import (
	"bytes"
	"iter"
)

// This file holds the row model that every holder of state presents: a live
// job (runtime/session), our savepoints (savepoint) and Flink's
// (savepoint/flink). The query package defines its Catalog interface in
// these types, so none of them imports query.

// OperatorInfo describes one operator of a job or savepoint.
type OperatorInfo struct {
	ID             string // 32 hex digits (Flink: murmur3-128 of the uid)
	UID            string // empty when unknown
	Name           string // stored name, else the uid, else the id
	Parallelism    int
	MaxParallelism int
	// Unsupported lists what a reader could not open for this operator
	// (e.g. "keyed state: native RocksDB format not supported").
	Unsupported []string
	// Notes are other facts a reader knows of the operator (e.g. the node
	// of a compiled SQL plan it comes from and that node's states).
	Notes []string
}

// KeyedRow is one row of the keyed_state table. Key, Namespace, UserKey and
// Value are dynamic values (see Hex); UserKey is nil except for map state
// (the map key) and list state (the element's position, int64).
type KeyedRow struct {
	OperatorID   string
	OperatorName string
	Subtask      int
	KeyGroup     int
	StateName    string
	Kind         Kind
	Key          any
	Namespace    any
	UserKey      any
	Value        any
}

// OperatorRow is one row of the operator_state table. For broadcast state
// Key holds the map key; for list state Position is the element's index.
type OperatorRow struct {
	OperatorID   string
	OperatorName string
	Subtask      int
	StateName    string
	Kind         Kind // KindSplitList, KindUnionList or KindBroadcast
	Position     int
	Key          any
	Value        any
}

// TimerRow is one row of the timers table. StateName is the timer state
// the timer belongs to, as States lists it: an operator may keep several
// timer states of one domain (a Flink process table function keeps one per
// input's sort buffer and its named and unnamed user timers).
type TimerRow struct {
	OperatorID   string
	OperatorName string
	Subtask      int
	KeyGroup     int
	StateName    string
	Key          any
	Namespace    any
	Domain       string // "event" or "processing"
	Timestamp    int64  // epoch milliseconds
}

// KeyedScan selects keyed rows. Empty fields select everything.
type KeyedScan struct {
	OperatorID string
	StateName  string
	// KeyGroups restricts the scan to these key groups; nil means all, an
	// empty non-nil slice none.
	KeyGroups []int
	// Keys, when not nil, are the only keys the reader wants (query
	// literals, dynamic values; a map[string]any stands for a key of which
	// those fields are known, from key.f = literal). A catalog may drop rows
	// of other keys before decoding them — by comparing encoded bytes (see
	// KeyFilter) — or return them anyway: the reader filters again.
	Keys []any
	// Prefilter, when not nil, gives for one state a predicate on its
	// encoded entries (or nil: none). A catalog may drop the entries it
	// returns false for before decoding them, or return them anyway: the
	// reader filters again, so the predicate only has to be sure of false.
	Prefilter func(m StateMeta) func(key, value []byte, keyGroup int) bool
	// Skip names columns the reader does not need; a catalog may leave
	// them nil instead of decoding them.
	Skip Columns
}

// Columns is a set of the decoded columns of a keyed row.
type Columns uint8

const (
	ColKey Columns = 1 << iota
	ColNamespace
	ColUserKey
	ColValue
)

// KeyFilter matches encoded keys against the literals of KeyedScan.Keys for
// one key type. A nil *KeyFilter matches everything.
type KeyFilter struct {
	keys [][]byte
}

// NewKeyFilter encodes literals as keys of keyType; it returns nil (match
// everything) when there are no literals or one cannot be encoded.
func NewKeyFilter(keyType string, literals []any) *KeyFilter {
	if literals == nil {
		return nil
	}
	f := &KeyFilter{}
	for _, l := range literals {
		b, ok := EncodeKeyLiteral(keyType, l)
		if !ok {
			return nil
		}
		f.keys = append(f.keys, b)
	}
	return f
}

// Encoded returns the filter's keys, encoded; nil for a nil filter (which
// matches everything).
func (f *KeyFilter) Encoded() [][]byte {
	if f == nil {
		return nil
	}
	return f.keys
}

// Match reports whether an encoded key is one of the filter's keys.
func (f *KeyFilter) Match(key []byte) bool {
	if f == nil {
		return true
	}
	for _, k := range f.keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	return false
}

// Beyond reports whether key sorts after every key of the filter: in a run
// of entries ordered by key, no later one can match.
func (f *KeyFilter) Beyond(key []byte) bool {
	if f == nil {
		return false
	}
	for _, k := range f.keys {
		if bytes.Compare(key, k) <= 0 {
			return false
		}
	}
	return true
}

// OperatorScan selects operator state rows.
type OperatorScan struct {
	OperatorID string
	StateName  string
}

// TimerScan selects timer rows.
type TimerScan struct {
	OperatorID string
	KeyGroups  []int
}

// Catalog is implemented by everything that holds state. Iterators stream:
// an implementation must not load more than one key group (or one state
// file section) at a time, and stops reading when the consumer stops.
//
// The query package declares the same method set as its own interface.
type Catalog interface {
	Operators() []OperatorInfo
	// States lists the StateMeta of every state, with entry counts where known.
	States() []StateMeta
	Keyed(scan KeyedScan) iter.Seq2[KeyedRow, error]
	OperatorState(scan OperatorScan) iter.Seq2[OperatorRow, error]
	Timers(scan TimerScan) iter.Seq2[TimerRow, error]
	// KeyGroupOf returns the key group a key literal falls in for one keyed
	// state, or ok=false when the key cannot be encoded with that state's key
	// type (the query then scans).
	KeyGroupOf(meta StateMeta, key any) (kg int, ok bool)
}
