package modify

import (
	"fmt"
	"streamdbg/internal/numfmt"
	"strings"

	"streamdbg/query"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
)

// FlinkPlan is a checked script against an Apache Flink savepoint of the
// canonical layout: UPDATE and DELETE of keyed value, list, map, reducing
// and aggregating states whose serializers flink can encode. Its Write is
// flink.Savepoint.Rewrite: changed key groups encoded again with the same
// serializers, everything else byte for byte.
type FlinkPlan struct {
	src   *flink.Savepoint
	stmts []*flinkStmt
	// Report is what the last Write did.
	Report *flink.RewriteReport
}

type flinkStmt struct {
	text   string
	delete bool
	opID   string
	meta   state.StateMeta
	where  *query.Compiled
	set    *query.Compiled
	count  int64
}

// CompileFlink checks a script against a Flink savepoint's StateMeta.
func CompileFlink(src *flink.Savepoint, text string) (*FlinkPlan, error) {
	script, err := query.ParseScript(text)
	if err != nil {
		return nil, err
	}
	p := &FlinkPlan{src: src}
	ops := src.Operators()
	metas := src.States()
	for _, st := range script.Statements {
		s := &flinkStmt{}
		if st.EndPos.Offset > st.Pos.Offset && st.EndPos.Offset <= len(text) {
			s.text = strings.TrimSpace(text[st.Pos.Offset:st.EndPos.Offset])
		}
		var ref *query.TableRef
		var where *query.Expr
		switch {
		case st.Update != nil:
			ref, where = st.Update.Table, st.Update.Where
		case st.Delete != nil:
			ref, where, s.delete = st.Delete.Table, st.Delete.Where, true
		default:
			return nil, query.ErrorAt(st.Pos, "Apache Flink savepoints take UPDATE and DELETE only", "INSERT and DROP STATE would change the serializer snapshots or key placement; modify a savepoint of ours for those")
		}
		var op *state.OperatorInfo
		var names, ids []string
		for i := range ops {
			names = append(names, ops[i].Name)
			if o := &ops[i]; o.Name == ref.Operator() || o.UID == ref.Operator() || o.ID == ref.Operator() {
				op = o
				ids = append(ids, o.ID)
			}
		}
		if len(ids) > 1 {
			return nil, query.ErrorAt(ref.Pos, fmt.Sprintf("%d operators are named %q", len(ids), ref.Operator()), "name one by its id: "+strings.Join(ids, ", "))
		}
		if op == nil {
			return nil, query.ErrorAt(ref.Pos, fmt.Sprintf("unknown operator %q", ref.Operator()), hintOr(query.DidYouMean(ref.Operator(), names), "operators: "+strings.Join(names, ", ")))
		}
		var stNames []string
		found := false
		for _, m := range metas {
			if m.OperatorID != op.ID {
				continue
			}
			stNames = append(stNames, m.StateName)
			if m.StateName == ref.StateName() {
				s.meta, found = m, true
			}
		}
		if !found {
			return nil, query.ErrorAt(ref.Pos, fmt.Sprintf("operator %s has no state %q", ref.Operator(), ref.StateName()), hintOr(query.DidYouMean(ref.StateName(), stNames), "states: "+strings.Join(stNames, ", ")))
		}
		m := s.meta
		s.opID = op.ID
		switch {
		case m.Status != "":
			return nil, query.ErrorAt(ref.Pos, fmt.Sprintf("%s cannot be read: %s", m.QualifiedName(), m.Status), "")
		case m.Scope != state.ScopeKeyed || m.Kind == state.KindTimers:
			return nil, query.ErrorAt(ref.Pos, fmt.Sprintf("%s is %s state: only keyed value, list and map states of Flink savepoints can be changed", m.QualifiedName(), m.Kind), "")
		}
		if where != nil {
			c, typ, err := query.CompileTyped(where, keyedNames)
			if err != nil {
				return nil, err
			}
			if typ != "any" && typ != "bool" && typ != "null" {
				return nil, query.ErrorAt(where.Pos, fmt.Sprintf("WHERE is %s, want a condition", typ), "compare something, e.g. key = 'k1'")
			}
			s.where = c
		}
		if st.Update != nil {
			want, ok := flink.EncodableType(m.ValueType)
			for _, a := range st.Update.Sets {
				if a.ColumnName() != "value" {
					return nil, query.ErrorAt(a.Pos, fmt.Sprintf("column %q cannot be set", a.ColumnName()), "only value can be SET")
				}
				if !ok {
					return nil, query.ErrorAt(a.Value.Pos, fmt.Sprintf("value of %s has type %s, which cannot be written", m.QualifiedName(), m.ValueType), "only Flink's primitive, String, byte[] and Tuple serializers can be written")
				}
				c, typ, err := query.CompileTyped(a.Value, keyedNames)
				if err != nil {
					return nil, err
				}
				if typ == "null" && m.Kind != state.KindMap {
					hint := "DELETE the entry instead"
					if m.Kind.IsList() {
						hint = "Flink's lists hold no NULL elements; DELETE the element instead"
					}
					return nil, query.ErrorAt(a.Value.Pos, fmt.Sprintf("value of %s cannot be NULL", m.QualifiedName()), hint)
				}
				if !(typ == "any" || want == "any" || typ == want || typ == "null" || want == "float64" && typ == "int64") {
					return nil, query.ErrorAt(a.Value.Pos, fmt.Sprintf("value of %s is %s (%s), the expression is %s", m.QualifiedName(), m.ValueType, want, typ), "")
				}
				s.set = c
			}
		}
		p.stmts = append(p.stmts, s)
	}
	return p, nil
}

