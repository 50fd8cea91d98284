package state

import "testing"

func TestOperatorIDMatchesFlink(t *testing.T) {
	// Operator ids of uids in Flink's own test savepoints.
	for uid, want := range map[string]string{
		"CheckpointingSource1":            "69f32d314b97c6f7f9ed7873983167f2",
		"CheckpointingSource2":            "1f2b5df5a66154aca61fcb26193792be",
		"CheckpointingKeyedStateFlatMap1": "d5c8b168c6cbfe8c507a10f88b325243",
		"broadcast-source-uid":            "3a6f51704798c4f418be51bfb6813b77",
		"keyed-state-process-uid":         "928f3b38bde6af749ed4cb45aa1237db",
	} {
		if got := OperatorID(uid); got != want {
			t.Errorf("OperatorID(%q) = %s, want %s", uid, got, want)
		}
	}
}
