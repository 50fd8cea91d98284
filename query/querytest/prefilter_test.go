package querytest_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// noPushdown hides KeyedScan.Prefilter and Skip from a catalog: every entry
// is decoded and every row goes to the evaluator.
type noPushdown struct{ state.Catalog }

func (c noPushdown) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	scan.Prefilter, scan.Skip = nil, 0
	return c.Catalog.Keyed(scan)
}

// prefilterSavepoint holds states of every type the prefilter decodes, and
// some values whose bytes do not decode (they display as hex).
func prefilterSavepoint(t *testing.T) *savepoint.Savepoint {
	const id = "0123456789abcdef0123456789abcdef"
	metas := []state.StateMeta{
		{StateName: "ints", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "int64"},
		{StateName: "floats", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "float64"},
		{StateName: "strs", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "string"},
		{StateName: "bools", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "bool"},
		{StateName: "json", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "json:x"},
		{StateName: "numstrs", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "string"},
	}
	byKG := map[int][]state.Entry{}
	for i := range 200 {
		key := []byte(fmt.Sprintf("k%03d", i))
		kg := state.KeyGroupFor(key, 8)
		iv := state.Int64.Append(nil, int64(i-100))
		if i%37 == 0 {
			iv = []byte{1, 2, 3} // not an int64
		}
		byKG[kg] = append(byKG[kg],
			state.Entry{State: "bools", KeyGroup: kg, Key: key, Value: state.Bool.Append(nil, i%3 == 0)},
			state.Entry{State: "floats", KeyGroup: kg, Key: key, Value: state.Float64.Append(nil, float64(i)/4-20)},
			state.Entry{State: "ints", KeyGroup: kg, Key: key, Value: iv},
			state.Entry{State: "json", KeyGroup: kg, Key: key, Value: []byte(fmt.Sprintf(`{"n":%d}`, i))},
			// Strings that read as numbers: a row's string never compares
			// as a number, only a constant's does.
			state.Entry{State: "numstrs", KeyGroup: kg, Key: key, Value: []byte([]string{"3", " 4", "5.0", "-7", "x"}[i%5])},
			state.Entry{State: "strs", KeyGroup: kg, Key: key, Value: []byte(fmt.Sprintf("s%d", i%10))})
	}
	for kg := range byKG {
		es := byKG[kg]
		slicesSort(es)
	}
	op := savepoint.OperatorSnapshot{ID: id, UID: "op", Name: "op", Parallelism: 2, MaxParallelism: 8, States: metas}
	for i := range 2 {
		op.Subtasks = append(op.Subtasks, savepoint.SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(8, 2, i),
			Keyed: func(kg int) iter.Seq2[state.Entry, error] {
				return func(yield func(state.Entry, error) bool) {
					for _, e := range byKG[kg] {
						if !yield(e, nil) {
							return
						}
					}
				}
			}})
	}
	dir := filepath.Join(t.TempDir(), "sp")
	if err := savepoint.Write(vfs.Default, dir, &savepoint.Snapshot{JobName: "p", Created: time.Unix(0, 0).UTC(), Operators: []savepoint.OperatorSnapshot{op}}); err != nil {
		t.Fatal(err)
	}
	sp, err := savepoint.Open(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestPrefilterChangesNoResult runs queries whose WHERE the catalog
// decides (in part) on encoded bytes, and compares every result with the
// same query evaluated on fully decoded rows.
func TestPrefilterChangesNoResult(t *testing.T) {
	sp := prefilterSavepoint(t)
	queries := []string{
		"value % 7 = 3",
		"value % 7 = -3",
		"value % -7 = 3",
		"value % 1 = 0",
		"value % 1000 = 7",
		"value > 10 AND value < 50",
		"value >= -5 AND state_name = 'ints'",
		"value BETWEEN -3 AND 9",
		"value NOT BETWEEN -90 AND 90",
		"value IN (1, 2, 3, -7)",
		"value NOT IN (1, 2)",
		"value NOT IN (1, NULL)",
		"-value < -50",
		"value / 0 = 1",
		"value % 0 = 0",
		"value + 1.5 > 3",
		"value * 2 >= 10 AND value - 3 <= 40",
		"value = 2.5",
		"value > 0.5",
		"value = 's3'",
		"value >= 's5'",
		"value = true",
		"value = 1",
		"key = 'k005'",
		"key > 'k150' AND value < 0",
		"key_group < 3",
		"key_group % 2 = 1 AND value > 0",
		"value > 1 AND (key < 'k100' AND value < 90)",
		"value IS NULL",
		"value.n > 190",
		"value > 5 OR key = 'k001'",
		"NOT value > 5",
		// String constants that read as numbers compare with numbers as
		// numbers, with strings as strings.
		"value = '3'",
		"value > '10'",
		"value <= ' -20.5 '",
		"value = '1e1'",
		"value IN ('1', 2, '-7.0')",
		"value NOT IN ('1', '5.0')",
		"value BETWEEN '-3' AND ' 9'",
		"value + 1 = '4'",
		"'5' < value",
		"value = 3 OR value = -7",
		"value = 'x' OR value = '0x10'",
		"key_group = '3'",
		"key_group IN ('1', 2)",
	}
	ctx := context.Background()
	for _, w := range queries {
		for _, sel := range []string{"*", "key, value", "key", "COUNT(*)"} {
			q := fmt.Sprintf("SELECT %s FROM keyed_state WHERE %s", sel, w)
			got := collect(t, ctx, sp, q)
			want := collect(t, ctx, noPushdown{sp}, q)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %d rows %v\nwant %d rows %v", q, len(got), head(got), len(want), head(want))
			}
		}
	}
	// The filters must actually be used: a selective one keeps few rows.
	if n := len(collect(t, ctx, sp, "SELECT key FROM keyed_state WHERE value % 7 = 3")); n == 0 || n > 200 {
		t.Fatalf("value %% 7 = 3 kept %d rows", n)
	}
}

func collect(t *testing.T, ctx context.Context, cat state.Catalog, q string) [][]any {
	t.Helper()
	rows, err := query.RunText(ctx, cat, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out [][]any
	for r, err := range rows.All() {
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, r)
	}
	return out
}

func head(rows [][]any) [][]any { return rows[:min(len(rows), 5)] }

func slicesSort(es []state.Entry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && state.CompareEntries(es[j-1], es[j]) > 0; j-- {
			es[j-1], es[j] = es[j], es[j-1]
		}
	}
}
