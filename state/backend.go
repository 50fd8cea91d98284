package state

import (
	"bytes"
	"cmp"
	"errors"
	"iter"
)

// ErrNotRegistered is returned for a state name no operator declared.
var ErrNotRegistered = errors.New("state: not registered")

// StateDesc is a state declaration with its types erased, as backends see it.
// The typed descriptors (Value, List, Map, Reducing, Aggregating) build it.
type StateDesc struct {
	// Meta names the state and its types; the runtime fills in the operator
	// and key type before the backend sees it.
	Meta StateMeta
	// Namespace encodes namespaces; nil means the void namespace.
	Namespace AnyCodec
	// UserKey encodes map keys (map state only).
	UserKey AnyCodec
	// Value encodes values, list elements, map values and accumulators.
	Value AnyCodec
	// Merge combines two values of reducing and aggregating state (Reduce or
	// AggregateFunction.Merge); backends use it when namespaces merge.
	Merge func(a, b any) any
}

// KeyedBackend holds the keyed state of one operator in one subtask: the key
// groups of KeyGroups(). Heap and pebble implement it; operator code only
// ever sees the typed states built on Table.
//
// Accesses go to the current key set by SetCurrentKey, as in Flink: the
// runtime sets it before each element of a keyed input.
type KeyedBackend interface {
	// KeyGroups is the range of key groups this backend holds.
	KeyGroups() KeyGroupRange
	// Register declares a state, or returns the table already declared under
	// that name. A state restored from a snapshot becomes readable through
	// the declared codecs here; a kind or type that changed is an error.
	Register(d StateDesc) (Table, error)
	// Timers returns the timer queue called name (its entries are
	// snapshotted as TimerStateName(name)). meta describes it for StateMeta.
	Timers(name string, meta StateMeta) (TimerQueue, error)
	// SetCurrentKey sets the key (encoded) and its key group for all tables.
	SetCurrentKey(key []byte, keyGroup int)
	// CurrentKey returns what SetCurrentKey set.
	CurrentKey() (key []byte, keyGroup int)
	// States lists every declared, restored and timer state, ordered by
	// name, with entry counts and bytes (which may cost a scan).
	States() []StateMeta
	// Describe lists the same states without counting: Entries and Bytes
	// are zero. It costs nothing per entry.
	Describe() []StateMeta
	// Entries yields the entries of one key group in Entry order; a non-empty
	// stateName restricts them to that state. The yielded slices are only
	// valid until the next iteration step.
	Entries(keyGroup int, stateName string) iter.Seq2[Entry, error]
	// Restore loads snapshotted entries before any state is registered. metas
	// describe the states the entries belong to. Entries of one key group
	// arrive in Entry order; key groups may arrive in any order, and entries
	// outside KeyGroups() are an error. The slices of a yielded entry are only
	// valid during that iteration step: a backend copies what it keeps.
	Restore(metas []StateMeta, entries iter.Seq2[Entry, error]) error
	// Close releases the backend's resources.
	Close() error
}

// BatchRestorer is a KeyedBackend that also restores from batches of
// entries (savepoint.KeyedBatchesFor) without an iterator step per entry.
// RestoreBatches does what Restore does with the same entries in the same
// order; the slices of a batch are only valid during its iteration step.
type BatchRestorer interface {
	KeyedBackend
	RestoreBatches(metas []StateMeta, batches iter.Seq2[[]Entry, error]) error
}

// Singles hands entries over as batches of one, so that a backend's
// Restore can be its RestoreBatches.
func Singles(entries iter.Seq2[Entry, error]) iter.Seq2[[]Entry, error] {
	return func(yield func([]Entry, error) bool) {
		var one [1]Entry
		for e, err := range entries {
			if err != nil {
				yield(nil, err)
				return
			}
			one[0] = e
			if !yield(one[:], nil) {
				return
			}
		}
	}
}

