package modify

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/savepoint"
	"streamdbg/state"
)

// ErrInPlace refuses a target that is the source: a savepoint is never
// modified, a new one is written.
var ErrInPlace = errors.New("modify: the target is the source savepoint; write a new one")

// Write applies the plan to the source and writes the result to dst on fs
// (which must not exist) atomically, with savepoint.Write. Counts of what
// each statement did are in Statements afterwards.
func (p *Plan) Write(fs vfs.FS, dst string) error {
	if filepath.Clean(dst) == filepath.Clean(p.src.Dir()) {
		return ErrInPlace
	}
	for _, s := range p.stmts {
		s.count.Store(0)
	}
	snap, err := p.snapshot()
	if err != nil {
		return err
	}
	if err := savepoint.Write(fs, dst, snap); err != nil {
		return err
	}
	return nil
}

func (p *Plan) dropped(opID, name string) bool {
	for _, s := range p.stmts {
		if s.kind == kindDrop && s.opID == opID && s.meta.StateName == name {
			return true
		}
	}
	return false
}

func (p *Plan) snapshot() (*savepoint.Snapshot, error) {
	md := p.src.Meta()
	snap := &savepoint.Snapshot{JobName: md.JobName, JobFingerprint: md.JobFingerprint, CheckpointID: md.CheckpointID,
		Created: md.Created, Position: md.Position, ProcessingTime: md.ProcessingTime, Sources: md.Sources}
	for i := range md.Operators {
		om := &md.Operators[i]
		os := savepoint.OperatorSnapshot{ID: om.ID, UID: om.UID, Name: om.Name, Parallelism: om.Parallelism, MaxParallelism: om.MaxParallelism}
		var stmts []*stmt
		for _, s := range p.stmts {
			if s.opID == om.ID {
				stmts = append(stmts, s)
			}
		}
		inserts := false
		for _, m := range p.src.StateMetasFor(om.ID) {
			if !p.dropped(om.ID, m.StateName) {
				os.States = append(os.States, m)
			}
		}
		for _, s := range stmts {
			inserts = inserts || len(s.inserts) > 0
		}
		var copies []broadcastCopy // per subtask with operator state, when statements touch the operator
		for _, sub := range om.Subtasks {
			ss := savepoint.SubtaskSnapshot{Index: sub.Index, KeyGroups: sub.KeyGroups.Range()}
			if sub.Keyed != nil || inserts {
				ss.Keyed = p.keyedGroup(om, sub.Index, stmts)
			}
			if sub.Operator != nil {
				es, err := p.src.OperatorEntriesFor(om.ID, om.Parallelism, sub.Index)
				if err != nil {
					return nil, err
				}
				c := broadcastCopy{subtask: sub.Index}
				if len(stmts) > 0 {
					c.before = broadcastOf(es)
				}
				if es, err = p.operatorEntries(om, sub.Index, es, stmts); err != nil {
					return nil, err
				}
				if len(stmts) > 0 {
					c.after = broadcastOf(es)
					copies = append(copies, c)
				}
				ss.Operator = es
			}
			os.Subtasks = append(os.Subtasks, ss)
		}
		if err := sameCopies(om, copies); err != nil {
			return nil, err
		}
		snap.Operators = append(snap.Operators, os)
	}
	return snap, nil
}

// broadcastOf is the broadcast state entries of one subtask, sorted.
func broadcastOf(es []state.OperatorEntry) []state.OperatorEntry {
	var out []state.OperatorEntry
	for _, e := range es {
		if e.Kind == state.KindBroadcast {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b state.OperatorEntry) int {
		return cmp.Or(strings.Compare(a.State, b.State), bytes.Compare(a.Key, b.Key))
	})
	return out
}

// broadcastCopy is one subtask's broadcast state before and after the
// statements.
type broadcastCopy struct {
	subtask       int
	before, after []state.OperatorEntry
}

// sameCopies refuses statements that leave the subtasks' copies of
// broadcast state different where the source's were the same: Flink keeps
// one copy per subtask and takes them to be equal (a job restored from
// such a savepoint sees other broadcast state in each subtask).
func sameCopies(om *savepoint.OperatorMeta, copies []broadcastCopy) error {
	equal := func(a, b []state.OperatorEntry) bool {
		return slices.EqualFunc(a, b, func(x, y state.OperatorEntry) bool {
			return x.State == y.State && bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value)
		})
	}
	for _, c := range copies[min(1, len(copies)):] {
		first := copies[0]
		if equal(first.before, c.before) && !equal(first.after, c.after) {
			return fmt.Errorf("operator %q: the statements leave subtask %d's copy of its broadcast state different from subtask %d's; every subtask keeps a copy and Flink takes them to be equal: change every subtask's copy (no condition on subtask)", om.Name, c.subtask, first.subtask)
		}
	}
	return nil
}

