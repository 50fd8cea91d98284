package streamdbgtest_test

// Ports of three documented testing examples to this package: Flink's
// stateful FlatMap under KeyedOneInputStreamOperatorTestHarness and its
// timer-based KeyedProcessFunction ("A Guide for Unit Testing in Apache
// Flink"), and Kafka Streams' word count under TopologyTestDriver
// (WordCountDemoTest). The assertions are the originals'; where the
// original reaches into the function for its state, these read it as
// a test outside the job would.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	rt "streamdbg/runtime"
	"streamdbg/state"
	"streamdbg/streamdbgtest"
)

// StatefulFlatMap greets each record, adding the key's previous record,
// which it keeps in ValueState "previousInput".
type StatefulFlatMap struct {
	previousInput *state.ValueState[string]
}

func (f *StatefulFlatMap) Open(ctx rt.RuntimeContext) (err error) {
	f.previousInput, err = state.Value("previousInput", state.String).Bind(ctx)
	return err
}

func (f *StatefulFlatMap) Close() error { return nil }

func (f *StatefulFlatMap) FlatMap(in string, out rt.Collector[string]) error {
	msg := "hello " + in
	prev, ok, err := f.previousInput.Value()
	if err != nil {
		return err
	}
	if ok {
		msg += " " + prev
	}
	out.Collect(msg)
	return f.previousInput.Update(in)
}

// TestStatefulFlatMap: Flink's testFlatMap. Every record has key "1".
func TestStatefulFlatMap(t *testing.T) {
	h := streamdbgtest.Keyed(t, func(in *rt.KeyedStream[string, string]) *rt.Stream[string] {
		return rt.RichFlatMap(in, "statefulFlatMap", &StatefulFlatMap{})
	}, func(string) string { return "1" })
	previousInput := streamdbgtest.ValueState[string](h.Driver, "statefulFlatMap", "previousInput")

	h.PushAt("world", 10)
	if got, want := h.ReadRecords(), []streamdbgtest.Record[string]{streamdbgtest.At("hello world", 10)}; !slices.Equal(got, want) {
		t.Fatalf("output %+v, want %+v", got, want)
	}
	if v, _ := previousInput.Get("1"); v != "world" {
		t.Fatalf("previousInput %q, want world", v)
	}

	h.PushAt("parallel", 20)
	// Flink's harness lists all output so far; ReadRecords returns what
	// came since the last read.
	if got, want := h.ReadRecords(), []streamdbgtest.Record[string]{streamdbgtest.At("hello parallel world", 20)}; !slices.Equal(got, want) {
		t.Fatalf("output %+v, want %+v", got, want)
	}
	if v, _ := previousInput.Get("1"); v != "parallel" {
		t.Fatalf("previousInput %q, want parallel", v)
	}
}

// MyProcessFunction greets each record and sets a processing-time timer
// at 50, which reports when it fires.
type MyProcessFunction struct{}

func (MyProcessFunction) ProcessElement(ctx *rt.ProcessContext[string], in string) error {
	if err := ctx.RegisterProcessingTimeTimer(50); err != nil {
		return err
	}
	ctx.Collect("hello " + in)
	return nil
}

func (MyProcessFunction) OnTimer(ctx *rt.ProcessContext[string], ts int64, _ rt.TimeDomain) error {
	ctx.Collect(fmt.Sprintf("Timer triggered at timestamp %d", ts))
	return nil
}

func myProcessHarness(t *testing.T) *streamdbgtest.Harness[string, string, string] {
	return streamdbgtest.Keyed(t, func(in *rt.KeyedStream[string, string]) *rt.Stream[string] {
		return rt.RichProcess(in, "myProcessFunction", MyProcessFunction{})
	}, func(string) string { return "1" })
}

// TestMyProcessFunctionProcessElement: Flink's testProcessElement.
func TestMyProcessFunctionProcessElement(t *testing.T) {
	h := myProcessHarness(t) // processing time starts at 0
	h.PushAt("world", 10)
	if got, want := h.ReadRecords(), []streamdbgtest.Record[string]{streamdbgtest.At("hello world", 10)}; !slices.Equal(got, want) {
		t.Fatalf("output %+v, want %+v", got, want)
	}
}