// Touches implements flink.KeyedEdit.
func (p *FlinkPlan) Touches(opID, st string) bool {
	for _, s := range p.stmts {
		if s.opID == opID && s.meta.StateName == st {
			return true
		}
	}
	return false
}

// rowEnvOf is the environment of a statement over a decoded row.
type keyedRowEnv struct{ r *state.KeyedRow }

func (e keyedRowEnv) Lookup(name string) (any, bool) {
	r := e.r
	switch name {
	case "key":
		return r.Key, true
	case "namespace":
		return r.Namespace, true
	case "user_key":
		return r.UserKey, true
	case "value":
		return r.Value, true
	case "key_group":
		return int64(r.KeyGroup), true
	case "subtask":
		return int64(r.Subtask), true
	case "operator_name":
		return r.OperatorName, true
	case "state_name":
		return r.StateName, true
	case "kind":
		return r.Kind.String(), true
	}
	return nil, false
}

// Edit implements flink.KeyedEdit: the statements in order, a later one
// seeing what an earlier one set.
func (p *FlinkPlan) Edit(row *state.KeyedRow) (flink.EntryEdit, error) {
	var out flink.EntryEdit
	for _, s := range p.stmts {
		if s.opID != row.OperatorID || s.meta.StateName != row.StateName {
			continue
		}
		env := keyedRowEnv{row}
		if s.where != nil {
			ok, err := s.where.EvalBool(env)
			if err != nil {
				return out, fmt.Errorf("modify: %s: key %s: %w", s.text, describe(row.Key), err)
			}
			if !ok {
				continue
			}
		}
		s.count++
		if s.delete {
			return flink.EntryEdit{Drop: true}, nil
		}
		v, err := s.set.Eval(env)
		if err != nil {
			return out, fmt.Errorf("modify: %s: key %s: %w", s.text, describe(row.Key), err)
		}
		row.Value = v
		out = flink.EntryEdit{Set: true, Value: v}
	}
	return out, nil
}

// Write rewrites the source into dst (which must not exist).
func (p *FlinkPlan) Write(dst string) error {
	for _, s := range p.stmts {
		s.count = 0
	}
	rep, err := p.src.Rewrite(dst, p)
	p.Report = rep
	return err
}

// Statements describes what each statement did (after Write).
func (p *FlinkPlan) Statements() []string {
	out := make([]string, len(p.stmts))
	for i, s := range p.stmts {
		verb := "updated"
		if s.delete {
			verb = "deleted"
		}
		out[i] = fmt.Sprintf("%s: %s %s", s.text, numfmt.Count(s.count, "entry", "entries"), verb)
	}
	return out
}
