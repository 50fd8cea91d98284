package heapstate_test

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"streamdbg/state"
	"streamdbg/state/heapstate"
	"streamdbg/state/statetest"
)

// registry binds typed descriptors straight to a backend.
type registry struct{ b state.KeyedBackend }

func (r registry) KeyedTable(d state.StateDesc) (state.Table, error) { return r.b.Register(d) }
func (r registry) Operator() *state.OperatorStore                    { return nil }

const maxPar = 16

func setKey(b state.KeyedBackend, k string) {
	kb := []byte(k)
	b.SetCurrentKey(kb, state.KeyGroupFor(kb, maxPar))
}

func all() state.KeyGroupRange { return state.KeyGroupRange{Start: 0, End: maxPar - 1} }

// must(f()) (t) is v, failing t on err.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestValueCount(t *testing.T) {
	b := heapstate.New(maxPar, all())
	count := must(state.Value("count", state.Int64).Bind(registry{b}))(t)
	words := strings.Fields("a b a c a b flink flink flink flink")
	for _, w := range words {
		setKey(b, w)
		n, _, err := count.Value()
		if err != nil {
			t.Fatal(err)
		}
		if err := count.Update(n + 1); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"a": 3, "b": 2, "c": 1, "flink": 4}
	for w, n := range want {
		setKey(b, w)
		got, ok, err := count.Value()
		if err != nil || !ok || got != n {
			t.Errorf("count[%s] = %d, %v, %v; want %d", w, got, ok, err, n)
		}
	}
	setKey(b, "a")
	if err := count.Clear(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := count.Value(); ok {
		t.Error("a still has a count after Clear")
	}
	setKey(b, "zzz")
	if _, ok, _ := count.Value(); ok {
		t.Error("unknown key has a count")
	}
}

func TestKinds(t *testing.T) {
	b := heapstate.New(maxPar, all())
	r := registry{b}
	list := must(state.List("l", state.String).Bind(r))(t)
	m := must(state.Map("m", state.String, state.Int64).Bind(r))(t)
	sum := must(state.Reducing("sum", state.Int64, func(a, b int64) int64 { return a + b }).Bind(r))(t)
	setKey(b, "k")
	for _, s := range []string{"x", "y", "z"} {
		if err := list.Add(s); err != nil {
			t.Fatal(err)
		}
		if err := m.Put(s, int64(len(s)*10)); err != nil {
			t.Fatal(err)
		}
		if err := sum.Add(5); err != nil {
			t.Fatal(err)
		}
	}
	if got := must(list.Get())(t); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("list = %v", got)
	}
	if v, ok, _ := sum.Get(); !ok || v != 15 {
		t.Errorf("sum = %d, %v", v, ok)
	}
	if err := m.Remove("y"); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := m.Range(func(k string, v int64) bool { keys = append(keys, fmt.Sprint(k, "=", v)); return true }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x=10", "z=10"}; !slices.Equal(keys, want) {
		t.Errorf("map = %v, want %v", keys, want)
	}
	setKey(b, "other")
	if got := must(list.Get())(t); got != nil {
		t.Errorf("other key's list = %v", got)
	}
}