// keyedGroup is the writer's source of one subtask's key groups: the
// source's entries through every statement on the operator, in order.
func (p *Plan) keyedGroup(om *savepoint.OperatorMeta, subtask int, stmts []*stmt) func(kg int) iter.Seq2[state.Entry, error] {
	return func(kg int) iter.Seq2[state.Entry, error] {
		seq := p.src.KeyedEntriesFor(om.ID, state.KeyGroupRange{Start: kg, End: kg})
		lists := map[string]bool{}
		for _, s := range stmts {
			seq = s.applyKeyed(seq, om, subtask, kg)
			if s.meta.Kind.IsList() && (s.kind == kindInsert || s.kind == kindDelete) {
				lists[s.meta.StateName] = true
			}
		}
		if len(lists) > 0 {
			seq = renumberLists(seq, lists)
		}
		return seq
	}
}

// renumberLists numbers the elements of each list of the named states 0,
// 1, … in their order, as the job numbers them when it restores the list:
// an element inserted past the end is appended, the ones after a deleted
// one move up. Positions sort as numbers, so the entries stay in order.
func renumberLists(in iter.Seq2[state.Entry, error], lists map[string]bool) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		var st string
		var key, ns []byte
		next := int64(0)
		for e, err := range in {
			if err == nil && lists[e.State] {
				if e.State != st || !bytes.Equal(e.Key, key) || !bytes.Equal(e.Namespace, ns) {
					st, key, ns, next = e.State, bytes.Clone(e.Key), bytes.Clone(e.Namespace), 0
				}
				e.UserKey = state.Position.Append(nil, next)
				next++
			}
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// rowEnv is the environment of a statement's expressions over one entry,
// decoding key, namespace, user key and value only when named.
type rowEnv struct {
	s       *stmt
	om      *savepoint.OperatorMeta
	subtask int
	e       *state.Entry
	op      *state.OperatorEntry
	vals    [4]any
	have    [4]bool
}

func decodeAs(typeName string, b []byte) any {
	if typeName == "" && len(b) == 0 {
		return nil
	}
	v, err := state.DisplayBytes(typeName, b)
	if err != nil {
		return state.Hex(bytes.Clone(b))
	}
	return v
}

func (r *rowEnv) field(i int) any {
	if r.have[i] {
		return r.vals[i]
	}
	m := &r.s.meta
	var v any
	if r.e != nil {
		switch i {
		case 0:
			v = decodeAs(m.KeyType, r.e.Key)
		case 1:
			v = decodeAs(m.NamespaceType, r.e.Namespace)
		case 2:
			switch {
			case m.Kind.IsList():
				v = decodeAs("position", r.e.UserKey)
			case r.e.UserKey != nil || m.Kind == state.KindMap: // a map key of no bytes is the empty string
				v = decodeAs(m.UserKeyType, r.e.UserKey)
			}
		case 3:
			v = decodeAs(m.ValueType, r.e.Value)
		}
	} else {
		switch i {
		case 0:
			if r.op.Kind == state.KindBroadcast {
				v = decodeAs(m.UserKeyType, r.op.Key)
			}
		case 2:
			if r.op.Kind != state.KindBroadcast {
				v = int64(r.op.Position)
			}
		case 3:
			v = decodeAs(m.ValueType, r.op.Value)
		}
	}
	r.vals[i], r.have[i] = v, true
	return v
}

func (r *rowEnv) Lookup(name string) (any, bool) {
	switch name {
	case "key":
		return r.field(0), true
	case "namespace":
		return r.field(1), true
	case "user_key":
		return r.field(2), true
	case "value":
		return r.field(3), true
	case "position":
		if r.op != nil {
			return int64(r.op.Position), true
		}
		return nil, true
	case "key_group":
		if r.e != nil {
			return int64(r.e.KeyGroup), true
		}
		return nil, true
	case "subtask":
		return int64(r.subtask), true
	case "operator_name":
		return r.om.Name, true
	case "state_name":
		return r.s.meta.StateName, true
	case "kind":
		return r.s.meta.Kind.String(), true
	}
	return nil, false
}

// where says whether the statement applies to the row.
func (s *stmt) matches(env *rowEnv) (bool, error) {
	if s.where == nil {
		return true, nil
	}
	return s.where.EvalBool(env)
}

func (s *stmt) rowError(env *rowEnv, err error) error {
	what := fmt.Sprintf("key %s", describe(env.field(0)))
	if env.op != nil {
		what = fmt.Sprintf("subtask %d position %d", env.subtask, env.op.Position)
	}
	return fmt.Errorf("modify: %s: %s: %w", s.text, what, err)
}

// applyKeyed runs the statement over one key group's entries.
func (s *stmt) applyKeyed(in iter.Seq2[state.Entry, error], om *savepoint.OperatorMeta, subtask, kg int) iter.Seq2[state.Entry, error] {
	switch s.kind {
	case kindDrop:
		return func(yield func(state.Entry, error) bool) {
			for e, err := range in {
				if err == nil && e.State == s.meta.StateName {
					s.count.Add(1)
					continue
				}
				if !yield(e, err) || err != nil {
					return
				}
			}
		}
	case kindInsert:
		var mine []state.Entry
		for _, e := range s.inserts {
			if e.KeyGroup == kg {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			return in
		}
		return func(yield func(state.Entry, error) bool) {
			i := 0
			for e, err := range in {
				if err != nil {
					yield(e, err)
					return
				}
				for ; i < len(mine); i++ {
					c := state.CompareEntries(mine[i], e)
					if c > 0 {
						break
					}
					if c == 0 {
						env := &rowEnv{s: s, om: om, subtask: subtask, e: &e}
						yield(state.Entry{}, s.rowError(env, errors.New("the entry exists; UPDATE it instead")))
						return
					}
					s.count.Add(1)
					if !yield(mine[i], nil) {
						return
					}
				}
				if !yield(e, nil) {
					return
				}
			}
			for ; i < len(mine); i++ {
				s.count.Add(1)
				if !yield(mine[i], nil) {
					return
				}
			}
		}
	}
	return func(yield func(state.Entry, error) bool) {
		for e, err := range in {
			if err != nil || e.State != s.meta.StateName || !s.keyFilter.Match(e.Key) {
				if !yield(e, err) || err != nil {
					return
				}
				continue
			}
			env := &rowEnv{s: s, om: om, subtask: subtask, e: &e}
			ok, err := s.matches(env)
			if err != nil {
				yield(state.Entry{}, s.rowError(env, err))
				return
			}
			if !ok {
				if !yield(e, nil) {
					return
				}
				continue
			}
			s.count.Add(1)
			if s.kind == kindDelete {
				continue
			}
			v, err := s.set.Eval(env)
			if err == nil {
				var b []byte
				if b, err = encode(s.meta.ValueType, v, s.setText); err == nil {
					if err = sameJSONKind(s.meta.ValueType, e.Value, b); err == nil {
						e.Value = b
					}
				}
			}
			if err != nil {
				yield(state.Entry{}, s.rowError(env, err))
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// operatorEntries runs the operator's statements over one subtask's
// operator state.
func (p *Plan) operatorEntries(om *savepoint.OperatorMeta, subtask int, es []state.OperatorEntry, stmts []*stmt) ([]state.OperatorEntry, error) {
	for _, s := range stmts {
		if s.meta.Scope != state.ScopeOperator {
			continue
		}
		out := es[:0:0]
		for i := range es {
			e := es[i]
			if e.State != s.meta.StateName {
				out = append(out, e)
				continue
			}
			if s.kind == kindDrop {
				s.count.Add(1)
				continue
			}
			env := &rowEnv{s: s, om: om, subtask: subtask, op: &e}
			ok, err := s.matches(env)
			if err != nil {
				return nil, s.rowError(env, err)
			}
			if !ok {
				out = append(out, e)
				continue
			}
			s.count.Add(1)
			if s.kind == kindDelete {
				continue
			}
			v, err := s.set.Eval(env)
			if err == nil {
				var b []byte
				if b, err = encode(s.meta.ValueType, v, s.setText); err == nil {
					if err = sameJSONKind(s.meta.ValueType, e.Value, b); err == nil {
						e.Value = b
					}
				}
			}
			if err != nil {
				return nil, s.rowError(env, err)
			}
			out = append(out, e)
		}
		es = renumber(out)
	}
	return es, nil
}

// renumber gives list elements consecutive positions again after deletes.
func renumber(es []state.OperatorEntry) []state.OperatorEntry {
	next := map[string]int{}
	for i := range es {
		if es[i].Kind == state.KindBroadcast {
			continue
		}
		es[i].Position = next[es[i].State]
		next[es[i].State]++
	}
	return es
}
