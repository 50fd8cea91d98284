package flink

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/golang/snappy"

	"streamdbg/savepoint/flink/rocksdb/rocksdbtest"
	"streamdbg/state"
)

// Synthetic changelog checkpoints, written from the formats (see
// changelog.go, changelogindex.go, dstl.go): a job keyed by Long with a
// value, a list, a map, a reducing and an aggregating state and a timer
// state, max parallelism 8, two subtasks. A random history of state
// changes is applied to an independent model (clTestModel, which follows
// the heap backend's semantics, not the reader's code) and written as the
// changelog backend would: the state at a materialization point as heap
// key-group files (one or two materialized handles), the changes after it
// as in-memory change logs and as change sets in DSTL files, plain and
// Snappy-compressed, some files shared by both subtasks, metadata changes
// with state ids that change from one change log to the next, and changes
// of another subtask's key groups (left by a rescale: ignored). Every
// checkpoint must read as the model's final state.

const (
	clMaxPar = 8
	clOpID   = "0123456789abcdef0123456789abcdef"
	clKeys   = 20
)

type clTestState struct {
	name   string
	kind   string // KEYED_STATE_TYPE; "" for the timer state
	nsLong bool   // a Long namespace (else VoidNamespace)
}

var clTestStates = []clTestState{
	{"v", "VALUE", false},
	{"l", "LIST", true},
	{"m", "MAP", false},
	{"r", "REDUCING", true},
	{"a", "AGGREGATING", true},
	{"_timer_state/event_t", "", true},
}

const clTimerState = 5

// snapshotMeta writes a state's StateMetaInfoSnapshot.
func (e *enc) clStateMeta(s clTestState) {
	if s.kind == "" {
		e.stateMeta(s.name, backendPriorityQueue, "", func() { e.composite(timerSnapshot, longSnapshot, longSnapshot) })
		return
	}
	e.utf(s.name)
	e.i32(backendKeyValue)
	e.i32(1)
	e.utf("KEYED_STATE_TYPE")
	e.utf(s.kind)
	e.i32(2)
	e.utf("VALUE_SERIALIZER")
	switch s.kind {
	case "LIST":
		e.composite(listSnapshot, longSnapshot)
	case "MAP":
		e.composite(mapSnapshot, stringSnapshot, longSnapshot)
	default:
		e.snapshot(longSnapshot)
	}
	e.utf("NAMESPACE_SERIALIZER")
	if s.nsLong {
		e.snapshot(longSnapshot)
	} else {
		e.snapshot(voidNSSnapshot)
	}
}

// clMK is a state, key and namespace of the model.
type clMK struct {
	s     int
	k, ns int64
}

type clTimerK struct{ ts, k, ns int64 }

// clTestModel is the heap backend's state, written from Flink's semantics.
type clTestModel struct {
	val    map[clMK]int64
	list   map[clMK][]int64
	mp     map[clMK]map[string]*int64
	timers map[clTimerK]bool
}

func newCLTestModel() *clTestModel {
	return &clTestModel{val: map[clMK]int64{}, list: map[clMK][]int64{}, mp: map[clMK]map[string]*int64{}, timers: map[clTimerK]bool{}}
}

func (m *clTestModel) clone() *clTestModel {
	c := newCLTestModel()
	for k, v := range m.val {
		c.val[k] = v
	}
	for k, v := range m.list {
		c.list[k] = slices.Clone(v)
	}
	for k, v := range m.mp {
		c.mp[k] = map[string]*int64{}
		for uk, x := range v {
			c.mp[k][uk] = x
		}
	}
	for k := range m.timers {
		c.timers[k] = true
	}
	return c
}