func TestMergeNamespaces(t *testing.T) {
	b := heapstate.New(maxPar, all())
	tbl := must(b.Register(state.Reducing("sum", state.Int64, func(a, b int64) int64 { return a + b }).Desc()))(t)
	lst := must(b.Register(state.List("l", state.Int64).Desc()))(t)
	setKey(b, "u1")
	w1, w2, w3 := []byte("w1"), []byte("w2"), []byte("w3")
	for i, ns := range [][]byte{w1, w2, w3} {
		if err := tbl.Put(ns, int64(i+1)); err != nil {
			t.Fatal(err)
		}
		if err := lst.ListAppend(ns, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.MergeNamespaces(w2, [][]byte{w3, w1}); err != nil {
		t.Fatal(err)
	}
	if err := lst.MergeNamespaces(w2, [][]byte{w3, w1}); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := tbl.Get(w2); !ok || v.(int64) != 6 {
		t.Errorf("merged sum = %v, %v; want 6", v, ok)
	}
	if _, ok, _ := tbl.Get(w1); ok {
		t.Error("source w1 not cleared")
	}
	if vs := must(lst.ListGet(w2))(t); !slices.Equal(vs, []any{int64(2), int64(3), int64(1)}) {
		t.Errorf("merged list = %v", vs)
	}
	val := must(b.Register(state.Value("v", state.Int64).Desc()))(t)
	if err := val.MergeNamespaces(w1, [][]byte{w2}); err == nil || err.Error() != `heapstate: merge namespaces of state "v": value state has no merge function` {
		t.Errorf("value state merged without a merge function: %v", err)
	}
}

func TestTimers(t *testing.T) {
	b := heapstate.New(maxPar, all())
	q := must(b.Timers("event", state.StateMeta{}))(t)
	add := func(ts int64, key string) bool {
		kb := []byte(key)
		ok, err := q.Add(state.Timer{Timestamp: ts, KeyGroup: state.KeyGroupFor(kb, maxPar), Key: kb})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	add(30, "a")
	add(10, "b")
	add(20, "c")
	add(10, "a")
	if add(20, "c") {
		t.Error("duplicate timer added")
	}
	kb := []byte("c")
	if err := q.Delete(state.Timer{Timestamp: 20, KeyGroup: state.KeyGroupFor(kb, maxPar), Key: kb}); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 3 {
		t.Errorf("len = %d, want 3", q.Len())
	}
	var got []string
	for {
		tm, ok, err := q.Pop()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%d/%s", tm.Timestamp, tm.Key))
	}
	// 10/a and 10/b tie on time and fire by key group, then key.
	first := []string{"10/a", "10/b"}
	if state.KeyGroupFor([]byte("b"), maxPar) < state.KeyGroupFor([]byte("a"), maxPar) {
		first = []string{"10/b", "10/a"}
	}
	if want := append(first, "30/a"); !slices.Equal(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
}

func snapshot(t *testing.T, b state.KeyedBackend) ([]state.StateMeta, []state.Entry) {
	t.Helper()
	var es []state.Entry
	r := b.KeyGroups()
	for kg := r.Start; kg <= r.End; kg++ {
		for e, err := range b.Entries(kg, "") {
			if err != nil {
				t.Fatal(err)
			}
			if n := len(es); n > 0 && state.CompareEntries(es[n-1], e) >= 0 {
				t.Fatalf("entries out of order: %v then %v", es[n-1], e)
			}
			es = append(es, state.Entry{State: e.State, KeyGroup: e.KeyGroup, Key: slices.Clone(e.Key),
				Namespace: slices.Clone(e.Namespace), UserKey: slices.Clone(e.UserKey), Value: slices.Clone(e.Value)})
		}
	}
	return b.States(), es
}

func TestSnapshotRestore(t *testing.T) {
	b := heapstate.New(maxPar, all())
	r := registry{b}
	count := must(state.Value("count", state.Int64).Bind(r))(t)
	old := must(state.Value("dropped", state.String).Bind(r))(t)
	q := must(b.Timers("event", state.StateMeta{}))(t)
	for i := range 50 {
		k := fmt.Sprintf("k%02d", i)
		setKey(b, k)
		ok(t, count.Update(int64(i)))
		ok(t, old.Update("s"+k))
		kb, kg := b.CurrentKey()
		must(q.Add(state.Timer{Timestamp: int64(i % 7), KeyGroup: kg, Key: kb}))(t)
	}
	metas, es := snapshot(t, b)
	if len(es) != 150 {
		t.Fatalf("%d entries, want 150", len(es))
	}
	if len(metas) != 3 || metas[0].StateName != "_timer_state/event" || metas[1].StateName != "count" || metas[1].Entries != 50 {
		t.Fatalf("metas = %+v", metas)
	}
	if want := int64(50 * (3 + 8)); metas[1].Bytes != want {
		t.Errorf("count bytes = %d, want %d", metas[1].Bytes, want)
	}

	// Restore half the key groups, declare only count: dropped stays bytes.
	half := state.KeyGroupRange{Start: 0, End: maxPar/2 - 1}
	b2 := heapstate.New(maxPar, half)
	var in []state.Entry
	for _, e := range slices.Backward(es) { // key groups in any order
		if half.Contains(e.KeyGroup) {
			in = append(in, e)
		}
	}
	slices.SortStableFunc(in, func(a, b state.Entry) int { return b.KeyGroup - a.KeyGroup })
	for i := 0; i < len(in); {
		j := i
		for j < len(in) && in[j].KeyGroup == in[i].KeyGroup {
			j++
		}
		slices.Reverse(in[i:j])
		i = j
	}
	if err := b2.Restore(metas, seq(in)); err != nil {
		t.Fatal(err)
	}
	count2 := must(state.Value("count", state.Int64).Bind(registry{b2}))(t)
	n := 0
	for i := range 50 {
		k := fmt.Sprintf("k%02d", i)
		kg := state.KeyGroupFor([]byte(k), maxPar)
		if !half.Contains(kg) {
			continue
		}
		n++
		setKey(b2, k)
		if v, ok, err := count2.Value(); err != nil || !ok || v != int64(i) {
			t.Errorf("restored count[%s] = %d, %v, %v", k, v, ok, err)
		}
	}
	_, es2 := snapshot(t, b2)
	var want []state.Entry
	for _, e := range es {
		if half.Contains(e.KeyGroup) {
			want = append(want, e)
		}
	}
	if !slices.EqualFunc(es2, want, func(a, b state.Entry) bool {
		return state.CompareEntries(a, b) == 0 && string(a.Value) == string(b.Value)
	}) {
		t.Errorf("re-snapshot differs: %d entries, want %d", len(es2), len(want))
	}
	if n == 0 || len(want) != 3*n {
		t.Errorf("restored %d keys, %d entries", n, len(want))
	}

	// A changed type is refused with the state's name and what changed.
	b3 := heapstate.New(maxPar, all())
	if err := b3.Restore(metas, seq(es)); err != nil {
		t.Fatal(err)
	}
	_, err := state.Value("count", state.String).Bind(registry{b3})
	if err == nil || !strings.Contains(err.Error(), `"count"`) || !strings.Contains(err.Error(), "value type changed from int64 to string") {
		t.Errorf("register with changed type: %v", err)
	}

	// Out-of-range entries are an error.
	b4 := heapstate.New(maxPar, half)
	if err := b4.Restore(metas, seq(es)); err == nil || !strings.Contains(err.Error(), "heapstate: restore: entry of state ") ||
		!strings.Contains(err.Error(), ", outside this backend's key groups 0–7") {
		t.Errorf("restore of entries outside the key groups: %v", err)
	}
}

func TestNoCurrentKey(t *testing.T) {
	b := heapstate.New(maxPar, state.KeyGroupRange{Start: 0, End: 3})
	tbl := must(b.Register(state.Value("v", state.Int64).Desc()))(t)
	if _, _, err := tbl.Get(nil); err == nil || err.Error() != `heapstate: state "v" accessed with no current key` {
		t.Errorf("Get without a current key: %v", err)
	}
	b.SetCurrentKey([]byte("x"), 9)
	if err := tbl.Put(nil, int64(1)); err == nil || !strings.Contains(err.Error(), "key group 9") {
		t.Errorf("Put outside the key groups: %v", err)
	}
}

func seq(es []state.Entry) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend {
		return heapstate.New(maxParallelism, groups)
	})
}

// Put after Get reuses the cell Get found; a new key, another namespace or
// a Clear in between must not write to that cell.
func TestPutAfterGet(t *testing.T) {
	b := heapstate.New(maxPar, all())
	tbl := must(b.Register(state.Value("v", state.Int64).Desc()))(t)
	get := func(k, ns string) any {
		setKey(b, k)
		v, _, err := tbl.Get([]byte(ns))
		ok(t, err)
		return v
	}
	setKey(b, "a")
	ok(t, tbl.Put(nil, int64(1)))
	ok(t, tbl.Put([]byte("w"), int64(2)))
	get("a", "")
	setKey(b, "b")
	ok(t, tbl.Put(nil, int64(3)))
	get("a", "")
	ok(t, tbl.Put([]byte("w"), int64(4)))
	get("a", "")
	ok(t, tbl.Clear(nil))
	ok(t, tbl.Put(nil, int64(5)))
	for _, c := range []struct {
		k, ns string
		want  any
	}{{"a", "", int64(5)}, {"a", "w", int64(4)}, {"b", "", int64(3)}} {
		if got := get(c.k, c.ns); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.k, c.ns, got, c.want)
		}
	}
}

