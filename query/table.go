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
	{"operator_id", tString, func(r *srcRow) any { return r.meta.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.meta.OperatorName }},
	{"state_name", tString, func(r *srcRow) any { return r.meta.StateName }},
	{"scope", tString, func(r *srcRow) any { return r.meta.Scope.String() }},
	{"kind", tString, func(r *srcRow) any { return r.meta.Kind.String() }},
	{"key_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.KeyType) }},
	{"namespace_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.NamespaceType) }},
	{"user_key_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.UserKeyType) }},
	{"value_type", tString, func(r *srcRow) any { return nilIfEmpty(r.meta.ValueType) }},
	{"entries", tInt, func(r *srcRow) any { return r.meta.Entries }},
	{"bytes", tInt, func(r *srcRow) any { return r.meta.Bytes }},
}}

var keyedTable = &table{name: "keyed_state", kind: tableKeyed, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.keyed.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.keyed.OperatorName }},
	{"subtask", tInt, func(r *srcRow) any { return int64(r.keyed.Subtask) }},
	{"key_group", tInt, func(r *srcRow) any { return int64(r.keyed.KeyGroup) }},
	{"state_name", tString, func(r *srcRow) any { return r.keyed.StateName }},
	{"kind", tString, func(r *srcRow) any { return r.keyed.Kind.String() }},
	{"key", tAny, func(r *srcRow) any { return r.keyed.Key }},
	{"namespace", tAny, func(r *srcRow) any { return r.keyed.Namespace }},
	{"user_key", tAny, func(r *srcRow) any { return r.keyed.UserKey }},
	{"value", tAny, func(r *srcRow) any { return r.keyed.Value }},
}}

var operatorTable = &table{name: "operator_state", kind: tableOperator, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.op.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.op.OperatorName }},
	{"subtask", tInt, func(r *srcRow) any { return int64(r.op.Subtask) }},
	{"state_name", tString, func(r *srcRow) any { return r.op.StateName }},
	{"mode", tString, func(r *srcRow) any { return r.op.Kind.Mode() }},
	{"position", tInt, func(r *srcRow) any { return int64(r.op.Position) }},
	{"key", tAny, func(r *srcRow) any { return r.op.Key }},
	{"value", tAny, func(r *srcRow) any { return r.op.Value }},
}}

var timersTable = &table{name: "timers", kind: tableTimers, cols: []column{
	{"operator_id", tString, func(r *srcRow) any { return r.timer.OperatorID }},
	{"operator_name", tString, func(r *srcRow) any { return r.timer.OperatorName }},
	{"subtask", tInt, func(r *srcRow) any { return int64(r.timer.Subtask) }},
	{"key_group", tInt, func(r *srcRow) any { return int64(r.timer.KeyGroup) }},
	{"key", tAny, func(r *srcRow) any { return r.timer.Key }},
	{"namespace", tAny, func(r *srcRow) any { return r.timer.Namespace }},
	{"domain", tString, func(r *srcRow) any { return r.timer.Domain }},
	// Timestamps are times so that they compare with RFC 3339 literals; the
	// ends of time stay int64 (state.MillisValue) and compare as NULL.
	{"timestamp", tTime, func(r *srcRow) any { return state.MillisValue(r.timer.Timestamp) }},
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
	}},
	{"operator_name", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.OperatorName
		}
		return r.op.OperatorName
	}},
	{"subtask", tInt, func(r *srcRow) any {
		if r.keyed != nil {
			return int64(r.keyed.Subtask)
		}
		return int64(r.op.Subtask)
	}},
	{"key_group", tInt, func(r *srcRow) any {
		if r.keyed != nil {
			return int64(r.keyed.KeyGroup)
		}
		return nil
	}},
	{"state_name", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.StateName
		}
		return r.op.StateName
	}},
	{"kind", tString, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Kind.String()
		}
		return r.op.Kind.String()
	}},
	{"key", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Key
		}
		return r.op.Key
	}},
	{"namespace", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Namespace
		}
		return nil
	}},
	{"user_key", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.UserKey
		}
		if r.op.Kind == state.KindBroadcast {
			return nil
		}
		return int64(r.op.Position)
	}},
	{"value", tAny, func(r *srcRow) any {
		if r.keyed != nil {
			return r.keyed.Value
		}
		return r.op.Value
	}},
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