// lines are the model's rows of the key groups of one subtask, in the
// form of keyedLines and timerLines.
func (m *clTestModel) lines(subtask int, kgs func(int) bool) (keyed, timers []string) {
	nsOf := func(s int, ns int64) any {
		if clTestStates[s].nsLong {
			return ns
		}
		return nil
	}
	row := func(mk clMK, uk, v any) string {
		s := clTestStates[mk.s]
		kind := map[string]state.Kind{"VALUE": state.KindValue, "LIST": state.KindList, "MAP": state.KindMap, "REDUCING": state.KindReducing, "AGGREGATING": state.KindAggregating}[s.kind]
		return fmt.Sprintf("%s|%d|%d|%s|%s|%#v|%#v|%#v|%#v", clOpID, subtask, longKG(mk.k, clMaxPar), s.name, kind, mk.k, nsOf(mk.s, mk.ns), uk, v)
	}
	for mk, v := range m.val {
		if kgs(longKG(mk.k, clMaxPar)) {
			keyed = append(keyed, row(mk, nil, v))
		}
	}
	for mk, l := range m.list {
		if kgs(longKG(mk.k, clMaxPar)) {
			for i, v := range l {
				keyed = append(keyed, row(mk, int64(i), v))
			}
		}
	}
	for mk, mp := range m.mp {
		if kgs(longKG(mk.k, clMaxPar)) {
			for uk, v := range mp {
				var x any
				if v != nil {
					x = *v
				}
				keyed = append(keyed, row(mk, uk, x))
			}
		}
	}
	for t := range m.timers {
		if kgs(longKG(t.k, clMaxPar)) {
			timers = append(timers, fmt.Sprintf("%s|%d|%d|%s|%#v|%#v|%s|%d", clOpID, subtask, longKG(t.k, clMaxPar), clTestStates[clTimerState].name, t.k, t.ns, "event", t.ts))
		}
	}
	slices.Sort(keyed)
	slices.Sort(timers)
	return keyed, timers
}

// clChange is one data change of the history: its key group, state and
// the bytes after the state id.
type clChange struct {
	kg, state int
	op        byte
	body      []byte
}

// clHistory generates random changes, applying each to the model.
type clHistory struct {
	r       *rand.Rand
	m       *clTestModel
	changes []clChange
	snaps   []*clTestModel // snaps[i]: the model before change i
}

func (h *clHistory) emit(s int, k int64, op byte, body []byte) {
	h.changes = append(h.changes, clChange{kg: longKG(k, clMaxPar), state: s, op: op, body: body})
}

// scope is the key and namespace of a key-value change.
func clScope(s int, k, ns int64) *enc {
	var e enc
	e.i64(k)
	if clTestStates[s].nsLong {
		e.i64(ns)
	} else {
		e.u8(0)
	}
	return &e
}

