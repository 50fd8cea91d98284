package runtime

import (
	"strings"
	"testing"
)

type memSource struct {
	items []string
	i     int
}

func (s *memSource) Next() (SourceEvent[string], bool, error) {
	if s.i >= len(s.items) {
		return SourceEvent[string]{}, false, nil
	}
	s.i++
	return SourceEvent[string]{Value: s.items[s.i-1], Where: Where{File: "mem", Line: s.i}}, true, nil
}

func newSlice(items ...string) func() Source[string] {
	return func() Source[string] { return &memSource{items: items} }
}

func identity(s string) (string, error) { return s, nil }

func TestChaining(t *testing.T) {
	j := NewJob("t")
	j.Parallelism = 2
	src := FromSource(j, "Source: s", newSlice("a"), WatermarkStrategy[string]{}, UID("s"), Parallelism(1))
	a := Map(src, "a", identity, UID("a"), Parallelism(1))
	b := Map(a, "b", identity, UID("b")) // parallelism 2: breaks the chain
	k := KeyBy(b, "self", func(s string) string { return s })
	c := Map(k, "c", identity, UID("c")) // keyed: breaks
	d := Filter(c, "d", func(string) (bool, error) { return true, nil }, UID("d"))
	other := Map(src, "e", identity, UID("e"), Parallelism(2))
	u := Union(d, other)
	f := Map(u, "f", identity, UID("f")) // two inputs: not chained
	JSONSink(f, "out", UID("out"))
	p, err := BuildPlan(j, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `Source: s -> a  ×1
b  ×2  ← rebalance from "Source: s -> a"
c -> d  ×2  ← hash(self) from "b"
e  ×2  ← rebalance from "Source: s -> a"
f -> out  ×2  ← forward from "c -> d"  ← forward from "e"
`
	if got := p.String(); got != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	if len(p.Warnings) != 0 {
		t.Fatalf("warnings: %v", p.Warnings)
	}
	if !p.Operators[3].Keyed || p.Operators[4].Keyed {
		t.Fatalf("only c reads a keyed stream")
	}
}

func TestDerivedUIDWarnsAndDuplicateUIDFails(t *testing.T) {
	j := NewJob("t")
	src := FromSource(j, "Source: s", newSlice("a"), WatermarkStrategy[string]{})
	JSONSink(src, "out", UID("x"))
	p, err := BuildPlan(j, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `"Source: s" has no uid`) {
		t.Fatalf("warnings %v", p.Warnings)
	}
	j2 := NewJob("t")
	s2 := FromSource(j2, "Source: s", newSlice("a"), WatermarkStrategy[string]{}, UID("x"))
	JSONSink(s2, "out", UID("x"))
	if _, err := BuildPlan(j2, 0, 0); err == nil || !strings.Contains(err.Error(), `same uid "x"`) {
		t.Fatalf("duplicate uid: %v", err)
	}
}

func TestBackendPrecedenceInCode(t *testing.T) {
	j := NewJob("t")
	for _, tc := range []struct {
		job, opt, origin, want, why string
	}{
		{"", "", "", "heap", "default"},
		{"", "pebble", "the --backend flag", "pebble", "from the --backend flag"},
		{"heap", "pebble", "the --backend flag", "heap", "set in the job's code"},
	} {
		j.Backend = tc.job
		name, why := chooseBackend(j, Options{Backend: tc.opt, BackendOrigin: tc.origin})
		if name != tc.want || why != tc.why {
			t.Errorf("job %q opt %q: %s (%s), want %s (%s)", tc.job, tc.opt, name, why, tc.want, tc.why)
		}
	}
}

type panicky struct{}

func (panicky) Map(s string) (string, error) {
	if s == "boom" {
		var m map[string]int
		m["x"]++ // a nil map write: a real panic in user code
	}
	return s, nil
}

func TestPanicBecomesFailure(t *testing.T) {
	j := NewJob("t")
	src := FromSource(j, "Source: s", newSlice("a", "boom", "c"), WatermarkStrategy[string]{}, UID("s"))
	k := KeyBy(src, "self", func(s string) string { return s })
	JSONSink(RichMap(k, "explode", panicky{}, UID("explode")), "out", UID("out"))
	e, err := NewExecutor(j, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Next(); err != nil {
		t.Fatal(err)
	}
	err = e.Next()
	f, ok := err.(*Failure)
	if !ok {
		t.Fatalf("want *Failure, got %v", err)
	}
	if f.Operator != "explode" || f.Record != `"boom"` || f.Key != `"boom"` || f.Position != 2 {
		t.Fatalf("failure %+v", f)
	}
	if !strings.Contains(f.Error(), "assignment to entry in nil map") || !strings.Contains(f.Stack, "panicky.Map") {
		t.Fatalf("failure lacks the panic or the stack: %v\n%s", f, f.Stack)
	}
	if err := e.Next(); err != f {
		t.Fatalf("a failed executor must keep reporting its failure, got %v", err)
	}
}
