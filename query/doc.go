// Package query is streamdbg's SQL subset over state: the participle
// grammar (whose structs are the AST), a checker with positioned errors and
// hints, a planner that pushes operator, state and key filters down to the
// catalog, a streaming evaluator, and result formatting (table, json, csv).
// The same language serves the CLI, the TUI query bar, savepoint browsing
// and breakpoint conditions (ParseExpr, CompileExpr, Env).
//
// It must never import a streamdbg package other than state: it reads
// through its Catalog interface, which has exactly the method set of
// state.Catalog, so live state and savepoints implement it without
// importing query. Besides state it uses only the standard library and
// participle.
//
// Tables: state_meta, keyed_state, operator_state (with key for broadcast
// map keys), timers, and the shorthands "op" and "op"."state": the columns
// of keyed_state over the keyed states of that operator (or that state),
// followed by its operator state rows folded into the same columns
// (key_group and namespace NULL, kind split_list/union_list/broadcast, key
// the broadcast key, user_key the list position).
//
// Types. Static types are known for columns and literals; key, value and
// paths into them are dynamic. A comparison, arithmetic or pattern whose
// static types cannot meet (subtask = 'x', operator_name + 1) is an error
// naming both types, at check time. At run time a dynamic value of the
// wrong type makes the expression NULL (the row is not kept), as does
// division by zero. A string literal compared with a time must be RFC 3339
// (checked once); bytes compare with '0x...' strings. NULL follows SQL's
// three-valued logic; only TRUE keeps a row in WHERE.
//
// Invariants:
//   - Evaluation never panics; every problem is an *Error (positioned) or
//     an error wrapping the catalog's.
//   - Pushdown only narrows what is read: the whole WHERE is evaluated on
//     every row read, so a plan never changes a result, only its cost.
//   - Results stream: without ORDER BY or GROUP BY one row is held at a
//     time and LIMIT stops reading the catalog; ORDER BY with LIMIT keeps
//     O(OFFSET+LIMIT) rows; GROUP BY holds one accumulator per group.
//   - EXPLAIN text and the grammar's EBNF are golden: changes show in review.
package query
