package session_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/state"
)

// benchKeys is the number of distinct keys in state for the session
// benchmarks (DESIGN 12: one next at 1M keys under 1 ms).
const benchKeys = 1_000_000

// keySource reads key i mod distinct for i = 0, 1, …, total-1, keeping its
// offset in operator state so a restore resumes after the snapshot.
type keySource struct {
	distinct, total, next int64
	offset                *state.OperatorListState[int64]
}

func (s *keySource) InitializeState(ctx runtime.RuntimeContext) error {
	var err error
	if s.offset, err = state.SplitList(ctx.Operator(), "offset", state.Int64); err != nil {
		return err
	}
	if v := s.offset.Get(); len(v) > 0 {
		s.next = v[0]
	}
	return nil
}

func (s *keySource) SnapshotState(runtime.RuntimeContext) error {
	s.offset.Update([]int64{s.next})
	return nil
}

func (s *keySource) Next() (runtime.SourceEvent[string], bool, error) {
	if s.next >= s.total {
		return runtime.SourceEvent[string]{}, false, nil
	}
	k := s.next % s.distinct
	s.next++
	return runtime.SourceEvent[string]{Value: "key_" + strconv.FormatInt(k, 10)}, true, nil
}

// benchCounter counts records per key in ValueState "count", as wordcount.
type benchCounter struct{ count *state.ValueState[int64] }

func (c *benchCounter) Open(ctx runtime.RuntimeContext) (err error) {
	c.count, err = state.Value("count", state.Int64).Bind(ctx)
	return err
}
func (c *benchCounter) Close() error { return nil }
func (c *benchCounter) Map(k string) (fixtures.WordCountRecord, error) {
	n, _, err := c.count.Value()
	if err != nil {
		return fixtures.WordCountRecord{}, err
	}
	n++
	return fixtures.WordCountRecord{Word: k, Count: n}, c.count.Update(n)
}

// keysJob is wordcount's shape over benchKeys distinct keys, then the same
// keys again (practically without end).
func keysJob() *runtime.Job {
	job := runtime.NewJob("keys")
	job.Parallelism = 2
	src := runtime.FromSource(job, "Source: keys", func() runtime.Source[string] {
		return &keySource{distinct: benchKeys, total: 1 << 50}
	}, runtime.WatermarkStrategy[string]{}, runtime.UID("keys"), runtime.Parallelism(1))
	byKey := runtime.KeyBy(src, "key", func(k string) string { return k })
	counts := runtime.RichMap(byKey, "count", &benchCounter{}, runtime.UID("count"))
	runtime.JSONSink(counts, "out", runtime.UID("out"))
	return job
}

var (
	keysOnce sync.Once
	keysCP   *runtime.Checkpoint
	keysErr  error
)

// keysCheckpoint is a checkpoint of keysJob after benchKeys records: every
// key is in state. Built once; sessions restore from it.
func keysCheckpoint(b *testing.B) *runtime.Checkpoint {
	keysOnce.Do(func() {
		s, err := session.New(keysJob(), session.Options{CheckpointInterval: benchKeys})
		if err != nil {
			keysErr = err
			return
		}
		defer s.Close()
		if _, err := s.Run(context.Background(), session.RunOptions{Steps: benchKeys}); err != nil {
			keysErr = err
			return
		}
		keysCP = s.LatestCheckpoint()
		if keysCP.Info().Position != benchKeys {
			keysErr = strconv.ErrRange
			return
		}
		// Outlive the session: copy the state out of its backends.
		keysErr = keysCP.Materialize()
	})
	if keysErr != nil {
		b.Fatal(keysErr)
	}
	return keysCP
}

func keysSession(b *testing.B, interval int, trace bool) *session.Session {
	s, err := session.New(keysJob(), session.Options{Options: runtime.Options{Trace: trace}, CheckpointInterval: interval,
		Restore: keysCheckpoint(b)})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkBack is one Back over 500 records with 1M keys in state, the
// way a user undoes a "next 500": the session starts at record 1M (every
// key in state), steps 1000+k records so that a checkpoint (interval 1000)
// lies k records before the point back returns to, then each iteration
// runs next 500 (untimed) and back (timed). Back rolls the backends back to
// the checkpoint (undoing the changes of k+500 records) and replays k
// records. replayed/op is the mean of what Back reported replaying
// (Stop.Replayed), checked against k. restore is the floor of the old way:
// rebuilding the 1M-key state from a full copy, without any replay.
func BenchmarkBack(b *testing.B) {
	for _, k := range []int64{0, 250, 499} {
		b.Run(fmt.Sprintf("replay-%d", k), func(b *testing.B) {
			s := keysSession(b, 1000, true)
			defer s.Close()
			if _, err := s.NextN(context.Background(), int(1000+k)); err != nil {
				b.Fatal(err)
			}
			start := s.Position()
			var replayed int64
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if _, err := s.NextN(context.Background(), 500); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				st, err := s.Back()
				if err != nil || st.Reason != session.ReasonBack || s.Position() != start {
					b.Fatal(err, st, s.Position(), start)
				}
				if st.Replayed != k {
					b.Fatalf("back replayed %d records, want %d", st.Replayed, k)
				}
				replayed += st.Replayed
			}
			b.ReportMetric(float64(replayed)/float64(b.N), "replayed/op")
		})
	}
	b.Run("restore", func(b *testing.B) {
		cp := keysCheckpoint(b)
		job := keysJob()
		b.ResetTimer() // the checkpoint is built once, not restored
		for range b.N {
			e, err := runtime.NewExecutor(job, runtime.Options{}, cp)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			e.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkSessionNext is one Next with 1M keys in state. plain and
// plain-trace take no checkpoint (the interval is beyond the run), so they
// measure the step itself, with and without the trace the TUI reads;
// interval-1000 has the default checkpoint interval, so every 1000th Next
// also takes a checkpoint (an incremental mark of the backends, not a copy
// of the 1M keys) and the figure is the amortised cost.
func BenchmarkSessionNext(b *testing.B) {
	for _, bc := range []struct {
		name     string
		interval int
		trace    bool
	}{
		{"plain", 1 << 40, false},
		{"plain-trace", 1 << 40, true},
		{"interval-1000", 1000, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := keysSession(b, bc.interval, bc.trace)
			defer s.Close()
			b.ResetTimer()
			for range b.N {
				if _, err := s.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
