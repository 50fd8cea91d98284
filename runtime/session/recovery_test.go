package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// lastPerKey is the last value the sink emitted for each key (the word or
// the customer): at-least-once output still ends with the exact values.
func lastPerKey(t testing.TB, out []byte) map[string]string {
	t.Helper()
	last := map[string]string{}
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("bad output line %q: %v", l, err)
		}
		if w, ok := m["word"].(string); ok {
			last[w] = string(l)
		} else if c, ok := m["customer"].(string); ok {
			last[c] = string(l)
		}
	}
	return last
}

// TestInjectedFailures injects one failure at a random record with a
// random checkpoint interval and parallelism 1-4, in wordcount and orders:
// the run restarts from the latest checkpoint and ends in the state of a
// failure-free run (exactly-once state), with the same last sink value
// per key. STREAMDBG_TRIALS=1000 runs the 1000 trials.
func TestInjectedFailures(t *testing.T) {
	rng := seeded(t)
	jobs := []string{"wordcount", "orders"}
	refs := map[string]reference{}
	refOut := map[string]map[string]string{}
	for _, j := range jobs {
		refs[j] = referenceRun(t, j)
		var out bytes.Buffer
		s := openSession(t, buildJob(t, j), session.Options{Options: runtime.Options{Output: &out}})
		runToEnd(t, s, session.RunOptions{})
		s.Close()
		refOut[j] = lastPerKey(t, out.Bytes())
	}
	n := trials(t, 40)
	divergences := 0
	for i := range n {
		name := jobs[i%len(jobs)]
		ref := refs[name]
		failAt := 1 + rng.Int64N(ref.records)
		interval := 1 + rng.IntN(int(ref.records))
		p := 1 + rng.IntN(4)
		var out bytes.Buffer
		s := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: p, Output: &out}, CheckpointInterval: interval})
		s.SetFailAt(failAt)
		res, err := s.Run(context.Background(), session.RunOptions{MaxRestarts: 3})
		if err != nil {
			t.Fatalf("trial %d: %s fail at %d, interval %d, parallelism %d: %v", i, name, failAt, interval, p, err)
		}
		what := func() string {
			return fmt.Sprintf("%s, fail at %d, interval %d, parallelism %d", name, failAt, interval, p)
		}
		switch got := stateDump(t, s); {
		case !res.Finished || res.Position != ref.records:
			divergences++
			t.Errorf("trial %d (%s): ended at record %d (finished %v), want %d", i, what(), res.Position, res.Finished, ref.records)
		case res.Restarts != 1:
			divergences++
			t.Errorf("trial %d (%s): %d restarts, want 1", i, what(), res.Restarts)
		case got != ref.dump:
			divergences++
			t.Errorf("trial %d (%s): state differs from a failure-free run: %s", i, what(), firstDiff(got, ref.dump))
		case !maps.Equal(lastPerKey(t, out.Bytes()), refOut[name]):
			divergences++
			t.Errorf("trial %d (%s): last sink values per key differ from a failure-free run", i, what())
		}
		s.Close()
	}
	t.Logf("%d trials, %d divergences", n, divergences)
}
