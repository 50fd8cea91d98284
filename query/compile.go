package query

import (
	"fmt"
	"math"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"streamdbg/state"
)

// node is a compiled expression. eval never panics; a value it cannot
// compute (NULL operand, types that do not compare, division by zero) is
// NULL (nil). Errors come only from an Env (an unknown name).
type node interface {
	eval(c *evalCtx) (any, error)
}

type evalCtx struct {
	row    *srcRow
	env    Env
	groups []any // grouped output: this group's GROUP BY values
	aggs   []any // grouped output: this group's aggregate results
}

type (
	constNode struct{ v any }
	colNode   struct {
		get func(*srcRow) any
		str func(*srcRow) string
	}
	// strEqNode is `string column = 'constant'` (or !=) without boxing.
	strEqNode struct {
		str func(*srcRow) string
		v   string
		neq bool
	}
	envNode struct {
		name string
		pos  lexer.Position
	}
	fieldNode struct {
		base node
		name string
	}
	indexNode struct{ base, index node }
	negNode   struct {
		a    node
		pos  lexer.Position
		text string // the expression, for an overflow error
	}
	arithNode struct {
		op   string
		a, b node
		pos  lexer.Position
		text string
	}
	cmpNode struct {
		op   string
		a, b node
	}
	andNode    struct{ args []node }
	orNode     struct{ args []node }
	notNode    struct{ a node }
	isNullNode struct {
		a   node
		not bool
	}
	likeNode struct {
		a, pat node
		re     matcher // set when the pattern is constant
		regexp bool    // REGEXP rather than LIKE
		not    bool
	}
	inNode struct {
		a    node
		list []node
		not  bool
	}
	betweenNode struct {
		a, lo, hi node
		not       bool
	}
	groupRef struct{ i int }
	aggRef   struct{ i int }
)

func (n constNode) eval(*evalCtx) (any, error)   { return n.v, nil }
func (n colNode) eval(c *evalCtx) (any, error)   { return n.get(c.row), nil }
func (n strEqNode) eval(c *evalCtx) (any, error) { return (n.str(c.row) == n.v) != n.neq, nil }
func (n groupRef) eval(c *evalCtx) (any, error)  { return c.groups[n.i], nil }
func (n aggRef) eval(c *evalCtx) (any, error)    { return c.aggs[n.i], nil }
func (n *envNode) eval(c *evalCtx) (any, error)  { return c.lookup(n.name, n.pos) }
func (n *negNode) eval(c *evalCtx) (any, error) {
	v, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	if v == any(int64(math.MinInt64)) {
		return nil, overflowError(n.pos, n.text)
	}
	return negate(v), nil
}
func (n *notNode) eval(c *evalCtx) (any, error)   { return eval1(c, n.a, not3) }
func (n *fieldNode) eval(c *evalCtx) (any, error) { return eval1(c, n.base, n.step) }

func (c *evalCtx) lookup(name string, pos lexer.Position) (any, error) {
	if c.env == nil {
		return nil, errorf(pos, "unknown name %q", name)
	}
	v, ok := c.env.Lookup(name)
	if !ok {
		e := errorf(pos, "unknown name %q", name)
		if n, ok := c.env.(interface{ Names() []string }); ok {
			e.Hint = nameHint(name, n.Names())
		}
		return nil, e
	}
	return v, nil
}

func eval1(c *evalCtx, a node, f func(any) any) (any, error) {
	v, err := a.eval(c)
	if err != nil {
		return nil, err
	}
	return f(v), nil
}

func not3(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return nil
}

func (n *fieldNode) step(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return x[n.name]
	case *state.Row:
		f, _ := x.Field(n.name)
		return f
	case state.Pairs:
		return pairsLookup(x, n.name)
	case []any:
		// A Flink Tuple (or a Scala tuple or case class) decodes to a
		// list: value.f1 is its field f1, as in Java, value._2 the same
		// field, as in Scala.
		if i, ok := state.TupleField(n.name); ok && i < len(x) {
			return x[i]
		}
	}
	return nil
}

// pairsLookup finds a map key by its value or, for keys that are not
// strings, by their text.
func pairsLookup(p state.Pairs, key any) any {
	for _, e := range p {
		if c, ok := compare(e.Key, key); ok && c == 0 {
			return e.Value
		}
	}
	return nil
}

