package flink

import (
	"strings"
	"testing"

	"streamdbg/state"
)

// TestStateMetaFigures: Entries of every keyed state is its number of rows
// (keyed_state rows, timers for timer states), and Bytes the size of its
// entries as the format writes them, from Flink's layouts: a canonical
// pair is the key-group prefix (1 byte at max parallelism 128), the key,
// the namespace and the value; the heap snapshot of Flink 1.8 writes
// namespace, key and value with no prefix. The job's keys are Tuple1<Long>
// (8 bytes), values Long (8), timer timestamps 8, VoidNamespace 1 byte,
// the timely operators' namespace Long (8). A changelog checkpoint's
// entries are counted by replay, their bytes unknown.
func TestStateMetaFigures(t *testing.T) {
	for _, tc := range []struct {
		sample string
		// bytes of one entry: value state with VoidNamespace, value state
		// with a Long namespace, timer; 0 = unknown
		void, ns, timer int64
	}{
		{"udf-flink1.20-hashmap-savepoint", 1 + 8 + 1 + 8, 1 + 8 + 8 + 8, 1 + 8 + 8 + 8},
		{"datastream/new-stateful-udf-migration-itcase-flink1.19-rocksdb-savepoint", 1 + 8 + 1 + 8, 1 + 8 + 8 + 8, 1 + 8 + 8 + 8},
		{"datastream/new-stateful-udf-migration-itcase-flink1.8-savepoint", 1 + 8 + 8, 8 + 8 + 8, 8 + 8 + 8},
		{"udf-flink1.20-rocksdb-savepoint-native", 1 + 8 + 1 + 8, 1 + 8 + 8 + 8, 1 + 8 + 8 + 8},
		{changelogSample, 0, 0, 0},
	} {
		t.Run(tc.sample, func(t *testing.T) {
			sp := openSample(t, tc.sample)
			if tc.sample == changelogSample {
				for op, typ := range changelogSampleKeys {
					if err := sp.SetKeyType(op, typ); err != nil {
						t.Fatal(err)
					}
				}
			}
			rows := map[stateID]int64{}
			for r, err := range sp.Keyed(state.KeyedScan{}) {
				if err != nil {
					t.Fatal(err)
				}
				rows[stateID{r.OperatorID, r.StateName}]++
			}
			for r, err := range sp.Timers(state.TimerScan{}) {
				if err != nil {
					t.Fatal(err)
				}
				rows[stateID{r.OperatorID, "_timer_state/" + r.Domain + "_timer"}]++
			}
			keyed := 0
			for _, m := range sp.States() {
				if m.Scope != state.ScopeKeyed {
					continue
				}
				keyed++
				want := rows[stateID{m.OperatorID, m.StateName}]
				if m.EntriesUnknown || m.Entries != want || want == 0 {
					t.Errorf("%s %s: entries %d (unknown %v), %d rows", m.OperatorID, m.StateName, m.Entries, m.EntriesUnknown, want)
				}
				per := tc.ns
				switch {
				case m.Kind == state.KindTimers:
					per = tc.timer
				case m.NamespaceType == "VoidNamespace":
					per = tc.void
				}
				if per == 0 {
					if !m.BytesUnknown || m.Bytes != 0 {
						t.Errorf("%s %s: bytes %d (unknown %v), want unknown", m.OperatorID, m.StateName, m.Bytes, m.BytesUnknown)
					}
				} else if m.BytesUnknown || m.Bytes != per*want {
					t.Errorf("%s %s: bytes %d (unknown %v), want %d × %d", m.OperatorID, m.StateName, m.Bytes, m.BytesUnknown, want, per)
				}
			}
			if keyed != 8 {
				t.Errorf("%d keyed states, want 8", keyed)
			}
		})
	}
}

// TestStateMetaUnknownFigures: a savepoint with more keyed rows than are
// counted when it is listed has its keyed states' entries and bytes
// unknown (not 0); below the budget they are exact, compressed or not
// (bytes uncompressed: 1 + 8 + 1 + 8 per pair); an unreadable state's are
// unknown.
func TestStateMetaUnknownFigures(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		m := mustOpen(t, writeSynthetic(t, synthOptions{keys: 1000, compressed: compressed})).States()[0]
		if m.EntriesUnknown || m.BytesUnknown || m.Entries != 1000 || m.Bytes != 18_000 {
			t.Errorf("compressed %v: entries %d bytes %d (unknown %v %v), want 1000 and 18000", compressed, m.Entries, m.Bytes, m.EntriesUnknown, m.BytesUnknown)
		}
	}
	m := mustOpen(t, writeSynthetic(t, synthOptions{keys: countBudget + 1})).States()[0]
	if !m.EntriesUnknown || !m.BytesUnknown || m.Entries != 0 || m.Bytes != 0 {
		t.Errorf("over the budget: entries %d bytes %d (unknown %v %v), want unknown", m.Entries, m.Bytes, m.EntriesUnknown, m.BytesUnknown)
	}
	sp := openSample(t, "typeser-flink1.16-hashmap-savepoint")
	n := 0
	for _, m := range sp.States() {
		if m.Status == "" {
			continue
		}
		n++
		if !m.EntriesUnknown || !m.BytesUnknown {
			t.Errorf("%s (%s): entries %d bytes %d known", m.StateName, strings.SplitN(m.Status, ":", 2)[0], m.Entries, m.Bytes)
		}
	}
	if n == 0 {
		t.Error("typeser sample: no unreadable state")
	}
}
