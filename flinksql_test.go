package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const flinkSamples = "../shared/flink-savepoints"

func flinkSample(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(flinkSamples, rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sample %s absent under CI", rel)
		}
		t.Skipf("sample %s absent", rel)
	}
	return p
}

// TestFlinkSQLSeedQuery: the question of issue 11's users, on a group
// aggregate's savepoint with its plan: the accumulator of one key, read
// from one key group, the operator and key field named from the plan.
// Expected values from the test program that wrote the savepoint
// (GroupAggregateTestPrograms.GROUP_BY_UDF_WITH_MERGE): the seven rows
// with e = 2 have a = 3, 2, 3, 4, 4, 5, 5, so my_avg(e, a) (WeightedAvg)
// holds count = Σa = 26 and sum = Σe·a = 52; its my_concat accumulator's
// views are in states of their own (NULL placeholders here).
func TestFlinkSQLSeedQuery(t *testing.T) {
	dir := flinkSample(t, "sql/stream-exec-group-aggregate_1__group-aggregate-udf-with-merge")
	sp := filepath.Join(dir, "savepoint")
	plan := filepath.Join(dir, "plan.json")
	for _, q := range []string{
		"SELECT key, value FROM keyed_state WHERE state_name = 'accState' AND key.e = 2",
		"SELECT key, value FROM keyed_state WHERE state_name = 'accState' AND key = 2",
	} {
		code, out, errs := cmd(t, "query", sp, q, "--plan", plan, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", q, code, errs)
		}
		want := `{"key":{"e":2},"value":{"f0":{"count":26,"sum":52},"f1":{"list":null,"map":null}}}` + "\n"
		if out != want {
			t.Errorf("%s:\n got %s want %s", q, out, want)
		}
		code, out, _ = cmd(t, "query", sp, "EXPLAIN "+q, "--plan", plan)
		if code != 0 || !strings.Contains(out, "key groups: 93\n") {
			t.Errorf("EXPLAIN %s: exit %d, want one key group (93):\n%s", q, code, out)
		}
	}
	code, out, errs := cmd(t, "query", sp, "SELECT operator_name, key_type, status FROM state_meta WHERE state_name = 'accState'", "--plan", plan, "--format", "csv")
	want := "operator_name,key_type,status\n\"GroupAggregate(groupBy=[e], select=[e, my_avg(e, $f1) AS s1, my_concat(d) AS c1])\",ROW<e BIGINT>,ok\n"
	if code != 0 || out != want {
		t.Errorf("state_meta: exit %d %s\n got %q\n want %q", code, errs, out, want)
	}
	// plan.json beside the savepoint is found without --plan, and said so.
	code, out, errs = cmd(t, "query", sp, "SELECT key_type FROM state_meta WHERE state_name = 'accState'", "--format", "csv")
	if code != 0 || out != "key_type\nROW<e BIGINT>\n" || !strings.Contains(errs, "plan.json") {
		t.Errorf("plan.json not picked up: exit %d, %q, stderr %q", code, out, errs)
	}
}

// TestFlinkSQLSeedQueryGlobalAggregate: the seed query as the issue writes
// it, key.b = 2, on the global aggregate of a two-phase (incremental) group
// aggregate grouped by b; value from the sample's expected.txt (accState
// of key 2 is the row [2]).
func TestFlinkSQLSeedQueryGlobalAggregate(t *testing.T) {
	dir := flinkSample(t, "sql/stream-exec-incremental-group-aggregate_1__incremental-group-aggregate-simple")
	code, out, errs := cmd(t, "query", filepath.Join(dir, "savepoint"),
		"SELECT operator_name, key, value FROM keyed_state WHERE state_name = 'accState' AND key.b = 2", "--format", "json")
	want := `{"operator_name":"GlobalGroupAggregate(groupBy=[b], partialFinalType=[FINAL], select=[b, $SUM0(count$0) AS $f1])","key":{"b":2},"value":{"f0":2}}` + "\n"
	if code != 0 || out != want {
		t.Errorf("exit %d %s\n got %s want %s", code, errs, out, want)
	}
}

