package heapstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"streamdbg/state"
)

// Backend is the heap keyed backend of one operator subtask.
type Backend struct {
	maxParallelism int
	groups         state.KeyGroupRange

	// buf starts with the current key's located prefix: uvarint of its
	// key group's index (kgIdx, 0 while it is out of range), then from
	// compStart its composite prefix uvarint(len(key)) + key, ending at
	// keyEnd; the bytes after it are scratch where a namespace is appended
	// to form a composite (see locatedKey).
	buf       []byte
	compStart int
	keyStart  int
	keyEnd    int
	kg        int
	// kgIdx is kg - groups.Start, or -1 while no key in range is set.
	kgIdx  int
	hasKey bool
	// keyGen counts SetCurrentKey calls; tables cache lookups per key by it.
	keyGen uint64

	tables   map[string]*table
	timers   map[string]*timerQueue
	restored map[string]*restoredState

	// The change log of incremental checkpoints (changelog.go): log holds
	// the state before every write since the first live mark.
	log []change
	// logBuf is log's array: log is logBuf[logOff:logOff+len(log)]
	// (dropLog moves its start, record its end).
	logBuf    []change
	logOff    int
	marks     []markPos
	nextMark  uint64
	replaying bool
	seg       uint64 // the current log segment (0: none)
	segGen    uint64
}

// restoredState is a snapshotted state not declared yet, kept as bytes.
type restoredState struct {
	meta state.StateMeta
	byKG map[int][]state.Entry
}

var _ state.IncrementalBackend = (*Backend)(nil)
var _ state.BatchRestorer = (*Backend)(nil)

// New makes an empty backend for the key groups in groups of a job with the
// given max parallelism.
func New(maxParallelism int, groups state.KeyGroupRange) *Backend {
	return &Backend{
		maxParallelism: maxParallelism,
		groups:         groups,
		kgIdx:          -1,
		tables:         map[string]*table{},
		timers:         map[string]*timerQueue{},
		restored:       map[string]*restoredState{},
	}
}

// KeyGroups is the range of key groups this backend holds.
func (b *Backend) KeyGroups() state.KeyGroupRange { return b.groups }

// MaxParallelism is the number of key groups of the job.
func (b *Backend) MaxParallelism() int { return b.maxParallelism }

// SetCurrentKey sets the key (encoded) and its key group for all tables.
func (b *Backend) SetCurrentKey(key []byte, keyGroup int) {
	b.kgIdx = -1
	if b.groups.Contains(keyGroup) {
		b.kgIdx = keyGroup - b.groups.Start
	}
	var buf []byte
	if uint(b.kgIdx) < 0x80 && len(key) < 0x80 {
		// Both uvarints one byte long (128 key groups, short keys).
		buf = append(b.buf[:0], byte(b.kgIdx), byte(len(key)))
		b.compStart = 1
	} else {
		buf = binary.AppendUvarint(b.buf[:0], uint64(max(b.kgIdx, 0)))
		b.compStart = len(buf)
		buf = binary.AppendUvarint(buf, uint64(len(key)))
	}
	b.keyStart = len(buf)
	buf = append(buf, key...)
	b.keyEnd = len(buf)
	b.buf = buf
	b.kg = keyGroup
	b.hasKey = true
	b.keyGen++
}

// CurrentKey returns what SetCurrentKey set.
func (b *Backend) CurrentKey() ([]byte, int) {
	return b.buf[b.keyStart:b.keyEnd:b.keyEnd], b.kg
}

// composite returns the current key's composite with ns; valid until the
// next call.
func (b *Backend) composite(ns []byte) []byte {
	return b.located(ns)[b.compStart:]
}

// located returns the current key's located key with ns (locatedKey), the
// key of a value table's index; valid until the next call, and only while
// the current key's group is in range.
func (b *Backend) located(ns []byte) []byte {
	if len(ns) == 0 {
		return b.buf[:b.keyEnd] // the void namespace: the key's own
	}
	b.buf = append(b.buf[:b.keyEnd], ns...)
	return b.buf
}

// keyErr explains why the current key cannot be accessed.
func (b *Backend) keyErr(name string) error {
	if !b.hasKey {
		return fmt.Errorf("heapstate: state %q accessed with no current key", name)
	}
	return fmt.Errorf("heapstate: state %q: key group %d of the current key is outside this backend's key groups %s",
		name, b.kg, b.groups)
}

// composeKey builds a composite as a new string (for inserts and restore).
func composeKey(key, ns []byte) string {
	buf := make([]byte, 0, binary.MaxVarintLen64+len(key)+len(ns))
	buf = binary.AppendUvarint(buf, uint64(len(key)))
	buf = append(buf, key...)
	buf = append(buf, ns...)
	return string(buf)
}

