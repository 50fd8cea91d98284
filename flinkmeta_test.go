package main

import (
	"testing"
)

// TestFlinkStateMetaFigures: state_meta's entries and bytes for Flink
// savepoints through the CLI: a timer state's entries are its timers (the
// timers table's rows of its operator and domain), bytes are the entries'
// bytes (4 timers of 1 + 8 + 8 + 8 bytes: key-group prefix, timestamp,
// Tuple1<Long> key, Long namespace), and what the reader does not know is
// NULL, not 0: a changelog checkpoint's bytes, the entries of a state whose
// key serializer it lacks.
func TestFlinkStateMetaFigures(t *testing.T) {
	heap := flinkSample(t, "udf-flink1.20-hashmap-savepoint")
	const op = "41e91aae0bee218c44306cf7d21940ad"
	q := "SELECT state_name, entries, bytes FROM state_meta WHERE operator_id = '" + op + "' AND kind = 'timers' ORDER BY state_name"
	code, out, errs := cmd(t, "query", heap, q, "--format", "csv")
	want := "state_name,entries,bytes\n_timer_state/event_timer,4,100\n_timer_state/processing_timer,4,100\n"
	if code != 0 || out != want {
		t.Errorf("heap timers: exit %d %s\n got %q\n want %q", code, errs, out, want)
	}
	code, out, _ = cmd(t, "query", heap, "SELECT domain, count(*) FROM timers WHERE operator_id = '"+op+"' GROUP BY domain ORDER BY domain", "--format", "csv")
	if want := "domain,count(*)\nevent,4\nprocessing,4\n"; code != 0 || out != want {
		t.Errorf("timers table: exit %d\n got %q\n want %q", code, out, want)
	}

	cl := flinkSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint")
	code, out, errs = cmd(t, "query", cl, "SELECT operator_id, state_name, entries, bytes IS NULL FROM state_meta WHERE scope = 'keyed' ORDER BY operator_id, state_name", "--format", "csv")
	want = "operator_id,state_name,entries,bytes IS NULL\n" +
		"41e91aae0bee218c44306cf7d21940ad,_timer_state/event_timer,4,true\n" +
		"41e91aae0bee218c44306cf7d21940ad,_timer_state/processing_timer,4,true\n" +
		"41e91aae0bee218c44306cf7d21940ad,state-name,4,true\n" +
		"4b818c7923a927796d24b727201ba34d,_timer_state/event_timer,4,true\n" +
		"4b818c7923a927796d24b727201ba34d,_timer_state/processing_timer,4,true\n" +
		"4b818c7923a927796d24b727201ba34d,state-name,4,true\n" +
		"d5c8b168c6cbfe8c507a10f88b325243,state-name,,true\n" +
		"dab25811652d3d4983a30c6e4afacb1c,state-name,,true\n"
	if code != 0 || out != want {
		t.Errorf("changelog: exit %d %s\n got %q\n want %q", code, errs, out, want)
	}
}
