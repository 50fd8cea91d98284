package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"streamdbg/state"
)

// batchJob is a keyed count followed by a chain of maps (run directly by
// drainBatch: each emits last to one chained consumer), a filter and a
// flat map, so that the batch loop's hand-overs all take part.
func batchJob(fail string) *Job {
	j := NewJob("t")
	j.Parallelism = 2
	src := FromSource(j, "Source: s", newSlice("a b", "c a", "b b a", "boom x", "d"), WatermarkStrategy[string]{}, UID("s"), Parallelism(1))
	words := FlatMap(src, "split", func(l string, out Collector[string]) error {
		for _, w := range strings.Fields(l) {
			out.Collect(w)
		}
		return nil
	}, UID("split"), Parallelism(1))
	k := KeyBy(words, "self", func(s string) string { return s })
	counted := RichMap(k, "count", &counter{fail: fail}, UID("count"))
	tagged := Map(counted, "tag", func(s string) (string, error) {
		if s == fail+"=1" {
			return "", errors.New("tag refuses " + s)
		}
		if s == "boom" {
			return s, nil
		}
		return "<" + s + ">", nil
	}, UID("tag"))
	kept := Filter(tagged, "keep", func(s string) (bool, error) { return !strings.HasPrefix(s, "<x"), nil }, UID("keep"))
	exploded := RichMap(kept, "explode", panicky{}, UID("explode"))
	twice := FlatMap(exploded, "twice", func(s string, out Collector[string]) error {
		out.Collect(s)
		out.Collect(s + "'")
		return nil
	}, UID("twice"))
	JSONSink(twice, "out", UID("out"))
	return j
}

// counter counts per key; it fails on the word c when fail says so:
// "count-error" returns an error, "count-panic" panics (on c).
type counter struct {
	n    *state.ValueState[int64]
	fail string
}

func (c *counter) Open(ctx RuntimeContext) (err error) {
	c.n, err = state.Value("n", state.Int64).Bind(ctx)
	return err
}

func (c *counter) Close() error { return nil }

func (c *counter) Map(w string) (string, error) {
	n, _, err := c.n.Value()
	if err != nil {
		return "", err
	}
	n++
	if err := c.n.Update(n); err != nil {
		return "", err
	}
	switch {
	case w == "c" && c.fail == "count-error":
		return "", errors.New("count refuses c")
	case w == "c" && c.fail == "count-panic":
		var m map[string]int
		m[w] = int(n)
	}
	if w == "boom" {
		return "boom", nil // panicky's trigger
	}
	return fmt.Sprintf("%s=%d", w, n), nil
}

// runBatchJob runs j to its end or failure with Next (step, when step
// is set, StepInto), returning the output, the steps and the failure.
func runBatchJob(t *testing.T, j *Job, step bool) (string, int64, *Failure) {
	t.Helper()
	var out bytes.Buffer
	e, err := NewExecutor(j, Options{Output: &out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if f := driveToEnd(t, e, step); f != nil {
		e.Flush()
		return out.String(), e.Steps(), f
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String(), e.Steps(), nil
}

// driveToEnd runs e with Next (StepInto, when step is set) until it
// finishes or fails, and returns the failure; any other error fails t.
func driveToEnd(t *testing.T, e *Executor, step bool) *Failure {
	t.Helper()
	for !e.Finished() {
		var err error
		if step {
			_, err = e.StepInto()
		} else {
			err = e.Next()
		}
		if errors.Is(err, ErrFinished) {
			return nil
		}
		if err != nil {
			f, ok := err.(*Failure)
			if !ok {
				t.Fatalf("want *Failure, got %v", err)
			}
			return f
		}
	}
	return nil
}

// TestBatchMatchesSteps: running records with Next (drainBatch: one
// recover per record, chained records handed over without the stack,
// maps running their consumer directly) gives the outputs, step counts
// and failures of running them one element at a time with StepInto.
func TestBatchMatchesSteps(t *testing.T) {
	for _, fail := range []string{"none", "c"} {
		batchOut, batchSteps, batchF := runBatchJob(t, batchJob(fail), false)
		stepOut, stepSteps, stepF := runBatchJob(t, batchJob(fail), true)
		if batchOut != stepOut || batchSteps != stepSteps {
			t.Errorf("fail=%s: Next gave %d steps\n%s\nStepInto gave %d steps\n%s", fail, batchSteps, batchOut, stepSteps, stepOut)
		}
		if batchF == nil || stepF == nil {
			t.Fatalf("fail=%s: want a failure both ways, got %v and %v", fail, batchF, stepF)
		}
		if batchF.Operator != stepF.Operator || batchF.Record != stepF.Record || batchF.Key != stepF.Key ||
			batchF.Position != stepF.Position || batchF.Err.Error() != stepF.Err.Error() || frames(batchF.Stack) != frames(stepF.Stack) {
			t.Errorf("fail=%s: failures differ:\nNext:     %+v\nStepInto: %+v", fail, batchF, stepF)
		}
	}
	// The panic of explode, a map run directly by the filter before it.
	_, _, f := runBatchJob(t, batchJob("none"), false)
	if f.Operator != "explode" || f.Record != `"boom"` || f.Key != "" || f.Position != 4 {
		t.Errorf("failure %+v", f)
	}
	if !strings.Contains(f.Error(), "assignment to entry in nil map") || !strings.Contains(f.Stack, "panicky.Map") ||
		strings.Contains(f.Stack, "(*Executor)") {
		t.Errorf("failure lacks the panic, or its stack is not the user's:\n%v\n%s", f, f.Stack)
	}
	// A failure of count, the head operator of its subtask, which takes
	// its records from the input queue: the record and key are named
	// both ways.
	for _, fail := range []string{"count-error", "count-panic"} {
		_, batchSteps, batchF := runBatchJob(t, batchJob(fail), false)
		_, stepSteps, stepF := runBatchJob(t, batchJob(fail), true)
		if batchF == nil || stepF == nil {
			t.Fatalf("%s: want a failure both ways, got %v and %v", fail, batchF, stepF)
		}
		if batchF.Operator != "count" || batchF.Record != `"c"` || batchF.Key != `"c"` || batchF.Position != 2 || batchF.Subtask != stepF.Subtask ||
			batchF.Record != stepF.Record || batchF.Key != stepF.Key || batchF.Err.Error() != stepF.Err.Error() || batchSteps != stepSteps {
			t.Errorf("%s: failures differ or name the wrong record:\nNext:     %+v (%d steps)\nStepInto: %+v (%d steps)", fail, batchF, batchSteps, stepF, stepSteps)
		}
	}
	// The error of tag, run directly by count.
	_, _, f = runBatchJob(t, batchJob("c"), false)
	if f.Operator != "tag" || f.Record != `"c=1"` || f.Position != 2 || !strings.Contains(f.Error(), "tag refuses c=1") {
		t.Errorf("failure %+v", f)
	}
}

// frames is a stack without argument values, which differ between runs.
func frames(stack string) string { return argsRE.ReplaceAllString(stack, "") }

var argsRE = regexp.MustCompile(`\(.*\)$|(?m)\(.*\)$| \+0x[0-9a-f]+`)
