package query

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// lower.go turns the participle AST, whose layered structs follow the
// grammar, into one uniform expression tree that the checker and compiler
// walk. Literals are interpreted here (unquoting, number ranges).

type xkind uint8

const (
	xLit     xkind = iota + 1
	xCol           // name
	xField         // args[0].name
	xIndex         // args[0][args[1]]
	xNeg           // -args[0]
	xArith         // args[0] op args[1]
	xCmp           // args[0] op args[1]
	xAnd           // args[0] AND args[1] AND ...
	xOr            // args[0] OR args[1] OR ...
	xNot           // NOT args[0]
	xIsNull        // args[0] IS [NOT] NULL
	xLike          // args[0] [NOT] LIKE|REGEXP args[1]
	xIn            // args[0] [NOT] IN (args[1:])
	xBetween       // args[0] [NOT] BETWEEN args[1] AND args[2]
	xCall          // name(args) or name(*)
)

type xexpr struct {
	kind xkind
	pos  lexer.Position
	op   string // operator; LIKE/REGEXP; lower-case function name
	name string // column, field or function name
	lit  any    // xLit value
	not  bool
	star bool
	args []*xexpr
}

func lowerExpr(e *Expr) (*xexpr, error) {
	if e == nil || e.Left == nil {
		return nil, errorf(lexer.Position{Line: 1, Column: 1}, "empty expression")
	}
	x, err := lowerAnd(e.Left)
	if err != nil || len(e.Right) == 0 {
		return x, err
	}
	out := &xexpr{kind: xOr, pos: e.Pos, args: []*xexpr{x}}
	for _, r := range e.Right {
		y, err := lowerAnd(r)
		if err != nil {
			return nil, err
		}
		out.args = append(out.args, y)
	}
	return out, nil
}

func lowerAnd(e *AndExpr) (*xexpr, error) {
	x, err := lowerNot(e.Left)
	if err != nil || len(e.Right) == 0 {
		return x, err
	}
	out := &xexpr{kind: xAnd, pos: e.Pos, args: []*xexpr{x}}
	for _, r := range e.Right {
		y, err := lowerNot(r)
		if err != nil {
			return nil, err
		}
		out.args = append(out.args, y)
	}
	return out, nil
}

func lowerNot(e *NotExpr) (*xexpr, error) {
	if e.Not != nil {
		x, err := lowerNot(e.Not)
		if err != nil {
			return nil, err
		}
		return &xexpr{kind: xNot, pos: e.Pos, args: []*xexpr{x}}, nil
	}
	if e.Cmp == nil {
		return nil, errorf(e.Pos, "empty expression")
	}
	return lowerCmp(e.Cmp)
}

func lowerCmp(c *Comparison) (*xexpr, error) {
	left, err := lowerSum(c.Left)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Op != "":
		right, err := lowerSum(c.Right)
		if err != nil {
			return nil, err
		}
		op := c.Op
		if op == "<>" {
			op = "!="
		}
		return &xexpr{kind: xCmp, pos: c.Pos, op: op, args: []*xexpr{left, right}}, nil
	case c.Is != nil:
		return &xexpr{kind: xIsNull, pos: c.Is.Pos, not: c.Is.Not, args: []*xexpr{left}}, nil
	case c.Like != nil:
		pat, err := lowerSum(c.Like.Pattern)
		if err != nil {
			return nil, err
		}
		return &xexpr{kind: xLike, pos: c.Like.Pos, op: strings.ToUpper(c.Like.Op), not: c.Not, args: []*xexpr{left, pat}}, nil
	case c.In != nil:
		out := &xexpr{kind: xIn, pos: c.In.Pos, not: c.Not, args: []*xexpr{left}}
		for _, e := range c.In.List {
			y, err := lowerExpr(e)
			if err != nil {
				return nil, err
			}
			out.args = append(out.args, y)
		}
		return out, nil
	case c.Between != nil:
		lo, err := lowerSum(c.Between.Low)
		if err != nil {
			return nil, err
		}
		hi, err := lowerSum(c.Between.High)
		if err != nil {
			return nil, err
		}
		return &xexpr{kind: xBetween, pos: c.Between.Pos, not: c.Not, args: []*xexpr{left, lo, hi}}, nil
	}
	return left, nil
}

