package savepoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
	"streamdbg/state"
)

const (
	sumID    = "0123456789abcdef0123456789abcdef"
	sourceID = "fedcba9876543210fedcba9876543210"
)

// fixture is a synthetic job state: keyed entries of one operator (value,
// map, list, window and timer states) and operator state of another.
type fixture struct {
	maxPar  int
	byGroup map[int][]state.Entry
	all     []state.Entry
	opState [][]state.OperatorEntry // per source subtask
}

func newFixture(keys, maxPar int, seed uint64) *fixture {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := &fixture{maxPar: maxPar, byGroup: map[int][]state.Entry{}}
	for i := range keys {
		key := fmt.Appendf(nil, "key_%d", i)
		kg := state.KeyGroupFor(key, maxPar)
		add := func(e state.Entry) {
			e.KeyGroup, e.Key = kg, key
			f.all = append(f.all, e)
		}
		add(state.Entry{State: "total", Value: state.Int64.Append(nil, int64(rng.IntN(1000)))})
		for p := range rng.IntN(3) {
			add(state.Entry{State: "by_product", UserKey: fmt.Appendf(nil, "p%d", p), Value: state.Int64.Append(nil, int64(p+1))})
		}
		if i%3 == 0 {
			w := state.WindowCodec.Append(nil, state.Window{Start: 0, End: 10_000})
			add(state.Entry{State: "win", Namespace: w, UserKey: state.Position.Append(nil, 0), Value: []byte(`{"page":"/a"}`)})
			add(state.Entry{State: "win", Namespace: w, UserKey: state.Position.Append(nil, 1), Value: []byte(`{"page":"/b"}`)})
			add(state.Entry{State: state.TimerStateName("event_timers"), Namespace: w, UserKey: state.Int64.Append(nil, 9_999)})
		}
	}
	slices.SortFunc(f.all, state.CompareEntries)
	for _, e := range f.all {
		f.byGroup[e.KeyGroup] = append(f.byGroup[e.KeyGroup], e)
	}
	f.opState = [][]state.OperatorEntry{
		{
			{State: "bc", Kind: state.KindBroadcast, Key: []byte("rule"), Value: []byte(`"on"`)},
			{State: "offsets", Kind: state.KindSplitList, Position: 0, Value: state.Int64.Append(nil, 10)},
			{State: "offsets", Kind: state.KindSplitList, Position: 1, Value: state.Int64.Append(nil, 11)},
			{State: "seen", Kind: state.KindUnionList, Position: 0, Value: []byte("a")},
		},
		{
			{State: "bc", Kind: state.KindBroadcast, Key: []byte("rule"), Value: []byte(`"on"`)},
			{State: "offsets", Kind: state.KindSplitList, Position: 0, Value: state.Int64.Append(nil, 20)},
			{State: "offsets", Kind: state.KindSplitList, Position: 1, Value: state.Int64.Append(nil, 21)},
			{State: "offsets", Kind: state.KindSplitList, Position: 2, Value: state.Int64.Append(nil, 22)},
			{State: "seen", Kind: state.KindUnionList, Position: 0, Value: []byte("b")},
		},
	}
	return f
}

func (f *fixture) entries(kg int) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		for _, e := range f.byGroup[kg] {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (f *fixture) snapshot(parallelism int) *Snapshot {
	sum := OperatorSnapshot{ID: sumID, UID: "sum", Name: "sum", Parallelism: parallelism, MaxParallelism: f.maxPar,
		States: []state.StateMeta{
			{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", NamespaceType: "void", ValueType: "int64"},
			{StateName: "by_product", Scope: state.ScopeKeyed, Kind: state.KindMap, KeyType: "string", NamespaceType: "void", UserKeyType: "string", ValueType: "int64"},
			{StateName: "win", Scope: state.ScopeKeyed, Kind: state.KindList, KeyType: "string", NamespaceType: "window", ValueType: "json:main.Click"},
			{StateName: "idle", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", ValueType: "int64"},
		}}
	for i := range parallelism {
		sum.Subtasks = append(sum.Subtasks, SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(f.maxPar, parallelism, i), Keyed: f.entries})
	}
	src := OperatorSnapshot{ID: sourceID, UID: "src", Name: "Source: orders", Parallelism: 2, MaxParallelism: f.maxPar,
		States: []state.StateMeta{
			{StateName: "offsets", Scope: state.ScopeOperator, Kind: state.KindSplitList, ValueType: "int64"},
			{StateName: "seen", Scope: state.ScopeOperator, Kind: state.KindUnionList, ValueType: "string"},
			{StateName: "bc", Scope: state.ScopeOperator, Kind: state.KindBroadcast, UserKeyType: "string", ValueType: "json:string"},
		}}
	for i := range 2 {
		src.Subtasks = append(src.Subtasks, SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(f.maxPar, 2, i), Operator: f.opState[i]})
	}
	return &Snapshot{JobName: "orders", JobFingerprint: "fp-1", CheckpointID: 7,
		Created: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), Position: 42, ProcessingTime: 1000,
		Sources:   []SourcePosition{{Source: "orders", Partition: 1, Offset: 21}, {Source: "orders", Partition: 0, Offset: 20}},
		Operators: []OperatorSnapshot{src, sum}}
}

