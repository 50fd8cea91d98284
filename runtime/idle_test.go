package runtime_test

import (
	"testing"
	"time"

	"streamdbg/runtime"
)

// perSubtask is a source whose subtask i replays evs[i].
type perSubtask struct {
	evs [][]runtime.SourceEvent[int64]
	i   int
	pos int
}

func (s *perSubtask) Open(ctx runtime.RuntimeContext) error { s.i = ctx.SubtaskIndex(); return nil }
func (s *perSubtask) Close() error                          { return nil }

func (s *perSubtask) Next() (runtime.SourceEvent[int64], bool, error) {
	if s.pos >= len(s.evs[s.i]) {
		return runtime.SourceEvent[int64]{}, false, nil
	}
	s.pos++
	return s.evs[s.i][s.pos-1], true, nil
}

func rec(ts int64) runtime.SourceEvent[int64] { return runtime.SourceEvent[int64]{Value: ts} }
func pt(d time.Duration) runtime.SourceEvent[int64] {
	return runtime.SourceEvent[int64]{Kind: runtime.EventAdvanceProcessingTime, Advance: d}
}

// TestWithIdleness: a source subtask without records for its idle timeout
// of processing time goes idle and stops holding the downstream watermark
// back; its next record makes it active again, and it counts for the
// minimum again only once it caught up.
func TestWithIdleness(t *testing.T) {
	evs := [][]runtime.SourceEvent[int64]{
		{rec(1000), pt(3 * time.Second), rec(5000), pt(3 * time.Second), rec(7000)},
		{rec(2000), pt(0), pt(0), pt(0), rec(3000)},
	}
	job := runtime.NewJob("idle")
	wms := runtime.Monotonous(func(v int64) (int64, error) { return v, nil }).WithIdleness(5 * time.Second)
	src := runtime.FromSource(job, "Source: s", func() runtime.Source[int64] { return &perSubtask{evs: evs} }, wms,
		runtime.UID("s"), runtime.Parallelism(2))
	keyed := runtime.KeyBy(src, "v", func(v int64) int64 { return v % 2 })
	runtime.Sink(keyed, "sink", func(int64) error { return nil }, runtime.UID("sink"), runtime.Parallelism(1))
	e, err := runtime.NewExecutor(job, runtime.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sink := func() runtime.SubtaskView {
		for _, v := range e.Subtasks() {
			if v.Task.Name == "sink" {
				return v
			}
		}
		t.Fatal("no sink subtask")
		return runtime.SubtaskView{}
	}
	next := func(n int) {
		t.Helper()
		for range n {
			if err := e.Next(); err != nil {
				t.Fatal(err)
			}
		}
	}
	next(2) // 1000 from [0], 2000 from [1]
	if v := sink(); v.Watermark != 999 || v.Channels[1].Idle {
		t.Fatalf("after one record each: watermark %d, channel 1 idle %v; want 999, active", v.Watermark, v.Channels[1].Idle)
	}
	next(4) // [0] 3s later 5000, [1] nothing
	if v := sink(); v.Watermark != 1999 || v.Channels[1].Idle || v.HoldingBack != 1 {
		t.Fatalf("before the timeout: watermark %d, channel 1 idle %v, holding back %d; want 1999, active, 1",
			v.Watermark, v.Channels[1].Idle, v.HoldingBack)
	}
	next(1) // [0]: processing time 6s; [1] has had no record since 0s
	v := sink()
	if !v.Channels[1].Idle || v.Watermark != 4999 || v.Idle {
		t.Fatalf("after 6s without a record on [1]: channel 1 idle %v, watermark %d, subtask idle %v; want idle, 4999, active",
			v.Channels[1].Idle, v.Watermark, v.Idle)
	}
	if src := e.Subtasks()[1].Source; src == nil || !src.Idle || src.IdleTimeout != 5000 {
		t.Fatalf("source [1] view: %+v; want idle with timeout 5000", src)
	}
	next(3) // [1] nothing, [0] 7000, [1] 3000
	v = sink()
	if v.Channels[1].Idle || v.Channels[1].Aligned || v.Watermark != 6999 {
		t.Fatalf("after [1]'s record: channel 1 idle %v aligned %v, watermark %d; want active, not aligned (2999 < 6999), 6999",
			v.Channels[1].Idle, v.Channels[1].Aligned, v.Watermark)
	}
	if v.Channels[1].LastRecordTS != 3000 || v.Channels[1].Records != 2 {
		t.Fatalf("channel 1 last record %d, %d records; want 3000, 2", v.Channels[1].LastRecordTS, v.Channels[1].Records)
	}
}
