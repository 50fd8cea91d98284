package heapstate

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	"streamdbg/state"
)

// cell holds one boxed value so that overwriting it needs no map assignment
// (which would allocate the key string). key is the map key it is stored
// under (the same string), so the change log names it without allocating:
// for a cell of a value table its located key (locatedKey, the key of
// table.index; its key group's map has it under the composite, a suffix of
// the same string), for a map state entry its user key.
type cell struct {
	v   any
	key string
	seg uint64 // the log segment that recorded it last (changelog.go)
	// tag is the EntryTag of a value cell.
	tag uint64
	// n is the value of a cell of an int64 value state (table.i64), where
	// v stays nil: a counter's update neither boxes its value nor follows
	// a pointer to read it.
	n int64
}

// listCell holds the elements of one list.
type listCell struct {
	vs  []any
	key string
	seg uint64
}

// mapCell holds the entries of one map state value (one key and namespace).
type mapCell struct {
	m   map[string]*cell
	key string
	seg uint64
}

// table is one declared state. Exactly one of vals, lists and maps is
// non-nil, by kind; each has one map per key group, indexed by kg - Start,
// keyed by composite (see package doc). A value table's maps are built
// only once something asks for a key group's cells (group): until then
// index alone holds them.
type table struct {
	b    *Backend
	desc state.StateDesc
	// i64: a value state of int64s (the codec's Go type, no merge
	// function): its cells keep their values in cell.n (see cell).
	i64  bool
	vals []map[string]*cell
	// index holds every value cell under its located key (cell.key): a
	// lookup by the current key goes through this one map, whose few
	// internal tables stay in the cache, instead of the map of its key
	// group (with 128 key groups, that map's header and table were a cache
	// miss of their own on most lookups).
	// INVARIANT: a value cell is only ever put in or taken out of the
	// table with addCell and dropCell, which keep index and, once grouped,
	// the maps of vals holding the same cells, and touch.
	index map[string]*cell
	// grouped: the maps of vals are built and kept. Until then they are
	// nil, and adding a cell is one map insert, not two: a restore of a
	// million keys that nothing lists pays for one map.
	grouped bool
	lists   []map[string]*listCell
	maps    []map[string]*mapCell
	// scratch encodes values and user keys for Entries.
	scratch []byte
	// order caches each key group's composites in order for Entries (nil:
	// to sort again); writes that add or remove a composite drop it, so a
	// view of a large state sorts a key group once, not at every stop.
	order [][]string
	// orderCells caches, for a value state, the cells of order[i] in the
	// same order (orderOf[i] is the order they were looked up from), so
	// that Entries follows pointers instead of hashing every composite.
	// INVARIANT: a cell is only ever put in or taken out of a key group's
	// map with touch (cells are changed in place otherwise), so the cache
	// touch keeps holds the map's cells.
	orderCells [][]*cell
	orderOf    [][]string
	// hit is the cell the last Get found, for the Put that usually follows
	// (read-modify-write: counters, reducing and aggregating Add), so that
	// it needs no second map lookup. Valid while hitGen is the backend's key
	// generation and the namespace is hitNS; removals reset it.
	hit    *cell
	hitGen uint64
	hitNS  []byte
}

var (
	_ state.Table       = (*table)(nil)
	_ state.EntryTagger = (*table)(nil)
)

func newTable(b *Backend, d state.StateDesc) *table {
	t := &table{b: b, desc: d}
	n := b.groups.Len()
	switch d.Meta.Kind {
	case state.KindList:
		t.lists = make([]map[string]*listCell, n)
	case state.KindMap:
		t.maps = make([]map[string]*mapCell, n)
	default:
		t.vals = make([]map[string]*cell, n)
		t.i64 = d.Meta.Kind == state.KindValue && d.Merge == nil && state.GoType(d.Value) == reflect.TypeFor[int64]()
	}
	return t
}

// addCell puts c, a value cell whose key is set, into key group index i.
func (t *table) addCell(i int, c *cell) {
	if t.grouped {
		m := t.vals[i]
		if m == nil {
			m = map[string]*cell{}
			t.vals[i] = m
		}
		m[compositeOf(c.key)] = c
	}
	if t.index == nil {
		t.index = map[string]*cell{}
	}
	t.index[c.key] = c
	t.touch(i)
}

