package heapstate

import (
	"bytes"
	"fmt"
	"slices"

	"streamdbg/state"
)

// cell holds one boxed value so that overwriting it needs no map assignment
// (which would allocate the key string).
type cell struct{ v any }

// listCell holds the elements of one list.
type listCell struct{ vs []any }

// table is one declared state. Exactly one of vals, lists and maps is
// non-nil, by kind; each has one map per key group, indexed by kg - Start,
// keyed by composite (see package doc).
type table struct {
	b     *Backend
	desc  state.StateDesc
	vals  []map[string]*cell
	lists []map[string]*listCell
	maps  []map[string]map[string]*cell
	// scratch encodes values and user keys for Entries.
	scratch []byte
	// hit is the cell the last Get found, for the Put that usually follows
	// (read-modify-write: counters, reducing and aggregating Add), so that
	// it needs no second map lookup. Valid while hitGen is the backend's key
	// generation and the namespace is hitNS; removals reset it.
	hit    *cell
	hitGen uint64
	hitNS  []byte
}

var _ state.Table = (*table)(nil)

func newTable(b *Backend, d state.StateDesc) *table {
	t := &table{b: b, desc: d}
	n := b.groups.Len()
	switch d.Meta.Kind {
	case state.KindList:
		t.lists = make([]map[string]*listCell, n)
	case state.KindMap:
		t.maps = make([]map[string]map[string]*cell, n)
	default:
		t.vals = make([]map[string]*cell, n)
	}
	return t
}

func (t *table) Desc() state.StateDesc { return t.desc }

func (t *table) describe() state.StateMeta { return t.desc.Meta }

func (t *table) name() string { return t.desc.Meta.StateName }

func (t *table) kindErr(op string) error {
	return fmt.Errorf("heapstate: %s on state %q of kind %s", op, t.name(), t.desc.Meta.Kind)
}

// Get returns the value of a value, reducing or aggregating state.
func (t *table) Get(ns []byte) (any, bool, error) {
	i := t.b.kgIdx
	if t.vals == nil {
		return nil, false, t.kindErr("Get")
	}
	if i < 0 {
		return nil, false, t.b.keyErr(t.name())
	}
	c := t.vals[i][string(t.b.composite(ns))]
	if c == nil {
		return nil, false, nil
	}
	t.hit, t.hitGen, t.hitNS = c, t.b.keyGen, append(t.hitNS[:0], ns...)
	return c.v, true, nil
}

// Put sets the value of a value, reducing or aggregating state.
func (t *table) Put(ns []byte, v any) error {
	i := t.b.kgIdx
	if t.vals == nil {
		return t.kindErr("Put")
	}
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	if t.hit != nil && t.hitGen == t.b.keyGen && bytes.Equal(t.hitNS, ns) {
		t.hit.v = v
		return nil
	}
	m := t.vals[i]
	k := t.b.composite(ns)
	if c := m[string(k)]; c != nil {
		c.v = v
		return nil
	}
	if m == nil {
		m = map[string]*cell{}
		t.vals[i] = m
	}
	m[string(k)] = &cell{v: v}
	return nil
}

// ListGet returns the elements of a list; the slice is the caller's.
func (t *table) ListGet(ns []byte) ([]any, error) {
	i := t.b.kgIdx
	if t.lists == nil {
		return nil, t.kindErr("ListGet")
	}
	if i < 0 {
		return nil, t.b.keyErr(t.name())
	}
	c := t.lists[i][string(t.b.composite(ns))]
	if c == nil {
		return nil, nil
	}
	return slices.Clone(c.vs), nil
}

func (t *table) ListAppend(ns []byte, v any) error {
	i := t.b.kgIdx
	if t.lists == nil {
		return t.kindErr("ListAppend")
	}
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	m := t.lists[i]
	k := t.b.composite(ns)
	if c := m[string(k)]; c != nil {
		c.vs = append(c.vs, v)
		return nil
	}
	if m == nil {
		m = map[string]*listCell{}
		t.lists[i] = m
	}
	m[string(k)] = &listCell{vs: []any{v}}
	return nil
}

