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
