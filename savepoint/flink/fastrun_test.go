package flink

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"streamdbg/savepoint/flink/rocksdb/rocksdbtest"
	"streamdbg/state"
)

// scanBoth scans dir with fastRun on and off and fails unless both give the
// same rows, in the same order, and the same error; it returns the rows.
func scanBoth(t *testing.T, dir string, scan state.KeyedScan) ([]string, error) {
	t.Helper()
	rows := func() ([]string, error) {
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for r, err := range sp.Keyed(scan) {
			if err != nil {
				return out, err
			}
			out = append(out, fmt.Sprintf("%d %s %v %v %v", r.KeyGroup, r.StateName, r.Key, r.Namespace, r.Value))
		}
		return out, nil
	}
	fast, fastErr := rows()
	fastRuns = false
	slow, slowErr := rows()
	fastRuns = true
	if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("error with fast runs %v, pair by pair %v", fastErr, slowErr)
	}
	if len(fast) != len(slow) {
		t.Fatalf("%d rows with fast runs, %d pair by pair", len(fast), len(slow))
	}
	for i := range slow {
		if fast[i] != slow[i] {
			t.Fatalf("row %d: %q with fast runs, %q pair by pair", i, fast[i], slow[i])
		}
	}
	return fast, fastErr
}

// patched writes a synthetic savepoint of keys keys and applies patch to
// its keyed file (with the key-group offsets).
func patched(t *testing.T, o synthOptions, patch func(file []byte, offsets []int64)) string {
	t.Helper()
	dir, offsets := writeSyntheticOffsets(t, o)
	path := filepath.Join(dir, "keyed-0")
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	patch(file, offsets)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A pair of the synthetic file: 4+10 key bytes (key group, Long, the
// VoidNamespace byte), 4+8 value bytes; a key group starts with a 2-byte
// state id.
const synthPair = 4 + 10 + 4 + 8

func TestFastRunMatchesPairByPair(t *testing.T) {
	const keys = 20_000
	for _, tc := range []struct {
		name string
		o    synthOptions
	}{
		{"plain", synthOptions{keys: keys}},
		{"snappy", synthOptions{keys: keys, compressed: true}},
		{"two-byte prefix", synthOptions{keys: keys, maxParallel: 1024}},
		{"string keys", synthOptions{keys: keys, stringKeys: true}},
		{"string keys, two-byte prefix", synthOptions{keys: keys, stringKeys: true, maxParallel: 1024}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := scanBoth(t, writeSynthetic(t, tc.o), state.KeyedScan{})
			if err != nil || len(rows) != keys {
				t.Fatalf("%d rows, %v; want %d, no error", len(rows), err, keys)
			}
			// Against the writer, not the reader: key k holds 2k.
			format := "%d %s %d %s %d"
			if tc.o.stringKeys {
				format = "%d %s key_%d %s %d"
			}
			for _, r := range rows {
				var kg int
				var name, ns string
				var k, v int64
				if _, err := fmt.Sscanf(r, format, &kg, &name, &k, &ns, &v); err != nil || v != 2*k {
					t.Fatalf("row %q: want value %d (%v)", r, 2*k, err)
				}
			}
		})
	}
	t.Run("string keys named", func(t *testing.T) {
		rows, err := scanBoth(t, writeSynthetic(t, synthOptions{keys: keys, stringKeys: true}), state.KeyedScan{Keys: []any{synthStringKey(7), synthStringKey(19_999), "key_x"}})
		if err != nil || len(rows) != 2 {
			t.Fatalf("rows %q, %v; want keys 7 and 19999", rows, err)
		}
	})
	t.Run("keys", func(t *testing.T) {
		rows, err := scanBoth(t, writeSynthetic(t, synthOptions{keys: keys}), state.KeyedScan{Keys: []any{int64(7), int64(19_999), int64(40_000)}})
		if err != nil || len(rows) != 2 {
			t.Fatalf("rows %q, %v; want keys 7 and 19999", rows, err)
		}
	})
}

// TestFastRunLeavesOddPairs breaks pairs in the middle of a run: the fast
// run stops before each, and the pair-by-pair path gives the same rows up
// to it and the same error, at the same offset.
func TestFastRunLeavesOddPairs(t *testing.T) {
	const kg, nth = 70, 5
	at := func(offsets []int64) int64 { return offsets[kg] + 2 + nth*synthPair }
	for _, tc := range []struct {
		name  string
		patch func(file []byte, at int64)
		want  string
	}{
		{"another key group", func(f []byte, at int64) { f[at+4] = kg + 1 }, "key group"},
		{"short key", func(f []byte, at int64) { binary.BigEndian.PutUint32(f[at:], 9) }, "offset"},
		{"long value", func(f []byte, at int64) { binary.BigEndian.PutUint32(f[at+14:], 9) }, "offset"},
		{"length past the end", func(f []byte, at int64) { binary.BigEndian.PutUint32(f[at:], 1<<30) }, "does not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var where int64
			dir := patched(t, synthOptions{keys: 20_000}, func(f []byte, offsets []int64) {
				where = at(offsets)
				tc.patch(f, where)
			})
			rows, err := scanBoth(t, dir, state.KeyedScan{})
			if err == nil {
				t.Fatalf("%d rows, no error; want an error at key group %d's pair %d (offset %d)", len(rows), kg, nth, where)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			n := rowsOfGroup(rows, kg)
			if n != nth {
				t.Fatalf("%d rows of key group %d before the error, want %d", n, kg, nth)
			}
		})
	}
}

// TestFastStringRunLeavesOddKeys changes String keys in the middle of a
// run into ones fastStringRun does not take (a char that is not ASCII, a
// null String, a length that disagrees with the key's): both paths give
// the same rows and errors.
func TestFastStringRunLeavesOddKeys(t *testing.T) {
	const kg, nth = 70, 5
	// A pair: 4+14 key bytes (key group, length+1, "key_NNNNNNN", the
	// VoidNamespace byte), 4+8 value bytes.
	const pair = 4 + 14 + 4 + 8
	for _, tc := range []struct {
		name  string
		patch func(f []byte, at int64)
	}{
		{"char above 0x7f", func(f []byte, at int64) { f[at+4+2+5] = 0xc3 }},
		{"null string", func(f []byte, at int64) { f[at+4+1] = 0 }},
		{"shorter string", func(f []byte, at int64) { f[at+4+1] = 5 }},
		{"another key group", func(f []byte, at int64) { f[at+4] = kg + 1 }},
		{"long value", func(f []byte, at int64) { binary.BigEndian.PutUint32(f[at+4+14:], 9) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := patched(t, synthOptions{keys: 20_000, stringKeys: true}, func(f []byte, offsets []int64) {
				at := offsets[kg] + 2 + nth*pair
				if f[at+4] != kg || f[at+5] != 12 || string(f[at+6:at+10]) != "key_" {
					t.Fatalf("no pair at %d: % x", at, f[at:at+pair])
				}
				tc.patch(f, at)
			})
			rows, err := scanBoth(t, dir, state.KeyedScan{})
			n := rowsOfGroup(rows, kg)
			// Up to the odd pair, every row is the writer's.
			if n < nth {
				t.Fatalf("%d rows of key group %d (error %v), want at least the %d before the odd pair", n, kg, err, nth)
			}
		})
	}
}

// stringValue is StringValue.writeString of s: its length+1, then each
// UTF-16 code unit, as varints.
func stringValue(s string) []byte {
	units := utf16.Encode([]rune(s))
	b := binary.AppendUvarint(nil, uint64(len(units)+1))
	for _, u := range units {
		b = binary.AppendUvarint(b, uint64(u))
	}
	return b
}

// TestNativeFastPathMatchesDecodePair: a RocksDB native scan gives the same
// rows with the fast path (fastPair per entry) as with decodePair, for
// Long and String keys, String keys the fast path must leave to decodePair
// among them, and a scan naming keys.
func TestNativeFastPathMatchesDecodePair(t *testing.T) {
	const keys = 5000
	for _, stringKeys := range []bool{false, true} {
		t.Run(fmt.Sprintf("string keys %v", stringKeys), func(t *testing.T) {
			dir, _, _ := writeNativeCounts(t, keys, stringKeys, nil)
			rows, err := scanBoth(t, dir, state.KeyedScan{})
			if err != nil || len(rows) != keys {
				t.Fatalf("%d rows, %v; want %d", len(rows), err, keys)
			}
		})
	}
	odd := []string{"", "caf\u00e9", strings.Repeat("k", 130), "\U0001F600 emoji"}
	var extra []rocksdbtest.Entry
	for i, s := range odd {
		kg := state.KeyGroupForHash(stringHashCode(s), 256)
		key := append([]byte{byte(kg >> 8), byte(kg)}, stringValue(s)...)
		extra = append(extra, rocksdbtest.Entry{Key: append(key, 0), Type: rocksdbtest.Put, Value: be64(int64(1000 + i))})
	}
	dir, _, _ := writeNativeCounts(t, keys, true, extra)
	rows, err := scanBoth(t, dir, state.KeyedScan{})
	if err != nil || len(rows) != keys+len(odd) {
		t.Fatalf("%d rows, %v; want %d", len(rows), err, keys+len(odd))
	}
	for i, s := range odd {
		want := fmt.Sprintf(" count %s <nil> %d", s, 1000+i)
		found := false
		for _, r := range rows {
			found = found || strings.HasSuffix(r, want)
		}
		if !found {
			t.Errorf("no row ending %q", want)
		}
	}
	named, err := scanBoth(t, dir, state.KeyedScan{Keys: []any{synthStringKey(42), "caf\u00e9", "nope"}})
	if err != nil || len(named) != 2 {
		t.Fatalf("named keys: rows %q, %v; want 2", named, err)
	}
}

// TestNativeRowData reads writeNativeAgg's RocksDB native savepoint (the
// data of BenchmarkNativeScan/rowdata): every key's accumulator row, as
// the writer made it.
func TestNativeRowData(t *testing.T) {
	const keys = 3000
	dir, _, _ := writeNativeAgg(t, keys)
	seen := map[int64]bool{}
	for r, err := range mustOpen(t, dir).Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		key, ok := r.Key.(*state.Row)
		if !ok || len(key.Values) != 1 {
			t.Fatalf("row %+v: key is not a RowData of one field", r)
		}
		k, _ := key.Values[0].(int64)
		want := fmt.Sprintf("+I[%d, %d, %d, 'acc%d']", k, 2*k, 3*k, k%10)
		if got := canon(r.Value.(*state.Row)); got != want || seen[k] {
			t.Fatalf("key %d: %s, want %s (seen before: %v)", k, got, want, seen[k])
		}
		seen[k] = true
	}
	if len(seen) != keys {
		t.Fatalf("%d keys, want %d", len(seen), keys)
	}
}

// rowsOfGroup counts the rows (as scanBoth writes them) of key group kg.
func rowsOfGroup(rows []string, kg int) int {
	n := 0
	for _, r := range rows {
		var g int
		if _, err := fmt.Sscanf(r, "%d", &g); err == nil && g == kg {
			n++
		}
	}
	return n
}
