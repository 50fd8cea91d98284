package diff

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
)

// Change says what happened to an entry from A to B.
type Change string

const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// Columns are the columns of a diff row, in the order Row.Values gives them.
var Columns = []string{"change", "operator_name", "state_name", "key", "namespace", "user_key", "old_value", "new_value"}

// filterNames are the names a filter expression may use: the columns and
// operator_id, key_group and kind.
var filterNames = append(slices.Clone(Columns), "operator_id", "key_group", "kind")

// Row is one entry that differs. For keyed state Key, Namespace and UserKey
// are as in state.KeyedRow (UserKey: the map key, the list position, or a
// timer's timestamp). For operator state Key is the broadcast map key,
// UserKey the list position, and Namespace names the subtask ("subtask 2"),
// since operator state is held per subtask.
type Row struct {
	Change       Change
	OperatorID   string
	OperatorName string
	StateName    string
	Kind         state.Kind
	KeyGroup     int // -1 for operator state
	Key          any
	Namespace    any
	UserKey      any
	Old, New     any // Old is nil for Added, New for Removed
}

// Values are the row's values in the order of Columns.
func (r Row) Values() []any {
	return []any{string(r.Change), r.OperatorName, r.StateName, r.Key, r.Namespace, r.UserKey, r.Old, r.New}
}

// Lookup makes a row the environment of a filter expression.
func (r *Row) Lookup(name string) (any, bool) {
	switch name {
	case "change":
		return string(r.Change), true
	case "operator_name":
		return r.OperatorName, true
	case "operator_id":
		return r.OperatorID, true
	case "state_name":
		return r.StateName, true
	case "kind":
		return r.Kind.String(), true
	case "key_group":
		if r.KeyGroup < 0 {
			return nil, true
		}
		return int64(r.KeyGroup), true
	case "key":
		return r.Key, true
	case "namespace":
		return r.Namespace, true
	case "user_key":
		return r.UserKey, true
	case "old_value":
		return r.Old, true
	case "new_value":
		return r.New, true
	}
	return nil, false
}

// Summary counts the differences of one state. Unchanged counts the
// entries read on both sides and found equal (within what the filter's
// pinned keys, key groups and states let the diff skip).
type Summary struct {
	OperatorID, OperatorName, StateName string
	Kind                                state.Kind
	Added, Removed, Changed, Unchanged  int64
	// Note says what differs about the state itself: only in A or B, a
	// changed kind or type.
	Note string
	// Err is why the state could not be compared (wholly or in part): its
	// counts are then incomplete.
	Err error
}

func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s: %d changed, %d added, %d removed, %d unchanged", s.OperatorName, s.StateName, s.Changed, s.Added, s.Removed, s.Unchanged)
	if s.Note != "" {
		b.WriteString(" (" + s.Note + ")")
	}
	if s.Err != nil {
		b.WriteString("; INCOMPLETE: " + s.Err.Error())
	}
	return b.String()
}

// Result is what a diff found besides its rows.
type Result struct {
	Summaries []Summary
	// Gaps lists what could not be compared: unreadable states, operators
	// whose state a reader does not support.
	Gaps []string
}

// ErrIncomplete marks a diff that could not read everything.
var ErrIncomplete = errors.New("diff: incomplete")

// Err is nil when everything was compared, else an ErrIncomplete listing
// the gaps.
func (r *Result) Err() error {
	if len(r.Gaps) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(r.Gaps, "; "))
}

// Options tune a diff.
type Options struct {
	// Filter is an expression over the row's names (Columns, operator_id,
	// key_group, kind), e.g. "key = 'flink'" or "state_name = 'total' AND
	// new_value > 100"; empty keeps every row. Names it pins to constants
	// (operator_name, operator_id, state_name, key, key_group) narrow what
	// is read: a pinned key reads only its key group.
	Filter string
	// NameA and NameB name the two sides in gaps and notes ("A", "B" when empty).
	NameA, NameB string
	// TempDir holds spill files when the two sides place keys in key
	// groups differently (os.TempDir() when empty).
	TempDir string
	// Buckets is the number of spill buckets (default 64).
	Buckets int
}

// family says how a catalog places keys in key groups: ours hashes the
// encoded key, Flink hashes Java's hashCode.
func family(c state.Catalog) string {
	if _, ok := c.(*flink.Savepoint); ok {
		return "flink"
	}
	return "streamdbg"
}