func (h *clHistory) step() {
	h.snaps = append(h.snaps, h.m.clone())
	r, m := h.r, h.m
	s := r.IntN(len(clTestStates))
	k := r.Int64N(clKeys)
	ns := int64(0)
	if clTestStates[s].nsLong {
		ns = r.Int64N(3)
	}
	mk := clMK{s, k, ns}
	e := clScope(s, k, ns)
	switch clTestStates[s].kind {
	case "VALUE":
		if r.IntN(10) < 7 {
			v := r.Int64N(1000)
			e.i64(v)
			m.val[mk] = v
			h.emit(s, k, opSet, e.Bytes())
		} else {
			delete(m.val, mk)
			h.emit(s, k, opClear, e.Bytes())
		}
	case "LIST":
		switch r.IntN(6) {
		case 0, 1: // ADD (addAll), SET, SET_INTERNAL (update, updateInternal)
			op := []byte{opAdd, opSet, opSetInternal}[r.IntN(3)]
			n := r.IntN(4)
			e.i32(int32(n))
			var vals []int64
			for range n {
				v := r.Int64N(1000)
				vals = append(vals, v)
				e.i64(v)
			}
			if op == opAdd {
				if len(vals) > 0 {
					m.list[mk] = append(m.list[mk], vals...)
				}
			} else if len(vals) == 0 {
				delete(m.list, mk)
			} else {
				m.list[mk] = vals
			}
			h.emit(s, k, op, e.Bytes())
		case 2, 3:
			v := r.Int64N(1000)
			e.i64(v)
			m.list[mk] = append(m.list[mk], v)
			h.emit(s, k, opAddElement, e.Bytes())
		case 4: // MERGE_NS: the heap's mergeNamespaces, sources in order
			e.i64(ns)
			var sources []int64
			for x := range int64(3) {
				if r.IntN(2) == 0 {
					sources = append(sources, x)
				}
			}
			e.i32(int32(len(sources)))
			var merged []int64
			have := false
			for _, src := range sources {
				e.i64(src)
				sk := clMK{s, k, src}
				v, ok := m.list[sk]
				delete(m.list, sk)
				if ok {
					merged = append(merged, v...)
					have = true
				}
			}
			if have {
				m.list[mk] = append(m.list[mk], merged...)
			}
			h.emit(s, k, opMergeNS, e.Bytes())
		default:
			delete(m.list, mk)
			h.emit(s, k, opClear, e.Bytes())
		}
	case "MAP":
		if m.mp[mk] == nil {
			m.mp[mk] = map[string]*int64{}
		}
		mp := m.mp[mk]
		switch r.IntN(5) {
		case 0: // ADD (putAll), null values included
			n := 1 + r.IntN(3)
			e.i32(int32(n))
			for range n {
				uk := fmt.Sprintf("u%d", r.IntN(5))
				e.Write(flinkStr(uk))
				if r.IntN(3) == 0 {
					e.u8(1)
					mp[uk] = nil
				} else {
					v := r.Int64N(1000)
					e.u8(0)
					e.i64(v)
					mp[uk] = &v
				}
			}
			h.emit(s, k, opAdd, e.Bytes())
		case 1, 2:
			uk := fmt.Sprintf("u%d", r.IntN(5))
			v := r.Int64N(1000)
			e.Write(flinkStr(uk))
			e.i64(v)
			mp[uk] = &v
			h.emit(s, k, []byte{opAddElement, opAddOrUpdateElement}[r.IntN(2)], e.Bytes())
		case 3:
			uk := fmt.Sprintf("u%d", r.IntN(5))
			e.Write(flinkStr(uk))
			delete(mp, uk)
			h.emit(s, k, opRemoveElement, e.Bytes())
		default:
			clear(mp)
			h.emit(s, k, opClear, e.Bytes())
		}
		if len(mp) == 0 {
			delete(m.mp, mk)
		}
	case "REDUCING", "AGGREGATING":
		switch r.IntN(4) {
		case 0, 1:
			v := r.Int64N(1000)
			e.i64(v)
			m.val[mk] = v
			h.emit(s, k, []byte{opSet, opSetInternal}[r.IntN(2)], e.Bytes())
		case 2: // MERGE_NS where at most one namespace holds a value
			e.i64(ns)
			var sources []int64
			full := 0
			if _, ok := m.val[mk]; ok {
				full++
			}
			for x := range int64(3) {
				if _, ok := m.val[clMK{s, k, x}]; x != ns && r.IntN(2) == 0 && (!ok || full == 0) {
					sources = append(sources, x)
					if ok {
						full++
					}
				}
			}
			e.i32(int32(len(sources)))
			for _, src := range sources {
				e.i64(src)
				if v, ok := m.val[clMK{s, k, src}]; ok {
					delete(m.val, clMK{s, k, src})
					m.val[mk] = v
				}
			}
			h.emit(s, k, opMergeNS, e.Bytes())
		default:
			delete(m.val, mk)
			h.emit(s, k, opClear, e.Bytes())
		}
	default: // timers: no scope
		var t enc
		if r.IntN(3) > 0 {
			n := 1 + r.IntN(3)
			t.i32(int32(n))
			for range n {
				tk := clTimerK{r.Int64N(6) - 2, k, r.Int64N(3)}
				t.i64(tk.ts ^ -1<<63)
				t.i64(tk.k)
				t.i64(tk.ns)
				m.timers[tk] = true
			}
			h.emit(s, k, opAddElement, t.Bytes())
		} else {
			tk := clTimerK{r.Int64N(6) - 2, k, r.Int64N(3)}
			t.i64(tk.ts ^ -1<<63)
			t.i64(tk.k)
			t.i64(tk.ns)
			delete(m.timers, tk)
			h.emit(s, k, opRemoveElement, t.Bytes())
		}
	}
}

// big adds a list of n elements in one change (a change set larger than a
// Snappy chunk).
func (h *clHistory) big(k int64, n int) {
	h.snaps = append(h.snaps, h.m.clone())
	mk := clMK{1, k, 1}
	e := clScope(1, k, 1)
	e.i32(int32(n))
	for i := range n {
		e.i64(int64(i))
		h.m.list[mk] = append(h.m.list[mk], int64(i))
	}
	h.emit(1, k, opAdd, e.Bytes())
}

