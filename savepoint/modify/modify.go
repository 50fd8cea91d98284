// Package modify changes state with SQL statements (UPDATE, DELETE, INSERT,
// DROP STATE, parsed by query.ParseScript) and writes the result as a new
// savepoint of our format: the source savepoint is never written to.
//
// Statements are checked against the source's StateMeta before anything is
// read: an unknown operator or state, a column that cannot be set, a value
// whose type cannot be stored with the state's codec are errors with the
// statement's position and a hint. Values whose type is only known row by
// row (value - 17) are checked per row; a row that fails stops the whole
// transaction with its key named.
//
// Several statements form one transaction, applied in order to a stream of
// entries (a later statement sees what an earlier one wrote) and written by
// savepoint.Write: atomically, all of it or nothing. Entry counts and bytes
// of StateMeta are recomputed by the writer.
package modify

import (
	"fmt"
	"slices"
	"streamdbg/internal/numfmt"
	"strings"
	"sync/atomic"

	"github.com/alecthomas/participle/v2/lexer"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/state"
)

type stmtKind uint8

const (
	kindUpdate stmtKind = iota + 1
	kindDelete
	kindInsert
	kindDrop
)

// stmt is one checked statement.
type stmt struct {
	kind  stmtKind
	text  string // the statement's source, for reports
	opID  string
	op    *savepoint.OperatorMeta
	meta  state.StateMeta
	where *query.Compiled
	set   *query.Compiled // UPDATE's new value
	// setText: the new value is a string by its static type (JSON text
	// for a JSON state, see encode).
	setText bool
	// keyFilter skips entries of other keys without decoding them when the
	// WHERE pins keys.
	keyFilter *state.KeyFilter
	// inserts are INSERT's entries (keyed) sorted in stream order.
	inserts []state.Entry
	// count is what the statement did: rows updated, deleted, inserted, dropped.
	count atomic.Int64 // added to by the writers of several subtasks at once
}

// Plan is a checked script against one source savepoint.
type Plan struct {
	src   *savepoint.Savepoint
	stmts []*stmt
}

// names a WHERE or SET expression may use.
var keyedNames = []string{"key", "namespace", "user_key", "value", "key_group", "subtask", "operator_name", "state_name", "kind"}
var operatorNames = []string{"key", "user_key", "position", "value", "subtask", "operator_name", "state_name", "kind"}

// Compile checks a script against the source savepoint's StateMeta.
func Compile(src *savepoint.Savepoint, text string) (*Plan, error) {
	script, err := query.ParseScript(text)
	if err != nil {
		return nil, err
	}
	p := &Plan{src: src}
	dropped := map[[2]string]bool{}
	for _, st := range script.Statements {
		s, err := p.compile(st, text)
		if err != nil {
			return nil, err
		}
		k := [2]string{s.opID, s.meta.StateName}
		if dropped[k] {
			return nil, query.ErrorAt(st.Pos, fmt.Sprintf("state %s was dropped by an earlier statement", s.meta.QualifiedName()), "")
		}
		if s.kind == kindDrop {
			dropped[k] = true
		}
		p.stmts = append(p.stmts, s)
	}
	return p, nil
}

func (p *Plan) resolve(ref *query.TableRef) (*savepoint.OperatorMeta, state.StateMeta, error) {
	meta := p.src.Meta()
	name := ref.Operator()
	var op *savepoint.OperatorMeta
	var opNames, ids []string
	for i := range meta.Operators {
		o := &meta.Operators[i]
		opNames = append(opNames, o.Name)
		if o.Name == name || o.UID == name || o.ID == name {
			op = o
			ids = append(ids, o.ID)
		}
	}
	if len(ids) > 1 {
		return nil, state.StateMeta{}, query.ErrorAt(ref.Pos, fmt.Sprintf("%d operators are named %q", len(ids), name), "name one by its id: "+strings.Join(ids, ", "))
	}
	if op == nil {
		return nil, state.StateMeta{}, query.ErrorAt(ref.Pos, fmt.Sprintf("unknown operator %q", name), hintOr(query.DidYouMean(name, opNames), "operators: "+strings.Join(opNames, ", ")))
	}
	var stNames []string
	for _, m := range p.src.StateMetasFor(op.ID) {
		stNames = append(stNames, m.StateName)
	}
	if ref.State == "" {
		return nil, state.StateMeta{}, query.ErrorAt(ref.Pos, fmt.Sprintf("%q names an operator, not a state", name), fmt.Sprintf(`write "%s"."<state>" (states: %s)`, name, strings.Join(stNames, ", ")))
	}
	for _, m := range p.src.StateMetasFor(op.ID) {
		if m.StateName == ref.StateName() {
			return op, m, nil
		}
	}
	return nil, state.StateMeta{}, query.ErrorAt(ref.Pos, fmt.Sprintf("operator %s has no state %q", name, ref.StateName()), hintOr(query.DidYouMean(ref.StateName(), stNames), "states: "+strings.Join(stNames, ", ")))
}