type differ struct {
	ctx    context.Context
	a, b   state.Catalog
	opts   Options
	filter *query.Compiled
	pins   map[string][]any
	yield  func(Row) bool
	res    *Result
	done   bool // the consumer stopped
	n      int  // rows read, for cancellation checks
	metasA []state.StateMeta
	metasB []state.StateMeta
}

// errStopped ends the reading when the consumer stops.
var errStopped = errors.New("diff: stopped")

// Run compares a (old) with b (new), calling yield with every row that
// differs, in operator, key-group and key order, until yield returns false.
// The error is about the diff as a whole (a bad filter, a cancelled
// context); what could not be read is on the Result (see Result.Err).
func Run(ctx context.Context, a, b state.Catalog, opts Options, yield func(Row) bool) (*Result, error) {
	if opts.NameA == "" {
		opts.NameA = "A"
	}
	if opts.NameB == "" {
		opts.NameB = "B"
	}
	if opts.Buckets <= 0 {
		opts.Buckets = 64
	}
	d := &differ{ctx: ctx, a: a, b: b, opts: opts, yield: yield, res: &Result{}, pins: map[string][]any{}}
	if f := strings.TrimSpace(opts.Filter); f != "" {
		if len(f) > 6 && strings.EqualFold(f[:6], "where ") {
			f = f[6:]
		}
		e, err := query.ParseExpr(f)
		if err != nil {
			return nil, err
		}
		c, err := query.CompileExpr(e, filterNames)
		if err != nil {
			return nil, err
		}
		pins, err := query.Pinned(e)
		if err != nil {
			return nil, err
		}
		d.filter, d.pins = c, pins
	}
	d.metasA, d.metasB = a.States(), b.States()
	for _, p := range matchOperators(a.Operators(), b.Operators()) {
		if err := d.operator(p); err != nil {
			if errors.Is(err, errStopped) {
				return d.res, nil
			}
			return d.res, err
		}
		if d.done {
			break
		}
	}
	return d.res, nil
}

// opPair is one operator on both sides, or on one (the other nil).
type opPair struct {
	a, b *state.OperatorInfo
}

func (p opPair) info() *state.OperatorInfo {
	if p.b != nil {
		return p.b
	}
	return p.a
}

// matchOperators pairs operators by id, then by uid, then by name; A's
// order first, then B's operators that A does not have.
func matchOperators(as, bs []state.OperatorInfo) []opPair {
	used := make([]bool, len(bs))
	pairs := make([]opPair, len(as))
	for i := range as {
		pairs[i].a = &as[i]
	}
	for _, same := range []func(x, y *state.OperatorInfo) bool{
		func(x, y *state.OperatorInfo) bool { return x.ID == y.ID },
		func(x, y *state.OperatorInfo) bool { return x.UID != "" && x.UID == y.UID },
		func(x, y *state.OperatorInfo) bool { return x.Name != "" && x.Name == y.Name },
	} {
		for i := range pairs {
			if pairs[i].b != nil {
				continue
			}
			for j := range bs {
				if !used[j] && same(pairs[i].a, &bs[j]) {
					pairs[i].b, used[j] = &bs[j], true
					break
				}
			}
		}
	}
	for j := range bs {
		if !used[j] {
			pairs = append(pairs, opPair{b: &bs[j]})
		}
	}
	return pairs
}

func (d *differ) pinned(name string, v string) bool {
	vals, ok := d.pins[name]
	if !ok {
		return true
	}
	for _, x := range vals {
		if s, ok := x.(string); ok && s == v {
			return true
		}
	}
	return false
}

func statesOf(metas []state.StateMeta, op *state.OperatorInfo) map[string]state.StateMeta {
	out := map[string]state.StateMeta{}
	if op == nil {
		return out
	}
	for _, m := range metas {
		if m.OperatorID == op.ID {
			out[m.StateName] = m
		}
	}
	return out
}

// gap lists what of one side's operator could not be compared, once: a
// savepoint compared with itself has the same gaps on both sides.
func (d *differ) gap(side string, op *state.OperatorInfo, what string) {
	g := fmt.Sprintf("%s: operator %s: %s", side, op.Name, what)
	if !slices.Contains(d.res.Gaps, g) {
		d.res.Gaps = append(d.res.Gaps, g)
	}
}