func lowerSum(s *Sum) (*xexpr, error) {
	x, err := lowerTerm(s.Left)
	if err != nil {
		return nil, err
	}
	for _, r := range s.Right {
		y, err := lowerTerm(r.Right)
		if err != nil {
			return nil, err
		}
		x = &xexpr{kind: xArith, pos: r.Pos, op: r.Op, args: []*xexpr{x, y}}
	}
	return x, nil
}

func lowerTerm(t *Term) (*xexpr, error) {
	x, err := lowerUnary(t.Left)
	if err != nil {
		return nil, err
	}
	for _, r := range t.Right {
		y, err := lowerUnary(r.Right)
		if err != nil {
			return nil, err
		}
		x = &xexpr{kind: xArith, pos: r.Pos, op: r.Op, args: []*xexpr{x, y}}
	}
	return x, nil
}

func lowerUnary(u *Unary) (*xexpr, error) {
	if u.Neg != nil {
		// -<int literal> is read as one literal so that the smallest int64
		// is writable.
		if p := u.Neg.Postfix; p != nil && len(p.Steps) == 0 && p.Primary != nil && p.Primary.Int != "" {
			n, err := strconv.ParseInt("-"+p.Primary.Int, 10, 64)
			if err != nil {
				return nil, errorf(u.Pos, "integer -%s out of range", p.Primary.Int).hint("integers are 64-bit")
			}
			return &xexpr{kind: xLit, pos: u.Pos, lit: n}, nil
		}
		x, err := lowerUnary(u.Neg)
		if err != nil {
			return nil, err
		}
		return &xexpr{kind: xNeg, pos: u.Pos, args: []*xexpr{x}}, nil
	}
	if u.Postfix == nil {
		return nil, errorf(u.Pos, "empty expression")
	}
	return lowerPostfix(u.Postfix)
}

func lowerPostfix(p *Postfix) (*xexpr, error) {
	x, err := lowerPrimary(p.Primary)
	if err != nil {
		return nil, err
	}
	for _, s := range p.Steps {
		if s.Index != nil {
			i, err := lowerExpr(s.Index)
			if err != nil {
				return nil, err
			}
			x = &xexpr{kind: xIndex, pos: s.Pos, args: []*xexpr{x, i}}
			continue
		}
		x = &xexpr{kind: xField, pos: s.Pos, name: unquoteIdent(s.Field), args: []*xexpr{x}}
	}
	return x, nil
}

func lowerPrimary(p *Primary) (*xexpr, error) {
	if p == nil {
		return nil, errorf(lexer.Position{Line: 1, Column: 1}, "empty expression")
	}
	lit := func(v any) (*xexpr, error) { return &xexpr{kind: xLit, pos: p.Pos, lit: v}, nil }
	switch {
	case p.Null:
		return lit(nil)
	case p.Bool != "":
		return lit(strings.EqualFold(p.Bool, "TRUE"))
	case p.Float != "":
		f, err := strconv.ParseFloat(p.Float, 64)
		if err != nil {
			return nil, errorf(p.Pos, "number %s out of range", p.Float)
		}
		return lit(f)
	case p.Int != "":
		n, err := strconv.ParseInt(p.Int, 10, 64)
		if err != nil {
			return nil, errorf(p.Pos, "integer %s out of range", p.Int).hint("integers are 64-bit; write %s.0 for a float", p.Int)
		}
		return lit(n)
	case p.String != "":
		return lit(unquoteString(p.String))
	case p.Call != nil:
		c := &xexpr{kind: xCall, pos: p.Call.Pos, name: p.Call.Func, op: strings.ToLower(p.Call.Func), star: p.Call.Star}
		for _, a := range p.Call.Args {
			y, err := lowerExpr(a)
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, y)
		}
		return c, nil
	case p.Name != "":
		return &xexpr{kind: xCol, pos: p.Pos, name: unquoteIdent(p.Name)}, nil
	case p.Sub != nil:
		return lowerExpr(p.Sub)
	}
	return nil, errorf(p.Pos, "empty expression")
}

