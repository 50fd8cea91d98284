package query

import (
	"strings"

	"streamdbg/state"
)

// srcRow is one row read from a catalog. Exactly one pointer is set; the
// scan reuses one srcRow for every row it reads.
type srcRow struct {
	meta  *state.StateMeta
	keyed *state.KeyedRow
	op    *state.OperatorRow
	timer *state.TimerRow
}

type column struct {
	name string
	typ  vtype
	get  func(r *srcRow) any
	// str reads a string column without boxing it, for the comparisons
	// with constants that filters are made of; nil for other columns.
	str func(r *srcRow) string
}

type tableKind uint8

const (
	tableMeta tableKind = iota + 1
	tableKeyed
	tableOperator
	tableTimers
	tableShorthand
)

type table struct {
	name string
	kind tableKind
	cols []column
}

func (t *table) column(name string) (column, bool) {
	for _, c := range t.cols {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return column{}, false
}

func (t *table) columnNames() []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i] = c.name
	}
	return out
}

// nilIfEmpty makes empty type names NULL, so IS NULL finds them.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

var metaTable = &table{name: "state_meta", kind: tableMeta, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.meta.OperatorID }, func(r *srcRow) string { return r.meta.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.meta.OperatorName }, func(r *srcRow) string { return r.meta.OperatorName }},
	{"operator_uid", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.OperatorUID) }, nil},
	{"state_name", tString, func(r *srcRow) any { return r.meta.StateName }, func(r *srcRow) string { return r.meta.StateName }},
	{"scope", tString, func(r *srcRow) any { return r.meta.Scope.String() }, nil},
	{"kind", tString, func(r *srcRow) any { return r.meta.Kind.String() }, nil},
	{"key_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.KeyType) }, nil},
	{"namespace_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.NamespaceType) }, nil},
	{"user_key_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.UserKeyType) }, nil},
	{"value_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.ValueType) }, nil},
	{"entries", tInt, func(r *srcRow) any { return knownOrNull(r.meta.Entries, r.meta.EntriesUnknown) }, nil},
	{"bytes", tInt, func(r *srcRow) any { return knownOrNull(r.meta.Bytes, r.meta.BytesUnknown) }, nil},
	{"status", tString, func(r *srcRow) any { return statusText(r.meta.Status) }, func(r *srcRow) string { return statusText(r.meta.Status) }},
}}

// knownOrNull is a figure of state_meta, NULL where its reader does not
// know it (entries and bytes of large Flink savepoints).
func knownOrNull(n int64, unknown bool) any {
	if unknown {
		return nil
	}
	return n
}

// statusText is the status column: ok, or why the state cannot be read.
func statusText(s string) string {
	if s == "" {
		return "ok"
	}
	return s
}

var keyedTable = &table{name: "keyed_state", kind: tableKeyed, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.keyed.OperatorID }, func(r *srcRow) string { return r.keyed.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.keyed.OperatorName }, func(r *srcRow) string { return r.keyed.OperatorName }},
	{"subtask", tInt, func(r *srcRow) any { return int64(r.keyed.Subtask) }, nil},
	{"key_group", tInt, func(r *srcRow) any { return int64(r.keyed.KeyGroup) }, nil},
	{"state_name", tString, func(r *srcRow) any { return r.keyed.StateName }, func(r *srcRow) string { return r.keyed.StateName }},
	{"kind", tString, func(r *srcRow) any { return r.keyed.Kind.String() }, nil},
	{"key", tAny, func(r *srcRow) any { return r.keyed.Key }, nil},
	{"namespace", tAny, func(r *srcRow) any { return r.keyed.Namespace }, nil},
	{"user_key", tAny, func(r *srcRow) any { return r.keyed.UserKey }, nil},
	{"value", tAny, func(r *srcRow) any { return r.keyed.Value }, nil},
}}