// metaChange is the METADATA change declaring state s as id.
func metaChange(s int, id uint16, ttl, withDefault bool) []byte {
	var e enc
	e.u8(opMetadata)
	e.i32(6)
	e.clStateMeta(clTestStates[s])
	if clTestStates[s].kind != "" {
		e.u8(b2u(ttl))
		if ttl {
			// A StateTtlConfig stand-in: an object of a class without
			// fields (only its length matters here).
			e.Write([]byte{0xac, 0xed, 0x00, 0x05, 0x73, 0x72})
			e.utf("org.apache.flink.api.common.state.StateTtlConfig")
			e.i64(1)
			e.Write([]byte{0x02, 0x00, 0x00, 0x78, 0x70})
		}
		// A default value (written by the state's serializer) is kept to
		// the value state here.
		def := withDefault && clTestStates[s].kind == "VALUE"
		e.u8(b2u(def))
		if def {
			e.i64(-1)
		}
	}
	e.u16(id)
	e.u8(byte(map[bool]int{true: backendPriorityQueue, false: backendKeyValue}[clTestStates[s].kind == ""]))
	return e.Bytes()
}

func dataChange(c clChange, id uint16) []byte {
	b := []byte{c.op, byte(id >> 8), byte(id)}
	return append(b, c.body...)
}

// heapFile writes the model's state of key groups [first, end) as a heap
// snapshot (HeapSnapshotStrategy's layout) and returns it with the offsets.
func heapFile(m *clTestModel, first, end int) ([]byte, []int64) {
	var f enc
	f.i32(6)
	f.u8(0)
	f.snapshot(longSnapshot)
	f.u16(uint16(len(clTestStates)))
	for _, s := range clTestStates {
		f.clStateMeta(s)
	}
	var offsets []int64
	for kg := first; kg < end; kg++ {
		offsets = append(offsets, int64(f.Len()))
		f.i32(int32(kg))
		for si, s := range clTestStates {
			var body enc
			n := 0
			ns := func(mk clMK) {
				if s.nsLong {
					body.i64(mk.ns)
				} else {
					body.u8(0)
				}
				body.i64(mk.k)
			}
			switch {
			case s.kind == "":
				for t := range m.timers {
					if longKG(t.k, clMaxPar) == kg {
						body.i64(t.ts ^ -1<<63)
						body.i64(t.k)
						body.i64(t.ns)
						n++
					}
				}
			case s.kind == "LIST":
				for mk, l := range m.list {
					if mk.s == si && longKG(mk.k, clMaxPar) == kg {
						ns(mk)
						body.i32(int32(len(l)))
						for _, v := range l {
							body.i64(v)
						}
						n++
					}
				}
			case s.kind == "MAP":
				for mk, mp := range m.mp {
					if mk.s == si && longKG(mk.k, clMaxPar) == kg {
						ns(mk)
						body.i32(int32(len(mp)))
						for uk, v := range mp {
							body.Write(flinkStr(uk))
							if v == nil {
								body.u8(1)
							} else {
								body.u8(0)
								body.i64(*v)
							}
						}
						n++
					}
				}
			default:
				for mk, v := range m.val {
					if mk.s == si && longKG(mk.k, clMaxPar) == kg {
						ns(mk)
						body.i64(v)
						n++
					}
				}
			}
			f.u16(uint16(si))
			f.i32(int32(n))
			f.Write(body.Bytes())
		}
	}
	return f.Bytes(), offsets
}

