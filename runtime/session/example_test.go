package session_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/state"
)

type counter struct{ n *state.ValueState[int64] }

func (c *counter) Open(ctx runtime.RuntimeContext) (err error) {
	c.n, err = state.Value("n", state.Int64).Bind(ctx)
	return err
}
func (c *counter) Close() error { return nil }
func (c *counter) Map(w string) (string, error) {
	n, _, err := c.n.Value()
	if err != nil {
		return "", err
	}
	return w, c.n.Update(n + 1)
}

// Example debugs a job of one's own, as README.md shows.
func Example() {
	job := runtime.NewJob("mine")
	lines := runtime.FromSlice(job, "Source: lines", []string{"a b a", "b c"}, runtime.WatermarkStrategy[string]{}, runtime.UID("lines"))
	words := runtime.FlatMap(lines, "split", func(l string, out runtime.Collector[string]) error {
		for _, w := range strings.Fields(l) {
			out.Collect(w)
		}
		return nil
	}, runtime.UID("split"))
	counted := runtime.RichMap(runtime.KeyBy(words, "word", func(w string) string { return w }), "count", &counter{}, runtime.UID("count"))
	runtime.JSONSink(counted, "out", runtime.UID("out"))

	s, err := session.New(job, session.Options{Options: runtime.Options{Trace: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	stop, _ := s.Next() // one record and everything it caused
	fmt.Println(stop.Reason, stop.Position, len(s.Outputs()))
	rows, _ := s.Query(context.Background(), "SELECT key, value FROM keyed_state ORDER BY key")
	query.Format(os.Stdout, rows, "table")
	// Output:
	// next 1 3
	// key  value
	// ---  -----
	// a        2
	// b        1
	// (2 rows)
}
