package tui

import (
	"slices"

	"streamdbg/query"
	"streamdbg/runtime/session"
)

// filterNames are the columns an `f` filter sees, in the debug screen's
// state pane and in the savepoint browser alike.
var filterNames = []string{"operator_name", "subtask", "key_group", "state_name", "kind", "key", "namespace", "user_key", "value", "domain", "timestamp", "mode", "position"}

// compileFilter compiles an `f` expression over a row's columns; "" is no
// filter. Errors are query errors with a position, for the caret.
func compileFilter(text string) (*query.Compiled, error) {
	c, _, err := compileFilterPins(text)
	return c, err
}

// compileFilterPins is compileFilter with the values the filter's top-level
// AND pins (key = 'a' OR key = 'b' pins key to both), which a savepoint
// scan reads from their key groups only.
func compileFilterPins(text string) (*query.Compiled, map[string][]any, error) {
	if text == "" {
		return nil, nil, nil
	}
	e, err := query.ParseExpr(text)
	if err != nil {
		return nil, nil, err
	}
	c, err := query.CompileExpr(e, filterNames)
	if err != nil {
		return nil, nil, err
	}
	pins, err := query.Pinned(e)
	if err != nil {
		return nil, nil, err
	}
	return c, pins, nil
}

// rowKind says which columns a row has for a filter: a keyed state's,
// an operator state's or a timer's.
type rowKind int

const (
	keyedRow rowKind = iota
	operatorRow
	timerRow
)

// rowNames are the columns of each kind of row.
var rowNames = [...][]string{
	keyedRow:    {"operator_name", "subtask", "key_group", "state_name", "kind", "key", "namespace", "user_key", "value"},
	operatorRow: {"operator_name", "subtask", "state_name", "mode", "position", "key", "value"},
	timerRow:    {"operator_name", "subtask", "key_group", "state_name", "key", "namespace", "domain", "timestamp"},
}

// rowEnv is a row's columns for a filter, looked up in the row itself: a
// map of them per row was most of what a filter over a large state cost
// (its allocations, and the garbage collector's work after them).
type rowEnv struct {
	r    session.Row
	kind rowKind
}

// Lookup implements query.Env: the columns of the row's kind (rowNames).
func (e *rowEnv) Lookup(name string) (any, bool) {
	if !slices.Contains(rowNames[e.kind], name) {
		return nil, false
	}
	r := &e.r
	switch name {
	case "operator_name":
		return r.OperatorName, true
	case "subtask":
		return int64(r.Subtask), true
	case "key_group":
		return int64(r.KeyGroup), true
	case "state_name":
		return r.State, true
	case "kind", "mode": // a keyed state's kind, an operator state's mode
		return r.Kind, true
	case "key":
		return r.Key, true
	case "namespace":
		return r.Namespace, true
	case "user_key":
		return r.UserKey, true
	case "value":
		return r.Value, true
	case "position":
		return int64(r.Position), true
	case "domain":
		return r.Domain, true
	case "timestamp":
		return r.Timestamp, true
	}
	return nil, false
}

// Names lists the row's columns, for hints.
func (e *rowEnv) Names() []string { return rowNames[e.kind] }

// passes reports whether a row of the given kind is kept by a filter; a
// nil filter keeps every row. The row is taken by value: its copy in the
// env (which the evaluation keeps) is made only when there is a filter.
func passes(cond *query.Compiled, r session.Row, kind rowKind) (bool, error) {
	if cond == nil {
		return true, nil
	}
	return cond.EvalBool(&rowEnv{r: r, kind: kind})
}
