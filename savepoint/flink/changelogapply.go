package flink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"streamdbg/state"
)

// This file presents a changelog handle's keyed state: its header (the
// states of the materialized part and of the change log, the operator's key
// serializer) and, one key group at a time, the materialized entries with
// the key group's data changes applied over them in log order, as Flink's
// change appliers (ValueStateChangeApplier, ListStateChangeApplier,
// MapStateChangeApplier, ReducingStateChangeApplier,
// AggregatingStateChangeApplier, PriorityQueueStateChangeApplier) apply
// them to the heap backend: values, lists, maps and timer sets keyed by
// key and namespace. Keys, namespaces and user keys are told apart by
// their decoded values (the heap backend's equals), entries are given in
// a fixed order (state, then key, namespace and user key as encoded by
// identity).

// keyNotStored is the status of key-value states when the checkpoint holds
// no key serializer for their operator.
const keyNotStored = "the key serializer is not stored in this changelog checkpoint (no materialized state and no timers of this operator): name the key type with --key-type OPERATOR=TYPE"

// changelogHeader builds the header of a changelog handle.
func (sp *Savepoint) changelogHeader(op *operatorMeta, h *keyGroupsHandle) *keyedHeader {
	x := sp.changelogIndexOf(op, h.changelog)
	if x.err != nil {
		return &keyedHeader{err: x.err}
	}
	key := sp.changelogKey(op)
	kh := &keyedHeader{key: key}
	for i, st := range x.states {
		m := *st.meta
		m.index = i
		switch {
		case m.problem != "":
		case st.problem != "":
			m.problem = st.problem
		case !st.inMat && x.matGap != "":
			m.problem = "the materialized state may hold it, and its header is not fully read: " + x.matGap
		case key == nil && m.backendType == backendKeyValue:
			m.problem = keyNotStored
		}
		kh.states = append(kh.states, &m)
	}
	kh.declared = len(kh.states)
	// A namespace merge of a reducing or aggregating state that meets two
	// values cannot be applied: found now, so that the state is listed
	// with the reason instead of failing the scans that reach it.
	for i, st := range x.states {
		if len(st.mergeKGs) == 0 || kh.states[i].problem != "" {
			continue
		}
		g := &clReplay{sp: sp, f: keyedFile{op: op, handle: h, header: kh}, c: h.changelog, x: x, readers: map[*dstlFile]*dstlReader{}}
		g.wanted = make([]bool, len(kh.states))
		g.wanted[i] = true
		for _, kg := range slices.Sorted(slices.Values(st.mergeKGs)) {
			if _, err := g.replay(kg); errors.Is(err, errNeedsFunction) {
				kh.states[i].problem = err.Error()
				break
			}
		}
		g.close()
	}
	return kh
}

// errNeedsFunction marks a change that only the job's own function can
// apply.
var errNeedsFunction = fmt.Errorf("the job's function is needed: %w", ErrUnsupported)

// changelogKey is the key serializer of a changelog operator: a
// materialized part's, else the key of its timers' serializer, else the
// one named by SetKeyType; nil when none.
func (sp *Savepoint) changelogKey(op *operatorMeta) serializer {
	var found serializer
	for _, st := range op.subtasks {
		if st.keyed == nil || st.keyed.changelog == nil {
			continue
		}
		c := st.keyed.changelog
		for _, mh := range c.materialized {
			if kh := sp.keyedHeaderOf(op, mh); kh.key != nil {
				found = kh.key
				break
			}
		}
		if found != nil {
			break
		}
		for _, s := range sp.changelogIndexOf(op, c).states {
			if ts, ok := s.meta.value.(*timerSer); ok && s.meta.backendType == backendPriorityQueue && found == nil {
				found = ts.key
			}
		}
	}
	sp.mu.Lock()
	hint := sp.keyHints[op.id]
	sp.mu.Unlock()
	switch {
	case hint == nil:
		return found
	case found == nil:
		return hint
	case found.typeName() != hint.typeName():
		sp.addNote(op, fmt.Sprintf("--key-type %s not used: the checkpoint stores the key serializer %s", hint.typeName(), found.typeName()))
	}
	return found
}