func TestIncrementalCheckpoints(t *testing.T) {
	statetest.RunIncremental(t, 100, func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend {
		return heapstate.New(maxParallelism, groups)
	})
}

// EntryTag: a value entry's tag is 0 when new, keeps what was put in it
// across other keys' writes, lookups and a roll back that brings the
// entry back, and goes with a cleared entry; absent entries, other
// namespaces and list state have none; snapshots do not see tags.
func TestEntryTag(t *testing.T) {
	b := heapstate.New(maxPar, all())
	vt := must(b.Register(state.Value("v", state.Int64).Desc()))(t)
	lt := must(b.Register(state.List("l", state.Int64).Desc()))(t)
	tag := func(k, ns string) *uint64 {
		t.Helper()
		setKey(b, k)
		return vt.(state.EntryTagger).EntryTag([]byte(ns))
	}
	if p := tag("a", ""); p != nil {
		t.Fatalf("absent entry has a tag (%d)", *p)
	}
	setKey(b, "a")
	ok(t, vt.Put(nil, int64(1)))
	p := vt.(state.EntryTagger).EntryTag(nil)
	if p == nil || *p != 0 {
		t.Fatalf("new entry's tag: %v", p)
	}
	*p = 7
	ok(t, vt.Put([]byte("w"), int64(2)))
	if p := tag("a", "w"); p == nil || *p != 0 {
		t.Fatalf("other namespace's tag: %v", p)
	}
	setKey(b, "b")
	ok(t, vt.Put(nil, int64(3)))
	ok(t, lt.ListAppend(nil, int64(4)))
	if p := lt.(state.EntryTagger).EntryTag(nil); p != nil {
		t.Fatalf("list state has a tag (%d)", *p)
	}
	if p := tag("a", ""); p == nil || *p != 7 {
		t.Fatalf("a's tag after other writes: %v, want 7", p)
	}
	ok(t, vt.Put(nil, int64(5)))
	if p := tag("a", ""); p == nil || *p != 7 {
		t.Fatalf("a's tag after its own write: %v, want 7", p)
	}
	m, err := b.Mark()
	ok(t, err)
	setKey(b, "a")
	ok(t, vt.Clear(nil))
	if p := tag("a", ""); p != nil {
		t.Fatalf("cleared entry has a tag (%d)", *p)
	}
	ok(t, vt.Put(nil, int64(6)))
	if p := tag("a", ""); p == nil || *p != 0 {
		t.Fatalf("entry written again after a clear: tag %v, want 0", p)
	}
	ok(t, b.RollBack(m))
	if p := tag("a", ""); p == nil || *p != 7 {
		t.Fatalf("a's tag after the roll back: %v, want 7", p)
	}
	if v, _, err := vt.Get(nil); err != nil || v != int64(5) {
		t.Fatalf("a after the roll back: %v, %v", v, err)
	}
	var rows []string
	for e, err := range b.Entries(state.KeyGroupFor([]byte("a"), maxPar), "v") {
		ok(t, err)
		if string(e.Key) == "a" {
			rows = append(rows, fmt.Sprintf("%s/%s=%x", e.Key, e.Namespace, e.Value))
		}
	}
	if want := "a/=8000000000000005 a/w=8000000000000002"; strings.Join(rows, " ") != want {
		t.Fatalf("entries of a in v: %v, want %s", rows, want)
	}
}