func (n *indexNode) eval(c *evalCtx) (any, error) {
	v, err := n.base.eval(c)
	if err != nil {
		return nil, err
	}
	i, err := n.index.eval(c)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case []any:
		if k, ok := i.(int64); ok && k >= 0 && k < int64(len(x)) {
			return x[k], nil
		}
	case map[string]any:
		if k, ok := i.(string); ok {
			return x[k], nil
		}
	case *state.Row:
		switch k := i.(type) {
		case int64:
			if k >= 0 && k < int64(len(x.Values)) {
				return x.Values[k], nil
			}
		case string:
			f, _ := x.Field(k)
			return f, nil
		}
	case state.Pairs:
		return pairsLookup(x, i), nil
	}
	return nil, nil
}

func (n *arithNode) eval(c *evalCtx) (any, error) {
	a, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	b, err := n.b.eval(c)
	if err != nil {
		return nil, err
	}
	v, overflow := arith(n.op, a, b)
	if overflow {
		return nil, overflowError(n.pos, n.text)
	}
	return v, nil
}

// overflowError is an int64 result that does not fit: an error naming the
// expression, never a wrapped value.
func overflowError(pos lexer.Position, text string) error {
	return errorf(pos, "integer overflow: %s does not fit in int64", text).hint("compute in float64 (e.g. 1.0 * x) for an inexact result")
}

func (n *cmpNode) eval(c *evalCtx) (any, error) {
	a, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	b, err := n.b.eval(c)
	if err != nil {
		return nil, err
	}
	r, ok := compare(a, b)
	if !ok {
		return nil, nil
	}
	switch n.op {
	case "=":
		return r == 0, nil
	case "!=":
		return r != 0, nil
	case "<":
		return r < 0, nil
	case "<=":
		return r <= 0, nil
	case ">":
		return r > 0, nil
	case ">=":
		return r >= 0, nil
	}
	return nil, nil
}

// AND and OR follow SQL's three-valued logic: FALSE AND NULL is FALSE,
// TRUE OR NULL is TRUE, otherwise NULL wins. A non-boolean operand counts
// as NULL.
func (n *andNode) eval(c *evalCtx) (any, error) { return evalLogic(c, n.args, false) }

func (n *orNode) eval(c *evalCtx) (any, error) { return evalLogic(c, n.args, true) }

