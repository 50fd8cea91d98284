package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pairRec is a record type of the random chains that encodes itself.
type pairRec struct {
	S string
	N int64
}

func (p pairRec) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"s":`...)
	dst = strconv.AppendQuote(dst, p.S)
	dst = append(dst, `,"n":`...)
	dst = strconv.AppendInt(dst, p.N, 10)
	return append(dst, '}')
}

// plainRec is one that goes through encoding/json.
type plainRec struct {
	S string `json:"s"`
	L int    `json:"l"`
}

// randomChain builds a job from seed: a source of random words with
// timestamps, a split, a keyed count, then a random chain of maps
// (changing the record type among string, pairRec, plainRec and int64),
// filters, flat maps and processes, ending in a JSON sink or a function
// sink. The operator at index failOp of the chain fails on the first
// record whose text contains failOn, by error or (panic) by panicking.
func randomChain(seed uint64, failOp int, failOn string, panicking bool) *Job {
	return randomChainSpread(seed, failOp, failOn, panicking, false)
}

// randomChainSpread is randomChain; spread gives the job watermarks
// (bounded out-of-orderness, one after every line) and the count and
// every operator after it a random parallelism of 1 to 3 half of the
// time, so that typed operators head subtasks with several input
// channels and records arrive with watermarks between them.
func randomChainSpread(seed uint64, failOp int, failOn string, panicking, spread bool) *Job {
	r := rand.New(rand.NewPCG(seed, 7))
	// r2 draws the spread, so that r draws what randomChain always drew.
	r2 := rand.New(rand.NewPCG(seed, 13))
	opts := func(uid string) []Option {
		o := []Option{UID(uid)}
		if spread && r2.IntN(2) == 0 {
			o = append(o, Parallelism(1+r2.IntN(3)))
		}
		return o
	}
	words := []string{"a", "ab", "abc", "bb", "c", "dd", "e", "x", "yy"}
	lines := make([]string, 4+r.IntN(12))
	for i := range lines {
		n := r.IntN(5)
		ws := make([]string, n)
		for k := range ws {
			ws[k] = words[r.IntN(len(words))]
		}
		lines[i] = strings.Join(ws, " ")
	}
	j := NewJob("random")
	j.Parallelism = 1 + r.IntN(2)
	wms := WatermarkStrategy[string]{Timestamp: func(s string) (int64, error) { return int64(len(s)), nil }}
	if spread {
		wms = BoundedOutOfOrderness(time.Millisecond, wms.Timestamp)
	}
	src := FromSource(j, "Source: s", newSlice(lines...), wms, UID("s"), Parallelism(1))
	split := FlatMap(src, "split", func(l string, out Collector[string]) error {
		for _, w := range strings.Fields(l) {
			out.Collect(w)
		}
		return nil
	}, UID("split"), Parallelism(1))
	cur := any(RichMap(KeyBy(split, "self", func(s string) string { return s }), "count", &counter{}, opts("count")...))
	steps := 1 + r.IntN(6)
	fail := func(i int, text string) error {
		if i != failOp || !strings.Contains(text, failOn) {
			return nil
		}
		if panicking {
			var m map[string]int
			m[text]++ // a nil map write: a panic in user code
		}
		return fmt.Errorf("op%d refuses %q", i, text)
	}
	for i := 0; i < steps; i++ {
		name := fmt.Sprintf("op%d", i)
		uid := opts(name)
		switch s := cur.(type) {
		case *Stream[string]:
			switch r.IntN(5) {
			case 0:
				cur = Map(s, name, func(v string) (string, error) { return v + "!", fail(i, v) }, uid...)
			case 1:
				cur = Filter(s, name, func(v string) (bool, error) { return len(v)%3 != 0, fail(i, v) }, uid...)
			case 2:
				cur = FlatMap(s, name, func(v string, out Collector[string]) error {
					out.Collect(v)
					out.Collect(v + "'")
					return fail(i, v)
				}, uid...)
			case 3:
				cur = Map(s, name, func(v string) (pairRec, error) { return pairRec{S: v, N: int64(len(v))}, fail(i, v) }, uid...)
			default:
				cur = Process(s, name, func(ctx *ProcessContext[string], v string) error {
					ts, _ := ctx.Timestamp()
					ctx.CollectAt(v+"@"+strconv.FormatInt(ts, 10), ts+1)
					return fail(i, v)
				}, uid...)
			}
		case *Stream[pairRec]:
			switch r.IntN(3) {
			case 0:
				cur = Map(s, name, func(v pairRec) (plainRec, error) { return plainRec{S: v.S, L: int(v.N)}, fail(i, v.S) }, uid...)
			case 1:
				cur = Filter(s, name, func(v pairRec) (bool, error) { return v.N%2 == 0, fail(i, v.S) }, uid...)
			default:
				cur = Map(s, name, func(v pairRec) (int64, error) { return v.N * 10, fail(i, v.S) }, uid...)
			}
		case *Stream[plainRec]:
			cur = Map(s, name, func(v plainRec) (string, error) { return v.S + "#" + strconv.Itoa(v.L), fail(i, v.S) }, uid...)
		case *Stream[int64]:
			cur = Map(s, name, func(v int64) (string, error) { return strconv.FormatInt(v, 10), fail(i, strconv.FormatInt(v, 10)) }, uid...)
		}
	}
	jsonSink := r.IntN(2) == 0
	switch s := cur.(type) {
	case *Stream[string]:
		if jsonSink {
			JSONSink(s, "out", opts("out")...)
		} else {
			Sink(s, "out", func(v string) error { return fail(steps, v) }, opts("out")...)
		}
	case *Stream[pairRec]:
		if jsonSink {
			JSONSink(s, "out", opts("out")...)
		} else {
			Sink(s, "out", func(v pairRec) error { return fail(steps, v.S) }, opts("out")...)
		}
	case *Stream[plainRec]:
		JSONSink(s, "out", opts("out")...)
	case *Stream[int64]:
		JSONSink(s, "out", opts("out")...)
	}
	return j
}

// chainRun is what a run of a random chain gave.
type chainRun struct {
	out      string
	captured []string
	steps    int64
	failure  *Failure
}

func runChain(t *testing.T, j *Job, step, trace bool) chainRun {
	return runChainAt(t, j, step, trace, 0)
}

// runChainAt is runChain with a failure injected while source event failAt
// is read (Options.FailAt; 0: none).
func runChainAt(t *testing.T, j *Job, step, trace bool, failAt int64) chainRun {
	t.Helper()
	var out bytes.Buffer
	var run chainRun
	e, err := NewExecutor(j, Options{Output: &out, Trace: trace, FailAt: failAt, Capture: func(c Captured) {
		run.captured = append(run.captured, fmt.Sprintf("%s/%d %q %v ts=%d/%v", c.Operator, c.Subtask, c.Tag, c.Value, c.Timestamp, c.HasTimestamp))
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	run.failure = driveToEnd(t, e, step)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	run.out, run.steps = out.String(), e.Steps()
	return run
}

// TestTypedDirectMatchesSteps: random chains of the typed operators, run
// with Next (drainBatch; an operator that emits last runs its typed
// consumer straight from its emission: emitSlot, runDirectTyped; the
// split queues its words for a count of one subtask with their keys
// encoded typed: opInstance.hashOut), element by element with StepInto
// (every record through the stack and an Operator call), and with
// StepInto and a trace (every emission through emit), give the same
// outputs, captured sink records with their timestamps, step counts and
// failures (operator, record, key, position, error and the user's stack
// frames), with and without an injected error or panic.
func TestTypedDirectMatchesSteps(t *testing.T) {
	direct, hashed, failed := 0, 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		failOp, failOn, panicking := -1, "", false
		if seed%3 != 0 {
			failOp, failOn, panicking = int(seed%7), []string{"a", "bb", "x", "!", "dd"}[seed%5], seed%2 == 0
		}
		batch := runChain(t, randomChain(seed, failOp, failOn, panicking), false, false)
		for _, trace := range []bool{false, true} {
			stepped := runChain(t, randomChain(seed, failOp, failOn, panicking), true, trace)
			compareChainRuns(t, fmt.Sprintf("seed %d trace %v", seed, trace), batch, stepped, panicking)
		}
		if batch.failure != nil {
			failed++
		}
		d, h := countFast(t, randomChain(seed, -1, "", false))
		direct += d
		hashed += h
	}
	// The random chains exercise the typed paths, and failures.
	if direct < 100 || hashed < 50 || failed < 50 {
		t.Fatalf("only %d typed direct consumers, %d typed hash emissions and %d chains with a failure", direct, hashed, failed)
	}
}

// TestDrainHeadMatchesSteps: random chains whose typed operators head
// subtasks of their own (a random parallelism per operator: rebalanced
// and hash-partitioned inputs of one to three channels), with a watermark
// after every line, run with Next (a typed head runs the records of its
// input queue in one loop: drainHead; the source runs the split at once:
// sourceOp.emitDirect) and element by element with StepInto, with and
// without a trace, give the same outputs, captured sink records, steps
// and failures, an injected --fail-at failure among them.
func TestDrainHeadMatchesSteps(t *testing.T) {
	heads, multi, failed := 0, 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		failOp, failOn, panicking := -1, "", false
		if seed%3 != 0 {
			failOp, failOn, panicking = int(seed%7), []string{"a", "bb", "x", "!", "dd"}[seed%5], seed%2 == 0
		}
		// A fifth of the jobs also fail reading a line (--fail-at): the
		// source's step fails after the call, its record unhandled.
		failAt := int64(0)
		if seed%5 == 4 {
			failAt = int64(1 + seed%9)
		}
		job := func() *Job { return randomChainSpread(seed, failOp, failOn, panicking, true) }
		batch := runChainAt(t, job(), false, false, failAt)
		// The user's panic is the failure unless the injected one came first.
		panicked := panicking && (batch.failure == nil || !strings.Contains(batch.failure.Error(), "(--fail-at)"))
		for _, trace := range []bool{false, true} {
			compareChainRuns(t, fmt.Sprintf("seed %d trace %v fail at %d", seed, trace, failAt), batch, runChainAt(t, job(), true, trace, failAt), panicked)
		}
		if batch.failure != nil {
			failed++
		}
		h, m := countHeads(t, job())
		heads += h
		multi += m
	}
	if heads < 300 || multi < 100 || failed < 50 {
		t.Fatalf("only %d typed heads (%d with several input channels) and %d chains with a failure", heads, multi, failed)
	}
}

// countHeads is the number of subtasks of j headed by a typed operator
// (drainHead), and of those with several input channels.
func countHeads(t *testing.T, j *Job) (heads, multi int) {
	e, err := NewExecutor(j, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, st := range e.subtasks {
		if st.ops[0].drain != nil && st.downstream {
			heads++
			if len(st.channels) > 1 {
				multi++
			}
		}
	}
	return heads, multi
}

func compareChainRuns(t *testing.T, what string, batch, stepped chainRun, panicking bool) {
	t.Helper()
	if batch.out != stepped.out || batch.steps != stepped.steps || strings.Join(batch.captured, "\n") != strings.Join(stepped.captured, "\n") {
		t.Fatalf("%s: Next gave %d steps\n%s%s\nStepInto gave %d steps\n%s%s", what, batch.steps, batch.out, strings.Join(batch.captured, "\n"),
			stepped.steps, stepped.out, strings.Join(stepped.captured, "\n"))
	}
	bf, sf := batch.failure, stepped.failure
	if (bf == nil) != (sf == nil) {
		t.Fatalf("%s: failures %v and %v", what, bf, sf)
	}
	if bf != nil {
		if bf.Operator != sf.Operator || bf.Record != sf.Record || bf.Key != sf.Key || bf.Position != sf.Position || bf.Subtask != sf.Subtask ||
			bf.Err.Error() != sf.Err.Error() || frames(bf.Stack) != frames(sf.Stack) {
			t.Fatalf("%s: failures differ:\nNext:     %+v\n%s\nStepInto: %+v\n%s", what, bf, bf.Stack, sf, sf.Stack)
		}
		if panicking && (!strings.Contains(bf.Error(), "assignment to entry in nil map") || !strings.Contains(bf.Stack, "randomChain") ||
			strings.Contains(bf.Stack, "runDirectTyped") || strings.Contains(bf.Stack, "(*Executor)")) {
			t.Fatalf("%s: the panic or the user's stack is missing:\n%v\n%s", what, bf, bf.Stack)
		}
	}
}

// countFast is the number of operator instances of j whose emission runs
// a typed consumer directly, and of those that queue to one hash target.
func countFast(t *testing.T, j *Job) (direct, hashed int) {
	e, err := NewExecutor(j, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, st := range e.subtasks {
		for _, inst := range st.ops {
			if inst.next != nil {
				direct++
			}
			if inst.hashOut != nil {
				hashed++
			}
		}
	}
	return direct, hashed
}

// eventSource reads a fixed list of events with Next only; eventReader
// reads the same with ReadEvent (runtime.EventReader) too.
type eventSource struct {
	evs []SourceEvent[string]
	i   int
}

func (s *eventSource) Next() (SourceEvent[string], bool, error) {
	if s.i >= len(s.evs) {
		return SourceEvent[string]{}, false, nil
	}
	s.i++
	ev := s.evs[s.i-1]
	if ev.Value == "fail" {
		return ev, false, fmt.Errorf("%s: cannot read", ev.Where)
	}
	return ev, true, nil
}

type eventReader struct{ eventSource }

func (s *eventReader) ReadEvent(ev *SourceEvent[string]) (bool, error) {
	e, ok, err := s.Next()
	*ev = e
	return ok, err
}

// TestEventReaderMatchesNext: a source read with ReadEvent into the
// event the source operator keeps gives the run (trace, outputs, steps,
// failure) that reading it with Next gives, on random events: records
// with and without their own timestamps, watermarks (some not
// advancing), idleness, processing time moves and a failing read.
func TestEventReaderMatchesNext(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		var evs []SourceEvent[string]
		for i := 0; i < 5+r.IntN(30); i++ {
			ev := SourceEvent[string]{Where: Where{File: "ev", Line: i + 1}}
			switch r.IntN(8) {
			case 0:
				ev.Kind, ev.Watermark = EventWatermark, int64(r.IntN(50))
			case 1:
				ev.Kind = EventIdle
			case 2:
				ev.Kind, ev.Advance = EventAdvanceProcessingTime, time.Duration(r.IntN(3))*time.Second
			default:
				ev.Value = []string{"a", "b", "ab"}[r.IntN(3)]
				if r.IntN(2) == 0 {
					ev.Timestamp, ev.HasTimestamp = int64(r.IntN(100)), true
				}
				if r.IntN(40) == 0 {
					ev.Value = "fail"
				}
			}
			evs = append(evs, ev)
		}
		run := func(reader bool) string {
			j := NewJob("ev")
			newSrc := func() Source[string] { return &eventSource{evs: evs} }
			if reader {
				newSrc = func() Source[string] { return &eventReader{eventSource{evs: evs}} }
			}
			src := FromSource(j, "Source: ev", newSrc, WatermarkStrategy[string]{}, UID("ev"), Parallelism(1))
			up := Map(src, "up", func(s string) (string, error) { return strings.ToUpper(s), nil }, UID("up"), Parallelism(1))
			JSONSink(up, "out", UID("out"), Parallelism(1))
			var out bytes.Buffer
			e, err := NewExecutor(j, Options{Output: &out, Trace: seed%2 == 0}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			for !e.Finished() {
				if err = e.Next(); err != nil {
					break
				}
			}
			e.Flush()
			return fmt.Sprintf("%v\n%s\nsteps %d position %d\n%+v", err, out.String(), e.Steps(), e.Position(), e.TakeTrace())
		}
		if next, read := run(false), run(true); next != read {
			t.Fatalf("seed %d: Next gave\n%s\nReadEvent gave\n%s", seed, next, read)
		}
	}
}