// locatedKey is a value cell's key (cell.key, the key of table.index):
// uvarint of the key group's index (kg - groups.Start), then the
// composite, so that one map of a table tells the key groups apart.
func locatedKey(kgIdx int, composite string) string {
	return string(appendLocated(make([]byte, 0, binary.MaxVarintLen64+len(composite)), kgIdx, composite))
}

// appendLocated appends locatedKey(kgIdx, composite) to dst.
func appendLocated(dst []byte, kgIdx int, composite string) []byte {
	return append(binary.AppendUvarint(dst, uint64(kgIdx)), composite...)
}

// locateKey is locatedKey of the composite of key and ns, built at once.
func locateKey(kgIdx int, key, ns []byte) string {
	buf := make([]byte, 0, 2*binary.MaxVarintLen64+len(key)+len(ns))
	buf = binary.AppendUvarint(buf, uint64(kgIdx))
	buf = binary.AppendUvarint(buf, uint64(len(key)))
	buf = append(buf, key...)
	return string(append(buf, ns...))
}

// locatedGroup is the key group index a located key (locatedKey) starts
// with.
//
// INVARIANT: as compositeOf's.
func locatedGroup(located string) int {
	var n uint64
	for i, shift := 0, uint(0); ; i, shift = i+1, shift+7 {
		b := located[i]
		n |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return int(n)
		}
	}
}

// compositeOf is the composite of a located key (locatedKey), the same
// string's bytes.
//
// INVARIANT: located keys are only built by locatedKey and
// Backend.located, so the prefix is a well-formed uvarint.
func compositeOf(located string) string {
	w := 0
	for located[w] >= 0x80 {
		w++
	}
	return located[w+1:]
}

// splitKey is the inverse of the composite layout.
//
// INVARIANT: composites are only built by composeKey and composite, so the
// prefix is a well-formed uvarint no longer than the rest.
func splitKey(c string) (key, ns string) {
	var n uint64
	w := 0
	for shift := uint(0); ; shift += 7 {
		x := c[w]
		w++
		n |= uint64(x&0x7f) << shift
		if x < 0x80 {
			break
		}
	}
	return c[w : w+int(n)], c[w+int(n):]
}

// compareComposite orders composites by key, then namespace, as bytes.
func compareComposite(a, b string) int {
	ak, an := splitKey(a)
	bk, bn := splitKey(b)
	if c := strings.Compare(ak, bk); c != 0 {
		return c
	}
	return strings.Compare(an, bn)
}

// Register declares a state, or returns the table already declared under
// that name. Entries restored for it are decoded with its codecs here.
func (b *Backend) Register(d state.StateDesc) (state.Table, error) {
	name := d.Meta.StateName
	switch {
	case name == "":
		return nil, errors.New("heapstate: register: state without a name")
	case state.TimerDomain(name) != "":
		return nil, fmt.Errorf("heapstate: register %q: the name is reserved for timers", name)
	case d.Value == nil:
		return nil, fmt.Errorf("heapstate: register %q: no value codec", name)
	}
	switch d.Meta.Kind {
	case state.KindValue, state.KindReducing, state.KindAggregating, state.KindList:
	case state.KindMap:
		if d.UserKey == nil {
			return nil, fmt.Errorf("heapstate: register %q: map state without a user key codec", name)
		}
	default:
		return nil, fmt.Errorf("heapstate: register %q: %s is not a keyed state kind", name, d.Meta.Kind)
	}
	d.Meta.Scope = state.ScopeKeyed
	d.Meta.Entries, d.Meta.Bytes = 0, 0
	if d.Meta.NamespaceType == "" && d.Namespace != nil {
		d.Meta.NamespaceType = d.Namespace.TypeName()
	}
	if t, ok := b.tables[name]; ok {
		if why := t.desc.Meta.Compatible(d.Meta); why != "" {
			return nil, fmt.Errorf("heapstate: state %q declared twice: %s", name, why)
		}
		return t, nil
	}
	t := newTable(b, d)
	r, ok := b.restored[name]
	if ok {
		if why := r.meta.Compatible(d.Meta); why != "" {
			return nil, fmt.Errorf("heapstate: restored state %q cannot be read as declared: %s", name, why)
		}
		total := 0
		for _, es := range r.byKG {
			total += len(es)
		}
		t.presizeIndex(total)
		for _, kg := range sortedKeys(r.byKG) {
			for _, e := range r.byKG[kg] {
				if err := t.load(e); err != nil {
					return nil, err
				}
			}
			if !b.logging() {
				r.byKG[kg] = nil // let the restored bytes go as they are decoded
			}
		}
		delete(b.restored, name)
	}
	if b.logging() {
		b.record(change{kind: chTable, t: t, r: r})
	}
	b.tables[name] = t
	return t, nil
}

