package diff

import (
	"bytes"
	"fmt"
	"iter"

	"streamdbg/savepoint"
	"streamdbg/state"
)

// cursor reads one side's entries section by section: the savepoint reads
// the next section while this one is decoded here, and entries are never
// copied. The current entry is valid until next.
type cursor struct {
	pull func() (savepoint.KeyedSection, error, bool)
	stop func()
	side string
	sec  savepoint.KeyedSection
	r    *state.StreamReader
	n    int64 // entries read from the current section
	e    state.Entry
	has  bool
	end  bool
	err  error
}

func newCursor(seq iter.Seq2[savepoint.KeyedSection, error], side string) *cursor {
	c := &cursor{side: side}
	c.pull, c.stop = iter.Pull2(seq)
	return c
}

func (c *cursor) fail(err error) (*state.Entry, bool) {
	c.err, c.end = fmt.Errorf("%s: %w", c.side, err), true
	return nil, false
}

// peek returns the current entry; ok is false at the end or on an error (err).
func (c *cursor) peek() (*state.Entry, bool) {
	if c.has {
		return &c.e, true
	}
	for !c.end {
		if c.r == nil {
			sec, err, ok := c.pull()
			if err != nil {
				return c.fail(err)
			}
			if !ok {
				c.end = true
				break
			}
			c.sec, c.n = sec, 0
			c.r = state.NewStreamReaderBytes(sec.Bytes, sec.Offset)
			kg, ok, err := c.r.NextKeyGroup()
			if err != nil {
				return c.fail(sec.SectionError(err))
			}
			if !ok || kg != sec.KeyGroup {
				return c.fail(sec.SectionError(fmt.Errorf("section holds key group %d: %w", kg, state.ErrCorrupt)))
			}
		}
		ok, err := c.r.Read(&c.e)
		if err != nil {
			return c.fail(c.sec.SectionError(err))
		}
		if ok {
			c.n++
			c.has = true
			return &c.e, true
		}
		if !c.r.Done() || c.n != c.sec.Entries {
			return c.fail(c.sec.SectionError(fmt.Errorf("%d entries, _metadata says %d, or bytes after them: %w", c.n, c.sec.Entries, state.ErrCorrupt)))
		}
		c.r = nil
	}
	return nil, false
}

func (c *cursor) next() { c.has = false }

func (c *cursor) close() { c.stop() }

// rawState is what the raw merge needs of one state name.
type rawState struct {
	sum    *Summary
	skip   bool // not selected by the filter's pinned names, or operator state
	keys   *state.KeyFilter
	dispA  display
	dispB  display
	kind   state.Kind
	sameVT bool // both sides store values with the same type: bytes compare
}

// display decodes the stored bytes of one state for output.
type display struct {
	key, ns, uk, value func([]byte) any
	list               bool
}

func displayer(typeName string) func([]byte) any {
	f, ok := state.LookupDisplay(typeName)
	if typeName == "" || !ok {
		return func(b []byte) any {
			if typeName == "" && len(b) == 0 {
				return nil
			}
			return state.Hex(bytes.Clone(b))
		}
	}
	return func(b []byte) any {
		v, err := f(b)
		if err != nil {
			return state.Hex(bytes.Clone(b))
		}
		return v
	}
}

func newDisplay(m state.StateMeta) display {
	return display{key: displayer(m.KeyType), ns: displayer(m.NamespaceType), uk: displayer(m.UserKeyType),
		value: displayer(m.ValueType), list: m.Kind.IsList()}
}

func (d display) userKey(b []byte) any {
	if d.list {
		if p, err := state.Position.Decode(b); err == nil {
			return p
		}
		return state.Hex(bytes.Clone(b))
	}
	if b == nil {
		return nil
	}
	return d.uk(b)
}

// keyGroups is the key groups the filter's pins allow for one operator, or
// nil for all of them (keys through the first keyed state's key type).
func (d *differ) keyGroups(cat state.Catalog, metas map[string]state.StateMeta, maxPar int) []int {
	var m state.StateMeta
	found := false
	for _, x := range metas {
		if x.Scope == state.ScopeKeyed && x.Kind != state.KindTimers {
			m, found = x, true
			break
		}
	}
	kgs, _ := state.PinnedKeyGroups(d.pins, maxPar, func(k any) (int, bool) {
		if !found {
			return 0, false
		}
		return cat.KeyGroupOf(m, k)
	})
	return kgs
}