func mustWrite(t testing.TB, fs vfs.FS, dir string, snap *Snapshot) *Savepoint {
	t.Helper()
	if err := Write(fs, dir, snap); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(fs, dir)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func cloneEntry(e state.Entry) state.Entry {
	return state.Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace),
		UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)}
}

func sameEntries(t *testing.T, got, want []state.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.State != w.State || g.KeyGroup != w.KeyGroup || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Namespace, w.Namespace) ||
			!bytes.Equal(g.UserKey, w.UserKey) || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("entry %d = %+v, want %+v", i, g, w)
		}
	}
}

func readAll(t *testing.T, sp *Savepoint, id string, groups state.KeyGroupRange) []state.Entry {
	t.Helper()
	var out []state.Entry
	for e, err := range sp.KeyedEntriesFor(id, groups) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cloneEntry(e))
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	f := newFixture(500, 16, 1)
	fs := vfs.NewMem()
	sp := mustWrite(t, fs, "/sp/one", f.snapshot(3))
	sameEntries(t, readAll(t, sp, sumID, state.KeyGroupRange{Start: 0, End: 15}), f.all)

	// Byte-identical on a second write of the same snapshot.
	mustWrite(t, fs, "/sp/two", f.snapshot(3))
	one, two := vfstest.Files(t, fs, "/sp/one"), vfstest.Files(t, fs, "/sp/two")
	if len(one) != 1+3+2 { // _metadata, 3 keyed, 2 operator
		t.Fatalf("files %v", slices.Sorted(func(yield func(string) bool) {
			for k := range one {
				if !yield(k) {
					return
				}
			}
		}))
	}
	for name, b := range one {
		if !bytes.Equal(b, two[name]) {
			t.Fatalf("%s differs between two writes of the same snapshot", name)
		}
	}

	m := sp.Meta()
	if m.JobName != "orders" || m.CheckpointID != 7 || m.Position != 42 || !m.Created.Equal(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("metadata %+v", m)
	}
	if m.Sources[0].Partition != 0 || m.Sources[1].Partition != 1 {
		t.Fatalf("sources not sorted: %+v", m.Sources)
	}
	if err := Write(fs, "/sp/one", f.snapshot(3)); !errors.Is(err, ErrExists) {
		t.Fatalf("overwrite: %v", err)
	}

	// StateMeta table: counts and bytes from what was written. Bytes are
	// the payload (key, namespace, user key, value), summed here from the
	// fixture's fields, not by the writer's Entry.Size.
	counts := map[string][2]int64{}
	for _, e := range f.all {
		c := counts[e.State]
		counts[e.State] = [2]int64{c[0] + 1, c[1] + int64(len(e.Key)+len(e.Namespace)+len(e.UserKey)+len(e.Value))}
	}
	// And one state pinned by hand: "total" has one entry per key, each of
	// a key "key_<i>" and an 8-byte int64 value; keys 0-9 have 5 bytes,
	// 10-99 6 bytes, 100-499 7 bytes.
	if c := counts["total"]; c != [2]int64{500, 10*(5+8) + 90*(6+8) + 400*(7+8)} {
		t.Fatalf("fixture's total state: %v", c)
	}
	metas := map[string]state.StateMeta{}
	for _, m := range sp.States() {
		metas[m.StateName] = m
	}
	for name, c := range counts {
		m := metas[name]
		if m.Entries != c[0] || m.Bytes != c[1] || m.OperatorID != sumID {
			t.Errorf("%s: %d entries %d bytes, want %d %d", name, m.Entries, m.Bytes, c[0], c[1])
		}
	}
	if m := metas[state.TimerStateName("event_timers")]; m.Kind != state.KindTimers {
		t.Errorf("timer state meta %+v", m)
	}
	if m := metas["idle"]; m.Kind != state.KindValue || m.Entries != 0 {
		t.Errorf("empty state meta %+v", m)
	}
	if m := metas["offsets"]; m.Entries != 5 || m.Kind != state.KindSplitList || m.Scope != state.ScopeOperator {
		t.Errorf("offsets meta %+v", m)
	}
	if ops := sp.Operators(); len(ops) != 2 || ops[0].ID != sumID || ops[0].Parallelism != 3 || ops[0].MaxParallelism != 16 || ops[1].Name != "Source: orders" {
		t.Errorf("operators %+v", ops)
	}
}