// TestFlinkUnreadableStates: a query that needs a state the reader cannot
// read fails naming operator, state and reason; --skip-unreadable reads the
// rest with one warning per skipped state; state_meta lists the reason.
func TestFlinkUnreadableStates(t *testing.T) {
	sp := flinkSample(t, "typeser-flink1.16-hashmap-savepoint")
	const class = "TypeSerializerSnapshotMigrationITCase$TestSerializerSnapshot"
	code, _, errs := cmd(t, "query", sp, "SELECT * FROM keyed_state")
	if code != 1 || !strings.Contains(errs, `state "testState"`) || !strings.Contains(errs, class) || !strings.Contains(errs, "--skip-unreadable") {
		t.Errorf("keyed_state: exit %d, stderr %q", code, errs)
	}
	code, out, errs := cmd(t, "query", sp, "SELECT * FROM keyed_state", "--skip-unreadable")
	if code != 0 || !strings.Contains(out, "(0 rows)") || strings.Count(errs, "warning: skipped") != 1 || !strings.Contains(errs, "testState") {
		t.Errorf("--skip-unreadable: exit %d, out %q, stderr %q", code, out, errs)
	}
	// One unreadable operator never hides the others.
	code, out, errs = cmd(t, "query", sp, "SELECT value FROM operator_state", "--format", "csv")
	if code != 0 || strings.Count(out, "dragons!") != 4 {
		t.Errorf("operator_state: exit %d, %q %q", code, out, errs)
	}
	code, out, _ = cmd(t, "query", sp, "SELECT state_name, status FROM state_meta", "--format", "csv")
	if code != 0 || !strings.Contains(out, "testState,unknown serializer org.apache.flink.test.migration."+class) || !strings.Contains(out, "source-state,ok") {
		t.Errorf("state_meta: exit %d, %q", code, out)
	}
	code, out, _ = cmd(t, "savepoint", "inspect", sp)
	if code != 0 || !strings.Contains(out, "STATUS") || !strings.Contains(out, class) {
		t.Errorf("inspect: exit %d\n%s", code, out)
	}
}

// TestFlinkChangelogKeyType: the changelog checkpoint does not store the
// flat maps' key serializer: a query of their state fails saying so and
// naming --key-type; with it, the state reads (keys 0 to 3, value = key).
func TestFlinkChangelogKeyType(t *testing.T) {
	sp := flinkSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint")
	const q = "SELECT key, value FROM keyed_state WHERE operator_name = 'd5c8b168c6cbfe8c507a10f88b325243' ORDER BY value"
	code, _, errs := cmd(t, "query", sp, q)
	if code != 1 || !strings.Contains(errs, "key serializer is not stored") || !strings.Contains(errs, "--key-type") {
		t.Errorf("without --key-type: exit %d, stderr %q", code, errs)
	}
	code, out, errs := cmd(t, "query", sp, q, "--format", "csv", "--key-type", "d5c8b168c6cbfe8c507a10f88b325243=Tuple1<Long>")
	if want := "key,value\n[0],0\n[1],1\n[2],2\n[3],3\n"; code != 0 || out != want {
		t.Errorf("with --key-type: exit %d, %q (stderr %q), want %q", code, out, errs, want)
	}
	code, _, errs = cmd(t, "query", sp, q, "--key-type", "d5c8b168c6cbfe8c507a10f88b325243=Date")
	if code != 2 || !strings.Contains(errs, `key type "Date"`) {
		t.Errorf("bad --key-type: exit %d, %q", code, errs)
	}
}