// ListPut replaces a list; an empty list removes it.
func (t *table) ListPut(ns []byte, vs []any) error {
	i := t.b.kgIdx
	if t.lists == nil {
		return t.kindErr("ListPut")
	}
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	m := t.lists[i]
	k := t.b.composite(ns)
	if len(vs) == 0 {
		delete(m, string(k))
		return nil
	}
	if c := m[string(k)]; c != nil {
		c.vs = slices.Clone(vs)
		return nil
	}
	if m == nil {
		m = map[string]*listCell{}
		t.lists[i] = m
	}
	m[string(k)] = &listCell{vs: slices.Clone(vs)}
	return nil
}

func (t *table) MapGet(ns, userKey []byte) (any, bool, error) {
	i := t.b.kgIdx
	if t.maps == nil {
		return nil, false, t.kindErr("MapGet")
	}
	if i < 0 {
		return nil, false, t.b.keyErr(t.name())
	}
	c := t.maps[i][string(t.b.composite(ns))][string(userKey)]
	if c == nil {
		return nil, false, nil
	}
	return c.v, true, nil
}

func (t *table) MapPut(ns, userKey []byte, v any) error {
	i := t.b.kgIdx
	if t.maps == nil {
		return t.kindErr("MapPut")
	}
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	m := t.maps[i]
	k := t.b.composite(ns)
	um := m[string(k)]
	if c := um[string(userKey)]; c != nil {
		c.v = v
		return nil
	}
	if um == nil {
		if m == nil {
			m = map[string]map[string]*cell{}
			t.maps[i] = m
		}
		um = map[string]*cell{}
		m[string(k)] = um
	}
	um[string(userKey)] = &cell{v: v}
	return nil
}

// MapDelete removes one map entry, and the map when it was the last.
func (t *table) MapDelete(ns, userKey []byte) error {
	i := t.b.kgIdx
	if t.maps == nil {
		return t.kindErr("MapDelete")
	}
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	k := t.b.composite(ns)
	um := t.maps[i][string(k)]
	if um == nil {
		return nil
	}
	delete(um, string(userKey))
	if len(um) == 0 {
		delete(t.maps[i], string(k))
	}
	return nil
}

// MapRange calls fn in user key byte order. fn may change the map; entries
// it deletes before they are reached are skipped.
func (t *table) MapRange(ns []byte, fn func(userKey []byte, v any) bool) error {
	i := t.b.kgIdx
	if t.maps == nil {
		return t.kindErr("MapRange")
	}
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	um := t.maps[i][string(t.b.composite(ns))]
	for _, uk := range sortedStrings(um) {
		c := um[uk]
		if c == nil {
			continue
		}
		if !fn([]byte(uk), c.v) {
			break
		}
	}
	return nil
}

// Clear removes everything under ns for the current key.
func (t *table) Clear(ns []byte) error {
	i := t.b.kgIdx
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	k := t.b.composite(ns)
	t.hit = nil
	switch {
	case t.vals != nil:
		delete(t.vals[i], string(k))
	case t.lists != nil:
		delete(t.lists[i], string(k))
	default:
		delete(t.maps[i], string(k))
	}
	return nil
}

// MergeNamespaces folds the sources into target and clears them, as the
// Table doc says. A source equal to target is skipped. Value state has no
// merge function and cannot merge.
func (t *table) MergeNamespaces(target []byte, sources [][]byte) error {
	i := t.b.kgIdx
	if i < 0 {
		return t.b.keyErr(t.name())
	}
	if t.vals != nil && t.desc.Merge == nil {
		return fmt.Errorf("heapstate: merge namespaces of state %q: %s state has no merge function", t.name(), t.desc.Meta.Kind)
	}
	t.hit = nil
	tk := string(t.b.composite(target))
	var keys []string
	for _, s := range sources {
		if sk := string(t.b.composite(s)); sk != tk {
			keys = append(keys, sk)
		}
	}
	switch {
	case t.vals != nil:
		m := t.vals[i]
		acc := m[tk]
		for _, sk := range keys {
			c := m[sk]
			if c == nil {
				continue
			}
			delete(m, sk)
			if acc == nil {
				acc = c
				continue
			}
			acc.v = t.desc.Merge(acc.v, c.v)
		}
		if acc != nil {
			if m == nil {
				m = map[string]*cell{}
				t.vals[i] = m
			}
			m[tk] = acc
		}
	case t.lists != nil:
		m := t.lists[i]
		acc := m[tk]
		for _, sk := range keys {
			c := m[sk]
			if c == nil {
				continue
			}
			delete(m, sk)
			if acc == nil {
				acc = c
				continue
			}
			acc.vs = append(acc.vs, c.vs...)
		}
		if acc != nil {
			if m == nil {
				m = map[string]*listCell{}
				t.lists[i] = m
			}
			m[tk] = acc
		}
	default:
		m := t.maps[i]
		acc := m[tk]
		for _, sk := range keys {
			um := m[sk]
			if um == nil {
				continue
			}
			delete(m, sk)
			if acc == nil {
				acc = um
				continue
			}
			for uk, c := range um {
				acc[uk] = c
			}
		}
		if acc != nil {
			if m == nil {
				m = map[string]map[string]*cell{}
				t.maps[i] = m
			}
			m[tk] = acc
		}
	}
	return nil
}