var operatorTable = &table{name: "operator_state", kind: tableOperator, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.op.OperatorID }, func(r *srcRow) string { return r.op.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.op.OperatorName }, func(r *srcRow) string { return r.op.OperatorName }},
	{"subtask", tInt, func(r *srcRow) any { return int64(r.op.Subtask) }, nil},
	{"state_name", tString, func(r *srcRow) any { return r.op.StateName }, func(r *srcRow) string { return r.op.StateName }},
	{"mode", tString, func(r *srcRow) any { return r.op.Kind.Mode() }, nil},
	{"position", tInt, func(r *srcRow) any { return int64(r.op.Position) }, nil},
	{"key", tAny, func(r *srcRow) any { return r.op.Key }, nil},
	{"value", tAny, func(r *srcRow) any { return r.op.Value }, nil},
}}

var timersTable = &table{name: "timers", kind: tableTimers, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.timer.OperatorID }, nil},
	{"operator_name", tString, func(r *srcRow) any { return r.timer.OperatorName }, nil},
	{"subtask", tInt, func(r *srcRow) any { return int64(r.timer.Subtask) }, nil},
	{"key_group", tInt, func(r *srcRow) any { return int64(r.timer.KeyGroup) }, nil},
	{"state_name", tString, func(r *srcRow) any { return r.timer.StateName }, func(r *srcRow) string { return r.timer.StateName }},
	{"key", tAny, func(r *srcRow) any { return r.timer.Key }, nil},
	{"namespace", tAny, func(r *srcRow) any { return r.timer.Namespace }, nil},
	{"domain", tString, func(r *srcRow) any { return r.timer.Domain }, nil},
	// Timestamps are times so that they compare with RFC 3339 literals; the
	// ends of time stay int64 (state.MillisValue) and compare as NULL.
	{"timestamp", tTime, func(r *srcRow) any { return state.MillisValue(r.timer.Timestamp) }, nil},
}}

// shorthandTable is the shape of `"op"` and `"op"."state"`: the columns of
// keyed_state, with operator state rows folded in. An operator state row has
// key_group and namespace NULL, kind split_list/union_list/broadcast, key the
// broadcast map key (NULL for lists) and user_key the list position (NULL
// for broadcast), as list elements of keyed list state carry it.
var shorthandTable = &table{name: "", kind: tableShorthand, cols: []column{
	{"operator_id", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.OperatorID
		}
		return r.op.OperatorID
	}, nil},
	{"operator_name", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.OperatorName
		}
		return r.op.OperatorName
	}, nil},
	{"subtask", tInt, func(r *srcRow) any {
		if r.keyed != nil {
			return int64(r.keyed.Subtask)
		}
		return int64(r.op.Subtask)
	}, nil},
	{"key_group", tInt, func(r *srcRow) any {
		if r.keyed != nil {
			return int64(r.keyed.KeyGroup)
		}
		return nil
	}, nil},
	{"state_name", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.StateName
		}
		return r.op.StateName
	}, nil},
	{"kind", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Kind.String()
		}
		return r.op.Kind.String()
	}, nil},
	{"key", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Key
		}
		return r.op.Key
	}, nil},
	{"namespace", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Namespace
		}
		return nil
	}, nil},
	{"user_key", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.UserKey
		}
		if r.op.Kind == state.KindBroadcast {
			return nil
		}
		return int64(r.op.Position)
	}, nil},
	{"value", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Value
		}
		return r.op.Value
	}, nil},
}}

var tables = []*table{metaTable, keyedTable, operatorTable, timersTable}

// Tables lists the table names a query can select from (besides the
// "operator" and "operator"."state" shorthands).
func Tables() []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.name
	}
	return out
}

// TableColumns lists the columns of a table in order; the shorthand tables
// have the columns of keyed_state. ok is false for an unknown table.
func TableColumns(name string) (cols []string, ok bool) {
	for _, t := range tables {
		if t.name == name {
			return t.columnNames(), true
		}
	}
	return nil, false
}

func lookupTable(name string) *table {
	for _, t := range tables {
		if strings.EqualFold(t.name, name) {
			return t
		}
	}
	return nil
}