func hintOr(h, alt string) string {
	if h != "" {
		return h
	}
	return alt
}

func (p *Plan) compile(st *query.Statement, text string) (*stmt, error) {
	s := &stmt{}
	if st.EndPos.Offset > st.Pos.Offset && st.EndPos.Offset <= len(text) {
		s.text = strings.TrimSpace(text[st.Pos.Offset:st.EndPos.Offset])
	}
	var ref *query.TableRef
	switch {
	case st.Update != nil:
		s.kind, ref = kindUpdate, st.Update.Table
	case st.Delete != nil:
		s.kind, ref = kindDelete, st.Delete.Table
	case st.Insert != nil:
		s.kind, ref = kindInsert, st.Insert.Table
	case st.Drop != nil:
		s.kind, ref = kindDrop, st.Drop.Table
	}
	op, m, err := p.resolve(ref)
	if err != nil {
		return nil, err
	}
	s.op, s.opID, s.meta = op, op.ID, m
	if s.kind == kindDrop {
		return s, nil
	}
	if m.Kind == state.KindTimers {
		return nil, query.ErrorAt(ref.Pos, fmt.Sprintf("%s holds timers, which cannot be changed with SQL", m.QualifiedName()), "DROP STATE removes them all")
	}
	names := keyedNames
	if m.Scope == state.ScopeOperator {
		names = operatorNames
	}
	where := func(e *query.Expr) error {
		if e == nil {
			return nil
		}
		c, typ, err := query.CompileTyped(e, names)
		if err != nil {
			return err
		}
		if typ != "any" && typ != "bool" && typ != "null" {
			return query.ErrorAt(e.Pos, fmt.Sprintf("WHERE is %s, want a condition", typ), "compare something, e.g. key = 'k1'")
		}
		s.where = c
		if pins, err := query.Pinned(e); err == nil && m.Scope == state.ScopeKeyed {
			if keys, ok := pins["key"]; ok {
				s.keyFilter = state.NewKeyFilter(m.KeyType, keys)
			}
		}
		return nil
	}
	switch s.kind {
	case kindUpdate:
		if err := where(st.Update.Where); err != nil {
			return nil, err
		}
		for _, a := range st.Update.Sets {
			if a.ColumnName() != "value" {
				return nil, query.ErrorAt(a.Pos, fmt.Sprintf("column %q cannot be set", a.ColumnName()), "only value can be SET; to move an entry to another key, DELETE it and INSERT it")
			}
			if s.set != nil {
				return nil, query.ErrorAt(a.Pos, "value is set twice", "")
			}
			c, typ, err := query.CompileTyped(a.Value, names)
			if err != nil {
				return nil, err
			}
			if err := checkType(a.Value.Pos, m, m.ValueType, typ, "value"); err != nil {
				return nil, err
			}
			s.set, s.setText = c, typ == "string"
			if s.setText && strings.HasPrefix(m.ValueType, "json:") {
				// A constant (a literal) that is not JSON text fails
				// every row: say so before anything is read.
				if v, err := c.Eval(query.EnvMap{}); err == nil {
					if _, err := encode(m.ValueType, v, true); err != nil {
						return nil, query.ErrorAt(a.Value.Pos, fmt.Sprintf("value of %s: %v", m.QualifiedName(), err), "")
					}
				}
			}

		}
	case kindDelete:
		if err := where(st.Delete.Where); err != nil {
			return nil, err
		}
	case kindInsert:
		if err := p.compileInsert(s, st.Insert); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// checkType refuses, before anything is read, an expression whose static
// type the state's codec cannot store.
func checkType(pos lexer.Position, m state.StateMeta, typeName, static, column string) error {
	ok, want := writable(typeName)
	if !ok {
		return query.ErrorAt(pos, fmt.Sprintf("%s of %s has type %s, which cannot be written", column, m.QualifiedName(), typeName), "only states with built-in or JSON codecs can be changed")
	}
	if !staticFits(typeName, static) {
		return query.ErrorAt(pos, fmt.Sprintf("%s of %s is %s, the expression is %s", column, m.QualifiedName(), typeName, static), "write "+want)
	}
	return nil
}

func (p *Plan) compileInsert(s *stmt, in *query.Insert) error {
	m := s.meta
	if m.Scope != state.ScopeKeyed {
		return query.ErrorAt(in.Pos, fmt.Sprintf("%s is operator state: INSERT writes keyed state only", m.QualifiedName()), "")
	}
	cols := map[string]int{}
	for i, c := range in.Columns {
		n := c.ColumnName()
		switch n {
		case "key", "namespace", "user_key", "value":
		default:
			return query.ErrorAt(c.Pos, fmt.Sprintf("column %q cannot be inserted", n), "insert key, namespace, user_key and value")
		}
		if _, dup := cols[n]; dup {
			return query.ErrorAt(c.Pos, fmt.Sprintf("column %q named twice", n), "")
		}
		cols[n] = i
	}
	need := []string{"key", "value"}
	if m.Kind == state.KindMap || m.Kind == state.KindList {
		need = append(need, "user_key")
	}
	if m.NamespaceType != "" && m.NamespaceType != "void" {
		need = append(need, "namespace")
	}
	for _, n := range need {
		if _, ok := cols[n]; !ok {
			hint := ""
			if n == "user_key" && m.Kind == state.KindList {
				hint = "a list element's user_key is its position"
			}
			return query.ErrorAt(in.Pos, fmt.Sprintf("INSERT into %s (%s) needs column %s", m.QualifiedName(), m.Kind, n), hint)
		}
	}
	uk := m.UserKeyType
	if m.Kind == state.KindList {
		uk = "position"
	}
	types := map[string]string{"key": m.KeyType, "namespace": m.NamespaceType, "user_key": uk, "value": m.ValueType}
	if uk == "position" {
		types["user_key"] = "int64"
	}
	maxPar := s.op.MaxParallelism
	for _, row := range in.Rows {
		if len(row.Values) != len(in.Columns) {
			return query.ErrorAt(row.Pos, fmt.Sprintf("%d values for %d columns", len(row.Values), len(in.Columns)), "")
		}
		e := state.Entry{State: m.StateName}
		for n, i := range cols {
			x := row.Values[i]
			c, typ, err := query.CompileTyped(x, []string{})
			if err != nil {
				return err
			}
			if err := checkType(x.Pos, m, types[n], typ, n); err != nil {
				return err
			}
			v, err := c.Eval(query.EnvMap{})
			if err != nil {
				return err
			}
			b, err := encode(types[n], v, typ == "string")
			if err != nil {
				return query.ErrorAt(x.Pos, fmt.Sprintf("%s of %s: %v", n, m.QualifiedName(), err), "")
			}
			switch n {
			case "key":
				e.Key = b
			case "namespace":
				e.Namespace = b
			case "user_key":
				e.UserKey = b
				if uk == "position" {
					e.UserKey = state.Position.Append(nil, v.(int64))
				}
			case "value":
				e.Value = b
			}
		}
		if len(e.Key) == 0 && m.KeyType != "string" {
			return query.ErrorAt(row.Pos, "empty key", "")
		}
		e.KeyGroup = state.KeyGroupFor(e.Key, maxPar)
		s.inserts = append(s.inserts, e)
	}
	slices.SortFunc(s.inserts, state.CompareEntries)
	for i := 1; i < len(s.inserts); i++ {
		if state.CompareEntries(s.inserts[i-1], s.inserts[i]) == 0 {
			return query.ErrorAt(in.Pos, "the same entry is inserted twice", "")
		}
	}
	return nil
}

// Statements describes what each statement did (after Write), one line each.
func (p *Plan) Statements() []string {
	out := make([]string, len(p.stmts))
	for i, s := range p.stmts {
		verb := map[stmtKind]string{kindUpdate: "updated", kindDelete: "deleted", kindInsert: "inserted", kindDrop: "dropped"}[s.kind]
		out[i] = fmt.Sprintf("%s: %s %s", s.text, numfmt.Count(s.count.Load(), "entry", "entries"), verb)
	}
	return out
}
