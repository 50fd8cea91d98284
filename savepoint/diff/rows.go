package diff

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"streamdbg/savepoint"
	"streamdbg/state"
)

// item is one decoded entry of one state, from either side.
type item struct {
	kg                 int
	key, ns, uk, value any
}

// source yields the items of one state of one side in key-group order.
type source iter.Seq2[item, error]

// keyedSource reads one keyed state (or timer state) of one side through its
// catalog, with the filter's pinned keys and key groups pushed down.
func (d *differ) keyedSource(cat state.Catalog, op state.OperatorInfo, m state.StateMeta) source {
	kgs := d.keyGroups(cat, map[string]state.StateMeta{m.StateName: m}, op.MaxParallelism)
	if m.Kind == state.KindTimers || state.TimerDomain(m.StateName) != "" {
		return func(yield func(item, error) bool) {
			for r, err := range savepoint.TimersOfState(cat, state.TimerScan{OperatorID: op.ID, KeyGroups: kgs}, m.StateName) {
				if err != nil {
					yield(item{}, err)
					return
				}
				if !yield(item{kg: r.KeyGroup, key: r.Key, ns: r.Namespace, uk: r.Timestamp}, nil) {
					return
				}
			}
		}
	}
	keys := d.pins["key"]
	return func(yield func(item, error) bool) {
		for r, err := range cat.Keyed(state.KeyedScan{OperatorID: op.ID, StateName: m.StateName, KeyGroups: kgs, Keys: keys}) {
			if err != nil {
				yield(item{}, err)
				return
			}
			if r.StateName != m.StateName {
				continue
			}
			if !yield(item{kg: r.KeyGroup, key: r.Key, ns: r.Namespace, uk: r.UserKey, value: r.Value}, nil) {
				return
			}
		}
	}
}

// keyed is an item with its identity: the canonical encoding of key,
// namespace and user key.
type keyed struct {
	id string
	item
}

func identOf(it *item) string {
	b := appendValue(nil, it.key)
	b = appendValue(b, it.ns)
	b = appendValue(b, it.uk)
	return string(b)
}

// groups reads a source one key group at a time.
type groups struct {
	next    func() (item, error, bool)
	stop    func()
	pending *item
	last    int
	side    string
	buf     []keyed
}

func newGroups(src source, side string) *groups {
	g := &groups{last: -1, side: side}
	if src == nil {
		return g
	}
	g.next, g.stop = iter.Pull2(iter.Seq2[item, error](src))
	return g
}

func (g *groups) close() {
	if g.stop != nil {
		g.stop()
	}
}

// group returns the next key group's items sorted by identity, kg -1 at the
// end. The slice is reused by the next call.
func (g *groups) group() (int, []keyed, error) {
	g.buf = g.buf[:0]
	if g.next == nil {
		return -1, nil, nil
	}
	kg := -1
	if g.pending != nil {
		kg = g.pending.kg
		g.buf = append(g.buf, keyed{identOf(g.pending), *g.pending})
		g.pending = nil
	}
	for {
		it, err, ok := g.next()
		if err != nil {
			return 0, nil, readError{fmt.Errorf("%s: %w", g.side, err)}
		}
		if !ok {
			g.next = nil
			break
		}
		if it.kg < g.last || (kg >= 0 && it.kg < kg) {
			return 0, nil, readError{fmt.Errorf("%s: rows not in key-group order (key group %d after %d)", g.side, it.kg, max(kg, g.last))}
		}
		if kg >= 0 && it.kg != kg {
			g.pending = &it
			break
		}
		kg = it.kg
		g.buf = append(g.buf, keyed{identOf(&it), it})
	}
	if kg >= 0 {
		g.last = kg
	}
	slices.SortFunc(g.buf, func(a, b keyed) int { return strings.Compare(a.id, b.id) })
	return kg, g.buf, nil
}

// mergeGroups compares a state whose sides place keys in key groups alike,
// one key group at a time.
func (d *differ) mergeGroups(p opPair, m state.StateMeta, ra, rb source, s *Summary) error {
	ga, gb := newGroups(ra, d.opts.NameA), newGroups(rb, d.opts.NameB)
	defer ga.close()
	defer gb.close()
	ka, ia, err := ga.group()
	if err != nil {
		return err
	}
	kb, ib, err := gb.group()
	if err != nil {
		return err
	}
	for ka >= 0 || kb >= 0 {
		switch {
		case kb < 0 || ka >= 0 && ka < kb:
			if err := d.compareSorted(p, m, ia, nil, s); err != nil {
				return err
			}
			if ka, ia, err = ga.group(); err != nil {
				return err
			}
		case ka < 0 || kb < ka:
			if err := d.compareSorted(p, m, nil, ib, s); err != nil {
				return err
			}
			if kb, ib, err = gb.group(); err != nil {
				return err
			}
		default:
			if err := d.compareSorted(p, m, ia, ib, s); err != nil {
				return err
			}
			if ka, ia, err = ga.group(); err != nil {
				return err
			}
			if kb, ib, err = gb.group(); err != nil {
				return err
			}
		}
	}
	return nil
}