func TestCatalogRows(t *testing.T) {
	f := newFixture(200, 16, 2)
	fs := vfs.NewMem()
	sp := mustWrite(t, fs, "/sp", f.snapshot(2))

	key := "key_42"
	kg, ok := sp.KeyGroupOf(state.StateMeta{OperatorID: sumID, StateName: "total"}, key)
	if !ok || kg != state.KeyGroupFor([]byte(key), 16) {
		t.Fatalf("KeyGroupOf = %d %v", kg, ok)
	}
	var rows []state.KeyedRow
	for r, err := range sp.Keyed(state.KeyedScan{OperatorID: sumID, KeyGroups: []int{kg}}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Key == key {
			rows = append(rows, r)
		}
	}
	var want []state.Entry
	for _, e := range f.all {
		if string(e.Key) == key && state.TimerDomain(e.State) == "" {
			want = append(want, e)
		}
	}
	if len(rows) != len(want) || len(rows) == 0 {
		t.Fatalf("%d rows for %s, want %d", len(rows), key, len(want))
	}
	for i, r := range rows {
		e := want[i]
		if r.StateName != e.State || r.KeyGroup != kg || r.OperatorName != "sum" || r.Subtask != state.SubtaskFor(16, 2, kg) {
			t.Fatalf("row %+v for entry %+v", r, e)
		}
		switch e.State {
		case "total":
			v, _ := state.Int64.Decode(e.Value)
			if r.Value != v || r.UserKey != nil || r.Namespace != nil || r.Kind != state.KindReducing {
				t.Fatalf("total row %+v", r)
			}
		case "by_product":
			if r.UserKey != string(e.UserKey) {
				t.Fatalf("map row %+v", r)
			}
		case "win":
			p, _ := state.Position.Decode(e.UserKey)
			if r.UserKey != p || r.Value.(map[string]any)["page"] == nil || r.Namespace.(map[string]any)["end"] == nil {
				t.Fatalf("list row %+v", r)
			}
		}
	}
	// Timers.
	n := 0
	for r, err := range sp.Timers(state.TimerScan{OperatorID: sumID}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Domain != "event" || r.StateName != state.TimerStateName("event_timers") || r.Timestamp != 9_999 || !strings.HasPrefix(r.Key.(string), "key_") {
			t.Fatalf("timer row %+v", r)
		}
		n++
	}
	if n != 67 { // keys 0, 3, ..., 198
		t.Fatalf("%d timers, want 67", n)
	}
	// Operator state.
	var orows []state.OperatorRow
	for r, err := range sp.OperatorState(state.OperatorScan{StateName: "offsets"}) {
		if err != nil {
			t.Fatal(err)
		}
		orows = append(orows, r)
	}
	if len(orows) != 5 || orows[0].Value != int64(10) || orows[4].Value != int64(22) || orows[4].Subtask != 1 || orows[4].Position != 2 {
		t.Fatalf("operator rows %+v", orows)
	}
	for r, err := range sp.OperatorState(state.OperatorScan{StateName: "bc"}) {
		if err != nil || r.Key != "rule" || r.Value != "on" || r.Kind != state.KindBroadcast {
			t.Fatalf("broadcast row %+v %v", r, err)
		}
	}
	// int64 keys.
	if _, ok := sp.KeyGroupOf(state.StateMeta{OperatorID: sumID, KeyType: "int64"}, "12"); !ok {
		t.Fatal("numeric string as int64 key refused")
	}
	if _, ok := sp.KeyGroupOf(state.StateMeta{OperatorID: sumID, KeyType: "json:main.K"}, []any{"x"}); ok {
		t.Fatal("json key accepted")
	}
}

