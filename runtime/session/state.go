package session

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
)

// StateReader reads state for views, row by row and one key group at a
// time: the live job's (Session.State, between commands only) or an opened
// savepoint's. Rows are plain values.
type StateReader struct {
	cat state.Catalog
}

// Row is one row of state: keyed (Key, Namespace, UserKey, Value), operator
// state (Mode, Position, Key, Value) or a timer (its timer state in State,
// Key, Namespace, Domain, Timestamp).
type Row struct {
	OperatorID   string
	OperatorName string
	Subtask      int
	KeyGroup     int
	State        string
	Kind         string
	Key          any
	Namespace    any
	UserKey      any
	Value        any
	Position     int
	Domain       string
	Timestamp    int64
}

// ID is the row's EntryID (keyed rows).
func (r Row) ID() EntryID {
	return Entry(r.OperatorName, r.Subtask, r.State, r.Key, r.Namespace, r.UserKey)
}

// OperatorInfo is an operator of a savepoint or job.
type OperatorInfo struct {
	ID, UID, Name  string
	Parallelism    int
	MaxParallelism int
	// Gaps are what could not be read for this operator, with the reason
	// (native RocksDB keyed state a reader cannot open, say): a view lists
	// them, it never shows them as empty.
	Gaps []string
}

// StateMeta describes one state of a savepoint or job.
type StateMeta struct {
	OperatorID, OperatorName string
	Name                     string
	Scope                    string // keyed, operator
	Kind                     string // value, list, map, ..., timers
	KeyType, NamespaceType   string
	UserKeyType, ValueType   string
	Entries, Bytes           int64
	// EntriesUnknown and BytesUnknown: the reader does not know the
	// figure (a Flink savepoint over its listing budget, an unreadable
	// state); Entries or Bytes is then 0 and means nothing.
	EntriesUnknown, BytesUnknown bool
	// Status is "" when the state can be read, else why it cannot: a
	// view lists the state with its reason, it never shows it as empty.
	Status string
}

// Operators lists the operators.
func (r StateReader) Operators() []OperatorInfo {
	var out []OperatorInfo
	for _, o := range r.cat.Operators() {
		out = append(out, OperatorInfo{ID: o.ID, UID: o.UID, Name: o.Name, Parallelism: o.Parallelism, MaxParallelism: o.MaxParallelism,
			Gaps: append([]string(nil), o.Unsupported...)})
	}
	return out
}

// States lists every state with its entry counts where known (for live
// state this counts: it scans).
func (r StateReader) States() []StateMeta {
	var out []StateMeta
	for _, m := range r.cat.States() {
		out = append(out, StateMeta{OperatorID: m.OperatorID, OperatorName: m.OperatorName, Name: m.StateName, Scope: m.Scope.String(),
			Kind: m.Kind.String(), KeyType: m.KeyType, NamespaceType: m.NamespaceType, UserKeyType: m.UserKeyType, ValueType: m.ValueType,
			Entries: m.Entries, Bytes: m.Bytes, EntriesUnknown: m.EntriesUnknown, BytesUnknown: m.BytesUnknown, Status: m.Status})
	}
	return out
}

// Keyed reads the keyed state of an operator (one state when stateName is
// set; timers excepted) in the given key groups (nil: all), optionally
// only the given keys (dynamic values).
func (r StateReader) Keyed(operatorID, stateName string, keyGroups []int, keys []any) iter.Seq2[Row, error] {
	return r.KeyedWhere(operatorID, stateName, keyGroups, keys, nil)
}

// KeyedWhere is Keyed for a view that filters the rows with where (a row
// filter over key, value, key_group, …): a catalog that can (a savepoint)
// leaves out before it makes them the rows where's byte-decidable parts
// reject (query.Compiled.Prefilter). Rows may still come that where
// rejects: the caller evaluates it.
func (r StateReader) KeyedWhere(operatorID, stateName string, keyGroups []int, keys []any, where *query.Compiled) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		if keyGroups != nil && len(keyGroups) == 0 {
			return
		}
		scan := state.KeyedScan{OperatorID: operatorID, StateName: stateName, KeyGroups: keyGroups, Keys: keys, Prefilter: where.Prefilter()}
		for kr, err := range r.cat.Keyed(scan) {
			if err != nil {
				yield(Row{}, err)
				return
			}
			if !yield(Row{OperatorID: kr.OperatorID, OperatorName: kr.OperatorName, Subtask: kr.Subtask, KeyGroup: kr.KeyGroup,
				State: kr.StateName, Kind: kr.Kind.String(), Key: kr.Key, Namespace: kr.Namespace, UserKey: kr.UserKey, Value: kr.Value}, nil) {
				return
			}
		}
	}
}

// KeyGroupOf is the key group of a key (a dynamic value) in a keyed
// operator with keys of keyType; ok is false when the key cannot be
// encoded as such.
func (r StateReader) KeyGroupOf(operatorID, keyType string, key any) (int, bool) {
	return r.cat.KeyGroupOf(state.StateMeta{OperatorID: operatorID, KeyType: keyType}, key)
}