// rocksMaterialized writes the model's state of key groups [first, end)
// as a RocksDB incremental checkpoint of the nested backend (one column
// family per state, Flink's key layout: key-group prefix, key, namespace,
// user key) and returns its handle (type 11) for `_metadata`.
func rocksMaterialized(t testing.TB, dir string, m *clTestModel, first, end int, name string) []byte {
	db := rocksdbtest.New()
	in := func(k int64) bool { kg := longKG(k, clMaxPar); return kg >= first && kg < end }
	ck := func(mk clMK) []byte {
		b := []byte{byte(longKG(mk.k, clMaxPar))}
		b = append(b, be64(mk.k)...)
		if clTestStates[mk.s].nsLong {
			return append(b, be64(mk.ns)...)
		}
		return append(b, 0)
	}
	seq := uint64(1)
	entries := make([][]rocksdbtest.Entry, len(clTestStates))
	put := func(s int, k, v []byte) {
		entries[s] = append(entries[s], rocksdbtest.Entry{Key: k, Seq: seq, Type: rocksdbtest.Put, Value: v})
		seq++
	}
	for mk, v := range m.val {
		if in(mk.k) {
			put(mk.s, ck(mk), be64(v))
		}
	}
	for mk, l := range m.list {
		if in(mk.k) {
			var b []byte
			for i, v := range l {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, be64(v)...)
			}
			put(mk.s, ck(mk), b)
		}
	}
	for mk, mp := range m.mp {
		if in(mk.k) {
			for uk, v := range mp {
				if v == nil {
					put(mk.s, append(ck(mk), flinkStr(uk)...), []byte{1})
				} else {
					put(mk.s, append(ck(mk), flinkStr(uk)...), append([]byte{0}, be64(*v)...))
				}
			}
		}
	}
	for tk := range m.timers {
		if in(tk.k) {
			b := []byte{byte(longKG(tk.k, clMaxPar))}
			b = append(b, be64(tk.ts^-1<<63)...)
			b = append(b, be64(tk.k)...)
			put(clTimerState, append(b, be64(tk.ns)...), nil)
		}
	}
	for s, es := range entries {
		db.ColumnFamily(clTestStates[s].name)
		if len(es) > 0 {
			db.Table(clTestStates[s].name, 1, es, nil)
		}
	}
	var meta enc
	meta.i32(6)
	meta.u8(0)
	meta.snapshot(longSnapshot)
	meta.u16(uint16(len(clTestStates)))
	for _, s := range clTestStates {
		meta.clStateMeta(s)
	}
	write := func(n string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(name+"-meta", meta.Bytes())
	var h enc
	h.u8(handleIncrementalV2)
	h.i64(3)
	h.utf("backend-" + name)
	h.i32(int32(first))
	h.i32(int32(end - first))
	h.i64(0)
	h.u8(handleRelativeFile)
	h.utf(name + "-meta")
	h.i64(int64(meta.Len()))
	files := db.Files()
	var ssts, priv []string
	for n := range files {
		if filepath.Ext(n) == ".sst" {
			ssts = append(ssts, n)
		} else {
			priv = append(priv, n)
		}
	}
	slices.Sort(ssts)
	slices.Sort(priv)
	for _, list := range [][]string{ssts, priv} {
		h.i32(int32(len(list)))
		for _, n := range list {
			write(name+"-"+n, files[n])
			h.utf(n)
			h.u8(handleRelativeFile)
			h.utf(name + "-" + n)
			h.i64(int64(len(files[n])))
		}
	}
	h.utf("handle-" + name)
	return h.Bytes()
}

// dstlFileW is a DSTL file being written: the uncompressed stream.
type dstlFileW struct {
	name       string
	compressed bool
	sub        bool // in <checkpoint parent>/dstl/, found through its absolute path
	stream     enc
	done       []byte // the file, once written
}

func (w *dstlFileW) bytes() []byte {
	if w.done != nil {
		return w.done
	}
	w.done = w.encode()
	return w.done
}

func (w *dstlFileW) encode() []byte {
	if !w.compressed {
		return append([]byte{0}, w.stream.Bytes()...)
	}
	var out bytes.Buffer
	out.WriteByte(1)
	zw := snappy.NewBufferedWriter(&out)
	zw.Write(w.stream.Bytes())
	zw.Close()
	return out.Bytes()
}

// changeSet appends a change set (StateChangeFormat: grouped by key group,
// metadata's -1 first) and returns its offset.
func (w *dstlFileW) changeSet(changes []memChange) int64 {
	off := int64(w.stream.Len())
	groups := map[int32][][]byte{}
	var kgs []int32
	for _, c := range changes {
		if _, ok := groups[c.kg]; !ok {
			kgs = append(kgs, c.kg)
		}
		groups[c.kg] = append(groups[c.kg], c.b)
	}
	slices.Sort(kgs)
	w.stream.i32(int32(len(kgs)))
	for _, kg := range kgs {
		w.stream.i32(int32(len(groups[kg])))
		w.stream.i32(kg)
		for _, b := range groups[kg] {
			w.stream.i32(int32(len(b)))
			w.stream.Write(b)
		}
	}
	return off
}

