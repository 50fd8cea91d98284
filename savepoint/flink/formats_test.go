package flink

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"streamdbg/state"
)

// TestOtherFormatsOpen: the DataStream samples of other versions and
// layouts open; what they hold is read (the contents README.md lists for
// their jobs), what cannot be read is listed with its reason.
func TestOtherFormatsOpen(t *testing.T) {
	udfKeyed := func(t *testing.T, sp *Savepoint) {
		t.Helper()
		rows := keyedRows(t, sp, state.KeyedScan{OperatorID: "d5c8b168c6cbfe8c507a10f88b325243", StateName: "state-name"})
		var got []string
		for _, r := range rows {
			got = append(got, canon(r.Key)+"="+canon(r.Value))
		}
		slices.Sort(got)
		if want := []string{"[0]=0", "[1]=1", "[2]=2", "[3]=3"}; !slices.Equal(got, want) {
			t.Errorf("state-name: %v, want %v", got, want)
		}
	}
	dragonsOf := func(t *testing.T, sp *Savepoint, op string) {
		t.Helper()
		if got := values(operatorRows(t, sp, state.OperatorScan{OperatorID: op, StateName: "source-state"})); !reflect.DeepEqual(got, dragons) {
			t.Errorf("source-state of %s: %v", op, got)
		}
	}
	t.Run("metadata v2, Flink 1.8", func(t *testing.T) {
		sp := openSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.8-savepoint")
		if sp.Version() != 2 {
			t.Errorf("version %d", sp.Version())
		}
		udfKeyed(t, sp)
		dragonsOf(t, sp, "69f32d314b97c6f7f9ed7873983167f2")
		if n := len(timerRows(t, sp, state.TimerScan{OperatorID: "4b818c7923a927796d24b727201ba34d"})); n != 8 {
			t.Errorf("%d timers, want 8 (an event and a processing timer per key)", n)
		}
	})
	t.Run("metadata v2, Flink 1.9, timers in raw keyed state", func(t *testing.T) {
		sp := openSample(t, "datastream/new-stateful-broadcast-udf-migration-itcase-flink1.9-rocksdb-savepoint")
		var got []string
		for _, r := range operatorRows(t, sp, state.OperatorScan{OperatorID: "12d7d939fd56473cac7cff0603179a41", StateName: "broadcast-state-1"}) {
			got = append(got, canon(r.Key)+"="+canon(r.Value))
		}
		slices.Sort(got)
		got = slices.Compact(got) // the map is in each of the 4 subtasks
		if want := []string{"0=0", "1=1", "2=2", "3=3"}; !slices.Equal(got, want) {
			t.Errorf("broadcast-state-1: %v", got)
		}
		m := findMeta(t, sp, "12d7d939fd56473cac7cff0603179a41", "_timer_state/event_user-timers")
		if m.Kind != state.KindTimers || m.Status != "" || m.KeyType != "java.lang.Long" {
			t.Errorf("legacy timer state %+v", m)
		}
	})
	t.Run("Snappy-compressed state, Flink 1.19", func(t *testing.T) {
		sp := openSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.19-rocksdb-savepoint")
		udfKeyed(t, sp)
		dragonsOf(t, sp, "69f32d314b97c6f7f9ed7873983167f2")
		dragonsOf(t, sp, "1f2b5df5a66154aca61fcb26193792be")
	})
	t.Run("changelog checkpoint, Flink 1.17", func(t *testing.T) {
		// Everything is in in-memory change logs; the key serializer of
		// the flat maps (no timers, no materialized state) is not stored:
		// their state is listed with that reason until it is named.
		sp := openSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint")
		dragonsOf(t, sp, "69f32d314b97c6f7f9ed7873983167f2")
		m := findMeta(t, sp, "d5c8b168c6cbfe8c507a10f88b325243", "state-name")
		if m.Status != keyNotStored || m.Kind != state.KindValue {
			t.Errorf("flat map state %+v: want the key serializer named as missing", m)
		}
		var scanErr error
		for _, err := range sp.Keyed(state.KeyedScan{OperatorID: "d5c8b168c6cbfe8c507a10f88b325243"}) {
			if err != nil {
				scanErr = err
			}
		}
		if !errors.Is(scanErr, ErrUnsupported) || !strings.Contains(scanErr.Error(), "--key-type") {
			t.Errorf("scan of the flat map: %v", scanErr)
		}
		// The timely operators' timers name their key serializer.
		if m := findMeta(t, sp, "4b818c7923a927796d24b727201ba34d", "state-name"); m.Status != "" || m.KeyType != "Tuple1<java.lang.Long>" {
			t.Errorf("timely operator state %+v", m)
		}
		sp = openSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint")
		if err := sp.SetKeyType("d5c8b168c6cbfe8c507a10f88b325243", "Tuple1<Long>"); err != nil {
			t.Fatal(err)
		}
		udfKeyed(t, sp)
	})
	t.Run("unaligned checkpoint, Flink 1.17", func(t *testing.T) {
		sp := openSample(t, "datastream/new-stateful-udf-migration-itcase-flink1.17-rocksdb-checkpoint")
		udfKeyed(t, sp)
		dragonsOf(t, sp, "69f32d314b97c6f7f9ed7873983167f2")
		listed := false
		for _, op := range sp.Operators() {
			for _, u := range op.Unsupported {
				listed = listed || strings.Contains(u, "unaligned checkpoint")
			}
		}
		if !listed {
			t.Error("the in-flight data of the unaligned checkpoint is not listed")
		}
		for _, m := range sp.States() {
			if m.Status != "" {
				t.Errorf("%s.%s: %s", m.OperatorID, m.StateName, m.Status)
			}
		}
	})
}