// changelogEntries streams the replayed entries of a changelog handle's
// key groups (those of kgs when not nil).
func (sp *Savepoint) changelogEntries(f keyedFile, kgs []int, want func(*stateMeta) bool, keep func(any) bool) iter.Seq2[entry, error] {
	return func(yield func(entry, error) bool) {
		c := f.handle.changelog
		x := sp.changelogIndexOf(f.op, c)
		if x.err != nil {
			yield(entry{}, x.err)
			return
		}
		g := &clReplay{sp: sp, f: f, c: c, x: x, keep: keep, readers: map[*dstlFile]*dstlReader{}}
		defer g.close()
		for _, m := range f.header.states {
			g.wanted = append(g.wanted, want(m))
		}
		for kg := c.first; kg < c.first+c.count; kg++ {
			if kgs != nil && !slices.Contains(kgs, kg) {
				continue
			}
			out, err := g.replay(kg)
			if err != nil {
				yield(entry{}, err)
				return
			}
			for _, e := range out {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// clReplay replays key groups of one changelog handle.
type clReplay struct {
	sp     *Savepoint
	f      keyedFile
	c      *changelogHandle
	x      *changelogIndex
	wanted []bool // by state index
	// keep, when set, says which keys are wanted (KeyedScan.Keys): the
	// changes of other keys are not applied.
	keep    func(any) bool
	readers map[*dstlFile]*dstlReader
	model   clModel
	d       decoder // reused for every change
}

func (g *clReplay) close() {
	for _, r := range g.readers {
		r.Close()
	}
}

// covers reports whether a materialized handle holds key group kg.
func covers(h *keyGroupsHandle, kg int) bool {
	if h.native != nil {
		return kg >= h.native.first && kg < h.native.first+h.native.count
	}
	return kg >= h.first && kg < h.first+len(h.offsets)
}

// replay returns the entries of key group kg.
func (g *clReplay) replay(kg int) ([]entry, error) {
	if !slices.Contains(g.wanted, true) {
		return nil, nil
	}
	g.model.reset()
	for _, mh := range g.c.materialized {
		if !covers(mh, kg) {
			continue
		}
		mf := keyedFile{op: g.f.op, subtask: g.f.subtask, handle: mh, header: g.sp.keyedHeaderOf(g.f.op, mh)}
		wantMat := func(m *stateMeta) bool {
			i, ok := g.x.byName[m.name]
			return ok && g.wanted[i]
		}
		for e, err := range g.sp.entriesOf(mf, []int{kg}, wantMat, nil) {
			if err != nil {
				return nil, err
			}
			if g.keep == nil || g.keep(e.key) {
				g.model.load(g.x.byName[e.meta.name], e)
			}
		}
	}
	for _, run := range g.x.runs[kg] {
		if err := g.applyRun(kg, run); err != nil {
			return nil, err
		}
	}
	return g.model.entries(kg, g.f.header.states), nil
}

func (g *clReplay) applyRun(kg int, run clRun) error {
	if run.file == nil {
		part := g.c.parts[run.part]
		for _, ch := range part.changes[run.start : run.start+int64(run.n)] {
			g.d = decoder{b: ch.b, base: ch.at, file: "_metadata"}
			if err := g.apply(&g.d, kg, run.ver); err != nil {
				return err
			}
		}
		return nil
	}
	r := g.readers[run.file]
	if r == nil {
		var err error
		if r, err = run.file.reader(); err != nil {
			return err
		}
		g.readers[run.file] = r
	}
	b, err := r.readAt(run.start, int(run.size))
	if err != nil {
		return err
	}
	for off := 0; off < len(b); {
		// Lengths were checked when the log was indexed.
		n := int(binary.BigEndian.Uint32(b[off:]))
		file, at := r.where(run.start + int64(off) + 4)
		g.d = decoder{b: b[off+4 : off+4+n], base: at, file: file}
		if err := g.apply(&g.d, kg, run.ver); err != nil {
			return err
		}
		off += 4 + n
	}
	return nil
}

// apply applies one data change (checked when the log was indexed).
func (g *clReplay) apply(d *decoder, kg int, ver int32) error {
	op := d.u8()
	b, _ := g.x.binds.at(int16(d.u16()), ver)
	if !g.wanted[b.state] {
		return nil
	}
	m := b.meta
	if m.problem != "" {
		d.failErr(ErrUnsupported, "%s change of state %q written with serializers that cannot be decoded: %s", opName(op), m.name, m.problem)
		return d.err
	}
	md := &g.model
	si := b.state
	if m.backendType == backendPriorityQueue {
		ts := m.value.(*timerSer) // checked by metadata
		switch op {
		case opAddElement:
			n := d.count("timer", max(ts.fixedLen(), 8))
			for range n {
				t := ts.decodeTimer(d)
				if d.err != nil {
					break
				}
				md.addTimer(si, t)
			}
		case opRemoveElement:
			t := ts.decodeTimer(d)
			if d.err == nil {
				md.removeTimer(si, t)
			}
		}
		return g.done(d, op, m)
	}
	key := g.f.header.key.decode(d)
	if d.err == nil && g.keep != nil && !g.keep(key) {
		return nil // another key's change: its changes never touch this key's
	}
	ns := m.namespace.decode(d)
	if d.err != nil {
		return d.err
	}
	switch m.kind() {
	case state.KindList:
		elem, ok := m.listElem()
		if !ok {
			d.failErr(ErrUnsupported, "list state %q has serializer %s", m.name, typeOf(m.value))
			return d.err
		}
		switch op {
		case opAdd, opSet, opSetInternal:
			n := d.count("list element", max(elem.fixedLen(), 1))
			list := make([]any, 0, min(n, 1024))
			for range n {
				v := elem.decode(d)
				if d.err != nil {
					return d.err
				}
				list = append(list, v)
			}
			if op == opAdd {
				md.appendList(si, key, ns, list)
			} else {
				md.setList(si, key, ns, list)
			}
		case opAddElement:
			v := elem.decode(d)
			if d.err == nil {
				md.appendList(si, key, ns, []any{v})
			}
		case opMergeNS:
			if err := g.merge(d, kg, si, m, key); err != nil {
				return err
			}
		case opClear:
			md.clear(si, key, ns)
		}
	case state.KindMap:
		ms, ok := m.mapParts()
		if !ok {
			d.failErr(ErrUnsupported, "map state %q has serializer %s", m.name, typeOf(m.value))
			return d.err
		}
		switch op {
		case opAdd:
			n := d.count("map entry", max(ms.key.fixedLen(), 0)+1)
			for range n {
				uk := ms.key.decode(d)
				var v any
				if !d.boolean() {
					v = ms.value.decode(d)
				}
				if d.err != nil {
					return d.err
				}
				md.put(si, key, ns, uk, v)
			}
		case opAddElement, opAddOrUpdateElement:
			uk := ms.key.decode(d)
			v := ms.value.decode(d)
			if d.err == nil {
				md.put(si, key, ns, uk, v)
			}
		case opRemoveElement:
			uk := ms.key.decode(d)
			if d.err == nil {
				md.remove(si, key, ns, uk)
			}
		case opClear:
			md.clear(si, key, ns)
		}
	default: // value, reducing, aggregating
		switch op {
		case opSet, opSetInternal:
			v := m.value.decode(d)
			if d.err == nil {
				md.set(si, key, ns, v)
			}
		case opMergeNS:
			if err := g.merge(d, kg, si, m, key); err != nil {
				return err
			}
		case opClear:
			md.clear(si, key, ns)
		}
	}
	return g.done(d, op, m)
}

func (g *clReplay) done(d *decoder, op byte, m *stateMeta) error {
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d bytes after the %s change of state %q", d.remaining(), opName(op), m.name)
	}
	return d.err
}

// merge applies MERGE_NS (target namespace, count, source namespaces) as
// the heap backend's mergeNamespaces: each source's value is removed and
// merged into the ones before it, the result merged into the target's. A
// list merges by appending; a reducing or aggregating state's merge is the
// job's function, so two values cannot be merged here.
func (g *clReplay) merge(d *decoder, kg, si int, m *stateMeta, key any) error {
	target := m.namespace.decode(d)
	n := d.count("merged namespace", max(m.namespace.fixedLen(), 1))
	sources := make([]any, 0, min(n, 1024))
	for range n {
		sources = append(sources, m.namespace.decode(d))
	}
	if d.err != nil {
		return d.err
	}
	list := m.kind() == state.KindList
	md := &g.model
	var merged *clSlot
	for _, src := range sources {
		s := md.take(si, key, src)
		switch {
		case s == nil:
		case merged == nil:
			merged = s
		case list:
			merged.list = append(merged.list, s.list...)
		default:
			return g.cannotMerge(d, kg, m, key)
		}
	}
	if merged == nil {
		return nil
	}
	t := md.slot(si, key, target, true)
	switch {
	case !t.has():
		t.value, t.set, t.list = merged.value, merged.set, merged.list
	case list:
		t.list = append(t.list, merged.list...)
	default:
		return g.cannotMerge(d, kg, m, key)
	}
	return nil
}

func (g *clReplay) cannotMerge(d *decoder, kg int, m *stateMeta, key any) error {
	d.failErr(errNeedsFunction, "MERGE_NS of %s state %q merges two values of key %v in key group %d: that takes the job's own reduce or aggregate function, which a checkpoint does not hold", m.kind(), m.name, key, kg)
	return d.err
}

// clModel is the state of one key group while it is replayed.
type clModel struct {
	slots  map[string]*clSlot
	timers map[string]timer
	id     []byte
}

// clSlot is the value, list or map of one state, key and namespace.
type clSlot struct {
	id      string
	state   int
	key, ns any
	value   any
	set     bool
	list    []any
	m       map[string]clMapEntry
}

type clMapEntry struct{ userKey, value any }

func (s *clSlot) has() bool { return s.set || len(s.list) > 0 || len(s.m) > 0 }

func (md *clModel) reset() {
	if md.slots == nil {
		md.slots, md.timers = map[string]*clSlot{}, map[string]timer{}
	}
	clear(md.slots)
	clear(md.timers)
}

// slotID identifies a state's key and namespace (in md.id, valid until the
// next call); the state comes first so that entries sort by state.
func (md *clModel) slotID(si int, key, ns any) []byte {
	b := binary.BigEndian.AppendUint16(md.id[:0], uint16(si))
	b = appendIdentity(b, key, 0)
	b = appendIdentity(b, ns, 0)
	md.id = b
	return b
}

func (md *clModel) slot(si int, key, ns any, create bool) *clSlot {
	id := md.slotID(si, key, ns)
	s := md.slots[string(id)]
	if s == nil && create {
		s = &clSlot{id: string(id), state: si, key: key, ns: ns}
		md.slots[s.id] = s
	}
	return s
}

// take removes and returns the slot of a key and namespace, or nil.
func (md *clModel) take(si int, key, ns any) *clSlot {
	id := md.slotID(si, key, ns)
	s := md.slots[string(id)]
	delete(md.slots, string(id))
	if s == nil || !s.has() {
		return nil
	}
	return s
}

func (md *clModel) set(si int, key, ns, v any) {
	s := md.slot(si, key, ns, true)
	s.value, s.set = v, true
}

func (md *clModel) setList(si int, key, ns any, list []any) {
	if len(list) == 0 {
		md.clear(si, key, ns) // an empty list state reads as cleared
		return
	}
	md.slot(si, key, ns, true).list = list
}

func (md *clModel) appendList(si int, key, ns any, list []any) {
	if len(list) == 0 {
		return
	}
	s := md.slot(si, key, ns, true)
	s.list = append(s.list, list...)
}

func (md *clModel) put(si int, key, ns, userKey, v any) {
	s := md.slot(si, key, ns, true)
	if s.m == nil {
		s.m = map[string]clMapEntry{}
	}
	s.m[string(appendIdentity(nil, userKey, 0))] = clMapEntry{userKey, v}
}

func (md *clModel) remove(si int, key, ns, userKey any) {
	s := md.slot(si, key, ns, false)
	if s == nil {
		return
	}
	delete(s.m, string(appendIdentity(nil, userKey, 0)))
	if len(s.m) == 0 {
		md.clear(si, key, ns) // the heap backend drops an empty map
	}
}

func (md *clModel) clear(si int, key, ns any) {
	delete(md.slots, string(md.slotID(si, key, ns)))
}

func (md *clModel) timerID(si int, t timer) []byte {
	b := binary.BigEndian.AppendUint16(md.id[:0], uint16(si))
	b = binary.BigEndian.AppendUint64(b, uint64(t.timestamp)^1<<63)
	b = appendIdentity(b, t.key, 0)
	b = appendIdentity(b, t.namespace, 0)
	md.id = b
	return b
}

func (md *clModel) addTimer(si int, t timer) {
	id := md.timerID(si, t)
	if _, ok := md.timers[string(id)]; !ok {
		md.timers[string(id)] = t
	}
}

func (md *clModel) removeTimer(si int, t timer) { delete(md.timers, string(md.timerID(si, t))) }

// load adds one materialized entry.
func (md *clModel) load(si int, e entry) {
	m := e.meta
	switch {
	case m.backendType == backendPriorityQueue:
		md.addTimer(si, timer{timestamp: e.timestamp, key: e.key, namespace: e.namespace})
	case m.kind() == state.KindList:
		md.appendList(si, e.key, e.namespace, []any{e.value})
	case m.kind() == state.KindMap:
		md.put(si, e.key, e.namespace, e.userKey, e.value)
	default:
		md.set(si, e.key, e.namespace, e.value)
	}
}

// entries lists the model's entries in a fixed order.
func (md *clModel) entries(kg int, states []*stateMeta) []entry {
	var out []entry
	ids := make([]string, 0, len(md.slots))
	for id, s := range md.slots {
		if s.has() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := md.slots[id]
		base := entry{meta: states[s.state], keyGroup: kg, key: s.key, namespace: s.ns}
		switch {
		case s.list != nil:
			for i, v := range s.list {
				e := base
				e.userKey, e.value = int64(i), v
				out = append(out, e)
			}
		case s.m != nil:
			uks := make([]string, 0, len(s.m))
			for uk := range s.m {
				uks = append(uks, uk)
			}
			slices.Sort(uks)
			for _, uk := range uks {
				e := base
				e.userKey, e.value = s.m[uk].userKey, s.m[uk].value
				out = append(out, e)
			}
		default:
			e := base
			e.value = s.value
			out = append(out, e)
		}
	}
	tids := make([]string, 0, len(md.timers))
	for id := range md.timers {
		tids = append(tids, id)
	}
	slices.Sort(tids)
	for _, id := range tids {
		t := md.timers[id]
		si := int(binary.BigEndian.Uint16([]byte(id)))
		out = append(out, entry{meta: states[si], keyGroup: kg, key: t.key, namespace: t.namespace, timestamp: t.timestamp})
	}
	return out
}

// appendIdentity appends an encoding of a decoded value that two values
// share exactly when they are equal: a type tag, then the content, lengths
// first, so that a sequence of encodings is unambiguous. Integers encode in
// their numeric order.
func appendIdentity(b []byte, v any, depth int) []byte {
	if depth > maxNesting {
		return append(b, '?')
	}
	str := func(tag byte, s string) []byte {
		b = append(b, tag)
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case int64:
		b = append(b, 'i')
		return binary.BigEndian.AppendUint64(b, uint64(x)^1<<63)
	case float64:
		b = append(b, 'd')
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	case string:
		return str('s', x)
	case []byte:
		return str('b', string(x))
	case state.Hex:
		return str('h', string(x))
	case state.Decimal:
		return str('D', string(x))
	case []any:
		b = append(b, 'l')
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, e := range x {
			b = appendIdentity(b, e, depth+1)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, 'm')
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, k := range keys {
			b = str('k', k)
			b = appendIdentity(b, x[k], depth+1)
		}
		return b
	case *state.Row:
		b = str('r', x.Type())
		b = append(b, byte(x.Kind))
		b = binary.AppendUvarint(b, uint64(len(x.Values)))
		for _, e := range x.Values {
			b = appendIdentity(b, e, depth+1)
		}
		return b
	case state.Pairs:
		b = append(b, 'p')
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, p := range x {
			b = appendIdentity(b, p.Key, depth+1)
			b = appendIdentity(b, p.Value, depth+1)
		}
		return b
	}
	return str('?', fmt.Sprintf("%T:%#v", v, v))
}

// explainChangelog says what a keyed scan of a changelog handle reads: the
// materialized sections and the runs of changes of the wanted key groups.
func (sp *Savepoint) explainChangelog(f keyedFile, kgs []int) []string {
	c := f.handle.changelog
	x := sp.changelogIndexOf(f.op, c)
	name := sp.opName(f.op)
	if x.err != nil {
		return []string{fmt.Sprintf("%s subtask %d: unreadable: %v", name, f.subtask, x.err)}
	}
	groups, runs, changes := 0, 0, 0
	for kg := c.first; kg < c.first+c.count; kg++ {
		if kgs != nil && !slices.Contains(kgs, kg) || len(x.runs[kg]) == 0 {
			continue
		}
		groups++
		runs += len(x.runs[kg])
		for _, r := range x.runs[kg] {
			changes += int(r.n)
		}
	}
	out := []string{fmt.Sprintf("%s subtask %d: %s: %d changes in %d runs of %d key groups replayed", name, f.subtask, c, changes, runs, groups)}
	for _, mh := range c.materialized {
		if covers := slices.ContainsFunc(kgsOr(kgs, c), func(kg int) bool { return covers(mh, kg) }); covers {
			out = append(out, fmt.Sprintf("%s subtask %d: materialized %s", name, f.subtask, mh))
		}
	}
	return out
}

func kgsOr(kgs []int, c *changelogHandle) []int {
	if kgs != nil {
		return kgs
	}
	all := make([]int, c.count)
	for i := range all {
		all[i] = c.first + i
	}
	return all
}