// TestMyProcessFunctionOnTimer: Flink's testOnTimer.
func TestMyProcessFunctionOnTimer(t *testing.T) {
	h := myProcessHarness(t)
	h.PushAt("world", 10)
	if n := len(h.Timers()); n != 1 {
		t.Fatalf("%d processing-time timers, want 1", n)
	}
	h.AdvanceProcessingTime(50 * time.Millisecond) // the function's time is now 50
	want := []streamdbgtest.Record[string]{
		streamdbgtest.At("hello world", 10),
		{Value: "Timer triggered at timestamp 50"}, // a processing-time timer's record has no timestamp
	}
	if got := h.ReadRecords(); !slices.Equal(got, want) {
		t.Fatalf("output %+v, want %+v", got, want)
	}
}

// WordCount is a word with its count so far (Kafka's KeyValue<String, Long>).
type WordCount struct {
	Word  string
	Count int64
}

var nonWord = regexp.MustCompile(`\W+`)

// wordCountTopology is WordCountDemo: lines lower-cased and split on
// non-word characters, grouped by word and counted (ValueState "counts"
// of operator "count", the role of Kafka's counts store).
func wordCountTopology() *rt.Job {
	job := rt.NewJob("streams-wordcount")
	lines := rt.FromSlice(job, "streams-plaintext-input", []string(nil), rt.WatermarkStrategy[string]{}, rt.UID("input"))
	words := rt.FlatMap(lines, "split", func(l string, out rt.Collector[string]) error {
		for _, w := range nonWord.Split(strings.ToLower(l), -1) {
			if w != "" {
				out.Collect(w)
			}
		}
		return nil
	}, rt.UID("split"))
	counts := rt.RichMap(rt.KeyBy(words, "word", func(w string) string { return w }), "count", &wordCounts{}, rt.UID("count"))
	rt.JSONSink(counts, "streams-wordcount-output", rt.UID("output"))
	return job
}

type wordCounts struct{ counts *state.ValueState[int64] }

func (c *wordCounts) Open(ctx rt.RuntimeContext) (err error) {
	c.counts, err = state.Value("counts", state.Int64).Bind(ctx)
	return err
}

func (c *wordCounts) Close() error { return nil }

func (c *wordCounts) Map(w string) (WordCount, error) {
	n, _, err := c.counts.Value()
	if err != nil {
		return WordCount{}, err
	}
	return WordCount{w, n + 1}, c.counts.Update(n + 1)
}

// TestWordCountOneWord: Kafka's testOneWord.
func TestWordCountOneWord(t *testing.T) {
	d := streamdbgtest.New(t, wordCountTopology())
	input := streamdbgtest.Input[string](d, "streams-plaintext-input")
	output := streamdbgtest.Output[WordCount](d, "streams-wordcount-output")
	input.PushAt("Hello", time.UnixMilli(1))
	if got, ok := output.Next(); !ok || got != (WordCount{"hello", 1}) {
		t.Fatalf("read %v %v, want hello=1", got, ok)
	}
	if output.Len() != 0 {
		t.Fatalf("%d more records, want none", output.Len())
	}
}

// TestWordCountShouldCountWords: Kafka's shouldCountWords, with the counts
// store read too.
func TestWordCountShouldCountWords(t *testing.T) {
	d := streamdbgtest.New(t, wordCountTopology(), streamdbgtest.Parallelism(2))
	input := streamdbgtest.Input[string](d, "streams-plaintext-input")
	output := streamdbgtest.Output[WordCount](d, "streams-wordcount-output")
	lines := []string{
		"Apache Kafka Streams Example",
		"Using Kafka Streams Test Utils",
		"Reading and Writing Kafka Topic",
	}
	// pipeValueList(inputValues, start 1 ms, advance 100 ms)
	for i, l := range lines {
		input.PushAt(l, time.UnixMilli(1+100*int64(i)))
	}
	want := map[string]int64{"apache": 1, "kafka": 3, "streams": 2, "example": 1, "using": 1, "test": 1,
		"utils": 1, "reading": 1, "and": 1, "writing": 1, "topic": 1}
	// readKeyValuesToMap: the latest count of each word.
	got := map[string]int64{}
	for _, wc := range output.ReadAll() {
		got[wc.Word] = wc.Count
	}
	if len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	store := streamdbgtest.ValueState[int64](d, "count", "counts")
	for w, n := range want {
		if got[w] != n {
			t.Errorf("%s counted %d, want %d", w, got[w], n)
		}
		if s, _ := store.Get(w); s != n {
			t.Errorf("store holds %d for %s, want %d", s, w, n)
		}
	}
}