// Table is one declared keyed state in a backend, accessed under the
// backend's current key. Values are Go values of the StateDesc codecs'
// types, boxed; namespaces and user keys are encoded bytes.
type Table interface {
	Desc() StateDesc

	// Get and Put serve value, reducing and aggregating state.
	Get(ns []byte) (v any, ok bool, err error)
	Put(ns []byte, v any) error

	// List state.
	ListGet(ns []byte) ([]any, error)
	ListAppend(ns []byte, v any) error
	ListPut(ns []byte, vs []any) error

	// Map state.
	MapGet(ns, userKey []byte) (v any, ok bool, err error)
	MapPut(ns, userKey []byte, v any) error
	MapDelete(ns, userKey []byte) error
	// MapRange calls fn for every entry of the map under ns in user key
	// byte order until fn returns false.
	MapRange(ns []byte, fn func(userKey []byte, v any) bool) error

	// Clear removes everything under ns for the current key.
	Clear(ns []byte) error
	// MergeNamespaces folds the state of sources into target and clears the
	// sources (session windows): values combine with StateDesc.Merge, lists
	// concatenate in source order after target's, maps take the union with
	// later sources winning.
	MergeNamespaces(target []byte, sources [][]byte) error
}

// Int64Table is a Table that keeps the int64 values of a value state
// unboxed (the heap backend does): ValueState[int64] reads and writes them
// through it, which costs neither a boxing nor a pointer to follow. They are
// Get and Put without the any: same entries, same errors, same change log.
type Int64Table interface {
	GetInt64(ns []byte) (v int64, ok bool, err error)
	PutInt64(ns []byte, v int64) error
}

// EntryTagger is a Table that keeps a tag beside each entry of value,
// reducing and aggregating state, for a layer above it: the debugger's
// light trace keeps the number of its record of the entry there, so that
// a write finds it without a lookup of its own. EntryTag returns the tag
// of the current key's entry under ns, nil when there is no such entry (or
// the table keeps no tags for its kind); a new entry's tag is 0. A tag
// lives as long as its entry: a rolled back entry has its tag again, a
// cleared one loses it. Tags are not state: snapshots, savepoints and
// Entries never see them.
type EntryTagger interface {
	EntryTag(ns []byte) *uint64
}

// Timer is a timer of one key and namespace at an epoch-millisecond time.
type Timer struct {
	Timestamp int64
	KeyGroup  int
	Key       []byte
	Namespace []byte
}

// TimerQueue holds the timers of one kind (event or processing time) of one
// operator subtask, deduplicated by (timestamp, key, namespace) and ordered by
// timestamp; ties break by key group, key, namespace so that firing order is
// deterministic.
type TimerQueue interface {
	// Add registers a timer; it reports false when it was already there.
	Add(t Timer) (bool, error)
	// Delete removes a timer if present.
	Delete(t Timer) error
	// Peek returns the earliest timer.
	Peek() (Timer, bool, error)
	// Pop removes and returns the earliest timer.
	Pop() (Timer, bool, error)
	Len() int
}

// CompareTimers is the firing order of a TimerQueue: timestamp, then key
// group, key and namespace, so that equal timestamps fire deterministically.
func CompareTimers(a, b Timer) int {
	if c := cmp.Compare(a.Timestamp, b.Timestamp); c != 0 {
		return c
	}
	if c := cmp.Compare(a.KeyGroup, b.KeyGroup); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return bytes.Compare(a.Namespace, b.Namespace)
}

// Mark names a point in a backend's history that an IncrementalBackend can
// return to: an in-memory checkpoint that costs what changed since, not
// what exists.
type Mark uint64

// IncrementalBackend is a keyed backend that keeps its own checkpoints, as
// Flink's changelog state backend (FLIP-158) does: it records what changes
// after each mark, so that marking costs nothing per entry, rolling back
// costs what changed since the mark, and a mark's state can still be read.
type IncrementalBackend interface {
	KeyedBackend
	// Mark records the state as it is now.
	Mark() (Mark, error)
	// RollBack returns the state to what it was at m. Marks taken after m
	// are released.
	RollBack(m Mark) error
	// Release forgets m: the changes kept only to return there are dropped.
	Release(m Mark)
	// MarkedEntries yields the entries of one key group as they were at m,
	// as Entries does for the current state. The backend must not be written
	// during the iteration.
	MarkedEntries(m Mark, keyGroup int) iter.Seq2[Entry, error]
	// Changes is the number of changes recorded since the oldest mark (the
	// memory incremental checkpoints hold).
	Changes() int
}

// ErrUnknownMark is returned for a mark a backend does not hold (released,
// or rolled back past).
var ErrUnknownMark = errors.New("state: unknown checkpoint mark")