// ranges turns selected key groups into the ranges KeyedEntriesFor reads.
func ranges(kgs []int, maxPar int) []state.KeyGroupRange {
	if kgs == nil {
		return []state.KeyGroupRange{{Start: 0, End: maxPar - 1}}
	}
	out := make([]state.KeyGroupRange, 0, len(kgs))
	for _, kg := range kgs {
		out = append(out, state.KeyGroupRange{Start: kg, End: kg})
	}
	return out
}

// rawOperator merges the keyed entries of one operator in both of our
// savepoints in stream order, comparing bytes; only differing entries are
// decoded.
func (d *differ) rawOperator(p opPair, sa, sb *savepoint.Savepoint, ma, mb map[string]state.StateMeta, sums map[string]*Summary) error {
	states := map[string]*rawState{}
	var keys []any
	if k, ok := d.pins["key"]; ok {
		keys = k
	}
	get := func(name string) *rawState {
		if rs, ok := states[name]; ok {
			return rs
		}
		a, inA := ma[name]
		b, inB := mb[name]
		m := b
		if !inB {
			m = a
		}
		rs := &rawState{sum: sums[name], kind: m.Kind}
		if rs.sum == nil || m.Scope != state.ScopeKeyed {
			rs.skip = true
		} else {
			if !inA {
				a = b
			}
			if !inB {
				b = a
			}
			rs.dispA, rs.dispB = newDisplay(a), newDisplay(b)
			rs.sameVT = a.ValueType == b.ValueType
			if keys != nil {
				rs.keys = state.NewKeyFilter(m.KeyType, keys)
			}
		}
		states[name] = rs
		return rs
	}
	info := p.info()
	row := Row{OperatorID: info.ID, OperatorName: info.Name}
	out := func(c Change, rs *rawState, ea, eb *state.Entry) error {
		if rs.skip {
			return nil
		}
		e := ea
		disp := rs.dispA
		if e == nil {
			e, disp = eb, rs.dispB
		}
		if !rs.keys.Match(e.Key) {
			return nil
		}
		row.Change, row.StateName, row.Kind, row.KeyGroup = c, e.State, rs.kind, e.KeyGroup
		row.Key, row.Namespace, row.UserKey = disp.key(e.Key), disp.ns(e.Namespace), disp.userKey(e.UserKey)
		row.Old, row.New = nil, nil
		if ea != nil {
			row.Old = rs.dispA.value(ea.Value)
		}
		if eb != nil {
			row.New = rs.dispB.value(eb.Value)
		}
		return d.emit(&row, rs.sum)
	}
	var cur *rawState
	curName := ""
	state1 := func(name string) *rawState {
		if cur == nil || name != curName {
			cur, curName = get(name), name
		}
		return cur
	}
	fail := func(err error) {
		// A broken section breaks the merge of the whole operator.
		for _, s := range sums {
			if s.Err == nil && s.Kind.Scope() == state.ScopeKeyed {
				s.Err = err
			}
		}
	}
	for _, rng := range ranges(d.keyGroups(sa, ma, info.MaxParallelism), info.MaxParallelism) {
		ca := newCursor(sa.KeyedSections(p.a.ID, rng), d.opts.NameA)
		cb := newCursor(sb.KeyedSections(p.b.ID, rng), d.opts.NameB)
		err := func() error {
			defer ca.close()
			defer cb.close()
			for {
				ea, okA := ca.peek()
				eb, okB := cb.peek()
				if !okA && !okB {
					return nil
				}
				if err := d.tick(); err != nil {
					return err
				}
				c := 0
				switch {
				case !okA:
					c = 1
				case !okB:
					c = -1
				default:
					c = state.CompareEntries(*ea, *eb)
				}
				switch {
				case c < 0:
					if err := out(Removed, state1(ea.State), ea, nil); err != nil {
						return err
					}
					ca.next()
				case c > 0:
					if err := out(Added, state1(eb.State), nil, eb); err != nil {
						return err
					}
					cb.next()
				default:
					rs := state1(ea.State)
					if !rs.skip {
						same := false
						if rs.sameVT {
							same = bytes.Equal(ea.Value, eb.Value)
						} else {
							same = bytes.Equal(appendValue(nil, rs.dispA.value(ea.Value)), appendValue(nil, rs.dispB.value(eb.Value)))
						}
						if same {
							if rs.keys.Match(ea.Key) {
								rs.sum.Unchanged++
							}
						} else if err := out(Changed, rs, ea, eb); err != nil {
							return err
						}
					}
					ca.next()
					cb.next()
				}
			}
		}()
		if err != nil {
			return err
		}
		if err := ca.err; err != nil {
			fail(err)
			return nil
		}
		if err := cb.err; err != nil {
			fail(err)
			return nil
		}
	}
	return nil
}
