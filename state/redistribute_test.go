package state

import (
	"fmt"
	"testing"
)

func TestRedistributeOperatorState(t *testing.T) {
	el := func(state string, kind Kind, v string) OperatorEntry {
		return OperatorEntry{State: state, Kind: kind, Value: []byte(v)}
	}
	old := [][]OperatorEntry{
		{el("s", KindSplitList, "a"), el("s", KindSplitList, "b"), el("u", KindUnionList, "u0"), el("m", KindBroadcast, "m")},
		{el("s", KindSplitList, "c"), el("u", KindUnionList, "u1"), el("m", KindBroadcast, "m")},
	}
	show := func(es []OperatorEntry) string {
		out := ""
		for _, e := range es {
			out += fmt.Sprintf("%s%d=%s ", e.State, e.Position, e.Value)
		}
		return out
	}
	for _, tc := range []struct {
		parallelism, index int
		want               string
	}{
		{2, 0, "s0=a s1=b u0=u0 u1=u1 m0=m "},
		{2, 1, "s0=c u0=u0 u1=u1 m0=m "},
		{1, 0, "s0=a s1=b s2=c u0=u0 u1=u1 m0=m "},
		{3, 0, "s0=a u0=u0 u1=u1 m0=m "},
		{3, 2, "s0=c u0=u0 u1=u1 m0=m "},
		{4, 3, "u0=u0 u1=u1 m0=m "},
	} {
		if got := show(RedistributeOperatorState(old, tc.parallelism, tc.index)); got != tc.want {
			t.Errorf("parallelism %d subtask %d: %s, want %s", tc.parallelism, tc.index, got, tc.want)
		}
	}
}

// TestRedistributeBroadcastState: new subtask i takes the broadcast map of
// old subtask i mod the old parallelism, as Flink's
// RoundRobinOperatorStateRepartitioner.repartitionBroadcastState.
func TestRedistributeBroadcastState(t *testing.T) {
	old := make([][]OperatorEntry, 3)
	for i := range old {
		old[i] = []OperatorEntry{{State: "m", Kind: KindBroadcast, Key: []byte("k"), Value: []byte(fmt.Sprint("from ", i))}}
	}
	for _, tc := range []struct {
		parallelism, index int
		want               string
	}{
		{3, 0, "from 0"}, {3, 2, "from 2"}, // same parallelism: its own
		{2, 0, "from 0"}, {2, 1, "from 1"}, // scale down: the first ones
		{5, 3, "from 0"}, {5, 4, "from 1"}, // scale up: round-robin
	} {
		got := RedistributeOperatorState(old, tc.parallelism, tc.index)
		if len(got) != 1 || string(got[0].Value) != tc.want {
			t.Errorf("parallelism %d subtask %d: %v, want the map %s", tc.parallelism, tc.index, got, tc.want)
		}
	}
}