// dropCell takes the value cell under the located key lk, if any, out of
// key group index i.
func (t *table) dropCell(i int, lk string) {
	if t.grouped {
		delete(t.vals[i], compositeOf(lk))
	}
	delete(t.index, lk)
	t.touch(i)
}

// group returns the value cells of key group index i by composite,
// building the maps of every key group from index the first time the
// table holds any (a session's first checkpoint lists its tables empty).
func (t *table) group(i int) map[string]*cell {
	if !t.grouped {
		if len(t.index) == 0 {
			return nil
		}
		n := make([]int, len(t.vals))
		for lk := range t.index {
			n[locatedGroup(lk)]++
		}
		for g, k := range n {
			if k > 0 {
				t.vals[g] = make(map[string]*cell, k)
			}
		}
		for lk, c := range t.index {
			t.vals[locatedGroup(lk)][compositeOf(lk)] = c
		}
		t.grouped = true
	}
	return t.vals[i]
}

// cellAt is the value cell of key group index i under composite (nil:
// none), looked up in index.
func (t *table) cellAt(i int, composite string) *cell {
	var a [64]byte
	return t.index[string(appendLocated(a[:0], i, composite))]
}

// value is the value of a cell of t.vals as Get returns it.
func (t *table) value(c *cell) any {
	if t.i64 {
		return state.BoxInt64(c.n)
	}
	return c.v
}

// int64Value is v as an int64 state's cell keeps it.
func (t *table) int64Value(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("heapstate: put on state %q of int64 values: a value of type %T", t.name(), v)
	}
	return n, nil
}

func (t *table) Desc() state.StateDesc { return t.desc }

// touch drops the cached order of key group index i: a composite came or
// went.
func (t *table) touch(i int) {
	if t.order != nil {
		t.order[i] = nil
	}
	if t.orderCells != nil {
		t.orderCells[i], t.orderOf[i] = nil, nil
	}
}

// sortedCells returns the cells of m, the value map of key group index
// i, in the order of its composites (sorted), looked up once per order.
func (t *table) sortedCells(i int, m map[string]*cell) []*cell {
	keys := sorted(t, i, m)
	if t.orderCells == nil {
		t.orderCells, t.orderOf = make([][]*cell, t.b.groups.Len()), make([][]string, t.b.groups.Len())
	}
	cs, of := t.orderCells[i], t.orderOf[i]
	// The cells of this very order (sorted may have sorted again).
	if cs != nil && len(of) == len(keys) && (len(keys) == 0 || &of[0] == &keys[0]) {
		return cs
	}
	cs = make([]*cell, 0, len(keys))
	for _, k := range keys {
		if c := m[k]; c != nil {
			cs = append(cs, c)
		}
	}
	t.orderCells[i], t.orderOf[i] = cs, keys
	return cs
}

// sorted returns the composites of m, key group index i, in order.
func sorted[V any](t *table, i int, m map[string]V) []string {
	if t.order == nil {
		t.order = make([][]string, t.b.groups.Len())
	}
	if t.order[i] == nil || len(t.order[i]) != len(m) {
		t.order[i] = sortedComposites(m)
	}
	return t.order[i]
}

func (t *table) describe() state.StateMeta { return t.desc.Meta }

func (t *table) name() string { return t.desc.Meta.StateName }

func (t *table) kindErr(op string) error {
	return fmt.Errorf("heapstate: %s on state %q of kind %s", op, t.name(), t.desc.Meta.Kind)
}

// Get returns the value of a value, reducing or aggregating state.
func (t *table) Get(ns []byte) (any, bool, error) {
	if len(ns) == 0 && t.vals != nil && t.b.kgIdx >= 0 {
		if c := t.findVoid(); c != nil {
			return t.value(c), true, nil
		}
		return nil, false, nil
	}
	c, err := t.find(ns, "Get")
	if c == nil {
		return nil, false, err
	}
	return t.value(c), true, nil
}

// GetInt64 is Get for an int64 value state (state.Int64Table).
func (t *table) GetInt64(ns []byte) (int64, bool, error) {
	if !t.i64 {
		v, ok, err := t.Get(ns)
		if !ok || err != nil {
			return 0, false, err
		}
		n, err := t.int64Value(v)
		return n, err == nil, err
	}
	if len(ns) == 0 && t.b.kgIdx >= 0 {
		c := t.findVoid() // inlined: the counter's read is the hot path
		if c == nil {
			return 0, false, nil
		}
		return c.n, true, nil
	}
	c, err := t.find(ns, "Get")
	if c == nil {
		return 0, false, err
	}
	return c.n, true, nil
}