// TestDiffNamesFlinkSQLOperatorsFromThePlan: diff names a Flink SQL job's
// operators from its compiled plan (beside the savepoint, or --plan), as
// query does; without one they are bare operator ids.
func TestDiffNamesFlinkSQLOperatorsFromThePlan(t *testing.T) {
	dir := flinkSample(t, "sql/stream-exec-group-aggregate_1__group-aggregate-udf-with-merge")
	sp := filepath.Join(dir, "savepoint")
	const named = "# GroupAggregate(groupBy=[e], select=[e, my_avg(e, $f1) AS s1, my_concat(d) AS c1]).accState: 0 changed, 0 added, 0 removed, 3 unchanged\n"
	code, out, errs := cmd(t, "diff", sp, sp)
	if code != 0 || !strings.Contains(out, named) || !strings.Contains(errs, "plan.json") {
		t.Errorf("diff with plan.json beside: exit %d\n%s\n%s", code, out, errs)
	}
	// A copy without plan.json beside it: ids, unless --plan names it.
	bare := copyTree(t, sp)
	code, out, errs = cmd(t, "diff", bare, bare)
	if code != 0 || strings.Contains(out, "GroupAggregate") || !strings.Contains(out, ".accState: 0 changed, 0 added, 0 removed, 3 unchanged\n") {
		t.Errorf("diff without a plan: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = cmd(t, "diff", bare, bare, "--plan", filepath.Join(dir, "plan.json"))
	if code != 0 || !strings.Contains(out, named) {
		t.Errorf("diff --plan: exit %d\n%s\n%s", code, out, errs)
	}
	code, _, errs = cmd(t, "diff", bare, bare, "--plan", filepath.Join(t.TempDir(), "missing.json"))
	if code != 1 || !strings.Contains(errs, "missing.json") {
		t.Errorf("diff --plan of a missing file: exit %d, %s", code, errs)
	}
}

// TestFlinkInspectMasterStates: inspect names the _metadata version and
// checkpoint id of a Flink checkpoint and lists its master states (the
// state processor API job's master hook wrote one of 8 bytes), which no
// operator holds. (Before: the master state was shown nowhere.)
func TestFlinkInspectMasterStates(t *testing.T) {
	sp := flinkSample(t, "spapi-table-state")
	code, out, errs := cmd(t, "savepoint", "inspect", sp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "Apache Flink _metadata version 5, checkpoint id 10\n") {
		t.Errorf("no version and checkpoint id:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^MASTER STATE +VERSION +BYTES\ncom\.example\.state\.writer\.job\.masterstate\.MasterTriggerRestoreHook +1 +8$`).MatchString(out) {
		t.Errorf("master state not listed:\n%s", out)
	}
	code, out, _ = cmd(t, "savepoint", "inspect", flinkSample(t, "udf-flink1.20-hashmap-savepoint"))
	if code != 0 || strings.Contains(out, "MASTER STATE") {
		t.Errorf("a savepoint without master states lists some: exit %d\n%s", code, out)
	}
}

// TestFlinkInspectSharedNames: the three operators of the non-keyed job
// are all named "Map"; inspect's state table names each by its id, as the
// operator table lists them. (Before: three "Map _default_" rows with no
// way to tell which operator held which.)
func TestFlinkInspectSharedNames(t *testing.T) {
	code, out, errs := cmd(t, "savepoint", "inspect", flinkSample(t, "operatorstate-nonKeyed-flink2.2"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	states := out[strings.LastIndex(out, "\n\nOPERATOR "):]
	for _, id := range []string{"adf090656b210b1609ad3203d4ee7329", "6730ef7375fb60f9d9bbdfdfd174d803", "013ef814c76e319e5fe9a82a3ba14933"} {
		if !regexp.MustCompile(`(?m)^` + id + ` +_default_ +operator +split_list`).MatchString(states) {
			t.Errorf("no state row of %s:\n%s", id, states)
		}
	}
	if strings.Contains(states, "\nMap ") {
		t.Errorf("a state row names an operator by a shared name:\n%s", states)
	}
}