// Timers returns the timer queue called name, decoding restored timers.
func (b *Backend) Timers(name string, meta state.StateMeta) (state.TimerQueue, error) {
	if name == "" {
		return nil, errors.New("heapstate: timers: queue without a name")
	}
	if q, ok := b.timers[name]; ok {
		return q, nil
	}
	meta.StateName = state.TimerStateName(name)
	meta.Scope, meta.Kind = state.ScopeKeyed, state.KindTimers
	meta.Entries, meta.Bytes = 0, 0
	if meta.UserKeyType == "" {
		meta.UserKeyType = state.Int64.TypeName()
	}
	q := newTimerQueue(b, name, meta)
	r, ok := b.restored[meta.StateName]
	if ok {
		if r.meta.Kind != state.KindTimers {
			return nil, fmt.Errorf("heapstate: restored state %q is %s, not timers", meta.StateName, r.meta.Kind)
		}
		b.replaying = true // the table is new: its loads need no log
		for _, kg := range sortedKeys(r.byKG) {
			for _, e := range r.byKG[kg] {
				if err := q.load(e); err != nil {
					b.replaying = false
					return nil, err
				}
			}
		}
		b.replaying = false
		delete(b.restored, meta.StateName)
	}
	if b.logging() {
		b.record(change{kind: chTable, q: q, r: r})
	}
	b.timers[name] = q
	return q, nil
}

// stateNames lists every declared, timer and restored state name, sorted.
func (b *Backend) stateNames() []string {
	names := make([]string, 0, len(b.tables)+len(b.timers)+len(b.restored))
	for n := range b.tables {
		names = append(names, n)
	}
	for n := range b.timers {
		names = append(names, state.TimerStateName(n))
	}
	for n := range b.restored {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// entrySource produces the entries of one state in one key group.
type entrySource interface {
	describe() state.StateMeta
	// entries yields the entries of key group kg in Entry order. With
	// arena nil their bytes are valid until the next step; otherwise the
	// bytes a source makes (encoded values, keys) are appended to *arena
	// and stay valid until the caller empties it (EntryBatches).
	entries(kg int, arena *[]byte, yield func(state.Entry) bool) bool
}

func (b *Backend) source(name string) entrySource {
	if t, ok := b.tables[name]; ok {
		return t
	}
	if r, ok := b.restored[name]; ok {
		return r
	}
	if q, ok := strings.CutPrefix(name, "_timer_state/"); ok {
		if tq, ok := b.timers[q]; ok {
			return tq
		}
	}
	return nil
}

// States lists every declared, restored and timer state, ordered by name,
// with entry and byte counts. It encodes every value: O(state size).
// Describe implements state.KeyedBackend: States without counting.
func (b *Backend) Describe() []state.StateMeta {
	names := b.stateNames()
	metas := make([]state.StateMeta, 0, len(names))
	for _, name := range names {
		m := b.source(name).describe()
		m.Entries, m.Bytes = 0, 0
		metas = append(metas, m)
	}
	return metas
}

func (b *Backend) States() []state.StateMeta {
	names := b.stateNames()
	metas := make([]state.StateMeta, 0, len(names))
	for _, name := range names {
		src := b.source(name)
		m := src.describe()
		for kg := b.groups.Start; kg <= b.groups.End; kg++ {
			src.entries(kg, nil, func(e state.Entry) bool {
				m.Entries++
				m.Bytes += int64(e.Size())
				return true
			})
		}
		metas = append(metas, m)
	}
	return metas
}

// Entries yields the entries of one key group in Entry order; a non-empty
// stateName restricts them to that state.
func (b *Backend) Entries(keyGroup int, stateName string) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		b.walkEntries(keyGroup, stateName, nil,
			func(e state.Entry) bool { return yield(e, nil) },
			func(err error) { yield(state.Entry{}, err) })
	}
}

var _ state.EntryBatcher = (*Backend)(nil)

// EntryBatches is Entries in batches (state.EntryBatcher): the same
// entries, order and errors; the values are encoded into the batch's
// arena instead of one scratch buffer.
func (b *Backend) EntryBatches(keyGroup int, stateName string) iter.Seq2[[]state.Entry, error] {
	return func(yield func([]state.Entry, error) bool) {
		bt := state.NewBatcher(yield)
		defer bt.Release()
		if b.walkEntries(keyGroup, stateName, &bt.Arena, bt.Add, bt.Fail) {
			bt.Flush()
		}
	}
}

// walkEntries hands each entry of keyGroup (of stateName alone when it is
// not empty) to emit, its values encoded into arena (a scratch buffer
// when nil), in Entry order. It reports whether it went through them all:
// false when emit stopped it or after handing fail the error that did.
func (b *Backend) walkEntries(keyGroup int, stateName string, arena *[]byte, emit func(state.Entry) bool, fail func(error)) bool {
	if !b.groups.Contains(keyGroup) {
		fail(fmt.Errorf("heapstate: entries: key group %d outside %s", keyGroup, b.groups))
		return false
	}
	names := []string{stateName}
	if stateName == "" {
		names = b.stateNames()
	}
	for _, name := range names {
		src := b.source(name)
		if src == nil {
			fail(fmt.Errorf("heapstate: entries of %q: %w", name, state.ErrNotRegistered))
			return false
		}
		if !src.entries(keyGroup, arena, emit) {
			return false
		}
	}
	return true
}

