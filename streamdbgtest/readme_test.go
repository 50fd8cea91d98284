package streamdbgtest_test

import (
	"strings"
	"testing"

	rt "streamdbg/runtime"
	"streamdbg/state"
	"streamdbg/streamdbgtest"
)

// readmeCounter and buildMyJob are the job of README.md's "Debugging your
// own job"; TestCount is its "Testing your own job" example, kept true.
type readmeCounter struct{ n *state.ValueState[int64] }

func (c *readmeCounter) Open(ctx rt.RuntimeContext) (err error) {
	c.n, err = state.Value("n", state.Int64).Bind(ctx)
	return err
}
func (c *readmeCounter) Close() error { return nil }
func (c *readmeCounter) Map(w string) (string, error) {
	n, _, err := c.n.Value()
	if err != nil {
		return "", err
	}
	return w, c.n.Update(n + 1)
}

func buildMyJob() *rt.Job {
	job := rt.NewJob("mine")
	lines := rt.FromSlice(job, "Source: lines", []string{"a b a", "b c"}, rt.WatermarkStrategy[string]{}, rt.UID("lines"))
	words := rt.FlatMap(lines, "split", func(l string, out rt.Collector[string]) error {
		for _, w := range strings.Fields(l) {
			out.Collect(w)
		}
		return nil
	}, rt.UID("split"))
	counted := rt.RichMap(rt.KeyBy(words, "word", func(w string) string { return w }), "count", &readmeCounter{}, rt.UID("count"))
	rt.JSONSink(counted, "out", rt.UID("out"))
	return job
}

func TestCount(t *testing.T) {
	d := streamdbgtest.New(t, buildMyJob())
	lines := streamdbgtest.Input[string](d, "Source: lines")
	out := streamdbgtest.Output[string](d, "out")
	count := streamdbgtest.ValueState[int64](d, "count", "n")

	lines.Push("a b a")
	out.ExpectAnyOrder("a", "b", "a")
	if n, _ := count.Get("a"); n != 2 {
		t.Fatalf("a counted %d", n)
	}
	lines.Push("a")
	if n, _ := count.Get("a"); n != 3 {
		t.Fatalf("a counted %d", n)
	}
	d.Debug()
}
