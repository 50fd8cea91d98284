package pebblestate

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

func openMem(t testing.TB, groups state.KeyGroupRange) *Backend {
	t.Helper()
	b, err := Open(Options{FS: vfs.NewMem(), MaxParallelism: 128, KeyGroups: groups, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

var all = state.KeyGroupRange{Start: 0, End: 127}

// registry lets the typed descriptors bind against a backend.
type registry struct{ b state.KeyedBackend }

func (r registry) KeyedTable(d state.StateDesc) (state.Table, error) { return r.b.Register(d) }
func (r registry) Operator() *state.OperatorStore                    { return nil }

func setKey(b state.KeyedBackend, k string) {
	b.SetCurrentKey([]byte(k), state.KeyGroupFor([]byte(k), 128))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestValueState(t *testing.T) {
	b := openMem(t, all)
	s := must(state.Value("count", state.Int64).Bind(registry{b}))
	setKey(b, "a")
	if _, ok, err := s.Value(); ok || err != nil {
		t.Fatalf("empty: ok=%v err=%v", ok, err)
	}
	check(t, s.Update(41))
	setKey(b, "b")
	check(t, s.Update(-7))
	setKey(b, "a")
	if v, ok, err := s.Value(); v != 41 || !ok || err != nil {
		t.Fatalf("a = %v %v %v, want 41", v, ok, err)
	}
	check(t, s.Clear())
	if _, ok, _ := s.Value(); ok {
		t.Fatal("a still set after Clear")
	}
	setKey(b, "b")
	if v, _, _ := s.Value(); v != -7 {
		t.Fatalf("b = %v, want -7", v)
	}
	// Namespaces are independent.
	s.SetNamespace(state.WindowCodec.Append(nil, state.Window{Start: 0, End: 10}))
	if _, ok, _ := s.Value(); ok {
		t.Fatal("namespace sees the void namespace's value")
	}
	check(t, s.Update(3))
	s.SetNamespace(nil)
	if v, _, _ := s.Value(); v != -7 {
		t.Fatalf("void namespace = %v after window update, want -7", v)
	}
}

func TestNoKeyAndOutsideRange(t *testing.T) {
	b := openMem(t, state.KeyGroupRange{Start: 0, End: 63})
	tab := must(b.Register(state.Value("v", state.String).Desc()))
	if _, _, err := tab.Get(nil); err == nil || err.Error() != `pebblestate: state "v" accessed with no current key` {
		t.Fatalf("Get without a current key: %v", err)
	}
	b.SetCurrentKey([]byte("k"), 100)
	if err := tab.Put(nil, "x"); err == nil || err.Error() != `pebblestate: state "v": key group 100 of the current key is outside 0–63` {
		t.Fatalf("Put outside the key groups: %v", err)
	}
	if _, err := tab.ListGet(nil); err == nil || err.Error() != `pebblestate: state "v" is value state; ListGet is not defined on it` {
		t.Fatalf("ListGet on a value state: %v", err)
	}
}

func TestListState(t *testing.T) {
	b := openMem(t, all)
	s := must(state.List("l", state.String).Bind(registry{b}))
	setKey(b, "k")
	for _, v := range []string{"x", "", "y\x00z"} {
		check(t, s.Add(v))
	}
	if got := must(s.Get()); !slices.Equal(got, []string{"x", "", "y\x00z"}) {
		t.Fatalf("list = %q", got)
	}
	check(t, s.Update([]string{"p"}))
	check(t, s.Add("q"))
	if got := must(s.Get()); !slices.Equal(got, []string{"p", "q"}) {
		t.Fatalf("after update+add = %q", got)
	}
	check(t, s.Update(nil))
	if got := must(s.Get()); got != nil {
		t.Fatalf("after empty update = %q", got)
	}
	check(t, s.Add("r"))
	check(t, s.Clear())
	if got := must(s.Get()); got != nil {
		t.Fatalf("after clear = %q", got)
	}
}

func TestMapState(t *testing.T) {
	b := openMem(t, all)
	s := must(state.Map("m", state.String, state.Int64).Bind(registry{b}))
	setKey(b, "k")
	for i, k := range []string{"b", "a", "", "a\x00", "c"} {
		check(t, s.Put(k, int64(i)))
	}
	check(t, s.Put("b", 10))
	check(t, s.Remove("c"))
	if v, ok, _ := s.Get("b"); v != 10 || !ok {
		t.Fatalf("b = %v %v", v, ok)
	}
	if _, ok, _ := s.Get("c"); ok {
		t.Fatal("c still there")
	}
	var keys []string
	var vals []int64
	check(t, s.Range(func(k string, v int64) bool { keys, vals = append(keys, k), append(vals, v); return true }))
	if !slices.Equal(keys, []string{"", "a", "a\x00", "b"}) || !slices.Equal(vals, []int64{2, 1, 3, 10}) {
		t.Fatalf("range = %q %v", keys, vals)
	}
	// Another key's map is separate, and a key that extends "k" is not
	// under its prefix.
	setKey(b, "k\x00")
	check(t, s.Put("z", 1))
	setKey(b, "k")
	n := 0
	check(t, s.Range(func(string, int64) bool { n++; return n < 2 }))
	if n != 2 {
		t.Fatalf("early stop: fn called %d times, want 2", n)
	}
	check(t, s.Clear())
	check(t, s.Range(func(k string, _ int64) bool { t.Fatalf("entry %q after Clear", k); return true }))
	setKey(b, "k\x00")
	if v, ok, _ := s.Get("z"); v != 1 || !ok {
		t.Fatal("clearing k removed k\\x00's map")
	}
}

type avg struct{}

func (avg) CreateAccumulator() [2]int64          { return [2]int64{} }
func (avg) Add(in int64, acc [2]int64) [2]int64  { return [2]int64{acc[0] + in, acc[1] + 1} }
func (avg) Result(acc [2]int64) float64          { return float64(acc[0]) / float64(acc[1]) }
func (avg) Merge(a, b [2]int64) [2]int64         { return [2]int64{a[0] + b[0], a[1] + b[1]} }
func sum(a, b int64) int64                       { return a + b }
func concat(a, b string) string                  { return a + b }
func reducing() state.ReducingDescriptor[string] { return state.Reducing("r", state.String, concat) }
func aggregating() state.AggregatingDescriptor[int64, [2]int64, float64] {
	return state.Aggregating("agg", state.JSON[[2]int64](), state.AggregateFunction[int64, [2]int64, float64](avg{}))
}

func TestReducingAndAggregating(t *testing.T) {
	b := openMem(t, all)
	r := must(state.Reducing("sum", state.Int64, sum).Bind(registry{b}))
	a := must(aggregating().Bind(registry{b}))
	setKey(b, "k")
	for _, v := range []int64{1, 2, 3, 6} {
		check(t, r.Add(v))
		check(t, a.Add(v))
	}
	if v, ok, _ := r.Get(); v != 12 || !ok {
		t.Fatalf("sum = %v", v)
	}
	if v, ok, _ := a.Get(); v != 3 || !ok {
		t.Fatalf("avg = %v", v)
	}
	check(t, a.Clear())
	if _, ok, _ := a.Get(); ok {
		t.Fatal("avg after clear")
	}
}

func TestMergeNamespaces(t *testing.T) {
	b := openMem(t, all)
	reg := registry{b}
	w := func(s int64) []byte { return state.WindowCodec.Append(nil, state.Window{Start: s, End: s + 10}) }
	target, s1, s2 := w(0), w(10), w(20)
	setKey(b, "k")

	r := must(reducing().Bind(reg))
	for ns, v := range map[string]string{string(target): "t", string(s1): "1", string(s2): "2"} {
		r.SetNamespace([]byte(ns))
		check(t, r.Add(v))
	}
	rt := must(b.Register(reducing().Desc()))
	check(t, rt.MergeNamespaces(target, [][]byte{s1, target, s2}))
	r.SetNamespace(target)
	if v, _, _ := r.Get(); v != "t12" {
		t.Fatalf("reducing merge = %q, want t12", v)
	}
	r.SetNamespace(s1)
	if _, ok, _ := r.Get(); ok {
		t.Fatal("source kept its value")
	}
	// A target without a value takes the sources'.
	r.SetNamespace(s2)
	check(t, r.Add("x"))
	check(t, rt.MergeNamespaces(w(99), [][]byte{s2}))
	r.SetNamespace(w(99))
	if v, _, _ := r.Get(); v != "x" {
		t.Fatalf("merge into empty target = %q", v)
	}

	l := must(state.List("l", state.String).Bind(reg))
	for _, p := range []struct {
		ns []byte
		vs []string
	}{{target, []string{"t"}}, {s1, []string{"a", "b"}}, {s2, []string{"c"}}} {
		l.SetNamespace(p.ns)
		for _, v := range p.vs {
			check(t, l.Add(v))
		}
	}
	lt := must(b.Register(state.List("l", state.String).Desc()))
	check(t, lt.MergeNamespaces(target, [][]byte{s1, s2}))
	l.SetNamespace(target)
	if got := must(l.Get()); !slices.Equal(got, []string{"t", "a", "b", "c"}) {
		t.Fatalf("list merge = %q", got)
	}
	l.SetNamespace(s1)
	if got := must(l.Get()); got != nil {
		t.Fatalf("list source = %q", got)
	}

	m := must(state.Map("m", state.String, state.Int64).Bind(reg))
	m.SetNamespace(target)
	check(t, m.Put("a", 1))
	check(t, m.Put("b", 1))
	m.SetNamespace(s1)
	check(t, m.Put("b", 2))
	check(t, m.Put("c", 2))
	m.SetNamespace(s2)
	check(t, m.Put("c", 3))
	mt := must(b.Register(state.Map("m", state.String, state.Int64).Desc()))
	check(t, mt.MergeNamespaces(target, [][]byte{s1, s2}))
	m.SetNamespace(target)
	got := map[string]int64{}
	check(t, m.Range(func(k string, v int64) bool { got[k] = v; return true }))
	if want := map[string]int64{"a": 1, "b": 2, "c": 3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("map merge = %v, want %v", got, want)
	}
	m.SetNamespace(s2)
	check(t, m.Range(func(k string, _ int64) bool { t.Fatalf("source entry %q left", k); return true }))

	v := must(b.Register(state.Value("v", state.Int64).Desc()))
	if err := v.MergeNamespaces(target, [][]byte{s1}); err == nil || err.Error() != `pebblestate: merge namespaces of state "v": value state has no merge function` {
		t.Fatalf("value state merged without a merge function: %v", err)
	}
}

func TestManyWritesCrossCommits(t *testing.T) {
	b := openMem(t, all)
	s := must(state.Value("v", state.String).Bind(registry{b}))
	const n = 20000
	val := string(bytes.Repeat([]byte("x"), 100))
	for i := range n {
		setKey(b, fmt.Sprint(i))
		check(t, s.Update(fmt.Sprint(val, i)))
	}
	for i := range n {
		setKey(b, fmt.Sprint(i))
		if v, ok, err := s.Value(); !ok || err != nil || v != fmt.Sprint(val, i) {
			t.Fatalf("key %d: ok=%v err=%v", i, ok, err)
		}
	}
	metas := b.States()
	if len(metas) != 1 || metas[0].Entries != n {
		t.Fatalf("States = %+v", metas)
	}
}

func TestRegister(t *testing.T) {
	b := openMem(t, all)
	t1 := must(b.Register(state.Value("s", state.Int64).Desc()))
	t2 := must(b.Register(state.Value("s", state.Int64).Desc()))
	if t1 != t2 {
		t.Fatal("second Register gave another table")
	}
	if _, err := b.Register(state.Value("s", state.String).Desc()); err == nil || err.Error() != `pebblestate: state "s" declared twice: value type changed from int64 to string` {
		t.Fatalf("type change: %v", err)
	}
	if _, err := b.Register(state.Value(state.TimerStateName("event"), state.String).Desc()); err == nil || err.Error() != `pebblestate: state name "_timer_state/event" is reserved for timers` {
		t.Fatalf("timer state name: %v", err)
	}
	if _, err := b.Timers("event", state.StateMeta{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range b.States() {
		names = append(names, m.StateName)
	}
	if !slices.Equal(names, []string{"_timer_state/event", "s"}) {
		t.Fatalf("States = %q", names)
	}
}

func TestOpenTempDirRemovedOnClose(t *testing.T) {
	b, err := Open(Options{KeyGroups: all})
	if err != nil {
		t.Fatal(err)
	}
	dir := b.tempDir
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	check(t, b.Close())
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp dir after Close: %v", err)
	}
	check(t, b.Close())
}

func TestOpenRefusesExistingStore(t *testing.T) {
	fs := vfs.NewMem()
	b := must(Open(Options{FS: fs, Dir: "db", KeyGroups: all}))
	check(t, b.Close())
	if _, err := Open(Options{FS: fs, Dir: "db", KeyGroups: all}); err == nil || !strings.Contains(err.Error(), `pebblestate: open db: `) || !strings.Contains(err.Error(), "database already exists") {
		t.Fatalf("reopened a store that is only ever rebuilt from snapshots: %v", err)
	}
	if _, err := Open(Options{FS: fs, KeyGroups: state.KeyGroupRange{Start: 0, End: 128}}); err == nil || err.Error() != "pebblestate: key groups 0–128 outside [0, 128)" {
		t.Fatalf("key groups beyond the max parallelism: %v", err)
	}
}

// randomKeys has keys that stress the escaping: empty, embedded and
// trailing zeros, 0xff, prefixes of each other.
func randomKeys(r *rand.Rand, n int) [][]byte {
	keys := [][]byte{{}, {0}, {0, 0}, {0, 0xff}, {0xff}, []byte("a"), []byte("a\x00"), []byte("a\x00b"), []byte("ab"), {1}}
	for len(keys) < n {
		k := make([]byte, r.IntN(5))
		for i := range k {
			k[i] = []byte{0, 1, 'a', 0xff}[r.IntN(4)]
		}
		keys = append(keys, k)
	}
	return keys
}

// TestListAcrossCommits appends to one list across many batch commits and
// memtable flushes: merge operands then live in the batch, the memtable and
// sstables at once, and must still concatenate in order.
func TestListAcrossCommits(t *testing.T) {
	b := openMem(t, all)
	l := must(state.List("l", state.String).Bind(registry{b}))
	setKey(b, "k")
	pad := string(bytes.Repeat([]byte("p"), 4096))
	const n = 3000
	for i := range n {
		check(t, l.Add(fmt.Sprint(i, pad)))
	}
	got := must(l.Get())
	if len(got) != n {
		t.Fatalf("%d elements, want %d", len(got), n)
	}
	for i, v := range got {
		if v != fmt.Sprint(i, pad) {
			t.Fatalf("element %d out of order", i)
		}
	}
	_, kg := b.CurrentKey()
	i := int64(0)
	for e, err := range b.Entries(kg, "l") {
		check(t, err)
		if pos, _ := state.Position.Decode(e.UserKey); pos != i {
			t.Fatalf("entry %d has position %d", i, pos)
		}
		i++
	}
	if i != n {
		t.Fatalf("Entries gave %d elements, want %d", i, n)
	}
}