func TestRescale(t *testing.T) {
	f := newFixture(300, 16, 3)
	fs := vfs.NewMem()
	sp := mustWrite(t, fs, "/sp", f.snapshot(3))
	for p := 1; p <= 8; p++ {
		var got []state.Entry
		for i := range p {
			r := state.KeyGroupRangeFor(16, p, i)
			part := readAll(t, sp, sumID, r)
			for _, e := range part {
				if !r.Contains(e.KeyGroup) {
					t.Fatalf("parallelism %d subtask %d: entry of key group %d", p, i, e.KeyGroup)
				}
			}
			got = append(got, part...)
		}
		sameEntries(t, got, f.all)

		var offsets []int64
		for i := range p {
			es, err := sp.OperatorEntriesFor(sourceID, p, i)
			if err != nil {
				t.Fatal(err)
			}
			var seen, bc int
			for _, e := range es {
				switch e.State {
				case "offsets":
					v, _ := state.Int64.Decode(e.Value)
					offsets = append(offsets, v)
				case "seen":
					seen++
				case "bc":
					bc++
				}
			}
			// Union lists go whole to every subtask, also at the old
			// parallelism (2), as Flink's getUnionListState promises.
			if seen != 2 || bc != 1 {
				t.Fatalf("parallelism %d subtask %d: %d union, %d broadcast entries", p, i, seen, bc)
			}
		}
		if !slices.Equal(offsets, []int64{10, 11, 20, 21, 22}) {
			t.Fatalf("parallelism %d: split offsets %v", p, offsets)
		}
	}
	// Same parallelism: every subtask keeps its own.
	es, _ := sp.OperatorEntriesFor(sourceID, 2, 1)
	var own []int64
	for _, e := range es {
		if e.State == "offsets" {
			v, _ := state.Int64.Decode(e.Value)
			own = append(own, v)
		}
	}
	if !slices.Equal(own, []int64{20, 21, 22}) {
		t.Fatalf("same parallelism: %v", own)
	}
}

// countingFS counts files opened and bytes read (scans read in parallel).
type countingFS struct {
	vfs.FS
	mu    sync.Mutex
	opens []string
	read  int64
}

type countingFile struct {
	vfs.File
	fs *countingFS
}

func (c *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.opens = append(c.opens, name)
	c.mu.Unlock()
	return &countingFile{f, c}, nil
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.mu.Lock()
	f.fs.read += int64(n)
	f.fs.mu.Unlock()
	return n, err
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.fs.mu.Lock()
	f.fs.read += int64(n)
	f.fs.mu.Unlock()
	return n, err
}

// In format 1 a key-group scan reads its one section whole.
func TestPointLookupReadsOneSection(t *testing.T) {
	f := newFixture(2000, 32, 4)
	mem := vfs.NewMem()
	if err := write(mem, "/sp", f.snapshot(2), 1); err != nil {
		t.Fatal(err)
	}
	fs := &countingFS{FS: mem}
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.opens) != 1 || !strings.HasSuffix(fs.opens[0], MetadataFile) {
		t.Fatalf("Open opened %v", fs.opens)
	}
	fs.opens, fs.read = nil, 0
	key := "key_1234"
	kg, _ := sp.KeyGroupOf(state.StateMeta{OperatorID: sumID, StateName: "total"}, key)
	found := false
	for r, err := range sp.Keyed(state.KeyedScan{OperatorID: sumID, StateName: "total", KeyGroups: []int{kg}}) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || r.Key == key
	}
	if !found {
		t.Fatal("key not found")
	}
	var sec Section
	for _, sub := range sp.Meta().Operators[0].Subtasks {
		for _, s := range sub.Keyed.Sections {
			if s.KeyGroup == kg {
				sec = s
			}
		}
	}
	if len(fs.opens) != 1 || fs.read != sec.Size {
		t.Fatalf("point lookup opened %v and read %d bytes, want one file and %d bytes", fs.opens, fs.read, sec.Size)
	}
}

// flipByte xors one byte of a file in place.
func flipByte(t *testing.T, fs vfs.FS, path string, off int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}

