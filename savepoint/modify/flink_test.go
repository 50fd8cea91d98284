package modify_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/query"
	"streamdbg/savepoint/flink"
	"streamdbg/savepoint/modify"
	"streamdbg/state"
)

func openFlinkSample(t *testing.T, name string) *flink.Savepoint {
	t.Helper()
	dir := filepath.Join("../../../shared/flink-savepoints", name)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("samples absent under CI")
		}
		t.Skip("samples absent")
	}
	sp, err := flink.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestModifyFlink: UPDATE and DELETE through SQL on Flink's canonical
// savepoints (heap and RocksDB), checked by reading the result back; what
// cannot be written is refused with a position.
func TestModifyFlink(t *testing.T) {
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "udf-flink2.0-rocksdb-savepoint"} {
		t.Run(name, func(t *testing.T) {
			sp := openFlinkSample(t, name)
			p, err := modify.CompileFlink(sp, `UPDATE "d5c8b168c6cbfe8c507a10f88b325243"."state-name" SET value = value * 10 + 7 WHERE key[0] >= 2;
DELETE FROM "4b818c7923a927796d24b727201ba34d"."state-name" WHERE value = 0`)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "out")
			if err := p.Write(dst); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Statements(), "\n"); !strings.Contains(got, "2 entries updated") || !strings.Contains(got, "1 entry deleted") {
				t.Fatalf("report:\n%s", got)
			}
			out, err := flink.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[int64]any{}
			for r, err := range out.Keyed(state.KeyedScan{StateName: "state-name"}) {
				if err != nil {
					t.Fatal(err)
				}
				if got[r.OperatorID] == nil {
					got[r.OperatorID] = map[int64]any{}
				}
				got[r.OperatorID][r.Key.([]any)[0].(int64)] = r.Value
			}
			for op, want := range map[string]string{
				"d5c8b168c6cbfe8c507a10f88b325243": "map[0:0 1:1 2:27 3:37]",
				"dab25811652d3d4983a30c6e4afacb1c": "map[0:0 1:1 2:2 3:3]",
				"4b818c7923a927796d24b727201ba34d": "map[1:1 2:2 3:3]",
				"41e91aae0bee218c44306cf7d21940ad": "map[0:0 1:1 2:2 3:3]",
			} {
				if fmt.Sprint(got[op]) != want {
					t.Errorf("%s: %v, want %s", op, got[op], want)
				}
			}
		})
	}
	sp := openFlinkSample(t, "udf-flink2.0-rocksdb-savepoint")
	for _, c := range []struct{ text, want string }{
		{`UPDATE "Flat Map"."state-name" SET value = 1`, `1:8: 2 operators are named "Flat Map"`},
		{`UPDATE "d5c8b168c6cbfe8c507a10f88b325243"."state-name" SET value = 'x'`, `1:68: value of Flat Map.state-name is java.lang.Long (int64), the expression is string`},
		{`INSERT INTO "d5c8b168c6cbfe8c507a10f88b325243"."state-name" (key, value) VALUES (1, 1)`, `1:1: Apache Flink savepoints take UPDATE and DELETE only`},
		{`DELETE FROM "41e91aae0bee218c44306cf7d21940ad"."_timer_state/event_timer"`, `is timers state`},
		{`DELETE FROM "69f32d314b97c6f7f9ed7873983167f2"."source-state"`, `is split_list state`},
		{`UPDATE "d5c8b168c6cbfe8c507a10f88b325243"."state-nam" SET value = 1`, `did you mean "state-name"?`},
		{`UPDATE "d5c8b168c6cbfe8c507a10f88b325243"."state-name" SET value = NULL`, `1:68: value of Flat Map.state-name cannot be NULL; DELETE the entry instead`},
	} {
		_, err := modify.CompileFlink(sp, c.text)
		var qe *query.Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}
