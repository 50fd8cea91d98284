package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"streamdbg/state"
)

// A program is a checked query: its table, compiled expressions and output
// columns. It needs no catalog; planning against a catalog (choosing the
// states and key groups to read) makes a plan.
type program struct {
	q        *Query
	table    *table
	tableRef *TableRef
	where    node
	whereX   *xexpr
	cols     []string
	outputs  []node
	hidden   []node // ORDER BY keys that are not output columns
	order    []orderKey
	grouped  bool
	groupBy  []node
	groupX   []*xexpr
	aggs     []*aggSpec
	limit    int64 // -1: none
	offset   int64
	// skip are the keyed columns no part of the query reads.
	skip state.Columns
}

type orderKey struct {
	col  int // index into outputs, then hidden
	desc bool
	text string
}

// Check compiles a query without a catalog: table and column names, types,
// aggregates. It returns the first problem as an *Error.
func Check(q *Query) error {
	_, err := compileQuery(q)
	return err
}

func compileQuery(q *Query) (*program, error) {
	if q == nil || q.Select == nil || q.Select.From == nil {
		return nil, &Error{Pos: Pos{Line: 1, Col: 1}, Msg: "empty query"}
	}
	s := q.Select
	p := &program{q: q, limit: -1, tableRef: s.From}
	if s.From.State != "" || lookupTable(unquoteIdent(s.From.Name)) == nil || strings.HasPrefix(s.From.Name, `"`) {
		p.table = shorthandTable
	} else {
		p.table = lookupTable(s.From.Name)
	}
	if s.Where != nil {
		x, err := lowerExpr(s.Where)
		if err != nil {
			return nil, err
		}
		n, t, err := (&compiler{table: p.table, clause: "WHERE"}).compile(x)
		if err != nil {
			return nil, err
		}
		if err := needBool(x, t); err != nil {
			return nil, err
		}
		p.where, p.whereX = n, x
	}

	items := make([]*xexpr, len(s.Items))
	for i, it := range s.Items {
		x, err := lowerExpr(it.Expr)
		if err != nil {
			return nil, err
		}
		items[i] = x
		p.grouped = p.grouped || hasAggregate(x)
	}
	orders := make([]*xexpr, len(s.OrderBy))
	for i, o := range s.OrderBy {
		x, err := lowerExpr(o.Expr)
		if err != nil {
			return nil, err
		}
		orders[i] = x
		p.grouped = p.grouped || hasAggregate(x)
	}
	p.grouped = p.grouped || len(s.GroupBy) > 0

	c := &compiler{table: p.table, aggs: &p.aggs}
	if p.grouped {
		if s.Star {
			return nil, errorf(s.Pos, "SELECT * cannot be used with GROUP BY or aggregates").hint("name the grouped columns, e.g. SELECT state_name, COUNT(*)")
		}
		for _, g := range s.GroupBy {
			x, err := lowerExpr(g)
			if err != nil {
				return nil, err
			}
			n, t, err := (&compiler{table: p.table, clause: "GROUP BY"}).compile(x)
			if err != nil {
				return nil, err
			}
			p.groupBy = append(p.groupBy, n)
			p.groupX = append(p.groupX, x)
			c.groups = append(c.groups, x.String())
			c.gtypes = append(c.gtypes, t)
		}
		c.grouped = true
	}

	if s.Star {
		for _, col := range p.table.cols {
			p.cols = append(p.cols, col.name)
			p.outputs = append(p.outputs, colNode{get: col.get, str: col.str})
		}
	}
	for i, x := range items {
		n, _, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		name := s.Items[i].Alias
		if name != "" {
			name = unquoteIdent(name)
		} else {
			name = q.sourceText(s.Items[i].Expr.Pos, s.Items[i].Expr.EndPos, x)
		}
		p.cols = append(p.cols, name)
		p.outputs = append(p.outputs, n)
	}
	dedupe(p.cols)

	for i, x := range orders {
		k := orderKey{col: -1, desc: s.OrderBy[i].Desc, text: x.String()}
		switch {
		case x.kind == xCol:
			// An output name (alias) first, as SQL does.
			for j, name := range p.cols {
				if name == x.name {
					k.col = j
					break
				}
			}
		case x.kind == xLit:
			n, ok := x.lit.(int64)
			if !ok || n < 1 || n > int64(len(p.cols)) {
				return nil, errorf(x.pos, "ORDER BY %s: not a column position", x).hint("positions go from 1 to %d", len(p.cols))
			}
			k.col = int(n - 1)
		}
		if k.col < 0 {
			n, _, err := c.compile(x)
			if err != nil {
				return nil, err
			}
			k.col = len(p.outputs) + len(p.hidden)
			p.hidden = append(p.hidden, n)
		}
		p.order = append(p.order, k)
	}

	if !s.Star {
		need, all := neededColumns(append(append(append(items, orders...), p.groupX...), p.whereX)...)
		if !all {
			p.skip = (state.ColKey | state.ColNamespace | state.ColUserKey | state.ColValue) &^ need
		}
	}
	if l := s.Limit; l != nil {
		var err error
		if p.limit, err = parseCount(l.Pos, "LIMIT", l.Count); err != nil {
			return nil, err
		}
		if l.Offset != "" {
			if p.offset, err = parseCount(l.Pos, "OFFSET", l.Offset); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

func parseCount(pos lexer.Position, what, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errorf(pos, "%s %s out of range", what, s)
	}
	return n, nil
}

// sourceText is the text an expression was written as, for its column name.
func (q *Query) sourceText(from, to lexer.Position, x *xexpr) string {
	if q.text != "" && from.Offset >= 0 && to.Offset <= len(q.text) && from.Offset < to.Offset {
		if t := strings.TrimSpace(q.text[from.Offset:to.Offset]); t != "" {
			return t
		}
	}
	return x.String()
}

// dedupe renames repeated column names name_2, name_3, ... so that JSON
// objects keep every column.
func dedupe(cols []string) {
	seen := map[string]bool{}
	for i, c := range cols {
		name := c
		for n := 2; seen[name]; n++ {
			name = fmt.Sprintf("%s_%d", c, n)
		}
		seen[name] = true
		cols[i] = name
	}
}

// scan is one read from the catalog.
type scan struct {
	label     string // operator.state, or a description of a full scan
	meta      bool
	keyed     *state.KeyedScan
	operator  *state.OperatorScan
	timers    *state.TimerScan
	keyGroups string // for EXPLAIN
}

// plan is a program with the catalog reads chosen.
type plan struct {
	*program
	scans   []scan
	pushed  []string
	skipped []state.StateMeta // unreadable states left out (Options.SkipUnreadable)
	// opts: under SkipUnreadable every state (timers: every operator) is
	// a scan of its own, so that one failing while it is read ends only
	// its own scan (read).
	opts Options
	// notes name the pinned values no row can have (unknownNames): a
	// query of them reads nothing, most likely because of a typo, said
	// with the nearest name (Rows.Notes).
	notes []string
}

// pushdown holds what the top-level AND of a WHERE pins down.
type pushdown struct {
	values map[string][]any // column → allowed constants (intersected)
	text   map[string][]string
}

func (p *program) pushdown() pushdown {
	pd := pushdown{values: map[string][]any{}, text: map[string][]string{}}
	if p.whereX == nil {
		return pd
	}
	conj := []*xexpr{p.whereX}
	if p.whereX.kind == xAnd {
		conj = p.whereX.args
	}
	for _, x := range conj {
		col, vals, ok := pinned(x)
		if !ok {
			continue
		}
		if prev, seen := pd.values[col]; seen {
			vals = slices.DeleteFunc(vals, func(v any) bool {
				return !slices.ContainsFunc(prev, func(w any) bool { return mayEqual(v, w) })
			})
		}
		pd.values[col] = vals
		pd.text[col] = append(pd.text[col], x.String())
	}
	return pd
}

// mayEqual reports whether one value could equal both constants v and w:
// when they are equal, or when both read as the same number (the int64 3
// equals '3' and '3.0', which differ as strings; see numStr).
func mayEqual(v, w any) bool {
	if r, ok := compare(v, w); ok && r == 0 {
		return true
	}
	asNumber := func(x any) any {
		if s, ok := x.(string); ok {
			if n, ok := state.ParseNumber(s); ok {
				return n
			}
		}
		return x
	}
	r, ok := compare(asNumber(v), asNumber(w))
	return ok && r == 0
}

// pinned recognises `col = const`, `const = col` and `col IN (consts)`,
// where col is a column or a field of the key (key.b, pinned as "key.b").
func pinned(x *xexpr) (col string, vals []any, ok bool) {
	switch {
	case x.kind == xCmp && x.op == "=":
		a, b := x.args[0], x.args[1]
		name, isCol := pinnedColumn(a)
		if !isCol {
			a, b = b, a
			name, isCol = pinnedColumn(a)
		}
		if !isCol {
			return "", nil, false
		}
		v, ok := constValue(b)
		if !ok {
			return "", nil, false
		}
		return name, nonNull(v), true
	case x.kind == xIn && !x.not:
		name, isCol := pinnedColumn(x.args[0])
		if !isCol {
			return "", nil, false
		}
		for _, y := range x.args[1:] {
			v, ok := constValue(y)
			if !ok {
				return "", nil, false
			}
			vals = append(vals, nonNull(v)...)
		}
		return name, vals, true
	}
	return "", nil, false
}

// pinnedColumn names what a pushdown can pin: a column, or one field of
// the key column.
func pinnedColumn(x *xexpr) (string, bool) {
	switch {
	case x.kind == xCol:
		return strings.ToLower(x.name), true
	case x.kind == xField && x.args[0].kind == xCol && strings.EqualFold(x.args[0].name, "key"):
		return "key." + x.name, true
	}
	return "", false
}

func nonNull(v any) []any {
	if v == nil {
		return []any{}
	}
	return []any{v}
}

// constValue evaluates an expression that names no column.
func constValue(x *xexpr) (any, bool) {
	if !isConstant(x) {
		return nil, false
	}
	n, _, err := (&compiler{}).compile(x)
	if err != nil {
		return nil, false
	}
	v, err := n.eval(&evalCtx{})
	return v, err == nil
}

func (pd pushdown) allows(col, v string) bool {
	vals, ok := pd.values[col]
	if !ok {
		return true
	}
	for _, w := range vals {
		if s, ok := w.(string); ok && s == v {
			return true
		}
	}
	return false
}

func (pd pushdown) has(cols ...string) bool {
	for _, c := range cols {
		if _, ok := pd.values[c]; ok {
			return true
		}
	}
	return false
}

// unknownNames says which pinned operator_name, operator_id and
// state_name values no state of the catalog has, and which pinned kind,
// scope, mode and domain values are none of their column's, each with the
// nearest name there is (state_meta lists the names: its own are not
// checked).
func unknownNames(cat Catalog, pd pushdown, t *table) []string {
	var notes []string
	note := func(col string, v any, names []string) {
		s, ok := v.(string)
		if !ok || slices.Contains(names, s) {
			return
		}
		n := fmt.Sprintf("no state has %s %s", col, literalText(s))
		if fixedNames[col] != nil {
			n = fmt.Sprintf("no row has %s %s (%s is one of: %s)", col, literalText(s), col, strings.Join(names, ", "))
		}
		if h := didYouMean(s, names); h != "" {
			n += "; " + h
		}
		notes = append(notes, n)
	}
	for _, col := range []string{"operator_name", "operator_id", "state_name", "kind", "scope", "mode", "domain"} {
		vals, ok := pd.values[col]
		if _, has := t.column(col); !ok || !has {
			continue
		}
		names := fixedNames[col]
		if names == nil {
			if t.kind == tableMeta {
				continue
			}
			seen := map[string]bool{}
			for _, m := range cat.States() {
				n := m.StateName
				switch col {
				case "operator_name":
					n = m.OperatorName
				case "operator_id":
					n = m.OperatorID
				}
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
		for _, v := range vals {
			note(col, v, names)
		}
	}
	return notes
}

// fixedNames are the values of the columns whose every value is known.
var fixedNames = func() map[string][]string {
	var kinds []string
	for k := state.Kind(0); k <= state.KindUnknown; k++ {
		if n := k.String(); !strings.HasPrefix(n, "kind(") {
			kinds = append(kinds, n)
		}
	}
	return map[string][]string{
		"kind":   kinds,
		"scope":  {state.ScopeKeyed.String(), state.ScopeOperator.String()},
		"mode":   {state.KindSplitList.Mode(), state.KindUnionList.Mode(), state.KindBroadcast.Mode()},
		"domain": {"event", "processing"},
	}
}()

// planQuery chooses what to read from the catalog. A state the catalog
// cannot read (StateMeta.Status) that the query needs fails the plan, or
// is left out under opts.SkipUnreadable.
func planQuery(cat Catalog, p *program, opts Options) (*plan, error) {
	pl := &plan{program: p, opts: opts}
	pd := p.pushdown()
	pl.notes = unknownNames(cat, pd, p.table)
	use := func(cols ...string) {
		for _, c := range cols {
			pl.pushed = append(pl.pushed, pd.text[c]...)
		}
	}
	metaOK := func(m state.StateMeta) bool {
		return pd.allows("operator_name", m.OperatorName) && pd.allows("operator_id", m.OperatorID) && pd.allows("state_name", m.StateName)
	}
	pick := func(keep func(state.StateMeta) bool) []state.StateMeta {
		var out []state.StateMeta
		for _, m := range cat.States() {
			if keep(m) {
				out = append(out, m)
			}
		}
		return out
	}
	switch p.table.kind {
	case tableMeta:
		pl.scans = []scan{{label: "state_meta", meta: true}}
	case tableKeyed:
		pushed := pd.has("operator_name", "operator_id", "state_name", "key") || pd.keyFields() != nil
		metas, skipped, err := pl.gaps(pick(func(m state.StateMeta) bool {
			return m.Scope == state.ScopeKeyed && m.Kind != state.KindTimers && (!pushed || metaOK(m))
		}), opts)
		if err != nil {
			return nil, err
		}
		if !pushed && !skipped && !opts.SkipUnreadable {
			pl.scans = []scan{{label: "all keyed states", keyed: &state.KeyedScan{}, keyGroups: "all"}}
			break
		}
		use(append([]string{"operator_name", "operator_id", "state_name", "key"}, pd.keyFields()...)...)
		for _, m := range metas {
			pl.scans = append(pl.scans, keyedScan(cat, m, pd))
		}
	case tableOperator:
		pushed := pd.has("operator_name", "operator_id", "state_name")
		metas, skipped, err := pl.gaps(pick(func(m state.StateMeta) bool {
			return m.Scope == state.ScopeOperator && (!pushed || metaOK(m))
		}), opts)
		if err != nil {
			return nil, err
		}
		if !pushed && !skipped && !opts.SkipUnreadable {
			pl.scans = []scan{{label: "all operator states", operator: &state.OperatorScan{}}}
			break
		}
		use("operator_name", "operator_id", "state_name")
		for _, m := range metas {
			pl.scans = append(pl.scans, scan{label: m.QualifiedName(), operator: &state.OperatorScan{OperatorID: m.OperatorID, StateName: m.StateName}})
		}
	case tableTimers:
		pushed := pd.has("operator_name", "operator_id")
		opOK := func(id, name string) bool {
			return !pushed || pd.allows("operator_name", name) && pd.allows("operator_id", id)
		}
		// Timers need an operator's timer states, and the states whose
		// kind is not known may be timers too.
		_, skipped, err := pl.gaps(pick(func(m state.StateMeta) bool {
			return (m.Kind == state.KindTimers || m.Kind == state.KindUnknown) && opOK(m.OperatorID, m.OperatorName)
		}), opts)
		if err != nil {
			return nil, err
		}
		if !pushed && !skipped && !opts.SkipUnreadable {
			pl.scans = []scan{{label: "all timers", timers: &state.TimerScan{}, keyGroups: "all"}}
			break
		}
		use("operator_name", "operator_id")
		for _, op := range cat.Operators() {
			if !opOK(op.ID, op.Name) || pl.skips(op.ID) {
				continue
			}
			pl.scans = append(pl.scans, scan{label: op.Name, timers: &state.TimerScan{OperatorID: op.ID}, keyGroups: "all"})
		}
	case tableShorthand:
		metas, err := resolveShorthand(cat, p.tableRef)
		if err != nil {
			return nil, err
		}
		var used []state.StateMeta
		for _, m := range metas {
			if pd.allows("state_name", m.StateName) && m.Kind != state.KindTimers {
				used = append(used, m)
			}
		}
		if used, _, err = pl.gaps(used, opts); err != nil {
			return nil, err
		}
		use(append([]string{"state_name", "key"}, pd.keyFields()...)...)
		for _, m := range used {
			switch {
			case m.Scope == state.ScopeOperator:
				pl.scans = append(pl.scans, scan{label: m.QualifiedName(), operator: &state.OperatorScan{OperatorID: m.OperatorID, StateName: m.StateName}})
			default:
				pl.scans = append(pl.scans, keyedScan(cat, m, pd))
			}
		}
	}
	pre := prefilterFor(p.whereX)
	for _, s := range pl.scans {
		if s.keyed != nil {
			s.keyed.Prefilter, s.keyed.Skip = pre, p.skip
		}
	}
	return pl, nil
}

// skips reports whether the plan left out a state of this operator.
func (pl *plan) skips(opID string) bool {
	for _, m := range pl.skipped {
		if m.OperatorID == opID {
			return true
		}
	}
	return false
}

// keyedScan reads one keyed state, only the key groups of the pinned keys
// when every key maps to one. Keys are pinned whole (key = 2) or field by
// field (key.b = 2 AND key.c = 'x': the catalog gets each combination as an
// object of those fields).
func keyedScan(cat Catalog, m state.StateMeta, pd pushdown) scan {
	s := scan{label: m.QualifiedName(), keyed: &state.KeyedScan{OperatorID: m.OperatorID, StateName: m.StateName}, keyGroups: "all"}
	keys, ok := pd.values["key"]
	if !ok {
		if keys, ok = pd.keyObjects(); !ok {
			return s
		}
	}
	kgs := []int{}
	for _, k := range keys {
		kg, ok := cat.KeyGroupOf(m, k)
		if !ok {
			return s
		}
		kgs = append(kgs, kg)
	}
	slices.Sort(kgs)
	kgs = slices.Compact(kgs)
	s.keyed.KeyGroups = kgs
	s.keyed.Keys = keys
	if len(kgs) == 0 {
		s.keyGroups = "none"
		return s
	}
	strs := make([]string, len(kgs))
	for i, kg := range kgs {
		strs[i] = strconv.Itoa(kg)
	}
	s.keyGroups = strings.Join(strs, ", ")
	return s
}

// keyFields lists the pinned fields of the key (key.b), sorted.
func (pd pushdown) keyFields() []string {
	var out []string
	for c := range pd.values {
		if strings.HasPrefix(c, "key.") {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// maxKeyObjects bounds the combinations of pinned key fields looked up.
const maxKeyObjects = 64

// keyObjects makes the keys the pinned key fields allow: every combination
// of their values, each an object of field name to value.
func (pd pushdown) keyObjects() ([]any, bool) {
	fields := pd.keyFields()
	if len(fields) == 0 {
		return nil, false
	}
	combos := []map[string]any{{}}
	for _, f := range fields {
		var next []map[string]any
		for _, c := range combos {
			for _, v := range pd.values[f] {
				m := make(map[string]any, len(c)+1)
				for k, x := range c {
					m[k] = x
				}
				m[strings.TrimPrefix(f, "key.")] = v
				next = append(next, m)
			}
		}
		if len(next) > maxKeyObjects {
			return nil, false
		}
		combos = next
	}
	out := make([]any, len(combos))
	for i, c := range combos {
		out[i] = c
	}
	return out, true
}

// resolveShorthand finds the states of `"op"` or `"op"."state"`. The
// operator is matched by name, then uid, then id.
func resolveShorthand(cat Catalog, ref *TableRef) ([]state.StateMeta, error) {
	opName := unquoteIdent(ref.Name)
	metas := cat.States()
	var ids []string
	names := map[string]bool{}
	for _, op := range cat.Operators() {
		names[op.Name] = true
		if op.Name == opName || op.UID == opName || op.ID == opName {
			ids = append(ids, op.ID)
		}
	}
	for _, m := range metas {
		names[m.OperatorName] = true
		if m.OperatorName == opName || m.OperatorID == opName {
			ids = append(ids, m.OperatorID)
		}
	}
	if len(ids) == 0 {
		known := slices.Sorted(func(yield func(string) bool) {
			for n := range names {
				if !yield(n) {
					return
				}
			}
		})
		if !strings.HasPrefix(ref.Name, `"`) && ref.State == "" {
			e := errorf(ref.Pos, "unknown table %q", opName)
			e.Hint = didYouMean(opName, append(Tables(), known...))
			if e.Hint == "" {
				e.Hint = "tables are " + strings.Join(Tables(), ", ") + `, or "operator" and "operator"."state"`
			}
			return nil, e
		}
		e := errorf(ref.Pos, "unknown operator %q", opName)
		e.Hint = didYouMean(opName, known)
		return nil, e
	}
	var out, ofOp []state.StateMeta
	for _, m := range metas {
		if slices.Contains(ids, m.OperatorID) {
			ofOp = append(ofOp, m)
		}
	}
	if ref.State == "" {
		return ofOp, nil
	}
	stateName := unquoteIdent(ref.State)
	for _, m := range ofOp {
		if m.StateName == stateName {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		pos := ref.Pos
		pos.Offset += len(ref.Name) + 1
		pos.Column += len(ref.Name) + 1
		e := errorf(pos, "unknown state %q of operator %q", stateName, opName)
		var known []string
		for _, m := range ofOp {
			known = append(known, m.StateName)
		}
		e.Hint = didYouMean(stateName, known)
		return nil, e
	}
	return out, nil
}

// explain prints the plan; the text is stable (golden tests depend on it).
func (pl *plan) explain() string {
	var b strings.Builder
	name := pl.table.name
	if pl.table.kind == tableShorthand {
		name = identText(unquoteIdent(pl.tableRef.Name))
		if pl.tableRef.State != "" {
			name += "." + identText(unquoteIdent(pl.tableRef.State))
		}
		name += " (keyed_state and operator_state rows)"
	}
	fmt.Fprintf(&b, "table: %s\n", name)
	if len(pl.scans) == 0 {
		b.WriteString("scan: no state matches\n")
	}
	for _, s := range pl.scans {
		switch {
		case s.meta:
			b.WriteString("scan: state_meta\n")
		case s.keyed != nil:
			fmt.Fprintf(&b, "scan: %s (keyed), key groups: %s\n", s.label, s.keyGroups)
		case s.operator != nil:
			fmt.Fprintf(&b, "scan: %s (operator)\n", s.label)
		case s.timers != nil:
			fmt.Fprintf(&b, "scan: %s (timers), key groups: %s\n", s.label, s.keyGroups)
		}
	}
	for _, m := range pl.skipped {
		fmt.Fprintf(&b, "skipped (unreadable): %s (%s)\n", m.QualifiedName(), m.Status)
	}
	for _, n := range pl.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if len(pl.pushed) > 0 {
		fmt.Fprintf(&b, "pushed down: %s\n", strings.Join(pl.pushed, " AND "))
	}
	if pl.whereX != nil {
		fmt.Fprintf(&b, "filter: %s\n", pl.whereX)
	} else {
		b.WriteString("filter: none\n")
	}
	if pl.grouped {
		var g []string
		for _, x := range pl.groupX {
			g = append(g, x.String())
		}
		if len(g) == 0 {
			g = []string{"(one group)"}
		}
		fmt.Fprintf(&b, "group by: %s\n", strings.Join(g, ", "))
	}
	if len(pl.order) > 0 {
		var o []string
		for _, k := range pl.order {
			t := k.text
			if k.desc {
				t += " DESC"
			}
			o = append(o, t)
		}
		fmt.Fprintf(&b, "order by: %s\n", strings.Join(o, ", "))
	}
	switch {
	case pl.limit < 0 && pl.offset == 0:
		b.WriteString("limit: none\n")
	default:
		l := "all"
		if pl.limit >= 0 {
			l = strconv.FormatInt(pl.limit, 10)
		}
		how := "stops the scan early"
		if pl.grouped || len(pl.order) > 0 {
			how = "after sorting and grouping"
			if !pl.grouped {
				how = "after sorting, keeping the top rows only"
			}
		}
		if pl.limit < 0 {
			how = "skips rows"
		}
		fmt.Fprintf(&b, "limit: %s offset %d (%s)\n", l, pl.offset, how)
	}
	return b.String()
}