// unquoteString reads a 'single-quoted' literal, ” standing for one quote.
func unquoteString(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// unquoteIdent reads an identifier, "double-quoted" ones with "" standing
// for one quote.
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}

// String prints the expression canonically: keywords upper-case, names as
// written, binary operands in parentheses when they are themselves
// operators. Two expressions that print the same are the same expression
// (GROUP BY matching relies on it).
func (x *xexpr) String() string {
	var b strings.Builder
	x.print(&b, 0)
	return b.String()
}

// prec is how tightly an expression binds, for printing parentheses only
// where they are needed.
func (x *xexpr) prec() int {
	switch x.kind {
	case xOr:
		return 1
	case xAnd:
		return 2
	case xNot:
		return 3
	case xCmp, xIsNull, xLike, xIn, xBetween:
		return 4
	case xArith:
		if x.op == "+" || x.op == "-" {
			return 5
		}
		return 6
	case xNeg:
		return 7
	}
	return 8
}

// print writes x, in parentheses when it binds less tightly than min.
func (x *xexpr) print(b *strings.Builder, min int) {
	p := x.prec()
	if p < min {
		b.WriteByte('(')
		defer b.WriteByte(')')
	}
	switch x.kind {
	case xLit:
		b.WriteString(literalText(x.lit))
	case xCol:
		b.WriteString(identText(x.name))
	case xField:
		x.args[0].print(b, 8)
		b.WriteByte('.')
		b.WriteString(identText(x.name))
	case xIndex:
		x.args[0].print(b, 8)
		b.WriteByte('[')
		x.args[1].print(b, 0)
		b.WriteByte(']')
	case xNeg:
		b.WriteByte('-')
		var arg strings.Builder
		x.args[0].print(&arg, 8)
		if strings.HasPrefix(arg.String(), "-") {
			// "--" would start a comment.
			b.WriteString("(" + arg.String() + ")")
		} else {
			b.WriteString(arg.String())
		}
	case xArith:
		x.args[0].print(b, p)
		b.WriteString(" " + x.op + " ")
		x.args[1].print(b, p+1)
	case xCmp:
		x.args[0].print(b, 5)
		b.WriteString(" " + x.op + " ")
		x.args[1].print(b, 5)
	case xAnd, xOr:
		sep := " AND "
		if x.kind == xOr {
			sep = " OR "
		}
		for i, a := range x.args {
			if i > 0 {
				b.WriteString(sep)
			}
			a.print(b, p+1)
		}
	case xNot:
		b.WriteString("NOT ")
		x.args[0].print(b, 3)
	case xIsNull:
		x.args[0].print(b, 5)
		if x.not {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case xLike, xIn, xBetween:
		x.args[0].print(b, 5)
		if x.not {
			b.WriteString(" NOT")
		}
		switch x.kind {
		case xLike:
			b.WriteString(" " + x.op + " ")
			x.args[1].print(b, 5)
		case xIn:
			b.WriteString(" IN (")
			for i, a := range x.args[1:] {
				if i > 0 {
					b.WriteString(", ")
				}
				a.print(b, 0)
			}
			b.WriteByte(')')
		case xBetween:
			b.WriteString(" BETWEEN ")
			x.args[1].print(b, 5)
			b.WriteString(" AND ")
			x.args[2].print(b, 5)
		}
	case xCall:
		b.WriteString(x.op)
		b.WriteByte('(')
		if x.star {
			b.WriteByte('*')
		}
		for i, a := range x.args {
			if i > 0 {
				b.WriteString(", ")
			}
			a.print(b, 0)
		}
		b.WriteByte(')')
	}
}

// literalText prints a literal value as the query language writes it.
func literalText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return formatText(v)
}

// identText prints a name, quoting it unless it is a plain identifier.
func identText(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		for _, k := range keywords {
			if strings.EqualFold(k, s) {
				plain = false
				break
			}
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