// PinnedKeyGroups is the key groups of a keyed operator that a filter's
// pinned values (query.Pinned) allow, and whether its keys are pinned (see
// state.PinnedKeyGroups): a view reads only those, as a query does.
func (r StateReader) PinnedKeyGroups(operatorID, keyType string, maxParallelism int, pins map[string][]any) (groups []int, keysPinned bool) {
	return state.PinnedKeyGroups(pins, maxParallelism, func(k any) (int, bool) { return r.KeyGroupOf(operatorID, keyType, k) })
}

// OperatorState reads the operator state of an operator (one state when
// stateName is set).
func (r StateReader) OperatorState(operatorID, stateName string) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for or, err := range r.cat.OperatorState(state.OperatorScan{OperatorID: operatorID, StateName: stateName}) {
			if err != nil {
				yield(Row{}, err)
				return
			}
			if !yield(Row{OperatorID: or.OperatorID, OperatorName: or.OperatorName, Subtask: or.Subtask, State: or.StateName,
				Kind: or.Kind.String(), Position: or.Position, Key: or.Key, Value: or.Value}, nil) {
				return
			}
		}
	}
}

// Timers reads the timers of an operator in the given key groups (nil:
// all): those of its timer state stateName (as States names it), or all
// of them when stateName is "".
func (r StateReader) Timers(operatorID string, keyGroups []int, stateName string) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		if keyGroups != nil && len(keyGroups) == 0 {
			return
		}
		scan := state.TimerScan{OperatorID: operatorID, KeyGroups: keyGroups}
		timers := r.cat.Timers(scan)
		if stateName != "" {
			timers = savepoint.TimersOfState(r.cat, scan, stateName)
		}
		for tr, err := range timers {
			if err != nil {
				yield(Row{}, err)
				return
			}
			if !yield(Row{OperatorID: tr.OperatorID, OperatorName: tr.OperatorName, Subtask: tr.Subtask, KeyGroup: tr.KeyGroup,
				State: tr.StateName, Kind: "timers", Key: tr.Key, Namespace: tr.Namespace, Domain: tr.Domain, Timestamp: tr.Timestamp}, nil) {
				return
			}
		}
	}
}

// TimerDomain is the timer domain ("event", "processing") of a timer
// state's name (Flink's _timer_state/event_user-timers, ours
// event_timers), or "".
func TimerDomain(stateName string) string {
	if d := state.TimerDomain(stateName); d != "" {
		return d
	}
	n := strings.ToLower(stateName)
	switch {
	case strings.Contains(n, "processing"):
		return "processing"
	case strings.Contains(n, "event"):
		return "event"
	}
	return ""
}

// Query runs a query on the state.
func (r StateReader) Query(ctx context.Context, text string) (*query.Rows, error) {
	return query.RunText(ctx, r.cat, text)
}

// State reads the live state. Like everything of a session it must not be
// used while a command runs.
func (s *Session) State() StateReader { return StateReader{cat: s.exec.Catalog()} }

// Savepoint is a savepoint opened for browsing: ours or Apache Flink's.
type Savepoint struct {
	StateReader
	Dir   string
	Flink bool
	// Skew is the number of keyed entries per subtask of each operator (by
	// id), where the savepoint's metadata says it without reading state.
	Skew map[string][]int64
}

// OpenSavepoint opens a savepoint directory for browsing (~ expands; a
// path to its _metadata file names it too).
func OpenSavepoint(dir string) (*Savepoint, error) {
	dir, err := ExpandHome(dir)
	if err != nil {
		return nil, err
	}
	dir = SavepointDir(dir)
	cat, err := OpenCatalog(dir)
	if err != nil {
		return nil, err
	}
	return NewSavepoint(cat, dir), nil
}

// NewSavepoint wraps a catalog the caller opened (a Flink savepoint named
// from its compiled SQL plan, say) for browsing; dir names it.
func NewSavepoint(cat state.Catalog, dir string) *Savepoint {
	_, isFlink := cat.(*flink.Savepoint)
	out := &Savepoint{StateReader: StateReader{cat: cat}, Dir: dir, Flink: isFlink, Skew: map[string][]int64{}}
	if sp, ok := cat.(interface{ Meta() *savepoint.Metadata }); ok {
		for _, op := range sp.Meta().Operators {
			var per []int64
			for _, sub := range op.Subtasks {
				var n int64
				if sub.Keyed != nil {
					for _, sec := range sub.Keyed.Sections {
						n += sec.Entries
					}
				}
				per = append(per, n)
			}
			out.Skew[op.ID] = per
		}
	}
	return out
}

// Diff compares this savepoint (old) with the one in dir (new): the rows
// that differ, then a summary per state (DiffRows). done closes the other
// savepoint once the rows are read.
func (sp *Savepoint) Diff(ctx context.Context, dir, filter string) (rows *query.Rows, done func(), err error) {
	dir, err = ExpandHome(dir)
	if err != nil {
		return nil, nil, err
	}
	other, err := OpenCatalog(dir)
	if err != nil {
		return nil, nil, err
	}
	done = func() {
		if c, ok := other.(io.Closer); ok {
			c.Close()
		}
	}
	return DiffRows(ctx, sp.cat, other, sp.Dir, dir, filter), done, nil
}

// Close releases the savepoint's files.
func (sp *Savepoint) Close() error {
	if c, ok := sp.cat.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// String names the savepoint for a title.
func (sp *Savepoint) String() string {
	if sp.Flink {
		return fmt.Sprintf("Apache Flink savepoint %s", sp.Dir)
	}
	return "savepoint " + sp.Dir
}
