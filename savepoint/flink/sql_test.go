package flink

import (
	"os"
	"path/filepath"
	"testing"

	"streamdbg/state"
)

// The SQL samples are Flink's table-planner restore-test savepoints; see
// ../shared/flink-savepoints/sql/README.md.
const sqlDir = samplesDir + "/sql"

func openSQL(t testing.TB, name string) *Savepoint {
	t.Helper()
	dir := filepath.Join(sqlDir, name)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sample %s absent under CI", name)
		}
		t.Skipf("sample %s absent", name)
	}
	sp, err := Open(filepath.Join(dir, "savepoint"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.ApplyPlanFile(filepath.Join(dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	return sp
}

func sqlNames(t *testing.T) []string {
	entries, err := os.ReadDir(sqlDir)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("SQL samples absent")
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSQLKeyGroups checks the RowData key hash against Flink's: every key
// of every SQL sample maps, from its decoded value, to the key group Flink
// stored it in.
func TestSQLKeyGroups(t *testing.T) {
	total, encoded := 0, 0
	for _, name := range sqlNames(t) {
		sp := openSQL(t, name)
		metas := map[[2]string]state.StateMeta{}
		for _, m := range sp.States() {
			metas[[2]string{m.OperatorID, m.StateName}] = m
		}
		for r, err := range sp.Keyed(state.KeyedScan{}) {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			total++
			kg, ok := sp.KeyGroupOf(metas[[2]string{r.OperatorID, r.StateName}], r.Key)
			if !ok {
				continue
			}
			encoded++
			if kg != r.KeyGroup {
				t.Errorf("%s: %s key %v: key group %d, stored in %d", name, r.StateName, r.Key, kg, r.KeyGroup)
			}
		}
	}
	t.Logf("%d of %d keyed rows' keys re-encoded", encoded, total)
	if total == 0 || encoded < total*9/10 {
		t.Errorf("only %d of %d keys could be encoded", encoded, total)
	}
}
