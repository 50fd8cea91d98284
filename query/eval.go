package query

import (
	"maps"
	"slices"

	"streamdbg/state"
)

// Env gives an expression's names their values: breakpoint conditions see
// key, value, record, operator and state lookups, as the session defines.
// An Env that also has a Names() []string method gets "did you mean" hints
// for unknown names.
type Env interface {
	Lookup(name string) (any, bool)
}

// EnvMap is an Env over a map.
type EnvMap map[string]any

// Lookup returns the value of a name.
func (m EnvMap) Lookup(name string) (any, bool) {
	v, ok := m[name]
	return v, ok
}

// Names lists the names in order, for hints (the same message every
// time: a map's order is not).
func (m EnvMap) Names() []string {
	return slices.Sorted(maps.Keys(m))
}

// Compiled is a checked expression ready to evaluate many times, as a
// breakpoint condition is after every step.
type Compiled struct {
	n node
	x *xexpr
}

// CompileExpr checks an expression parsed by ParseExpr: types of literals,
// operators, patterns. Aggregates are refused. When names is not nil, every
// name the expression uses must be one of them (an unknown one fails with a
// hint); with nil names, any name is looked up at evaluation.
func CompileExpr(e *Expr, names []string) (*Compiled, error) {
	x, err := lowerExpr(e)
	if err != nil {
		return nil, err
	}
	if names != nil {
		if err := checkNames(x, names); err != nil {
			return nil, err
		}
	}
	n, _, err := (&compiler{clause: "an expression"}).compile(x)
	if err != nil {
		return nil, err
	}
	return &Compiled{n: n, x: x}, nil
}

// Prefilter is the state.KeyedScan.Prefilter of the expression used as a
// row filter over keyed state's columns (key, value, key_group): what a
// savepoint scan may decide on the stored bytes before it makes a row.
// It only drops rows the expression does not accept, so the expression
// still decides the others; nil when no part of it can be decided so.
func (c *Compiled) Prefilter() func(m state.StateMeta) func(key, value []byte, keyGroup int) bool {
	if c == nil {
		return nil
	}
	return prefilterFor(c.x)
}

func checkNames(x *xexpr, names []string) error {
	if x.kind == xCol {
		for _, n := range names {
			if n == x.name {
				return nil
			}
		}
		return errorf(x.pos, "unknown name %q", x.name).hint("%s", nameHint(x.name, names))
	}
	for _, a := range x.args {
		if err := checkNames(a, names); err != nil {
			return err
		}
	}
	return nil
}

// Eval evaluates the expression against env.
func (c *Compiled) Eval(env Env) (any, error) {
	return c.n.eval(&evalCtx{env: env})
}

// EvalBool evaluates a condition: true only for TRUE; NULL is false; a
// value that is not a boolean is an error, so a breakpoint whose condition
// is wrong stops and says so.
func (c *Compiled) EvalBool(env Env) (bool, error) {
	v, err := c.Eval(env)
	if err != nil {
		return false, err
	}
	switch b := v.(type) {
	case nil:
		return false, nil
	case bool:
		return b, nil
	}
	return false, &Error{Msg: "condition is " + typeName(v) + ", want bool"}
}

// Eval compiles and evaluates an expression once. Use CompileExpr to
// evaluate one expression many times.
func Eval(e *Expr, env Env) (any, error) {
	c, err := CompileExpr(e, nil)
	if err != nil {
		return nil, err
	}
	return c.Eval(env)
}