// readEverything reads every row of every table and every restore source.
func readEverything(sp *Savepoint) error {
	for _, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			return err
		}
	}
	for _, err := range sp.Timers(state.TimerScan{}) {
		if err != nil {
			return err
		}
	}
	for _, err := range sp.OperatorState(state.OperatorScan{}) {
		if err != nil {
			return err
		}
	}
	for _, op := range sp.Operators() {
		for _, err := range sp.KeyedEntriesFor(op.ID, state.KeyGroupRange{Start: 0, End: op.MaxParallelism - 1}) {
			if err != nil {
				return err
			}
		}
		for i := range 3 {
			if _, err := sp.OperatorEntriesFor(op.ID, 3, i); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestEveryByteFlipDetected(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprint("format", version), func(t *testing.T) { testEveryByteFlipDetected(t, version) })
	}
}

func testEveryByteFlipDetected(t *testing.T, version int) {
	f := newFixture(12, 4, 5)
	fs := vfs.NewMem()
	if err := write(fs, "/sp", f.snapshot(2), version); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sumID + "-0.keyed", sumID + "-1.keyed", sourceID + "-0.opstate"} {
		path := "/sp/" + name
		fi, err := fs.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() == 0 {
			t.Fatalf("%s is empty", name)
		}
		for off := range fi.Size() {
			flipByte(t, fs, path, off)
			err := readEverything(sp)
			if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "checksum mismatch") {
				t.Fatalf("%s byte %d flipped: error %v", name, off, err)
			}
			flipByte(t, fs, path, off)
		}
	}
	if err := readEverything(sp); err != nil {
		t.Fatal(err)
	}
}

func rewrite(t *testing.T, fs vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	// A copy: pebble's MemFS scrambles written buffers in race builds (its
	// invariants mode) to catch callers that reuse them.
	if _, err := f.Write(bytes.Clone(b)); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}

func TestTruncationDetected(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprint("format", version), func(t *testing.T) { testTruncationDetected(t, version) })
	}
}

func testTruncationDetected(t *testing.T, version int) {
	f := newFixture(50, 8, 6)
	fs := vfs.NewMem()
	if err := write(fs, "/sp", f.snapshot(2), version); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	files := vfstest.Files(t, fs, "/sp")
	for name, b := range files {
		if name == MetadataFile {
			continue
		}
		for _, n := range []int{0, len(b) / 2, len(b) - 1} {
			rewrite(t, fs, "/sp/"+name, b[:n])
			if _, err := Open(fs, "/sp"); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s truncated to %d: Open: %v", name, n, err)
			}
			// Truncated after Open: the read fails.
			if err := readEverything(sp); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s truncated to %d: read: %v", name, n, err)
			}
		}
		rewrite(t, fs, "/sp/"+name, b)
	}
	if err := readEverything(sp); err != nil {
		t.Fatal(err)
	}
}

func TestPathEscapeRefused(t *testing.T) {
	f := newFixture(20, 8, 7)
	fs := vfs.NewMem()
	mustWrite(t, fs, "/sp", f.snapshot(1))
	orig := vfstest.Files(t, fs, "/sp")[MetadataFile]
	for _, name := range []string{"../x.keyed", "/etc/passwd", "a/b", `a\b`, "..", ".", "", MetadataFile, "..x"} {
		var m Metadata
		if err := json.Unmarshal(orig, &m); err != nil {
			t.Fatal(err)
		}
		for i := range m.Operators {
			if m.Operators[i].ID == sumID {
				m.Operators[i].Subtasks[0].Keyed.Name = name
			}
		}
		b, _ := json.Marshal(&m)
		rewrite(t, fs, "/sp/"+MetadataFile, b)
		if _, err := Open(fs, "/sp"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("file name %q: Open: %v", name, err)
		}
	}
	rewrite(t, fs, "/sp/"+MetadataFile, orig)
	if _, err := Open(fs, "/sp"); err != nil {
		t.Fatal(err)
	}
}

func TestMetadataIsReadable(t *testing.T) {
	f := newFixture(5, 4, 8)
	fs := vfs.NewMem()
	mustWrite(t, fs, "/sp", f.snapshot(1))
	b := vfstest.Files(t, fs, "/sp")[MetadataFile]
	for _, want := range []string{`"format": "streamdbg-savepoint"`, `"version": 2`, `"index_size": `, `"index_crc32c": `, `"job_name": "orders"`, `"created": "2024-05-01T12:00:00Z"`,
		`"max_parallelism": 4`, `"crc32c": `, `"state_name": "by_product"`, `"kind": "map"`, `"scope": "operator"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("_metadata lacks %s:\n%s", want, b)
		}
	}
}
