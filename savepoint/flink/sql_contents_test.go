package flink

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"streamdbg/state"
)

// The expected contents below are transcribed by hand from the samples'
// expected.txt (what an independent reference decoder read; notation in
// sql/README.md) into canon's notation: a RowData is kind[fields], a
// tagged record Type(fields), a plain record (fields), a list [..], a map
// {k: v}, strings quoted, NULL None. Field names are left out: the plan
// names fields, the reference does not.

func canon(v any) string {
	var b strings.Builder
	canonTo(&b, v)
	return b.String()
}

func canonTo(b *strings.Builder, v any) {
	list := func(open, end string, xs []any) {
		b.WriteString(open)
		for i, x := range xs {
			if i > 0 {
				b.WriteString(", ")
			}
			canonTo(b, x)
		}
		b.WriteString(end)
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case string:
		b.WriteString("'" + x + "'")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case state.Decimal:
		b.WriteString(string(x))
	case []any:
		list("[", "]", x)
	case *state.Row:
		switch {
		case x.Kind != state.NotRowData:
			list(x.Kind.String()+"[", "]", x.Values)
		case x.Type() != "":
			list(x.Type()+"(", ")", x.Values)
		default:
			list("(", ")", x.Values)
		}
	case state.Pairs:
		b.WriteString("{")
		for i, p := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			canonTo(b, p.Key)
			b.WriteString(": ")
			canonTo(b, p.Value)
		}
		b.WriteString("}")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + ": ")
			canonTo(b, x[k])
		}
		b.WriteString("}")
	default:
		fmt.Fprintf(b, "?%T(%v)", v, v)
	}
}

// keyedCanon lists a state's rows as "key | user key | value" (list state
// folded into one list per key, as the reference prints it), sorted.
func keyedCanon(t *testing.T, sp *Savepoint, opID, stateName string) []string {
	t.Helper()
	var out []string
	lists := map[string][]any{}
	var order []string
	for r, err := range sp.Keyed(state.KeyedScan{OperatorID: opID, StateName: stateName}) {
		if err != nil {
			t.Fatalf("%s.%s: %v", opID, stateName, err)
		}
		if r.Kind == state.KindList {
			k := canon(r.Key)
			if _, ok := lists[k]; !ok {
				order = append(order, k)
			}
			lists[k] = append(lists[k], r.Value)
			continue
		}
		uk := "-"
		if r.Kind == state.KindMap {
			uk = canon(r.UserKey)
		}
		out = append(out, canon(r.Key)+" | "+uk+" | "+canon(r.Value))
	}
	for _, k := range order {
		out = append(out, k+" | - | "+canon(lists[k]))
	}
	slices.Sort(out)
	return out
}

func timerCanon(t *testing.T, sp *Savepoint, opID string) []string {
	t.Helper()
	var out []string
	for _, r := range timerRows(t, sp, state.TimerScan{OperatorID: opID}) {
		out = append(out, fmt.Sprintf("%s %d %s %s", r.Domain, r.Timestamp, canon(r.Key), canon(r.Namespace)))
	}
	slices.Sort(out)
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func wantRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, sortedCopy(want)) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, sortedCopy(want))
	}
}

type contentCase struct {
	sample, op, state string
	want              []string
}