// Restore loads snapshotted entries. Entries of declared states are decoded
// at once; the others are kept as bytes until they are declared.
func (b *Backend) Restore(metas []state.StateMeta, entries iter.Seq2[state.Entry, error]) error {
	return b.RestoreBatches(metas, state.Singles(entries))
}

// RestoreBatches is Restore from batches of entries
// (savepoint.KeyedBatchesFor): the same checks and the same state, without
// an iterator step per entry.
func (b *Backend) RestoreBatches(metas []state.StateMeta, batches iter.Seq2[[]state.Entry, error]) error {
	if err := b.restoreMetas(metas); err != nil {
		return err
	}
	for es, err := range batches {
		if err != nil {
			return fmt.Errorf("heapstate: restore: %w", err)
		}
		for i := range es {
			if err := b.restoreEntry(&es[i]); err != nil {
				return err
			}
		}
	}
	b.sortRestored()
	return nil
}

// restoreMetas registers the states of metas that are neither declared nor
// restored, and refuses those whose types do not match.
func (b *Backend) restoreMetas(metas []state.StateMeta) error {
	for _, m := range metas {
		m.Entries, m.Bytes = 0, 0
		name := m.StateName
		if t, ok := b.tables[name]; ok {
			if why := m.Compatible(t.desc.Meta); why != "" {
				return fmt.Errorf("heapstate: restore: state %q cannot be read as declared: %s", name, why)
			}
			continue
		}
		if q, ok := strings.CutPrefix(name, "_timer_state/"); ok {
			if _, ok := b.timers[q]; ok {
				continue
			}
		}
		if r, ok := b.restored[name]; ok {
			if why := r.meta.Compatible(m); why != "" {
				return fmt.Errorf("heapstate: restore: state %q restored twice with different types: %s", name, why)
			}
			continue
		}
		b.restored[name] = &restoredState{meta: m, byKG: map[int][]state.Entry{}}
	}
	return nil
}

// restoreEntry loads one restored entry (it neither changes nor keeps *e).
func (b *Backend) restoreEntry(e *state.Entry) error {
	if !b.groups.Contains(e.KeyGroup) {
		return fmt.Errorf("heapstate: restore: entry of state %q in key group %d, outside this backend's key groups %s",
			e.State, e.KeyGroup, b.groups)
	}
	if t, ok := b.tables[e.State]; ok {
		return t.load(*e)
	}
	if r, ok := b.restored[e.State]; ok {
		r.byKG[e.KeyGroup] = append(r.byKG[e.KeyGroup], cloneEntry(*e))
		return nil
	}
	if q, ok := strings.CutPrefix(e.State, "_timer_state/"); ok {
		if tq, ok := b.timers[q]; ok {
			return tq.load(*e)
		}
	}
	return fmt.Errorf("heapstate: restore: entry of state %q has no StateMeta", e.State)
}

// sortRestored sorts the entries kept as bytes of every key group (key
// groups may arrive in any order).
func (b *Backend) sortRestored() {
	for _, r := range b.restored {
		for kg, es := range r.byKG {
			if !slices.IsSortedFunc(es, state.CompareEntries) {
				slices.SortStableFunc(es, state.CompareEntries)
				r.byKG[kg] = es
			}
		}
	}
}

// Close drops the backend's state.
func (b *Backend) Close() error {
	b.tables, b.timers, b.restored = map[string]*table{}, map[string]*timerQueue{}, map[string]*restoredState{}
	b.log, b.logBuf, b.logOff, b.marks = nil, nil, 0, nil
	return nil
}

// cloneEntry copies e's bytes into one allocation.
func cloneEntry(e state.Entry) state.Entry {
	buf := make([]byte, 0, e.Size())
	cut := func(p []byte) []byte {
		if p == nil {
			return nil
		}
		s := len(buf)
		buf = append(buf, p...)
		return buf[s:len(buf):len(buf)]
	}
	return state.Entry{State: e.State, KeyGroup: e.KeyGroup,
		Key: cut(e.Key), Namespace: cut(e.Namespace), UserKey: cut(e.UserKey), Value: cut(e.Value)}
}

func (r *restoredState) describe() state.StateMeta { return r.meta }

func (r *restoredState) entries(kg int, _ *[]byte, yield func(state.Entry) bool) bool {
	for _, e := range r.byKG[kg] {
		if !yield(e) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
