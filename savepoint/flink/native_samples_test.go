package flink

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdbg/state"
)

// The RocksDB samples and the heap savepoint holding the same state (see
// ../shared/flink-savepoints/README.md: "a reader must give the same rows
// for each").
var rocksdbSamples = []struct{ dir, heap string }{
	{"udf-flink1.20-rocksdb-savepoint-native", "udf-flink1.20-hashmap-savepoint"},
	{"udf-flink2.0-rocksdb-savepoint", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-udf-migration-itcase-flink1.15-rocksdb-checkpoint", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-udf-migration-itcase-flink1.15-rocksdb-savepoint-native", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-udf-migration-itcase-flink1.17-rocksdb-checkpoint", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-udf-migration-itcase-flink1.19-rocksdb-savepoint", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-udf-migration-itcase-flink1.20-rocksdb-checkpoint", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-udf-migration-itcase-flink2.2-rocksdb-savepoint-native", "udf-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-broadcast-udf-migration-itcase-flink1.20-rocksdb-savepoint-native", "broadcast-flink1.20-hashmap-savepoint"},
	{"datastream/new-stateful-broadcast-udf-migration-itcase-flink1.9-rocksdb-savepoint", "broadcast-flink1.20-hashmap-savepoint"},
}

// Rows are compared without operator_name (only `_metadata` v5+ stores
// names: older savepoints show the id) and without the timestamps of
// processing-time timers (wall-clock times of when each sample was taken).
func keyedLines(t *testing.T, sp *Savepoint) []string {
	t.Helper()
	var out []string
	for r, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s|%d|%d|%s|%s|%#v|%#v|%#v|%#v", r.OperatorID, r.Subtask, r.KeyGroup, r.StateName, r.Kind, r.Key, r.Namespace, r.UserKey, r.Value))
	}
	slices.Sort(out)
	return out
}

func timerLines(t *testing.T, sp *Savepoint) []string {
	t.Helper()
	var out []string
	for r, err := range sp.Timers(state.TimerScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		ts := fmt.Sprint(r.Timestamp)
		if r.Domain == "processing" {
			if r.Timestamp < 1_600_000_000_000 {
				t.Errorf("processing timer %+v: not a wall-clock time", r)
			}
			ts = "wall-clock"
		}
		out = append(out, fmt.Sprintf("%s|%d|%d|%s|%#v|%#v|%s|%s", r.OperatorID, r.Subtask, r.KeyGroup, r.StateName, r.Key, r.Namespace, r.Domain, ts))
	}
	slices.Sort(out)
	return out
}

func operatorLines(t *testing.T, sp *Savepoint) []string {
	t.Helper()
	var out []string
	for r, err := range sp.OperatorState(state.OperatorScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s|%d|%s|%s|%d|%#v|%#v", r.OperatorID, r.Subtask, r.StateName, r.Kind, r.Position, r.Key, r.Value))
	}
	slices.Sort(out)
	return out
}

// metaLines are the StateMeta rows to compare across formats: all but the
// bytes, which are each format's own encoding of the same entries (heap
// snapshots write no key-group prefix, a changelog's are not known).
func metaLines(sp *Savepoint) []string {
	var out []string
	for _, m := range sp.States() {
		entries := fmt.Sprint(m.Entries)
		if m.EntriesUnknown {
			entries = "unknown"
		}
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%s", m.OperatorID, m.StateName, m.Scope, m.Kind, m.KeyType, m.NamespaceType, m.UserKeyType, m.ValueType, entries, m.Status))
	}
	slices.Sort(out)
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s: %d rows, heap savepoint has %d", what, len(got), len(want))
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("  only in the RocksDB sample: %s", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("  only in the heap savepoint: %s", l)
		}
	}
}

// TestRocksDBSamplesMatchHeap reads every RocksDB sample (native
// savepoints, incremental and full-snapshot checkpoints, canonical
// savepoints) and compares keyed_state, timers and state_meta row for row
// (and operator_state) with the heap savepoint of the same job.
func TestRocksDBSamplesMatchHeap(t *testing.T) {
	for _, s := range rocksdbSamples {
		t.Run(filepath.Base(s.dir), func(t *testing.T) {
			heap := openSample(t, s.heap)
			dir := filepath.Join(samplesDir, s.dir)
			if _, err := os.Stat(dir); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("sample %s absent", s.dir)
				}
				t.Skipf("sample %s absent", s.dir)
			}
			sp, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range sp.Operators() {
				for _, u := range op.Unsupported {
					if !strings.Contains(u, "in-flight data of an unaligned checkpoint") {
						t.Errorf("%s: %s", op.ID, u)
					}
				}
			}
			sameLines(t, "keyed_state", keyedLines(t, sp), keyedLines(t, heap))
			sameLines(t, "timers", timerLines(t, sp), timerLines(t, heap))
			sameLines(t, "state_meta", metaLines(sp), metaLines(heap))
			sameLines(t, "operator_state", operatorLines(t, sp), operatorLines(t, heap))
			if len(keyedLines(t, heap))+len(timerLines(t, heap)) == 0 && !strings.Contains(s.dir, "broadcast") {
				t.Fatal("heap savepoint has no keyed rows: the comparison proves nothing")
			}
		})
	}
}
