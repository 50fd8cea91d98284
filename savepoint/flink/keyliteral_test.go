package flink

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"streamdbg/query"
	"streamdbg/state"
)

// noKeyPushdown hides the key groups and keys a plan pushed down: every entry
// reaches the evaluator.
type noKeyPushdown struct{ *Savepoint }

func (c noKeyPushdown) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	scan.KeyGroups, scan.Keys = nil, nil
	return c.Savepoint.Keyed(scan)
}

// TestKeyLiteralForms queries the Tuple1<Long> keys of the udf samples as
// a Flink user writes them: `key = 3` (the tuple's one field), `key.f0 =
// 3` (the field by its Java name), `key = '3'` and `key = ' 3.0 '` (a
// string that reads as the number) find the same
// rows as `key[0] = 3`, read from the key's one key group (the README's:
// key 3 in group 1, keys 0 and 1 in group 2, key 2 in group 3), and the
// same rows with nothing pushed down. A string that is no number finds
// none.
func TestKeyLiteralForms(t *testing.T) {
	groups := map[int]string{0: "2", 1: "2", 2: "3", 3: "1"}
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "udf-flink2.0-rocksdb-savepoint", "udf-flink1.20-rocksdb-savepoint-native"} {
		t.Run(name, func(t *testing.T) {
			sp := openSample(t, name)
			run := func(cat query.Catalog, where string) []string {
				t.Helper()
				q := "SELECT operator_id, state_name, key_group, value FROM keyed_state WHERE state_name = 'state-name' AND " + where
				rows, err := query.RunText(context.Background(), cat, q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				var out []string
				for r, err := range rows.All() {
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					out = append(out, fmt.Sprint(r))
				}
				slices.Sort(out)
				return out
			}
			for k := range 4 {
				want := run(sp, fmt.Sprintf("key[0] = %d", k))
				// Four operators hold key (k) in state-name, each with
				// the value k.
				if len(want) != 4 {
					t.Fatalf("key[0] = %d: %d rows, want 4: %v", k, len(want), want)
				}
				for _, r := range want {
					if !strings.HasSuffix(r, fmt.Sprintf(" %s %d]", groups[k], k)) {
						t.Fatalf("key[0] = %d: row %s, want key group %s and value %d", k, r, groups[k], k)
					}
				}
				for _, where := range []string{fmt.Sprintf("key = %d", k), fmt.Sprintf("key = '%d'", k), fmt.Sprintf("key = ' %d.0 '", k),
					fmt.Sprintf("key = %d.0", k), fmt.Sprintf("key.f0 = %d", k), fmt.Sprintf("key.f0 = '%d'", k)} {
					if got := run(sp, where); !slices.Equal(got, want) {
						t.Errorf("%s: %v, want %v", where, got, want)
					}
					if got := run(noKeyPushdown{sp}, where); !slices.Equal(got, want) {
						t.Errorf("%s, nothing pushed down: %v, want %v", where, got, want)
					}
					plan := explain(t, sp, "SELECT value FROM keyed_state WHERE state_name = 'state-name' AND "+where)
					if n := strings.Count(plan, "key groups: "+groups[k]+"\n"); n != 4 {
						t.Errorf("%s: %d of 4 states read key group %s alone:\n%s", where, n, groups[k], plan)
					}
				}
			}
			for _, where := range []string{"key = 'x'", "key = '3x'", "key = 3.5", "key.f1 = 3", "key.f00 = 3"} {
				if got := run(sp, where); len(got) != 0 {
					t.Errorf("%s: %v, want no rows", where, got)
				}
			}
		})
	}
}

// TestKeyLiteralFormsSQL: a Flink SQL key of one BIGINT column (ROW<e
// BIGINT>) is found by 2, '2' and ' 2.0' alike, reading its key group
// alone (93: the group the rows of key 2 are in, every entry read). The sample holds 15
// rows of key 2 over its keyed states.
func TestKeyLiteralFormsSQL(t *testing.T) {
	sp := openSample(t, "sql/stream-exec-group-aggregate_1__group-aggregate-udf-with-merge/savepoint")
	count := func(cat query.Catalog, where string) (n int64, kgs []int64) {
		t.Helper()
		rows, err := query.RunText(context.Background(), cat, "SELECT key_group FROM keyed_state WHERE "+where)
		if err != nil {
			t.Fatal(err)
		}
		for r, err := range rows.All() {
			if err != nil {
				t.Fatal(err)
			}
			n++
			kgs = append(kgs, r[0].(int64))
		}
		slices.Sort(kgs)
		return n, slices.Compact(kgs)
	}
	wantN, wantKGs := count(noKeyPushdown{sp}, "key = 2")
	if wantN != 15 || !slices.Equal(wantKGs, []int64{93}) {
		t.Fatalf("key = 2, every entry read: %d rows in key groups %v, want 15 in [93]", wantN, wantKGs)
	}
	for _, where := range []string{"key = 2", "key = '2'", "key = ' 2.0'"} {
		if n, _ := count(sp, where); n != wantN {
			t.Errorf("%s: %d rows, want %d", where, n, wantN)
		}
		plan := explain(t, sp, "SELECT count(*) FROM keyed_state WHERE "+where)
		if strings.Contains(plan, "key groups: all") || !strings.Contains(plan, "key groups: 93\n") {
			t.Errorf("%s: not read from key group 93 alone:\n%s", where, plan)
		}
	}
}

// TestTupleKeyLiterals: a Tuple2<Long, String> key's hashCode (Java's:
// 31*f0.hashCode() + f1.hashCode(), Long 1 → 1, "x" → 120, so 151) and
// bytes from its literal as a list, as an object of f0 and f1 (key.f0 = 1
// AND key.f1 = 'x'), and with f0 as a numeric string; anything else is no
// key of that type.
func TestTupleKeyLiterals(t *testing.T) {
	ser := &tupleSer{class: "org.apache.flink.api.java.tuple.Tuple2", fields: []serializer{longSer, stringSer}}
	wantBytes := append([]byte{0, 0, 0, 0, 0, 0, 0, 1}, 2, 'x') // Long big-endian, then the string's length+1 and its char
	for _, lit := range []any{
		[]any{int64(1), "x"},
		map[string]any{"f0": int64(1), "f1": "x"},
		map[string]any{"f1": "x", "f0": "1"},
	} {
		h, ok := javaHashCode(ser, lit)
		if !ok || h != 151 {
			t.Errorf("javaHashCode(%v) = %d, %v; want 151", lit, h, ok)
		}
		b, ok := encodeKey(ser, lit)
		if !ok || string(b) != string(wantBytes) {
			t.Errorf("encodeKey(%v) = %v, %v; want %v", lit, b, ok, wantBytes)
		}
	}
	for _, lit := range []any{
		int64(1),
		[]any{int64(1)},
		map[string]any{"f0": int64(1)},
		map[string]any{"f0": int64(1), "f2": "x"},
		map[string]any{"f0": int64(1), "b": "x"},
		[]any{"one", "x"},
	} {
		if h, ok := javaHashCode(ser, lit); ok {
			t.Errorf("javaHashCode(%v) = %d, true; want no key", lit, h)
		}
		if b, ok := encodeKey(ser, lit); ok {
			t.Errorf("encodeKey(%v) = %v, true; want no key", lit, b)
		}
	}
}

// explain is the EXPLAIN of text on sp.
func explain(t *testing.T, sp *Savepoint, text string) string {
	t.Helper()
	q, err := query.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := query.Explain(sp, q)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
