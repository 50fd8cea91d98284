package tui

import (
	"fmt"

	"streamdbg/query"
	"streamdbg/state"
)

// filterNames are the columns a `/` filter sees, in the debug screen's
// state pane and in the savepoint browser alike.
var filterNames = []string{"operator_name", "subtask", "key_group", "state_name", "kind", "key", "namespace", "user_key", "value", "domain", "timestamp", "mode", "position"}

// compileFilter compiles a `/` expression over a row's columns; "" is no
// filter. Errors are query errors with a position, for the caret.
func compileFilter(text string) (*query.Compiled, error) {
	if text == "" {
		return nil, nil
	}
	e, err := query.ParseExpr(text)
	if err != nil {
		return nil, err
	}
	return query.CompileExpr(e, filterNames)
}

// The env builders below allocate a map per row: callers build one only
// when a filter is set.

func keyedEnv(r state.KeyedRow) query.EnvMap {
	return query.EnvMap{"operator_name": r.OperatorName, "subtask": int64(r.Subtask), "key_group": int64(r.KeyGroup),
		"state_name": r.StateName, "kind": fmt.Sprint(r.Kind), "key": r.Key, "namespace": r.Namespace, "user_key": r.UserKey, "value": r.Value}
}

func operatorEnv(r state.OperatorRow) query.EnvMap {
	return query.EnvMap{"operator_name": r.OperatorName, "subtask": int64(r.Subtask), "state_name": r.StateName,
		"mode": fmt.Sprint(r.Kind), "position": int64(r.Position), "key": r.Key, "value": r.Value}
}

func timerEnv(r state.TimerRow) query.EnvMap {
	return query.EnvMap{"operator_name": r.OperatorName, "subtask": int64(r.Subtask), "key_group": int64(r.KeyGroup),
		"key": r.Key, "namespace": r.Namespace, "domain": r.Domain, "timestamp": r.Timestamp}
}

// passes reports whether a row is kept by a `/` filter; a nil filter keeps
// every row.
func passes[R any](cond *query.Compiled, r R, env func(R) query.EnvMap) (bool, error) {
	if cond == nil {
		return true, nil
	}
	return cond.EvalBool(env(r))
}