// evalLogic evaluates AND (decisive false) or OR (decisive true): the first
// operand equal to decisive decides; otherwise a NULL operand makes NULL.
func evalLogic(c *evalCtx, args []node, decisive bool) (any, error) {
	sawNull := false
	for _, a := range args {
		v, err := a.eval(c)
		if err != nil {
			return nil, err
		}
		b, ok := v.(bool)
		switch {
		case !ok:
			sawNull = true
		case b == decisive:
			return decisive, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return !decisive, nil
}

func (n *isNullNode) eval(c *evalCtx) (any, error) {
	v, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	return (v == nil) != n.not, nil
}

func (n *likeNode) eval(c *evalCtx) (any, error) {
	v, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, nil
	}
	re := n.re
	if re == nil {
		p, err := n.pat.eval(c)
		if err != nil {
			return nil, err
		}
		ps, ok := p.(string)
		if !ok {
			return nil, nil
		}
		if re, err = compilePattern(n.regexp, ps); err != nil {
			// A pattern computed per row that does not compile matches nothing.
			return nil, nil
		}
	}
	return re.MatchString(s) != n.not, nil
}

func (n *inNode) eval(c *evalCtx) (any, error) {
	v, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	sawNull := false
	for _, e := range n.list {
		w, err := e.eval(c)
		if err != nil {
			return nil, err
		}
		r, ok := compare(v, w)
		switch {
		case !ok:
			sawNull = true
		case r == 0:
			return !n.not, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return n.not, nil
}

func (n *betweenNode) eval(c *evalCtx) (any, error) {
	v, err := n.a.eval(c)
	if err != nil {
		return nil, err
	}
	lo, err := n.lo.eval(c)
	if err != nil {
		return nil, err
	}
	hi, err := n.hi.eval(c)
	if err != nil {
		return nil, err
	}
	var ge, le any
	if r, ok := compare(v, lo); ok {
		ge = r >= 0
	}
	if r, ok := compare(v, hi); ok {
		le = r <= 0
	}
	res, _ := (&andNode{args: []node{constNode{ge}, constNode{le}}}).eval(c)
	if n.not {
		return not3(res), nil
	}
	return res, nil
}

// compiler checks and compiles lowered expressions. With a table, names are
// its columns; without one, names are looked up in an Env when evaluated.
// In grouped mode an expression must be built from GROUP BY expressions,
// aggregates and constants.
type compiler struct {
	table   *table
	clause  string // where aggregates are refused: "WHERE", "GROUP BY", ...
	grouped bool
	groups  []string // canonical text of the GROUP BY expressions
	gtypes  []vtype
	aggs    *[]*aggSpec
}

var aggregates = []string{"count", "sum", "min", "max", "avg"}

// aggSpec is one aggregate call of a grouped query.
type aggSpec struct {
	fn   string
	star bool
	arg  node
	pos  lexer.Position
	text string // the call, for errors
}

func (c *compiler) compile(x *xexpr) (node, vtype, error) {
	if c.grouped {
		key := x.String()
		for i, g := range c.groups {
			if g == key {
				return groupRef{i}, c.gtypes[i], nil
			}
		}
	}
	n, t, err := c.compile1(x)
	if err != nil {
		return nil, 0, err
	}
	// Fold constants: an expression without names is computed once.
	if _, isConst := n.(constNode); !isConst && x.kind != xCol && x.kind != xCall && isConstant(x) {
		v, err := n.eval(&evalCtx{})
		if err == nil {
			return constNode{v}, t, nil
		}
	}
	return n, t, nil
}

func isConstant(x *xexpr) bool {
	switch x.kind {
	case xCol, xCall:
		return false
	}
	for _, a := range x.args {
		if !isConstant(a) {
			return false
		}
	}
	return true
}

func (c *compiler) compile1(x *xexpr) (node, vtype, error) {
	switch x.kind {
	case xLit:
		return constNode{x.lit}, typeOf(x.lit), nil
	case xCol:
		if c.grouped {
			return nil, 0, errorf(x.pos, "column %q must appear in GROUP BY or be used in an aggregate", x.name)
		}
		if c.table == nil {
			return &envNode{name: x.name, pos: x.pos}, tAny, nil
		}
		col, ok := c.table.column(x.name)
		if !ok {
			return nil, 0, errorf(x.pos, "unknown column %q", x.name).hint("%s", c.columnHint(x.name))
		}
		return colNode{get: col.get, str: col.str}, col.typ, nil
	case xField, xIndex:
		base, bt, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		if bt != tAny && bt != tNull {
			what := "field " + identText(x.name)
			if x.kind == xIndex {
				what = "an index"
			}
			return nil, 0, errorf(x.pos, "cannot take %s of %s (%s)", what, x.args[0], bt).hint("paths reach into structured values such as value or key")
		}
		if x.kind == xField {
			return &fieldNode{base: base, name: x.name}, tAny, nil
		}
		idx, it, err := c.compile(x.args[1])
		if err != nil {
			return nil, 0, err
		}
		if it != tAny && it != tNull && it != tInt && it != tString {
			return nil, 0, errorf(x.args[1].pos, "type mismatch: an index is int64 or string, not %s", it)
		}
		return &indexNode{base: base, index: idx}, tAny, nil
	case xNeg:
		a, t, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		if t != tAny && t != tNull && !t.numeric() {
			return nil, 0, errorf(x.pos, "type mismatch: cannot negate %s (%s)", x.args[0], t)
		}
		return &negNode{a: a, pos: x.pos, text: x.String()}, t, nil
	case xArith:
		a, ta, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		b, tb, err := c.compile(x.args[1])
		if err != nil {
			return nil, 0, err
		}
		for _, t := range []vtype{ta, tb} {
			if t != tAny && t != tNull && !t.numeric() {
				return nil, 0, errorf(x.pos, "type mismatch: cannot apply %s to %s and %s", x.op, ta, tb)
			}
		}
		t := tAny
		switch {
		case ta == tNull || tb == tNull:
			t = tNull
		case ta == tInt && tb == tInt:
			t = tInt
		case ta.numeric() && tb.numeric():
			t = tFloat
		}
		return &arithNode{op: x.op, a: a, b: b, pos: x.pos, text: x.String()}, t, nil
	case xCmp:
		a, ta, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		b, tb, err := c.compile(x.args[1])
		if err != nil {
			return nil, 0, err
		}
		a, b, err = c.comparable(x, x.args[0], a, ta, x.args[1], b, tb)
		if err != nil {
			return nil, 0, err
		}
		if x.op == "=" || x.op == "!=" {
			col, k := a, b
			if _, ok := col.(colNode); !ok {
				col, k = b, a
			}
			cn, ok1 := col.(colNode)
			kn, ok2 := k.(constNode)
			if s, ok3 := kn.v.(string); ok1 && ok2 && ok3 && cn.str != nil {
				return strEqNode{str: cn.str, v: s, neq: x.op == "!="}, tBool, nil
			}
		}
		return &cmpNode{op: x.op, a: a, b: b}, tBool, nil
	case xAnd, xOr:
		args := make([]node, len(x.args))
		for i, y := range x.args {
			n, t, err := c.compile(y)
			if err != nil {
				return nil, 0, err
			}
			if err := needBool(y, t); err != nil {
				return nil, 0, err
			}
			args[i] = n
		}
		if x.kind == xAnd {
			return &andNode{args}, tBool, nil
		}
		return &orNode{args}, tBool, nil
	case xNot:
		a, t, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		if err := needBool(x.args[0], t); err != nil {
			return nil, 0, err
		}
		return &notNode{a}, tBool, nil
	case xIsNull:
		a, _, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		return &isNullNode{a: a, not: x.not}, tBool, nil
	case xLike:
		a, ta, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		p, tp, err := c.compile(x.args[1])
		if err != nil {
			return nil, 0, err
		}
		for i, t := range []vtype{ta, tp} {
			if t != tAny && t != tNull && t != tString {
				return nil, 0, errorf(x.args[i].pos, "type mismatch: %s needs string, not %s (%s)", x.op, x.args[i], t)
			}
		}
		n := &likeNode{a: a, pat: p, regexp: x.op == "REGEXP", not: x.not}
		if k, ok := p.(constNode); ok {
			if s, ok := k.v.(string); ok {
				if n.re, err = compilePattern(n.regexp, s); err != nil {
					return nil, 0, errorf(x.args[1].pos, "bad %s pattern: %v", x.op, err)
				}
			}
		}
		return n, tBool, nil
	case xIn:
		a, ta, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		list, err := c.compileAgainst(x, a, ta)
		if err != nil {
			return nil, 0, err
		}
		return &inNode{a: tuple1Key(x.args[0], a), not: x.not, list: list}, tBool, nil
	case xBetween:
		a, ta, err := c.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		bounds, err := c.compileAgainst(x, a, ta)
		if err != nil {
			return nil, 0, err
		}
		return &betweenNode{a: tuple1Key(x.args[0], a), not: x.not, lo: bounds[0], hi: bounds[1]}, tBool, nil
	case xCall:
		return c.compileCall(x)
	}
	return nil, 0, errorf(x.pos, "unsupported expression")
}

// compileAgainst compiles the operands of x after the first (IN's list,
// BETWEEN's bounds), each checked comparable with the first, a of type ta.
func (c *compiler) compileAgainst(x *xexpr, a node, ta vtype) ([]node, error) {
	out := make([]node, 0, len(x.args)-1)
	for _, y := range x.args[1:] {
		b, tb, err := c.compile(y)
		if err != nil {
			return nil, err
		}
		if _, b, err = c.comparable(x, x.args[0], a, ta, y, b, tb); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func (c *compiler) columnHint(name string) string {
	h := didYouMean(name, c.table.columnNames())
	if h == "" {
		h = "columns of " + c.tableName() + ": " + strings.Join(c.table.columnNames(), ", ")
	}
	return h
}

func (c *compiler) tableName() string {
	if c.table.name == "" {
		return "an operator"
	}
	return c.table.name
}

func needBool(x *xexpr, t vtype) error {
	if t != tAny && t != tNull && t != tBool {
		return errorf(x.pos, "type mismatch: %s is %s, want bool", x, t)
	}
	return nil
}

// comparable checks that two operands compare, and reads a constant
// string compared with a time as a time once, so each row does not parse
// it, and one compared with a number as that number: `subtask = '1'` is
// `subtask = 1`, and against a value of any type it is a numStr. A string
// that is no number compared with a number column is an error.
func (c *compiler) comparable(op, xa *xexpr, a node, ta vtype, xb *xexpr, b node, tb vtype) (node, node, error) {
	conv := func(x *xexpr, n node, t, other vtype) (node, vtype, error) {
		k, ok := n.(constNode)
		if !ok {
			return n, t, nil
		}
		s, ok := k.v.(string)
		if !ok {
			return n, t, nil
		}
		switch {
		case other == tTime:
			t, ok := parseTime(s)
			if !ok {
				return nil, 0, errorf(x.pos, "type mismatch: %s is not a time", x).hint("write times as RFC 3339, e.g. '2024-05-01T12:00:00Z'")
			}
			return constNode{t}, tTime, nil
		case other == tBytes:
			h, ok := parseHex(s)
			if !ok {
				return nil, 0, errorf(x.pos, "type mismatch: %s is not bytes", x).hint("write bytes as '0x' and hex digits")
			}
			return constNode{h}, tBytes, nil
		case other.numeric():
			v, ok := state.ParseNumber(s)
			if !ok {
				return nil, 0, errorf(op.pos, "type mismatch: cannot compare %s (%s) with %s (%s)", xa, ta, xb, tb).hint("%s is not a number", x)
			}
			return constNode{v}, typeOf(v), nil
		case other == tAny:
			if v, ok := state.ParseNumber(s); ok {
				return constNode{numStr{s: s, n: v}}, tAny, nil
			}
		}
		return n, t, nil
	}
	var err error
	ta0, tb0 := ta, tb
	if a, ta, err = conv(xa, a, ta0, tb0); err != nil {
		return nil, nil, err
	}
	if b, tb, err = conv(xb, b, tb0, ta0); err != nil {
		return nil, nil, err
	}
	if !comparableTypes(ta, tb) {
		return nil, nil, errorf(op.pos, "type mismatch: cannot compare %s (%s) with %s (%s)", xa, ta0, xb, tb0)
	}
	return tuple1Key(xa, a), tuple1Key(xb, b), nil
}

// tuple1Key makes the key column compare as its one field when it is a
// Flink Tuple1 (a list of one element, as keyBy(0) keys are): `key = 3`
// finds the key (3), as `key[0] = 3` does. A key of any other shape is
// itself.
func tuple1Key(x *xexpr, n node) node {
	if x.kind != xCol || !strings.EqualFold(x.name, "key") {
		return n
	}
	return tuple1Node{n}
}

type tuple1Node struct{ a node }

func (n tuple1Node) eval(c *evalCtx) (any, error) {
	v, err := n.a.eval(c)
	if l, ok := v.([]any); ok && len(l) == 1 {
		return l[0], err
	}
	return v, err
}

func (c *compiler) compileCall(x *xexpr) (node, vtype, error) {
	known := false
	for _, a := range aggregates {
		known = known || a == x.op
	}
	if !known {
		return nil, 0, errorf(x.pos, "unknown function %q", x.name).hint("%s", orList("functions are", didYouMean(x.op, aggregates), aggregates))
	}
	fn := strings.ToUpper(x.op)
	if c.aggs == nil {
		where := c.clause
		if where == "" {
			where = "here"
		} else {
			where = "in " + where
		}
		return nil, 0, errorf(x.pos, "aggregate %s is not allowed %s", fn, where)
	}
	switch {
	case x.star && x.op != "count":
		return nil, 0, errorf(x.pos, "%s(*) is not an aggregate", fn).hint("only COUNT takes *")
	case !x.star && len(x.args) != 1:
		return nil, 0, errorf(x.pos, "%s takes one argument, got %d", fn, len(x.args))
	}
	text := x.String()
	if strings.HasPrefix(text, x.op+"(") {
		text = fn + text[len(x.op):]
	}
	spec := &aggSpec{fn: x.op, star: x.star, pos: x.pos, text: text}
	t := tInt
	if !x.star {
		// The argument is evaluated per input row, outside any group.
		inner := &compiler{table: c.table, clause: "an aggregate's argument"}
		arg, at, err := inner.compile(x.args[0])
		if err != nil {
			return nil, 0, err
		}
		switch x.op {
		case "sum", "avg":
			if at != tAny && at != tNull && !at.numeric() {
				return nil, 0, errorf(x.args[0].pos, "type mismatch: %s needs numbers, not %s (%s)", fn, x.args[0], at)
			}
		}
		spec.arg = arg
		switch x.op {
		case "sum":
			t = at
			if !at.numeric() {
				t = tAny
			}
		case "avg":
			t = tFloat
		case "min", "max":
			t = at
		}
	}
	*c.aggs = append(*c.aggs, spec)
	return aggRef{len(*c.aggs) - 1}, t, nil
}

func orList(prefix, hint string, names []string) string {
	if hint != "" {
		return hint
	}
	return fmt.Sprintf("%s %s", prefix, strings.ToUpper(strings.Join(names, ", ")))
}

// hasAggregate reports whether x calls an aggregate.
func hasAggregate(x *xexpr) bool {
	if x.kind == xCall {
		return true
	}
	for _, a := range x.args {
		if hasAggregate(a) {
			return true
		}
	}
	return false
}

// truth is a WHERE result: only TRUE keeps a row.
func truth(v any) bool {
	b, ok := v.(bool)
	return ok && b
}
