package tui

import (
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

// The env builders below allocate a map per row: callers build one only
// when a filter is set (passes takes the builder, not the map).

func keyedEnv(r session.Row) query.EnvMap {
	return query.EnvMap{"operator_name": r.OperatorName, "subtask": int64(r.Subtask), "key_group": int64(r.KeyGroup),
		"state_name": r.State, "kind": r.Kind, "key": r.Key, "namespace": r.Namespace, "user_key": r.UserKey, "value": r.Value}
}

func operatorEnv(r session.Row) query.EnvMap {
	return query.EnvMap{"operator_name": r.OperatorName, "subtask": int64(r.Subtask), "state_name": r.State,
		"mode": r.Kind, "position": int64(r.Position), "key": r.Key, "value": r.Value}
}

func timerEnv(r session.Row) query.EnvMap {
	return query.EnvMap{"operator_name": r.OperatorName, "subtask": int64(r.Subtask), "key_group": int64(r.KeyGroup),
		"key": r.Key, "namespace": r.Namespace, "domain": r.Domain, "timestamp": r.Timestamp}
}

// passes reports whether a row is kept by a filter; a nil filter keeps
// every row.
func passes(cond *query.Compiled, r session.Row, env func(session.Row) query.EnvMap) (bool, error) {
	if cond == nil {
		return true, nil
	}
	return cond.EvalBool(env(r))
}