// operator compares the states of one operator pair.
func (d *differ) operator(p opPair) error {
	info := p.info()
	if !(d.pinned("operator_name", info.Name) || p.a != nil && d.pinned("operator_name", p.a.Name)) ||
		!d.pinned("operator_id", info.ID) {
		return nil
	}
	if p.a != nil {
		for _, u := range p.a.Unsupported {
			d.gap(d.opts.NameA, p.a, u)
		}
	}
	if p.b != nil {
		for _, u := range p.b.Unsupported {
			d.gap(d.opts.NameB, p.b, u)
		}
	}
	ma, mb := statesOf(d.metasA, p.a), statesOf(d.metasB, p.b)
	var names []string
	for n := range ma {
		names = append(names, n)
	}
	for n := range mb {
		if _, ok := ma[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	names = slices.DeleteFunc(names, func(n string) bool { return !d.pinned("state_name", n) })
	if len(names) == 0 {
		return nil
	}
	sums := map[string]*Summary{}
	var order []*Summary
	for _, n := range names {
		a, inA := ma[n]
		b, inB := mb[n]
		m := b
		if !inB {
			m = a
		}
		s := &Summary{OperatorID: info.ID, OperatorName: info.Name, StateName: n, Kind: m.Kind}
		switch {
		case !inA:
			s.Note = "only in " + d.opts.NameB
		case !inB:
			s.Note = "only in " + d.opts.NameA
		case a.Kind != b.Kind:
			s.Note = fmt.Sprintf("kind changed from %s to %s", a.Kind, b.Kind)
		case a.Compatible(b) != "":
			s.Note = a.Compatible(b)
		}
		switch {
		case inA && a.Status != "":
			s.Err = fmt.Errorf("%s: %s", d.opts.NameA, a.Status)
		case inB && b.Status != "":
			s.Err = fmt.Errorf("%s: %s", d.opts.NameB, b.Status)
		}
		sums[n] = s
		order = append(order, s)
	}
	defer func() {
		for _, s := range order {
			d.res.Summaries = append(d.res.Summaries, *s)
			if s.Err != nil {
				d.res.Gaps = append(d.res.Gaps, fmt.Sprintf("%s.%s: %v", s.OperatorName, s.StateName, s.Err))
			}
		}
	}()
	sa, okA := d.a.(*savepoint.Savepoint)
	sb, okB := d.b.(*savepoint.Savepoint)
	sameKG := p.a != nil && p.b != nil && p.a.MaxParallelism == p.b.MaxParallelism
	if okA && okB && sameKG {
		if err := d.rawOperator(p, sa, sb, ma, mb, sums); err != nil {
			return err
		}
	}
	aligned := (p.a == nil || p.b == nil || sameKG) && family(d.a) == family(d.b)
	for _, n := range names {
		a, inA := ma[n]
		b, inB := mb[n]
		m := b
		if !inB {
			m = a
		}
		if okA && okB && sameKG && m.Scope == state.ScopeKeyed {
			continue // compared raw
		}
		if sums[n].Err != nil {
			continue // unreadable: listed, not compared
		}
		var err error
		if m.Scope == state.ScopeOperator {
			err = d.operatorState(p, n, inA, inB, sums[n])
		} else {
			var ra, rb source
			if inA {
				ra = d.keyedSource(d.a, *p.a, a)
			}
			if inB {
				rb = d.keyedSource(d.b, *p.b, b)
			}
			if aligned {
				err = d.mergeGroups(p, m, ra, rb, sums[n])
			} else {
				err = d.spill(p, m, ra, rb, sums[n])
			}
		}
		if err != nil {
			if errors.Is(err, errStopped) || d.ctx.Err() != nil {
				return err
			}
			var re readError
			if !errors.As(err, &re) {
				return err
			}
			sums[n].Err = re.err
		}
		if d.done {
			return errStopped
		}
	}
	return nil
}

// readError is a failure to read one side's state: the state's summary
// records it, and the diff goes on with the next state.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }

// emit counts a differing row and hands it to the consumer when the filter
// keeps it.
func (d *differ) emit(r *Row, s *Summary) error {
	if d.filter != nil {
		ok, err := d.filter.EvalBool(r)
		if err != nil {
			return fmt.Errorf("diff: filter: %w", err)
		}
		if !ok {
			return nil
		}
	}
	switch r.Change {
	case Added:
		s.Added++
	case Removed:
		s.Removed++
	case Changed:
		s.Changed++
	}
	if !d.yield(*r) {
		d.done = true
		return errStopped
	}
	return nil
}

// tick checks for cancellation every few thousand rows.
func (d *differ) tick() error {
	d.n++
	if d.n&4095 == 0 {
		return d.ctx.Err()
	}
	return nil
}
