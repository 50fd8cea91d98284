package session_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"streamdbg/fixtures"
	"streamdbg/internal/cputime"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// bigWords is the input: 300k lines of 3 to 8 words over 200k
// distinct words (line i starts with word 2i mod 200k, so all appear).
var bigWords = sync.OnceValue(func() *fixtures.Input { return wordLines(300_000, 200_000) })

// fewWords is bigWords' shape over 20k distinct words: every key's
// history is kept (fewer keys than HistoryEntries), so that every write
// of a light run becomes a revision.
var fewWords = sync.OnceValue(func() *fixtures.Input { return wordLines(300_000, 20_000) })

// wordLines is lines of 3 to 8 words over distinct words (line i starts
// with word 2i mod distinct, so all appear when lines >= distinct/2).
func wordLines(lines, distinct int) *fixtures.Input {
	r := rand.New(rand.NewPCG(15, 15))
	var b bytes.Buffer
	for i := range lines {
		fmt.Fprintf(&b, "w%d", (2*i)%distinct)
		for range 2 + r.IntN(6) {
			fmt.Fprintf(&b, " w%d", r.IntN(distinct))
		}
		b.WriteByte('\n')
	}
	in, err := fixtures.Parse(fmt.Sprintf("words%dk.txt", lines/1000), b.Bytes())
	if err != nil {
		panic(err)
	}
	return in
}

// BenchmarkCheckpointCost runs wordcount headless over bigWords (200k keys
// in state at the end) three ways in every iteration, interleaved so that
// load on the machine hits all alike:
//   - default: session.Run with the default checkpoint interval (1000
//     records; incremental checkpoints, recovery ready);
//   - off: session.Run with an interval beyond the input (only the
//     session's first checkpoint, as --checkpoint-interval 100000000);
//   - none: the executor alone, no session and no checkpoint at all (no
//     change is recorded).
//
// All three read the same input, do the same state updates and write the
// same JSON lines to io.Discard. ns/op is one iteration (all three runs);
// default/off and default/none are the ratios of their summed CPU times
// (the process's, the garbage collector's included: on a machine shared
// with other work it varies far less than wall time).
func BenchmarkCheckpointCost(b *testing.B) {
	in := bigWords()
	build := func() *runtime.Job {
		job, err := fixtures.Build("wordcount", fixtures.Config{Input: in})
		if err != nil {
			b.Fatal(err)
		}
		return job
	}
	run := func(interval int) time.Duration {
		start := cpuStart()
		s, err := session.New(build(), session.Options{Options: runtime.Options{Output: io.Discard}, CheckpointInterval: interval})
		if err != nil {
			b.Fatal(err)
		}
		res, err := s.Run(context.Background(), session.RunOptions{})
		if err != nil || !res.Finished {
			b.Fatal(err, res)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		return cpuSince(start)
	}
	none := func() time.Duration {
		start := cpuStart()
		e, err := runtime.NewExecutor(build(), runtime.Options{Output: io.Discard}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for !e.Finished() {
			if err := e.Next(); err != nil && err != runtime.ErrFinished {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		return cpuSince(start)
	}
	var def, off, no time.Duration
	for b.Loop() {
		def += run(0)
		off += run(1 << 40)
		no += none()
	}
	b.ReportMetric(def.Seconds()/float64(b.N), "default-cpu-s/op")
	b.ReportMetric(off.Seconds()/float64(b.N), "off-cpu-s/op")
	b.ReportMetric(no.Seconds()/float64(b.N), "none-cpu-s/op")
	b.ReportMetric(float64(def)/float64(off), "default/off")
	b.ReportMetric(float64(def)/float64(no), "default/none")
}

// BenchmarkContinue is the TUI's c over bigWords (300k lines, 200k keys)
// against a headless run of the same input: continue runs a session made as
// `streamdbg debug` makes it (trace on, default checkpoints, no breakpoint,
// and no output writer: the TUI keeps the sink's records as values for its
// output pane and encodes none as JSON) from the first record to the end;
// run is session.Run as `streamdbg run` (no trace), its JSON lines written
// to io.Discard instead of stdout. The two alternate in every
// iteration; continue/run is the ratio of their summed CPU times (the
// process's, as BenchmarkCheckpointCost; the bound: 1.5);
// continue/run-wall is the ratio of their wall times.
func BenchmarkContinue(b *testing.B) { benchContinue(b, bigWords()) }

// BenchmarkContinueFewKeys is BenchmarkContinue over fewWords (20k keys):
// the history keeps every key's, so the light run makes a revision of
// every write (at 200k keys, most histories are forgotten before a
// revision is made). No bound in the issue; kept to watch that cost.
func BenchmarkContinueFewKeys(b *testing.B) { benchContinue(b, fewWords()) }

func benchContinue(b *testing.B, in *fixtures.Input) {
	open := func(trace bool) *session.Session {
		job, err := fixtures.Build("wordcount", fixtures.Config{Input: in})
		if err != nil {
			b.Fatal(err)
		}
		var out io.Writer = io.Discard // run: stdout
		if trace {
			out = nil // debug: no writer (debugCmd.Run opens its session with none)
		}
		s, err := session.New(job, session.Options{Options: runtime.Options{Output: out, Trace: trace}})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	var cw, rw time.Duration // wall time of each side
	cont := func() time.Duration {
		start := cpuStart()
		t0 := time.Now()
		s := open(true)
		st, err := s.Continue(context.Background())
		if err != nil || st.Reason != session.ReasonEnd {
			b.Fatal(err, st)
		}
		s.Close()
		cw += time.Since(t0)
		return cpuSince(start)
	}
	run := func() time.Duration {
		start := cpuStart()
		t0 := time.Now()
		s := open(false)
		if res, err := s.Run(context.Background(), session.RunOptions{}); err != nil || !res.Finished {
			b.Fatal(err, res)
		}
		s.Close()
		rw += time.Since(t0)
		return cpuSince(start)
	}
	var c, r time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			c += cont()
			r += run()
		} else {
			r += run()
			c += cont()
		}
	}
	b.ReportMetric(c.Seconds()/float64(b.N), "continue-cpu-s/op")
	b.ReportMetric(r.Seconds()/float64(b.N), "run-cpu-s/op")
	b.ReportMetric(float64(c)/float64(r), "continue/run")
	b.ReportMetric(float64(cw)/float64(rw), "continue/run-wall")
}

// cpuStart collects garbage (each side pays for its own) and returns the
// process's CPU time.
func cpuStart() time.Duration {
	goruntime.GC()
	return cputime.Process()
}

func cpuSince(start time.Duration) time.Duration { return cputime.Process() - start }