// hitVoid is the hit when it is the current key's cell in the void
// namespace (nil otherwise).
func (t *table) hitVoid() *cell {
	if c := t.hit; c != nil && t.hitGen == t.b.keyGen && len(t.hitNS) == 0 {
		return c
	}
	return nil
}

// findVoid is find in the void namespace, as a keyed function's state has
// it, for a value table and a current key in range: no namespace to
// compare, copy or append.
func (t *table) findVoid() *cell {
	if c := t.hitVoid(); c != nil {
		return c
	}
	b := t.b
	c := t.index[string(b.buf[:b.keyEnd])]
	if c != nil {
		t.hit, t.hitGen, t.hitNS = c, b.keyGen, t.hitNS[:0]
	}
	return c
}

// find returns the current key's cell under ns (nil when there is none),
// the one the last lookup found when it is the same key and namespace: a
// read-modify-write looks the key up once.
func (t *table) find(ns []byte, op string) (*cell, error) {
	i := t.b.kgIdx
	if t.vals == nil {
		return nil, t.kindErr(op)
	}
	if i < 0 {
		return nil, t.b.keyErr(t.name())
	}
	if t.hit != nil && t.hitGen == t.b.keyGen && bytes.Equal(t.hitNS, ns) {
		return t.hit, nil // read again (a traced write reads the old value)
	}
	c := t.index[string(t.b.located(ns))]
	if c == nil {
		return nil, nil
	}
	t.setHit(c, ns)
	return c, nil
}

// setHit makes c, the current key's cell under ns, the hit.
func (t *table) setHit(c *cell, ns []byte) {
	t.hit, t.hitGen = c, t.b.keyGen
	if len(ns) > 0 || len(t.hitNS) > 0 {
		// The void namespace of most states needs no copy.
		t.hitNS = append(t.hitNS[:0], ns...)
	}
}

// Put sets the value of a value, reducing or aggregating state.
func (t *table) Put(ns []byte, v any) error {
	if t.i64 {
		n, err := t.int64Value(v)
		if err != nil {
			return err
		}
		return t.PutInt64(ns, n)
	}
	if c := t.hitVoid(); c != nil && len(ns) == 0 {
		t.setCell(t.b.kgIdx, c, v)
		return nil
	}
	c, err := t.cellFor(ns, "Put")
	if err != nil {
		return err
	}
	t.setCell(t.b.kgIdx, c, v)
	return nil
}

// PutInt64 is Put for an int64 value state (state.Int64Table).
func (t *table) PutInt64(ns []byte, v int64) error {
	if !t.i64 {
		return t.Put(ns, v)
	}
	// The cell the Get of a read-modify-write found, in the void
	// namespace: no lookup, no namespace to compare.
	if c := t.hitVoid(); c != nil && len(ns) == 0 {
		t.logCell(t.b.kgIdx, c)
		c.n = v
		return nil
	}
	c, err := t.cellFor(ns, "Put")
	if err != nil {
		return err
	}
	t.logCell(t.b.kgIdx, c)
	c.n = v
	return nil
}

// cellFor returns the current key's cell under ns to be written: the one
// there, or a new one (logged as absent) holding the zero value.
func (t *table) cellFor(ns []byte, op string) (*cell, error) {
	if c, err := t.find(ns, op); c != nil || err != nil {
		return c, err
	}
	i := t.b.kgIdx
	c := &cell{key: string(t.b.located(ns))}
	t.addCell(i, c)
	t.logNewCell(i, c)
	t.setHit(c, ns)
	return c, nil
}

// EntryTag implements state.EntryTagger for value, reducing and
// aggregating state: after a Get or Put of the same key and namespace it
// needs no lookup.
func (t *table) EntryTag(ns []byte) *uint64 {
	i := t.b.kgIdx
	if t.vals == nil || i < 0 {
		return nil
	}
	if t.hit != nil && t.hitGen == t.b.keyGen && bytes.Equal(t.hitNS, ns) {
		return &t.hit.tag
	}
	c := t.index[string(t.b.located(ns))]
	if c == nil {
		return nil
	}
	t.setHit(c, ns)
	return &c.tag
}

