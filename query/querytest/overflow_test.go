package querytest_test

import (
	"context"
	"iter"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// bigSavepoint holds int64 values at the ends of the range under keys
// max, max-1, five, min.
func bigSavepoint(t *testing.T) *savepoint.Savepoint {
	const id = "0123456789abcdef0123456789abcdef"
	vals := map[string]int64{"max": math.MaxInt64, "max-1": math.MaxInt64 - 1, "five": 5, "min": math.MinInt64}
	byKG := map[int][]state.Entry{}
	for k, v := range vals {
		kg := state.KeyGroupFor([]byte(k), 4)
		byKG[kg] = append(byKG[kg], state.Entry{State: "big", KeyGroup: kg, Key: []byte(k), Value: state.Int64.Append(nil, v)})
	}
	for kg := range byKG {
		slicesSort(byKG[kg])
	}
	op := savepoint.OperatorSnapshot{ID: id, UID: "op", Name: "op", Parallelism: 1, MaxParallelism: 4,
		States: []state.StateMeta{{StateName: "big", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "void", ValueType: "int64"}},
		Subtasks: []savepoint.SubtaskSnapshot{{Index: 0, KeyGroups: state.KeyGroupRange{Start: 0, End: 3},
			Keyed: func(kg int) iter.Seq2[state.Entry, error] {
				return func(yield func(state.Entry, error) bool) {
					for _, e := range byKG[kg] {
						if !yield(e, nil) {
							return
						}
					}
				}
			}}}}
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

// int64 overflow in a query is an error naming the expression and its
// position, with or without pushdown; SUM fails only when the exact total
// does not fit; AVG is exact. (Before: SUM, AVG and + wrapped: SUM of
// max and max-1 was -3.)
func TestIntegerOverflow(t *testing.T) {
	sp := bigSavepoint(t)
	for _, cat := range []query.Catalog{sp, noPushdown{sp}} {
		for _, tc := range []struct {
			q, want string
		}{
			{"SELECT SUM(value) FROM keyed_state WHERE value > 0", "1:8: integer overflow: SUM(value) is 1.84467e+19, more than int64 holds"},
			{"SELECT key FROM keyed_state WHERE value + 1 > 0", "1:41: integer overflow: value + 1 does not fit in int64"},
			{"SELECT key FROM keyed_state WHERE value * 2 = 10 AND key = 'max'", "integer overflow: value * 2 does not fit in int64"},
			{"SELECT key FROM keyed_state WHERE value - 1 > 0", "integer overflow: value - 1 does not fit in int64"},
			{"SELECT -value FROM keyed_state", "1:8: integer overflow: -value does not fit in int64"},
			{"SELECT key FROM keyed_state WHERE value / -1 > 0", "integer overflow: value / -1 does not fit in int64"},
		} {
			rows, err := query.RunText(context.Background(), cat, tc.q)
			if err == nil {
				var all [][]any
				all, err = drain(rows)
				if err == nil {
					t.Fatalf("%s: rows %v, want an overflow error", tc.q, all)
				}
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: %v\nwant %q", tc.q, err, tc.want)
			}
		}
		for _, tc := range []struct {
			q    string
			want any
		}{
			// (2^63-1) + (2^63-2) + 5 over 3, computed exactly, then rounded.
			{"SELECT AVG(value) FROM keyed_state WHERE value > 0", 6148914691236517206.0},
			// The total fits though max+5 alone would not.
			{"SELECT SUM(value) FROM keyed_state WHERE key <> 'max-1'", int64(4)},
			// All four: 2^63+2 over 4, beyond int64 on the way.
			{"SELECT AVG(value) FROM keyed_state", (math.MaxInt64 + 3) / 4.0},
			{"SELECT value % -1 FROM keyed_state WHERE key = 'min'", int64(0)},
			{"SELECT value + 0 FROM keyed_state WHERE key = 'max'", int64(math.MaxInt64)},
		} {
			rows, err := query.RunText(context.Background(), cat, tc.q)
			if err != nil {
				t.Fatalf("%s: %v", tc.q, err)
			}
			all, err := drain(rows)
			if err != nil || len(all) != 1 || all[0][0] != tc.want {
				t.Fatalf("%s: %v %v, want %v", tc.q, all, err, tc.want)
			}
		}
	}
}

func drain(rows *query.Rows) ([][]any, error) {
	var out [][]any
	for r, err := range rows.All() {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