// TestSQLContents asserts exact decoded contents of one savepoint (or
// two) per exec-node family.
func TestSQLContents(t *testing.T) {
	const minLong = "-9223372036854775808"
	cases := []contentCase{
		// Join: records by join key, and for inputs without a unique key
		// the records with their counts (and, for the outer side of an
		// anti join, the number of associated records).
		{"stream-exec-join_1__join-inner-join-with-equal-pk", "d2adb42826deec77ca4872152cb90b3e", "left-records", []string{
			"+I[7] | - | +I[7]", "+I[2] | - | +I[2]", "+I[1] | - | +I[1]", "+I[None] | - | +I[None]", "+I[3] | - | +I[3]"}},
		{"stream-exec-join_1__join-inner-join-with-equal-pk", "d2adb42826deec77ca4872152cb90b3e", "right-records", []string{
			"+I[2] | - | +I[2]", "+I[1] | - | +I[1]", "+I[None] | - | +I[None]", "+I[3] | - | +I[3]"}},
		{"stream-exec-join_1__join-anti-join", "d048d7b2bbd1f4c7a3b1cdd5df979ed0", "left-records", []string{
			"+I[] | +I[1, 'Baker'] | [1, 1]", "+I[] | +I[7, 'Victor'] | [1, 0]", "+I[] | +I[3, 'Don'] | [1, 1]",
			"+I[] | +I[2, 'Charlie'] | [1, 2]", "+I[] | +I[None, 'Adam'] | [1, 4]"}},
		{"stream-exec-join_1__join-anti-join", "d048d7b2bbd1f4c7a3b1cdd5df979ed0", "right-records", []string{
			"+I[] | +I[3] | 1", "+I[] | +I[2] | 2", "+I[] | +I[1] | 1"}},
		// Group aggregate: the accumulators (a structured UDF accumulator
		// and one whose list and map views live in their own states).
		{"stream-exec-group-aggregate_1__group-aggregate-udf-with-merge", "23342b8a06217adf29a41b2be437f0e9", "accState", []string{
			"+I[2] | - | +I[+I[26, 52], +I[None, None]]", "+I[1] | - | +I[+I[16, 16], +I[None, None]]", "+I[3] | - | +I[+I[13, 39], +I[None, None]]"}},
		{"stream-exec-group-aggregate_1__group-aggregate-udf-with-merge", "23342b8a06217adf29a41b2be437f0e9", "agg1$list", []string{
			"+I[2] | - | ['Hello World Its nice', 'Hello World', 'ABC', 'FGH', 'CDE', 'JKL', 'KLM']",
			"+I[1] | - | ['Hello World Like', 'Hello', 'GHI', 'EFG', 'DEF']",
			"+I[3] | - | ['HIJ', 'IJK', 'BCD']"}},
		{"stream-exec-incremental-group-aggregate_1__incremental-group-aggregate-simple", "fd2e5414d7bc8c653a16459af721931a", "accState", []string{
			"+I[2] | - | +I[2]", "+I[1] | - | +I[1]"}},
		{"stream-exec-incremental-group-aggregate_1__incremental-group-aggregate-simple", "87b46f0aef42c3c4514550641d131add", "distinctAcc_0", []string{
			"+I[2, 3] | 3 | 1", "+I[1, 1] | 1 | 1", "+I[2, 2] | 2 | 1"}},
		// Window aggregate: window contents under slice-end namespaces.
		{"stream-exec-window-aggregate_1__window-aggregate-cumulate-event-time", "a21666a664f2729e2f693da0590b04a4", "window-aggs", []string{
			"+I['b'] | - | +I[1, 1, 1, None]", "+I[None] | - | +I[1, 7, 0, None]"}},
		{"stream-exec-window-aggregate_1__window-aggregate-cumulate-event-time", "a21666a664f2729e2f693da0590b04a4", "distinctAcc_0", []string{
			"+I['b'] | 'Comment#3' | 1"}},
		{"stream-exec-window-aggregate_1__window-aggregate-cumulate-event-time", "a21666a664f2729e2f693da0590b04a4", "distinctAcc_0_null_state", []string{
			"+I[None] | - | 1"}},
		// Rank (top 1 per partition), deduplicate (first row, event time).
		{"stream-exec-rank_1__rank-test-append-fast-strategy", "549d0085b219f96a359ff3ed86f9dc24", "Top1-Rank-State", []string{
			"+I['a'] | - | +I[1, 'a', 5]", "+I['b'] | - | +I[3, 'b', 7]", "+I['c'] | - | +I[5, 'c', 9]"}},
		{"stream-exec-deduplicate_1__deduplicate-asc", "ee66688ce5e6ce36d972a4f69b73ae3a", "deduplicate-state", []string{
			"+I['pen'] | - | +I[1, 'terry', 'pen', 1000, '1969-12-31 19:16:40']",
			"+I['apple'] | - | +I[4, 'bob', 'apple', 4000, '1969-12-31 20:06:40']"}},
		// Over aggregate (non-time range): ids, the sorted list of sort keys
		// with their record ids, records and accumulators by sort key.
		{"stream-exec-over-aggregate_1__over-aggregate-non-time-range-unbounded-avg-append-mode", "3db7cc507a8505579a241e6f62897b44", "idState", []string{
			"+I['key2'] | - | -9223372036854775806", "+I['key1'] | - | -9223372036854775804"}},
		{"stream-exec-over-aggregate_1__over-aggregate-non-time-range-unbounded-avg-append-mode", "3db7cc507a8505579a241e6f62897b44", "sortedListState", []string{
			"+I['key2'] | - | [[+I[1], [" + minLong + "]], [+I[2], [-9223372036854775807]]]",
			"+I['key1'] | - | [[+I[1], [" + minLong + "]], [+I[2], [-9223372036854775807]], [+I[5], [-9223372036854775806]], [+I[6], [-9223372036854775805]]]"}},
		{"stream-exec-over-aggregate_1__over-aggregate-non-time-range-unbounded-avg-append-mode", "3db7cc507a8505579a241e6f62897b44", "accMapState", []string{
			"+I['key2'] | +I[1] | +I[1, 1]", "+I['key2'] | +I[2] | +I[2, 3]",
			"+I['key1'] | +I[1] | +I[1, 1]", "+I['key1'] | +I[2] | +I[2, 3]", "+I['key1'] | +I[5] | +I[3, 8]", "+I['key1'] | +I[6] | +I[4, 14]"}},
		{"stream-exec-over-aggregate_1__over-aggregate-non-time-range-unbounded-avg-append-mode", "3db7cc507a8505579a241e6f62897b44", "valueMapState", []string{
			"+I['key2'] | " + minLong + " | +I['key2', 1, 100]", "+I['key2'] | -9223372036854775807 | +I['key2', 2, 200]",
			"+I['key1'] | " + minLong + " | +I['key1', 1, 100]", "+I['key1'] | -9223372036854775807 | +I['key1', 2, 200]",
			"+I['key1'] | -9223372036854775806 | +I['key1', 5, 500]", "+I['key1'] | -9223372036854775805 | +I['key1', 6, 600]"}},
		// MATCH_RECOGNIZE: the NFA's computation states and the shared
		// buffer (events, nodes with their edges, event counts).
		{"stream-exec-match_1__match-skip-to-last", "c78529ed2555a423f97483da36167785", "nfaStateName", []string{
			"+I[1] | - | ([('A', ((1, 1701784719466), 'A'), '8.0', 1701784719466, 1701784719466, (1, 1701784719466)), ('A:0', None, '9', -1, -1, None)], [])"}},
		{"stream-exec-match_1__match-skip-to-last", "c78529ed2555a423f97483da36167785", "sharedBuffer-events", []string{
			"+I[1] | (1, 1701784719466) | Lockable(1, +I[1, 100, None])"}},
		{"stream-exec-match_1__match-skip-to-last", "c78529ed2555a423f97483da36167785", "sharedBuffer-entries-with-lockable-edges", []string{
			"+I[1] | ((1, 1701784719466), 'A') | Lockable(1, [Lockable(1, (None, '8'))])"}},
		{"stream-exec-match_1__match-skip-to-last", "c78529ed2555a423f97483da36167785", "sharedBuffer-events-count", []string{
			"+I[1] | 1701784719466 | 2"}},
	}
	for _, c := range cases {
		t.Run(c.sample+"/"+c.state, func(t *testing.T) {
			sp := openSQL(t, c.sample)
			wantRows(t, c.state, keyedCanon(t, sp, c.op, c.state), c.want)
		})
	}
}

// TestSQLWindowNamespacesAndTimers: slicing window operators keep their
// contents under the slice end (a Long namespace) and a timer per window.
func TestSQLWindowNamespacesAndTimers(t *testing.T) {
	sp := openSQL(t, "stream-exec-window-aggregate_1__window-aggregate-cumulate-event-time")
	const op = "a21666a664f2729e2f693da0590b04a4"
	for _, r := range keyedRows(t, sp, state.KeyedScan{OperatorID: op}) {
		if r.Namespace != int64(1602288035000) {
			t.Errorf("%s %s: namespace %v, want the slice end 1602288035000", r.StateName, canon(r.Key), r.Namespace)
		}
	}
	wantRows(t, "timers", timerCanon(t, sp, op), []string{
		"event 1602288034999 +I['b'] 1602288035000", "event 1602288034999 +I[None] 1602288035000"})
	// The plan names the key after the node's grouping (groupBy=[name]).
	m := findMeta(t, sp, op, "window-aggs")
	if m.NamespaceType != "java.lang.Long" || m.KeyType != "ROW<name STRING>" || m.ValueType != "ROW<BIGINT, INT, BIGINT, RAW('MapView')>" {
		t.Errorf("window-aggs meta %+v", m)
	}
}