// load decodes one snapshotted entry into the table.
// presize makes room for n restored entries of key group kg, so a restore
// does not grow the maps step by step.
func (t *table) presize(kg, n int) {
	i := kg - t.b.groups.Start
	if t.vals != nil && t.vals[i] == nil {
		t.vals[i] = make(map[string]*cell, n)
	}
}

func (t *table) load(e state.Entry) error {
	v, err := t.desc.Value.DecodeAny(e.Value)
	if err != nil {
		return fmt.Errorf("heapstate: restore state %q key group %d key %x: value: %w", t.name(), e.KeyGroup, e.Key, err)
	}
	t.hit = nil
	i := e.KeyGroup - t.b.groups.Start
	k := composeKey(e.Key, e.Namespace)
	switch {
	case t.vals != nil:
		if t.vals[i] == nil {
			t.vals[i] = map[string]*cell{}
		}
		t.vals[i][k] = &cell{v: v}
	case t.lists != nil:
		if t.lists[i] == nil {
			t.lists[i] = map[string]*listCell{}
		}
		c := t.lists[i][k]
		if c == nil {
			c = &listCell{}
			t.lists[i][k] = c
		}
		// INVARIANT: entries of a key group arrive in Entry order, so list
		// elements arrive by position.
		c.vs = append(c.vs, v)
	default:
		if t.maps[i] == nil {
			t.maps[i] = map[string]map[string]*cell{}
		}
		um := t.maps[i][k]
		if um == nil {
			um = map[string]*cell{}
			t.maps[i][k] = um
		}
		um[string(e.UserKey)] = &cell{v: v}
	}
	return nil
}

// entries yields the table's entries of key group kg in Entry order. The
// yielded slices share one buffer, valid until the next step.
func (t *table) entries(kg int, yield func(state.Entry) bool) bool {
	i := kg - t.b.groups.Start
	e := state.Entry{State: t.name(), KeyGroup: kg}
	emit := func(key, ns string, uk []byte, v any) bool {
		buf := append(t.scratch[:0], key...)
		buf = append(buf, ns...)
		kl, nl := len(key), len(key)+len(ns)
		buf = append(buf, uk...)
		ul := len(buf)
		buf = t.desc.Value.AppendAny(buf, v)
		t.scratch = buf
		e.Key, e.Namespace, e.UserKey, e.Value = buf[:kl:kl], buf[kl:nl:nl], nil, buf[ul:len(buf):len(buf)]
		if uk != nil {
			e.UserKey = buf[nl:ul:ul]
		}
		return yield(e)
	}
	switch {
	case t.vals != nil:
		m := t.vals[i]
		for _, k := range sortedComposites(m) {
			c := m[k]
			if c == nil {
				continue
			}
			key, ns := splitKey(k)
			if !emit(key, ns, nil, c.v) {
				return false
			}
		}
	case t.lists != nil:
		m := t.lists[i]
		var pos []byte
		for _, k := range sortedComposites(m) {
			c := m[k]
			if c == nil {
				continue
			}
			key, ns := splitKey(k)
			for p, v := range c.vs {
				pos = state.Position.Append(pos[:0], int64(p))
				if !emit(key, ns, pos, v) {
					return false
				}
			}
		}
	default:
		m := t.maps[i]
		for _, k := range sortedComposites(m) {
			um := m[k]
			if um == nil {
				continue
			}
			key, ns := splitKey(k)
			for _, uk := range sortedStrings(um) {
				c := um[uk]
				if c == nil {
					continue
				}
				if !emit(key, ns, []byte(uk), c.v) {
					return false
				}
			}
		}
	}
	return true
}

func sortedComposites[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, compareComposite)
	return ks
}

func sortedStrings[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
