package query

import (
	"bytes"
	"encoding/json"
	"slices"
)

// FormatValue prints a dynamic value as one line of text, as the table
// format prints a cell: NULL for nil, RFC 3339 times, 0x… bytes, JSON with
// sorted keys for lists and maps, control characters escaped.
func FormatValue(v any) string { return cellText(v) }

// FormatJSON prints a dynamic value as JSON (times as RFC 3339 strings,
// bytes as "0x…"); with indent, nested values go on lines of their own.
func FormatJSON(v any, indent bool) string {
	b := appendJSON(nil, v)
	if !indent {
		return string(b)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// ExprPath is a name followed by fields in an expression, such as
// state.count.total: Names holds "state", "count", "total". An index step
// (value['p3'], value.items[0]) ends the path: Indexed says one followed.
type ExprPath struct {
	Names []string
	// Pos is the position of each name.
	Pos     []Pos
	Indexed bool
}

// Paths lists the names and field paths an expression uses, so a caller
// can check them against what it knows (a breakpoint against the states of
// its operator) before the expression is ever evaluated.
func Paths(e *Expr) ([]ExprPath, error) {
	x, err := lowerExpr(e)
	if err != nil {
		return nil, err
	}
	var out []ExprPath
	var walk func(x *xexpr)
	walk = func(x *xexpr) {
		if p, ok := pathOf(x); ok {
			out = append(out, p)
			// An index expression may use names of its own.
			for y := x; y != nil && (y.kind == xField || y.kind == xIndex); y = y.args[0] {
				if y.kind == xIndex {
					walk(y.args[1])
				}
			}
			return
		}
		for _, a := range x.args {
			walk(a)
		}
	}
	walk(x)
	return out, nil
}

// pathOf reads a chain of field and index steps down to its name.
func pathOf(x *xexpr) (ExprPath, bool) {
	var names []string
	var pos []Pos
	indexed := false
	for {
		switch x.kind {
		case xCol:
			names, pos = append(names, x.name), append(pos, posOf(x.pos))
			slices.Reverse(names)
			slices.Reverse(pos)
			return ExprPath{Names: names, Pos: pos, Indexed: indexed}, true
		case xField:
			// A field step starts at its dot; point at the name.
			p := posOf(x.pos)
			p.Col++
			p.Offset++
			names, pos = append(names, x.name), append(pos, p)
		case xIndex:
			// Steps after an index are not checked: drop them.
			names, pos, indexed = names[:0], pos[:0], true
		default:
			return ExprPath{}, false
		}
		x = x.args[0]
	}
}