// compareSorted walks two lists of items sorted by identity.
func (d *differ) compareSorted(p opPair, m state.StateMeta, as, bs []keyed, s *Summary) error {
	info := p.info()
	row := Row{OperatorID: info.ID, OperatorName: info.Name, StateName: m.StateName, Kind: m.Kind}
	put := func(c Change, x *keyed, old, new any) error {
		row.Change, row.KeyGroup = c, x.kg
		row.Key, row.Namespace, row.UserKey, row.Old, row.New = x.key, x.ns, x.uk, old, new
		return d.emit(&row, s)
	}
	i, j := 0, 0
	for i < len(as) || j < len(bs) {
		if err := d.tick(); err != nil {
			return err
		}
		c := 0
		switch {
		case j == len(bs):
			c = -1
		case i == len(as):
			c = 1
		default:
			c = strings.Compare(as[i].id, bs[j].id)
		}
		switch {
		case c < 0:
			if err := put(Removed, &as[i], as[i].value, nil); err != nil {
				return err
			}
			i++
		case c > 0:
			if err := put(Added, &bs[j], nil, bs[j].value); err != nil {
				return err
			}
			j++
		default:
			if bytes.Equal(appendValue(nil, as[i].value), appendValue(nil, bs[j].value)) {
				s.Unchanged++
			} else if err := put(Changed, &bs[j], as[i].value, bs[j].value); err != nil {
				return err
			}
			i++
			j++
		}
	}
	return nil
}

// spill compares a state whose sides place keys in different key groups:
// both sides are written into hash buckets of their identities, then
// compared one bucket at a time.
func (d *differ) spill(p opPair, m state.StateMeta, ra, rb source, s *Summary) error {
	dir, err := os.MkdirTemp(d.opts.TempDir, "streamdbg-diff-")
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	defer os.RemoveAll(dir)
	n := d.opts.Buckets
	if err := d.writeBuckets(filepath.Join(dir, "a"), ra, n, d.opts.NameA); err != nil {
		return err
	}
	if err := d.writeBuckets(filepath.Join(dir, "b"), rb, n, d.opts.NameB); err != nil {
		return err
	}
	for i := range n {
		as, err := readBucket(fmt.Sprintf("%s-%d", filepath.Join(dir, "a"), i))
		if err != nil {
			return err
		}
		bs, err := readBucket(fmt.Sprintf("%s-%d", filepath.Join(dir, "b"), i))
		if err != nil {
			return err
		}
		if err := d.compareSorted(p, m, as, bs, s); err != nil {
			return err
		}
	}
	return nil
}

func (d *differ) writeBuckets(prefix string, src source, n int, side string) error {
	files := make([]*os.File, n)
	ws := make([]*bufio.Writer, n)
	for i := range n {
		f, err := os.Create(fmt.Sprintf("%s-%d", prefix, i))
		if err != nil {
			return fmt.Errorf("diff: %w", err)
		}
		files[i], ws[i] = f, bufio.NewWriterSize(f, 16<<10)
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if src != nil {
		var rec []byte
		for it, err := range src {
			if err != nil {
				return readError{fmt.Errorf("%s: %w", side, err)}
			}
			if err := d.tick(); err != nil {
				return err
			}
			id := identOf(&it)
			h := fnv.New32a()
			h.Write([]byte(id))
			rec = binary.AppendUvarint(rec[:0], uint64(it.kg))
			rec = binary.AppendUvarint(rec, uint64(len(id)))
			rec = append(rec, id...)
			v := appendValue(nil, it.value)
			rec = binary.AppendUvarint(rec, uint64(len(v)))
			rec = append(rec, v...)
			if _, err := ws[h.Sum32()%uint32(n)].Write(rec); err != nil {
				return fmt.Errorf("diff: spill: %w", err)
			}
		}
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("diff: spill: %w", err)
		}
	}
	return nil
}

func readBucket(path string) ([]keyed, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("diff: spill: %w", err)
	}
	var out []keyed
	r := &valueReader{b: b}
	for r.pos < len(b) {
		kg, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		n, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		id, err := r.take(n)
		if err != nil {
			return nil, err
		}
		n, err = r.uvarint()
		if err != nil {
			return nil, err
		}
		vb, err := r.take(n)
		if err != nil {
			return nil, err
		}
		it := item{kg: int(kg)}
		ir := &valueReader{b: id}
		if it.key, err = ir.value(0); err == nil {
			if it.ns, err = ir.value(0); err == nil {
				it.uk, err = ir.value(0)
			}
		}
		if err != nil {
			return nil, err
		}
		if it.value, err = (&valueReader{b: vb}).value(0); err != nil {
			return nil, err
		}
		out = append(out, keyed{string(id), it})
	}
	slices.SortFunc(out, func(a, b keyed) int { return strings.Compare(a.id, b.id) })
	return out, nil
}

// operatorState compares one operator state, held whole in memory on both
// sides (operator state is small by design: Flink keeps it on the heap).
func (d *differ) operatorState(p opPair, name string, inA, inB bool, s *Summary) error {
	load := func(cat state.Catalog, op *state.OperatorInfo, side string) ([]keyed, error) {
		var out []keyed
		for r, err := range cat.OperatorState(state.OperatorScan{OperatorID: op.ID, StateName: name}) {
			if err != nil {
				return nil, readError{fmt.Errorf("%s: %w", side, err)}
			}
			if r.StateName != name {
				continue
			}
			it := item{kg: -1, ns: fmt.Sprintf("subtask %d", r.Subtask), value: r.Value}
			if r.Kind == state.KindBroadcast {
				it.key = r.Key
			} else {
				it.uk = int64(r.Position)
			}
			out = append(out, keyed{identOf(&it), it})
		}
		slices.SortFunc(out, func(a, b keyed) int { return strings.Compare(a.id, b.id) })
		return out, nil
	}
	var as, bs []keyed
	var err error
	if inA {
		if as, err = load(d.a, p.a, d.opts.NameA); err != nil {
			return err
		}
	}
	if inB {
		if bs, err = load(d.b, p.b, d.opts.NameB); err != nil {
			return err
		}
	}
	m := state.StateMeta{StateName: name, Kind: s.Kind}
	return d.compareSorted(p, m, as, bs, s)
}
