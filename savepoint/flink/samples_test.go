package flink

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"streamdbg/state"
)

// The samples are real savepoints written by Flink's own tests; see
// ../shared/flink-savepoints/README.md for what each holds.
const samplesDir = "../../../shared/flink-savepoints"

func openSample(t testing.TB, name string) *Savepoint {
	t.Helper()
	dir := filepath.Join(samplesDir, name)
	if !requireSample(t, dir) {
		t.Skipf("sample %s absent", name)
	}
	if !IsFlink(dir) {
		t.Fatalf("IsFlink(%s) = false", name)
	}
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

var dragons = []any{"Here be dragons!", "Here be more dragons!", "Here be yet more dragons!", "Here be the mostest dragons!"}

func keyedRows(t *testing.T, sp *Savepoint, scan state.KeyedScan) []state.KeyedRow {
	t.Helper()
	var out []state.KeyedRow
	for r, err := range sp.Keyed(scan) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func operatorRows(t *testing.T, sp *Savepoint, scan state.OperatorScan) []state.OperatorRow {
	t.Helper()
	var out []state.OperatorRow
	for r, err := range sp.OperatorState(scan) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func timerRows(t *testing.T, sp *Savepoint, scan state.TimerScan) []state.TimerRow {
	t.Helper()
	var out []state.TimerRow
	for r, err := range sp.Timers(scan) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func values(rows []state.OperatorRow) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r.Value
	}
	return out
}

func findMeta(t *testing.T, sp *Savepoint, opID, name string) state.StateMeta {
	t.Helper()
	for _, m := range sp.States() {
		if m.OperatorID == opID && m.StateName == name {
			return m
		}
	}
	t.Fatalf("no state %s.%s", opID, name)
	return state.StateMeta{}
}

// checkUDF asserts the contents of the two StatefulJobSnapshotMigrationITCase
// savepoints, which hold the same entries.
func checkUDF(t *testing.T, sp *Savepoint) {
	rows := keyedRows(t, sp, state.KeyedScan{StateName: "state-name"})
	if len(rows) != 16 {
		t.Fatalf("%d keyed rows of state-name, want 16", len(rows))
	}
	wantKG := map[int64]int{0: 2, 1: 2, 2: 3, 3: 1}
	for _, op := range []string{"d5c8b168c6cbfe8c507a10f88b325243", "dab25811652d3d4983a30c6e4afacb1c", "4b818c7923a927796d24b727201ba34d", "41e91aae0bee218c44306cf7d21940ad"} {
		rows := keyedRows(t, sp, state.KeyedScan{OperatorID: op, StateName: "state-name"})
		var vals []int64
		for _, r := range rows {
			key := r.Key.([]any)[0].(int64)
			if r.Value != key || r.KeyGroup != wantKG[key] || r.Subtask != r.KeyGroup || r.Kind != state.KindValue {
				t.Errorf("%s: row %+v", op, r)
			}
			timely := op == "4b818c7923a927796d24b727201ba34d" || op == "41e91aae0bee218c44306cf7d21940ad"
			if timely && r.Namespace != key || !timely && r.Namespace != nil {
				t.Errorf("%s: namespace %v for key %d", op, r.Namespace, key)
			}
			vals = append(vals, r.Value.(int64))
		}
		slices.Sort(vals)
		if !slices.Equal(vals, []int64{0, 1, 2, 3}) {
			t.Errorf("%s: values %v", op, vals)
		}
		m := findMeta(t, sp, op, "state-name")
		if m.Scope != state.ScopeKeyed || m.KeyType != "Tuple1<java.lang.Long>" || m.ValueType != "java.lang.Long" {
			t.Errorf("%s: meta %+v", op, m)
		}
		kg, ok := sp.KeyGroupOf(m, []any{int64(3)})
		if !ok || kg != 1 {
			t.Errorf("KeyGroupOf((3)) = %d, %v; want 1", kg, ok)
		}
	}

	timers := timerRows(t, sp, state.TimerScan{})
	if len(timers) != 16 {
		t.Fatalf("%d timers, want 16", len(timers))
	}
	for _, tm := range timers {
		key := tm.Key.([]any)[0].(int64)
		switch {
		case tm.Namespace != key:
			t.Errorf("timer %+v: namespace is not the key", tm)
		case tm.Domain == "event" && tm.Timestamp != math.MinInt64+10:
			t.Errorf("event timer %+v", tm)
		case tm.Domain == "processing" && tm.Timestamp < 1_700_000_000_000:
			t.Errorf("processing timer %+v", tm)
		case tm.Domain != "event" && tm.Domain != "processing":
			t.Errorf("timer domain %q", tm.Domain)
		}
	}
	for _, name := range []string{"_timer_state/event_timer", "_timer_state/processing_timer"} {
		if m := findMeta(t, sp, "41e91aae0bee218c44306cf7d21940ad", name); m.Kind != state.KindTimers {
			t.Errorf("%s: kind %s", name, m.Kind)
		}
	}

	split := operatorRows(t, sp, state.OperatorScan{OperatorID: "69f32d314b97c6f7f9ed7873983167f2", StateName: "source-state"})
	union := operatorRows(t, sp, state.OperatorScan{OperatorID: "1f2b5df5a66154aca61fcb26193792be", StateName: "source-state"})
	if !reflect.DeepEqual(values(split), dragons) || split[0].Kind != state.KindSplitList {
		t.Errorf("split list %+v", split)
	}
	if !reflect.DeepEqual(values(union), dragons) || union[0].Kind != state.KindUnionList {
		t.Errorf("union list %+v", union)
	}
	for i, r := range split {
		if r.Position != i {
			t.Errorf("position %d at %d", r.Position, i)
		}
	}
}

func TestUDFHashmap120(t *testing.T) {
	sp := openSample(t, "udf-flink1.20-hashmap-savepoint")
	if sp.Version() != 4 {
		t.Errorf("version %d", sp.Version())
	}
	checkUDF(t, sp)
}

func TestUDFRocksDB20(t *testing.T) {
	sp := openSample(t, "udf-flink2.0-rocksdb-savepoint")
	if sp.Version() != 5 {
		t.Errorf("version %d", sp.Version())
	}
	checkUDF(t, sp)
	var src state.OperatorInfo
	for _, op := range sp.Operators() {
		if op.ID == "69f32d314b97c6f7f9ed7873983167f2" {
			src = op
		}
	}
	if src.UID != "CheckpointingSource1" || src.Name != "Source: Custom Source" || src.Parallelism != 1 || src.MaxParallelism != 4 {
		t.Errorf("operator %+v", src)
	}
}

func TestBroadcast120(t *testing.T) {
	sp := openSample(t, "broadcast-flink1.20-hashmap-savepoint")
	for _, tc := range []struct {
		op, state string
		want      map[any]any
	}{
		{"12d7d939fd56473cac7cff0603179a41", "broadcast-state-1", map[any]any{int64(0): int64(0), int64(1): int64(1), int64(2): int64(2), int64(3): int64(3)}},
		{"12d7d939fd56473cac7cff0603179a41", "broadcast-state-2", map[any]any{"0": int64(0), "1": int64(1), "2": int64(2), "3": int64(3)}},
		{"56a26c4c54bda3adf3700194db4afe93", "broadcast-state-3", map[any]any{int64(0): "0", int64(1): "1", int64(2): "2", int64(3): "3"}},
	} {
		rows := operatorRows(t, sp, state.OperatorScan{OperatorID: tc.op, StateName: tc.state})
		per := map[int]map[any]any{}
		for _, r := range rows {
			if r.Kind != state.KindBroadcast {
				t.Errorf("%s: kind %s", tc.state, r.Kind)
			}
			if per[r.Subtask] == nil {
				per[r.Subtask] = map[any]any{}
			}
			per[r.Subtask][r.Key] = r.Value
		}
		if len(per) != 4 {
			t.Errorf("%s in %d subtasks, want 4", tc.state, len(per))
		}
		for st, m := range per {
			if !reflect.DeepEqual(m, tc.want) {
				t.Errorf("%s subtask %d: %v", tc.state, st, m)
			}
		}
	}
	for _, op := range []string{"69f32d314b97c6f7f9ed7873983167f2", "81afaf64abeedc40a0f29989b81a3659", "1f2b5df5a66154aca61fcb26193792be", "63dd9c79b328282531c0a8c5cb466735"} {
		if got := values(operatorRows(t, sp, state.OperatorScan{OperatorID: op})); !reflect.DeepEqual(got, dragons) {
			t.Errorf("%s: %v", op, got)
		}
	}
	if n := len(timerRows(t, sp, state.TimerScan{})); n != 0 {
		t.Errorf("%d timers, want none", n)
	}
	if m := findMeta(t, sp, "12d7d939fd56473cac7cff0603179a41", "_timer_state/event_user-timers"); m.Kind != state.KindTimers || m.KeyType != "java.lang.Long" {
		t.Errorf("timer meta %+v", m)
	}
}

func TestNonKeyed22(t *testing.T) {
	sp := openSample(t, "operatorstate-nonKeyed-flink2.2")
	if sp.Version() != 6 {
		t.Errorf("version %d", sp.Version())
	}
	for uid, id := range map[string]string{"first": "adf090656b210b1609ad3203d4ee7329", "second": "6730ef7375fb60f9d9bbdfdfd174d803", "third": "013ef814c76e319e5fe9a82a3ba14933"} {
		rows := operatorRows(t, sp, state.OperatorScan{OperatorID: id, StateName: "_default_"})
		if len(rows) != 4 {
			t.Fatalf("%s: %d rows", uid, len(rows))
		}
		for _, r := range rows {
			if want := fmt.Sprintf("%s%d", uid, r.Subtask); r.Value != want {
				t.Errorf("%s subtask %d: %v, want %q", uid, r.Subtask, r.Value, want)
			}
		}
		if m := findMeta(t, sp, id, "_default_"); m.ValueType != "java-serialized" || m.Kind != state.KindSplitList {
			t.Errorf("meta %+v", m)
		}
		// The operator selector also takes the uid.
		if n := len(operatorRows(t, sp, state.OperatorScan{OperatorID: uid})); n != 4 {
			t.Errorf("scan by uid %s: %d rows", uid, n)
		}
	}
}

func TestSPAPITableState(t *testing.T) {
	sp := openSample(t, "spapi-table-state")
	if sp.CheckpointID() != 10 || sp.Version() != 5 {
		t.Errorf("checkpoint %d, version %d", sp.CheckpointID(), sp.Version())
	}
	if ms := sp.MasterStates(); len(ms) != 1 || ms[0].Size != 8 {
		t.Errorf("master states %+v", ms)
	}
	ops := sp.Operators()
	if len(ops) != 7 {
		t.Fatalf("%d operators", len(ops))
	}
	// A small savepoint's StateMeta counts its keyed entries: 10 keys per
	// state; the broadcast map has 11 entries in each of 2 subtasks.
	counts := map[string]int64{}
	for _, m := range sp.States() {
		counts[m.OperatorName+"."+m.StateName] = m.Entries
	}
	if counts["keyed-state-process.KeyedPrimitiveValue"] != 10 || counts["keyed-state-process.KeyedPrimitiveValueMap"] != 10 ||
		counts["broadcast-process.LongBroadcastState"] != 22 {
		t.Errorf("entry counts %v", counts)
	}
	if i := slices.IndexFunc(ops, func(o state.OperatorInfo) bool { return o.ID == "3a6f51704798c4f418be51bfb6813b77" }); i < 0 ||
		ops[i].Name != "Source: broadcast-source" || ops[i].UID != "broadcast-source-uid" || ops[i].Parallelism != 1 {
		t.Errorf("operators %+v", ops)
	}

	const op = "928f3b38bde6af749ed4cb45aa1237db"
	kgOf := []int{94, 86, 127, 113, 7, 126, 18, 113, 15, 51}
	got := map[string]map[int64]any{}
	for _, r := range keyedRows(t, sp, state.KeyedScan{OperatorID: op}) {
		k := r.Key.(int64)
		if r.KeyGroup != kgOf[k] || r.Namespace != nil {
			t.Errorf("row %+v", r)
		}
		if got[r.StateName] == nil {
			got[r.StateName] = map[int64]any{}
		}
		switch r.Kind {
		case state.KindList:
			if r.UserKey != int64(0) {
				t.Errorf("list position %v", r.UserKey)
			}
			got[r.StateName][k] = []any{r.Value}
		case state.KindMap:
			got[r.StateName][k] = map[string]any{r.UserKey.(string): r.Value}
		default:
			got[r.StateName][k] = r.Value
		}
	}
	for k := range int64(10) {
		want := map[string]any{
			"KeyedPrimitiveValue":     int64(1),
			"KeyedPojoValue":          map[string]any{"privateLong": int64(1), "publicLong": int64(1)},
			"KeyedPrimitiveValueList": []any{k},
			"KeyedPrimitiveValueMap":  map[string]any{fmt.Sprint(k): k},
			"KeyedGenericAvroValue":   map[string]any{"longData": int64(1)},
			"KeyedSpecificAvroValue":  map[string]any{"longData": int64(1)},
		}
		for name, w := range want {
			if !reflect.DeepEqual(got[name][k], w) {
				t.Errorf("%s[%d] = %#v, want %#v", name, k, got[name][k], w)
			}
		}
	}
	for name, kind := range map[string]state.Kind{"KeyedPrimitiveValueList": state.KindList, "KeyedPrimitiveValueMap": state.KindMap, "KeyedPojoValue": state.KindValue} {
		if m := findMeta(t, sp, op, name); m.Kind != kind {
			t.Errorf("%s: kind %s", name, m.Kind)
		}
	}
	if m := findMeta(t, sp, op, "KeyedPrimitiveValueMap"); m.UserKeyType != "java.lang.String" || m.ValueType != "java.lang.Long" {
		t.Errorf("map meta %+v", m)
	}
	for _, bop := range []string{"keyed-broadcast-process-uid", "broadcast-process-uid"} {
		rows := operatorRows(t, sp, state.OperatorScan{OperatorID: bop, StateName: "LongBroadcastState"})
		if len(rows) != 22 {
			t.Errorf("%s: %d broadcast rows, want 11 per subtask", bop, len(rows))
		}
		for _, r := range rows {
			if r.Key != r.Value || r.Key.(int64) > 10 {
				t.Errorf("%s: %+v", bop, r)
			}
		}
	}
}

func TestTypeSerNegative(t *testing.T) {
	sp := openSample(t, "typeser-flink1.16-hashmap-savepoint")
	const class = "org.apache.flink.test.migration.TypeSerializerSnapshotMigrationITCase$TestSerializerSnapshot"
	var keyedOp string
	for _, op := range sp.Operators() {
		for _, u := range op.Unsupported {
			if strings.Contains(u, class) {
				keyedOp = op.ID
			}
		}
	}
	if keyedOp == "" {
		t.Fatalf("no operator reports the unknown class: %+v", sp.Operators())
	}
	if m := findMeta(t, sp, keyedOp, "testState"); m.ValueType != class || m.Kind != state.KindValue {
		t.Errorf("testState meta %+v: want the serializer class as its value type", m)
	}
	var err error
	for _, e := range sp.Keyed(state.KeyedScan{OperatorID: keyedOp}) {
		err = e
	}
	var u *UnknownSerializerError
	if !errors.As(err, &u) || u.Class != class || !errors.Is(err, ErrUnsupported) {
		t.Errorf("scan error %v, want the unknown class", err)
	}
	if !strings.HasPrefix(err.Error(), "flink: ") {
		t.Errorf("error %q lacks the package prefix", err)
	}
	// A scan of everything skips the unreadable file.
	if rows := keyedRows(t, sp, state.KeyedScan{}); len(rows) != 0 {
		t.Errorf("%d keyed rows", len(rows))
	}
	if got := values(operatorRows(t, sp, state.OperatorScan{StateName: "source-state"})); !reflect.DeepEqual(got, dragons) {
		t.Errorf("source-state %v", got)
	}
}

// TestRocksDBNative120 reads the native RocksDB savepoint that issue 9
// listed as unsupported (issue 12): the same entries as the heap savepoint
// of the job, and nothing reported unreadable.
func TestRocksDBNative120(t *testing.T) {
	sp := openSample(t, "udf-flink1.20-rocksdb-savepoint-native")
	ops := sp.Operators()
	if len(ops) != 8 {
		t.Fatalf("%d operators", len(ops))
	}
	for _, op := range ops {
		if len(op.Unsupported) != 0 {
			t.Errorf("%s: %v", op.ID, op.Unsupported)
		}
	}
	checkUDF(t, sp)
}

func TestIsFlinkOnOtherDirs(t *testing.T) {
	dir := t.TempDir()
	if IsFlink(dir) {
		t.Error("empty dir is Flink")
	}
	os.WriteFile(filepath.Join(dir, "_metadata"), []byte(`{"version": 1}`), 0o644)
	if IsFlink(dir) {
		t.Error("JSON metadata is Flink")
	}
	if _, err := Open(dir); err == nil || !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open: %v", err)
	}
}

// TestKeyFilterSkipsOtherKeys: a scan with KeyedScan.Keys yields exactly the
// rows of those keys (the query still filters; the reader must never drop a
// row of a wanted key).
func TestKeyFilterSkipsOtherKeys(t *testing.T) {
	sp := openSample(t, "spapi-table-state")
	count := func(scan state.KeyedScan) (n int, keys map[any]bool) {
		keys = map[any]bool{}
		for r, err := range sp.Keyed(scan) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			keys[r.Key] = true
		}
		return n, keys
	}
	all, _ := count(state.KeyedScan{OperatorID: "928f3b38bde6af749ed4cb45aa1237db"})
	n, keys := count(state.KeyedScan{OperatorID: "928f3b38bde6af749ed4cb45aa1237db", Keys: []any{int64(3), float64(7)}})
	if all != 60 || n != 12 || len(keys) != 2 || !keys[int64(3)] || !keys[int64(7)] {
		t.Fatalf("all %d rows; filtered %d rows of keys %v, want 12 rows of keys 3 and 7", all, n, keys)
	}
	// A literal the filter cannot compare with a Long keeps every row.
	if n, _ := count(state.KeyedScan{OperatorID: "928f3b38bde6af749ed4cb45aa1237db", Keys: []any{true}}); n != all {
		t.Fatalf("an incomparable literal dropped rows: %d of %d", n, all)
	}
	// The canonical layout skips other keys before decoding their values:
	// Tuple1<Long> keys of the udf savepoint, against a tuple literal.
	udf := openSample(t, "udf-flink1.20-hashmap-savepoint")
	var got []any
	for r, err := range udf.Keyed(state.KeyedScan{StateName: "state-name", Keys: []any{[]any{int64(2)}}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Value)
	}
	if len(got) != 4 { // key (2) in each of the 4 keyed operators
		t.Fatalf("rows of key (2): %v", got)
	}
	for _, tc := range []struct {
		a, b any
		diff bool
	}{
		{int64(3), int64(3), false}, {int64(3), float64(3), false}, {int64(3), int64(4), true},
		{"a", "b", true}, {"a", int64(1), false}, {[]any{int64(1)}, int64(1), false}, {[]any{int64(1)}, int64(2), true},
		{[]any{int64(1), "x"}, []any{int64(1), "y"}, true}, {[]any{int64(1), "x"}, []any{int64(1)}, false},
	} {
		if got := surelyDifferent(tc.a, tc.b); got != tc.diff {
			t.Errorf("surelyDifferent(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}