// logNewCell records that a new cell of t.vals[i] was absent.
func (t *table) logNewCell(i int, c *cell) {
	if t.b.logging() {
		t.b.record(change{kind: chValue, kg: int32(i), t: t, key: c.key})
		c.seg = t.b.seg
	}
}

// setCell overwrites the value of a cell of t.vals[i].
func (t *table) setCell(i int, c *cell, v any) {
	t.logCell(i, c)
	c.v = v
}

// logCell records a cell of t.vals[i] before its first change in the
// current segment (later ones need no record: undo only needs the oldest).
func (t *table) logCell(i int, c *cell) {
	if t.b.logging() && c.seg != t.b.seg {
		t.recordCell(i, c)
	}
}

// recordCell is logCell's record, out of line so that logCell's common
// path (nothing to record) is a few compares and a return.
func (t *table) recordCell(i int, c *cell) {
	t.b.record(change{kind: chValue, kg: int32(i), t: t, key: c.key, c: c, v: t.value(c)})
	c.seg = t.b.seg
}

// logList records the state of a list of t.lists[i] before a write.
func (t *table) logList(i int, key string, lc *listCell) {
	if !t.b.logging() {
		return
	}
	if lc == nil {
		t.b.record(change{kind: chList, kg: int32(i), t: t, key: key})
		if nc := t.lists[i][key]; nc != nil {
			nc.seg = t.b.seg
		}
		return
	}
	if lc.seg != t.b.seg {
		t.b.record(change{kind: chList, kg: int32(i), t: t, key: key, lc: lc, vs: lc.vs})
		lc.seg = t.b.seg
	}
}

// logMapEntry records an entry of mc before its first change in the
// current segment; c nil: it was absent (and new is the cell put there).
func (t *table) logMapEntry(i int, mc *mapCell, key string, c, new *cell) {
	if !t.b.logging() {
		return
	}
	if c == nil {
		t.b.record(change{kind: chMapEntry, kg: int32(i), t: t, mc: mc, key: key})
		new.seg = t.b.seg
		return
	}
	if c.seg != t.b.seg {
		t.b.record(change{kind: chMapEntry, kg: int32(i), t: t, mc: mc, key: key, c: c, v: c.v})
		c.seg = t.b.seg
	}
}

// logMap records a map state value of t.maps[i] before its first change in
// the current segment; mc nil: it was absent (and new is the one put there).
func (t *table) logMap(i int, key string, mc, new *mapCell) {
	if !t.b.logging() {
		return
	}
	if mc == nil {
		t.b.record(change{kind: chMapOuter, kg: int32(i), t: t, key: key})
		new.seg = t.b.seg
		return
	}
	if mc.seg != t.b.seg {
		t.b.record(change{kind: chMapOuter, kg: int32(i), t: t, key: key, mc: mc})
		mc.seg = t.b.seg
	}
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
		t.logList(i, c.key, c)
		// INVARIANT: a logged slice header stays valid: appends write past
		// its length, and an undo that returns to it drops later records.
		c.vs = append(c.vs, v)
		return nil
	}
	if m == nil {
		m = map[string]*listCell{}
		t.lists[i] = m
	}
	ks := string(k)
	m[ks] = &listCell{vs: []any{v}, key: ks}
	t.touch(i)
	t.logList(i, ks, nil)
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
	c := m[string(k)]
	if len(vs) == 0 {
		if c != nil {
			t.logList(i, c.key, c)
			delete(m, c.key)
			t.touch(i)
		}
		return nil
	}
	if c != nil {
		t.logList(i, c.key, c)
		c.vs = slices.Clone(vs)
		return nil
	}
	if m == nil {
		m = map[string]*listCell{}
		t.lists[i] = m
	}
	ks := string(k)
	m[ks] = &listCell{vs: slices.Clone(vs), key: ks}
	t.touch(i)
	t.logList(i, ks, nil)
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
	mc := t.maps[i][string(t.b.composite(ns))]
	if mc == nil {
		return nil, false, nil
	}
	c := mc.m[string(userKey)]
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
	mc := m[string(k)]
	if mc != nil {
		if c := mc.m[string(userKey)]; c != nil {
			t.logMapEntry(i, mc, c.key, c, nil)
			c.v = v
			return nil
		}
	} else {
		if m == nil {
			m = map[string]*mapCell{}
			t.maps[i] = m
		}
		ks := string(k)
		mc = &mapCell{m: map[string]*cell{}, key: ks}
		m[ks] = mc
		t.touch(i)
		t.logMap(i, ks, nil, mc)
	}
	uk := string(userKey)
	c := &cell{v: v, key: uk}
	mc.m[uk] = c
	t.logMapEntry(i, mc, uk, nil, c)
	return nil
}