// clPartW is a non-materialized handle being written.
type clPartW struct {
	mem     []memChange // in-memory
	streams []struct {
		off  int64
		file *dstlFileW
	}
}

// clSubtaskW is what one subtask's changelog handle holds.
type clSubtaskW struct {
	first, end   int
	materialized [][2]int // key-group ranges of the materialized handles
	rocks        bool     // the materialized handles are RocksDB's (else heap key groups)
	parts        []clPartW
}

// writeChangelogCheckpoint writes `_metadata`, the heap files and the DSTL
// files into dir (DSTL files marked sub into dir/../dstl).
func writeChangelogCheckpoint(t testing.TB, dir string, mat *clTestModel, subs []clSubtaskW, files []*dstlFileW) {
	t.Helper()
	var m enc
	m.i32(Magic)
	m.i32(4)
	m.i64(9)
	m.i32(0)
	m.i32(1)
	id := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	m.Write(id)
	m.i32(int32(len(subs)))
	m.i32(clMaxPar)
	m.u8(handleNull)
	m.i32(int32(len(subs)))
	for i, st := range subs {
		m.i32(int32(i))
		m.i32(0)
		m.i32(0)
		m.u8(handleChangelogV2)
		m.i32(int32(st.first))
		m.i32(int32(st.end - st.first))
		m.i64(1234)
		m.i32(int32(len(st.materialized)))
		for j, rg := range st.materialized {
			name := fmt.Sprintf("mat-%d-%d", i, j)
			if st.rocks {
				m.Write(rocksMaterialized(t, dir, mat, rg[0], rg[1], name))
				continue
			}
			file, offs := heapFile(mat, rg[0], rg[1])
			if err := os.WriteFile(filepath.Join(dir, name), file, 0o644); err != nil {
				t.Fatal(err)
			}
			m.u8(handleKeyGroupsV2)
			m.i32(int32(rg[0]))
			m.i32(int32(len(offs)))
			for _, o := range offs {
				m.i64(o)
			}
			m.u8(handleRelativeFile)
			m.utf(name)
			m.i64(int64(len(file)))
			m.utf("handle-" + name)
		}
		m.i32(int32(len(st.parts)))
		for j, p := range st.parts {
			if p.mem != nil || p.streams == nil {
				m.u8(handleChangelogBytes)
				m.i32(int32(st.first))
				m.i32(int32(st.end - st.first))
				m.i64(int64(j * 100))
				m.i64(int64(j*100 + len(p.mem)))
				m.i32(int32(len(p.mem)))
				for _, c := range p.mem {
					m.i32(c.kg)
					m.i32(int32(len(c.b)))
					m.Write(c.b)
				}
				m.utf(fmt.Sprintf("mem-%d-%d", i, j))
				continue
			}
			m.u8(handleChangelogFileV2)
			m.i32(int32(st.first))
			m.i32(int32(st.end - st.first))
			m.i32(int32(len(p.streams)))
			for _, s := range p.streams {
				m.i64(s.off)
				m.u8(handleFile)
				m.i64(int64(len(s.file.bytes())))
				m.utf("hdfs://namenode/flink/dstl-base/job-1/dstl/" + s.file.name)
			}
			m.i64(99)
			m.i64(99)
			m.utf(fmt.Sprintf("file-%d-%d", i, j))
			m.utf("filesystem")
		}
		m.i64(3) // materialization id
		m.i64(9) // checkpoint id
		m.utf(fmt.Sprintf("changelog-%d", i))
		m.u8(handleNull) // raw keyed state
		m.i32(0)
		m.i32(0)
	}
	m.u8(0x70)
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if f.sub {
			p = filepath.Join(filepath.Dir(dir), "dstl", f.name)
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, f.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// clLayout splits the changes after a materialization point into the
// subtasks' change logs: parts of random kinds, each opening with the
// metadata of every state under ids of its own.
func clLayout(r *rand.Rand, changes []clChange, subs []clSubtaskW, files []*dstlFileW) {
	for si := range subs {
		st := &subs[si]
		var mine []clChange
		for _, c := range changes {
			if c.kg >= st.first && c.kg < st.end {
				mine = append(mine, c)
			}
		}
		if si == 1 {
			// A change log of the other subtask's key groups, as a
			// rescale leaves: its changes are not this subtask's.
			var foreign []clChange
			for _, c := range changes {
				if c.kg < subs[1].first && r.IntN(2) == 0 {
					c.body = slices.Clone(c.body)
					foreign = append(foreign, c)
				}
			}
			mine = append(foreign, mine...)
		}
		for len(mine) > 0 {
			n := min(len(mine), 1+r.IntN(len(mine)))
			chunk := mine[:n]
			mine = mine[n:]
			ids := r.Perm(40)
			var log []memChange
			for s := range clTestStates {
				log = append(log, memChange{kg: metaKeyGroup, b: metaChange(s, uint16(ids[s]), r.IntN(2) == 0, r.IntN(2) == 0)})
			}
			for _, c := range chunk {
				log = append(log, memChange{kg: int32(c.kg), b: dataChange(c, uint16(ids[c.state]))})
			}
			var p clPartW
			if r.IntN(3) == 0 {
				p.mem = log
			} else {
				// change sets of up to 6 changes; the metadata go in
				// the first (StateChangeFormat writes key group -1 first)
				first := len(clTestStates)
				for len(log) > 0 {
					n := min(len(log), first+1+r.IntN(6))
					first = 0
					f := files[r.IntN(len(files))]
					off := f.changeSet(log[:n])
					p.streams = append(p.streams, struct {
						off  int64
						file *dstlFileW
					}{off, f})
					log = log[n:]
				}
			}
			st.parts = append(st.parts, p)
		}
	}
}

func clReadLines(t *testing.T, dir string) (keyed, timers []string) {
	t.Helper()
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sp.States() {
		if m.Status != "" {
			t.Fatalf("%s: %s", m.StateName, m.Status)
		}
	}
	for _, op := range sp.Operators() {
		if len(op.Unsupported) > 0 {
			t.Fatalf("%s: %v", op.ID, op.Unsupported)
		}
	}
	return keyedLines(t, sp), timerLines(t, sp)
}

// TestSyntheticChangelog reads checkpoints of random histories at several
// materialization points (none, two in the history, all) and compares
// them with the model.
func TestSyntheticChangelog(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 21))
		h := &clHistory{r: r, m: newCLTestModel()}
		for range 150 {
			h.step()
		}
		h.big(3, 9000) // more than a Snappy chunk in one change
		for range 150 {
			h.step()
		}
		h.snaps = append(h.snaps, h.m.clone())
		n := len(h.changes)
		wantK0, wantT0 := h.m.lines(0, func(kg int) bool { return kg < 4 })
		wantK1, wantT1 := h.m.lines(1, func(kg int) bool { return kg >= 4 })
		wantK, wantT := slices.Concat(wantK0, wantK1), slices.Concat(wantT0, wantT1)
		slices.Sort(wantK)
		slices.Sort(wantT)
		if len(wantK) < 50 || len(wantT) < 5 {
			t.Fatalf("seed %d: the model holds only %d rows and %d timers", seed, len(wantK), len(wantT))
		}
		for _, at := range []int{0, n / 3, 2 * n / 3, n} {
			t.Run(fmt.Sprintf("seed %d materialized at %d of %d", seed, at, n), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "chk-9")
				os.MkdirAll(dir, 0o755)
				files := []*dstlFileW{
					{name: "a1b2c3", compressed: false},
					{name: "d4e5f6", compressed: true},
					{name: "0a0b0c", compressed: true, sub: true},
				}
				subs := []clSubtaskW{{first: 0, end: 4}, {first: 4, end: 8}}
				if at > 0 {
					subs[0].materialized = [][2]int{{0, 4}}
					subs[1].materialized = [][2]int{{4, 6}, {6, 8}} // two handles, as after a rescale
					// the nested backend is RocksDB for one subtask in
					// odd seeds
					subs[seed%2].rocks = seed%2 == 1
				}
				clLayout(r, h.changes[at:], subs, files)
				writeChangelogCheckpoint(t, dir, h.snaps[at], subs, files)
				gotK, gotT := clReadLines(t, dir)
				sameLines(t, "keyed_state", gotK, wantK)
				sameLines(t, "timers", gotT, wantT)
			})
		}
	}
}
