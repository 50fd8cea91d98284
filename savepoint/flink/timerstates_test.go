package flink

import (
	"fmt"
	"reflect"
	"testing"

	"streamdbg/state"
)

// TestTimersOfState: an operator may keep several timer states of one
// domain (a process table function: named and unnamed user timers and a
// sort buffer per input); TimersOfState gives each state its own timers,
// as many as States counts, and no timer twice, and every timer row names
// its timer state (StateName), in Timers too. Legacy raw-keyed timers
// (Flink 1.8) are told apart by their service too.
func TestTimersOfState(t *testing.T) {
	const ptf = "sql/stream-exec-process-table-function_1__process-order-by-restore/savepoint"
	for _, name := range []string{
		ptf,
		"sql/stream-exec-process-table-function_1__process-multi-input-order-by-restore/savepoint",
		"datastream/new-stateful-udf-migration-itcase-flink1.8-savepoint",
		"udf-flink1.20-hashmap-savepoint",
	} {
		t.Run(name, func(t *testing.T) {
			sp := openSample(t, name)
			perState := map[string]int64{} // operator id + domain -> timers of its states
			states := 0
			for _, m := range sp.States() {
				if m.Kind != state.KindTimers {
					continue
				}
				states++
				var rows []state.TimerRow
				for r, err := range sp.TimersOfState(state.TimerScan{OperatorID: m.OperatorID}, m.StateName) {
					if err != nil {
						t.Fatal(err)
					}
					if r.StateName != m.StateName {
						t.Errorf("%s: a timer of state %q: %+v", m.QualifiedName(), r.StateName, r)
					}
					rows = append(rows, r)
				}
				if int64(len(rows)) != m.Entries || m.EntriesUnknown {
					t.Errorf("%s: %d timers, States counts %d", m.QualifiedName(), len(rows), m.Entries)
				}
				perState[m.OperatorID+" "+state.TimerDomain(m.StateName)] += int64(len(rows))
				if name == ptf {
					want := 0
					if m.StateName == "_timer_state/event_input-sort-buffer-0" {
						want = 1 // ('Timer', 10, ['+I', 'Alice'], VoidNamespace) in key group 88
						if len(rows) == 1 && (rows[0].Timestamp != 10 || rows[0].KeyGroup != 88) {
							t.Errorf("%s: %+v", m.StateName, rows[0])
						}
					}
					if len(rows) != want {
						t.Errorf("%s: %d timers, want %d", m.StateName, len(rows), want)
					}
				}
			}
			all := map[string]int64{}
			byState := map[string]int64{} // operator id + state name -> timers in Timers
			var ptfRows []state.TimerRow
			for r, err := range sp.Timers(state.TimerScan{}) {
				if err != nil {
					t.Fatal(err)
				}
				all[r.OperatorID+" "+r.Domain]++
				byState[r.OperatorID+" "+r.StateName]++
				if state.TimerDomain(r.StateName) != r.Domain {
					t.Errorf("a %s timer of state %q", r.Domain, r.StateName)
				}
				ptfRows = append(ptfRows, r)
			}
			for _, m := range sp.States() {
				if m.Kind == state.KindTimers && byState[m.OperatorID+" "+m.StateName] != m.Entries {
					t.Errorf("%s: Timers has %d timers of it, States counts %d", m.QualifiedName(), byState[m.OperatorID+" "+m.StateName], m.Entries)
				}
			}
			if name == ptf {
				if len(ptfRows) != 1 {
					t.Fatalf("Timers: %+v, want one timer", ptfRows)
				}
				want := []state.TimerRow{{OperatorID: "afa3664e2d13439221e8d041382a4dc1", OperatorName: ptfRows[0].OperatorName, Subtask: 0, KeyGroup: 88,
					StateName: "_timer_state/event_input-sort-buffer-0", Key: ptfRows[0].Key, Namespace: ptfRows[0].Namespace, Domain: "event", Timestamp: 10}}
				if !reflect.DeepEqual(ptfRows, want) || fmt.Sprint(ptfRows[0].Key) != "+I['Alice']" {
					t.Errorf("Timers:\n got %+v\nwant %+v (key +I['Alice'])", ptfRows, want)
				}
			}
			for k, n := range all {
				if perState[k] != n {
					t.Errorf("%s: %d timers in all, %d in its timer states", k, n, perState[k])
				}
			}
			if states < 2 || len(all) == 0 {
				t.Fatalf("weak test: %d timer states, timers %v", states, all)
			}
		})
	}
}