// deleteMapEntry removes c from mc, and mc from t.maps[i] when it was the
// last entry.
func (t *table) deleteMapEntry(i int, mc *mapCell, c *cell) {
	t.logMapEntry(i, mc, c.key, c, nil)
	delete(mc.m, c.key)
	if len(mc.m) == 0 {
		t.deleteMap(i, mc)
	}
}

// deleteMap removes a whole map state value (its entries stay in mc for
// the change log).
func (t *table) deleteMap(i int, mc *mapCell) {
	t.logMap(i, mc.key, mc, nil)
	delete(t.maps[i], mc.key)
	t.touch(i)
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
	mc := t.maps[i][string(k)]
	if mc == nil {
		return nil
	}
	if c := mc.m[string(userKey)]; c != nil {
		t.deleteMapEntry(i, mc, c)
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
	mc := t.maps[i][string(t.b.composite(ns))]
	if mc == nil {
		return nil
	}
	for _, uk := range sortedStrings(mc.m) {
		c := mc.m[uk]
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
		if c := t.index[string(t.b.located(ns))]; c != nil {
			t.deleteCell(i, c)
		}
	case t.lists != nil:
		if c := t.lists[i][string(k)]; c != nil {
			t.logList(i, c.key, c)
			delete(t.lists[i], c.key)
			t.touch(i)
		}
	default:
		if mc := t.maps[i][string(k)]; mc != nil {
			t.deleteMap(i, mc)
		}
	}
	return nil
}

// deleteCell removes a cell of t.vals[i].
func (t *table) deleteCell(i int, c *cell) {
	t.logCell(i, c)
	t.dropCell(i, c.key)
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
	// Sources are removed and the target written through the logged
	// primitives; a source's cell never moves under the target's key (a
	// cell's key is where it is stored).
	switch {
	case t.vals != nil:
		acc := t.cellAt(i, tk)
		var merged any
		have := acc != nil
		if have {
			merged = acc.v
		}
		for _, sk := range keys {
			c := t.cellAt(i, sk)
			if c == nil {
				continue
			}
			t.deleteCell(i, c)
			if !have {
				merged, have = c.v, true
				continue
			}
			merged = t.desc.Merge(merged, c.v)
		}
		switch {
		case acc != nil:
			t.setCell(i, acc, merged)
		case have:
			c := &cell{v: merged, key: locatedKey(i, tk)}
			t.addCell(i, c)
			t.logNewCell(i, c)
		}
	case t.lists != nil:
		m := t.lists[i]
		acc := m[tk]
		var vs []any
		have := acc != nil
		if have {
			vs = acc.vs
		}
		for _, sk := range keys {
			c := m[sk]
			if c == nil {
				continue
			}
			t.logList(i, c.key, c)
			delete(m, c.key)
			t.touch(i)
			// A fresh slice: logged headers of acc and c stay as they were.
			vs = append(slices.Clip(vs), c.vs...)
			have = true
		}
		switch {
		case acc != nil:
			t.logList(i, acc.key, acc)
			acc.vs = vs
		case have:
			if m == nil {
				m = map[string]*listCell{}
				t.lists[i] = m
			}
			m[tk] = &listCell{vs: vs, key: tk}
			t.touch(i)
			t.logList(i, tk, nil)
		}
	default:
		m := t.maps[i]
		var srcs []*mapCell
		for _, sk := range keys {
			if mc := m[sk]; mc != nil {
				srcs = append(srcs, mc)
				t.deleteMap(i, mc)
			}
		}
		if len(srcs) == 0 {
			return nil
		}
		acc := m[tk]
		if acc == nil {
			if m == nil {
				m = map[string]*mapCell{}
				t.maps[i] = m
			}
			acc = &mapCell{m: map[string]*cell{}, key: tk}
			m[tk] = acc
			t.touch(i)
			t.logMap(i, tk, nil, acc)
		}
		for _, src := range srcs {
			for _, uk := range sortedStrings(src.m) {
				v := src.m[uk].v
				if c := acc.m[uk]; c != nil {
					t.logMapEntry(i, acc, uk, c, nil)
					c.v = v
					continue
				}
				c := &cell{v: v, key: uk}
				acc.m[uk] = c
				t.logMapEntry(i, acc, uk, nil, c)
			}
		}
	}
	return nil
}

// presizeIndex makes room in the index for n restored values.
func (t *table) presizeIndex(n int) {
	if t.vals != nil && t.index == nil {
		t.index = make(map[string]*cell, n)
	}
}

// load decodes one snapshotted entry into the table.
func (t *table) load(e state.Entry) error {
	var v any
	var n int64
	var err error
	if t.i64 {
		n, err = state.DecodeInt64(t.desc.Value, e.Value)
	} else {
		v, err = t.desc.Value.DecodeAny(e.Value)
	}
	if err != nil {
		return fmt.Errorf("heapstate: restore state %q key group %d key %x: value: %w", t.name(), e.KeyGroup, e.Key, err)
	}
	t.hit = nil
	i := e.KeyGroup - t.b.groups.Start
	// Restore runs before any mark, so loads are not logged.
	if t.vals != nil {
		t.addCell(i, &cell{v: v, n: n, key: locateKey(i, e.Key, e.Namespace)}) // one of v and n is set (t.i64)
		return nil
	}
	k := composeKey(e.Key, e.Namespace)
	switch {
	case t.lists != nil:
		if t.lists[i] == nil {
			t.lists[i] = map[string]*listCell{}
		}
		c := t.lists[i][k]
		if c == nil {
			c = &listCell{key: k}
			t.lists[i][k] = c
			t.touch(i)
		}
		// INVARIANT: entries of a key group arrive in Entry order, so list
		// elements arrive by position.
		c.vs = append(c.vs, v)
	default:
		if t.maps[i] == nil {
			t.maps[i] = map[string]*mapCell{}
		}
		mc := t.maps[i][k]
		if mc == nil {
			mc = &mapCell{m: map[string]*cell{}, key: k}
			t.maps[i][k] = mc
			t.touch(i)
		}
		uk := string(e.UserKey)
		mc.m[uk] = &cell{v: v, key: uk}
	}
	return nil
}

// entries yields the table's entries of key group kg in Entry order. The
// yielded slices share one buffer, valid until the next step.
func (t *table) entries(kg int, arena *[]byte, yield func(state.Entry) bool) bool {
	i := kg - t.b.groups.Start
	e := state.Entry{State: t.name(), KeyGroup: kg}
	emit := func(key, ns string, uk []byte, v any, c *cell) bool {
		// The entry's bytes from at on: in the scratch buffer, or after
		// the arena's.
		buf := t.scratch[:0]
		if arena != nil {
			buf = *arena
		}
		at := len(buf)
		buf = append(buf, key...)
		buf = append(buf, ns...)
		kl, nl := at+len(key), at+len(key)+len(ns)
		buf = append(buf, uk...)
		ul := len(buf)
		if c != nil && t.i64 {
			buf = state.AppendInt64(t.desc.Value, buf, c.n)
		} else {
			buf = t.desc.Value.AppendAny(buf, v)
		}
		if arena != nil {
			*arena = buf
		} else {
			t.scratch = buf
		}
		e.Key, e.Namespace, e.UserKey, e.Value = buf[at:kl:kl], buf[kl:nl:nl], nil, buf[ul:len(buf):len(buf)]
		if uk != nil {
			e.UserKey = buf[nl:ul:ul]
		}
		return yield(e)
	}
	switch {
	case t.vals != nil:
		for _, c := range t.sortedCells(i, t.group(i)) {
			key, ns := splitKey(compositeOf(c.key))
			if !emit(key, ns, nil, c.v, c) {
				return false
			}
		}
	case t.lists != nil:
		m := t.lists[i]
		var pos []byte
		for _, k := range sorted(t, i, m) {
			c := m[k]
			if c == nil {
				continue
			}
			key, ns := splitKey(k)
			for p, v := range c.vs {
				pos = state.Position.Append(pos[:0], int64(p))
				if !emit(key, ns, pos, v, nil) {
					return false
				}
			}
		}
	default:
		m := t.maps[i]
		for _, k := range sorted(t, i, m) {
			mc := m[k]
			if mc == nil {
				continue
			}
			key, ns := splitKey(k)
			for _, uk := range sortedStrings(mc.m) {
				c := mc.m[uk]
				if c == nil {
					continue
				}
				if !emit(key, ns, []byte(uk), c.v, nil) {
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
