package window

import (
	"streamdbg/runtime"
	"streamdbg/state"
)

// windowRegistry is Context.WindowState: keyed state of the current key
// scoped to one window (its namespace), as Flink's per-window state of a
// ProcessWindowFunction. The states it declares have the window as
// namespace type; the tables it returns ignore the namespace they are
// given and use the window's.
type windowRegistry struct {
	oc *runtime.OperatorContext
	ns []byte
}

func (r windowRegistry) KeyedTable(d state.StateDesc) (state.Table, error) {
	d.Namespace = windowNS
	t, err := r.oc.KeyedTable(d)
	if err != nil {
		return nil, err
	}
	return windowTable{Table: t, ns: r.ns}, nil
}

func (r windowRegistry) Operator() *state.OperatorStore { return r.oc.Operator() }

// windowTable is a table fixed to one namespace.
type windowTable struct {
	state.Table
	ns []byte
}

func (t windowTable) Get([]byte) (any, bool, error)          { return t.Table.Get(t.ns) }
func (t windowTable) Put(_ []byte, v any) error              { return t.Table.Put(t.ns, v) }
func (t windowTable) ListGet([]byte) ([]any, error)          { return t.Table.ListGet(t.ns) }
func (t windowTable) ListAppend(_ []byte, v any) error       { return t.Table.ListAppend(t.ns, v) }
func (t windowTable) ListPut(_ []byte, vs []any) error       { return t.Table.ListPut(t.ns, vs) }
func (t windowTable) MapGet(_, uk []byte) (any, bool, error) { return t.Table.MapGet(t.ns, uk) }
func (t windowTable) MapPut(_, uk []byte, v any) error       { return t.Table.MapPut(t.ns, uk, v) }
func (t windowTable) MapDelete(_, uk []byte) error           { return t.Table.MapDelete(t.ns, uk) }
func (t windowTable) Clear([]byte) error                     { return t.Table.Clear(t.ns) }
func (t windowTable) MapRange(_ []byte, fn func(uk []byte, v any) bool) error {
	return t.Table.MapRange(t.ns, fn)
}
