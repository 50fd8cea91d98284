package runtime

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// lightJob counts words in value state: many writes per key.
func lightJob() *Job { return lightJobWith("light", &counter{}) }

// lightJobWith is lightJob with its own name and keyed map.
func lightJobWith(name string, count MapFunction[string, string]) *Job {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("w%d w%d w%d w%d", i%7, i%3, (i*5)%11, i%7))
	}
	j := NewJob(name)
	src := FromSource(j, "Source: s", newSlice(lines...), WatermarkStrategy[string]{}, UID("s"), Parallelism(1))
	words := FlatMap(src, "split", func(l string, out Collector[string]) error {
		for _, w := range strings.Fields(l) {
			out.Collect(w)
		}
		return nil
	}, UID("split"), Parallelism(1))
	counted := RichMap(KeyBy(words, "self", func(s string) string { return s }), "count", count, UID("count"))
	Sink(counted, "out", func(string) error { return nil }, UID("out"))
	return j
}

// TestLightWritesMatchTrace: a light run records the state writes a
// traced run traces (entry, old and new value, in order), on both
// backends, with the entries kept (one LightEntry per entry) and with
// maxLightEntries so small that they start over every few keys (the tags
// left in the heap's entries must then not be taken for the new ones).
func TestLightWritesMatchTrace(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, max := range []int{maxLightEntries, 3} {
			t.Run(fmt.Sprintf("%s/max-%d", backend, max), func(t *testing.T) {
				defer func(n int) { maxLightEntries = n }(maxLightEntries)
				maxLightEntries = max
				open := func() *Executor {
					e, err := NewExecutor(lightJob(), Options{Trace: true, Parallelism: 1, Backend: backend, Output: io.Discard}, nil)
					if err != nil {
						t.Fatal(err)
					}
					return e
				}
				var want []string
				e := open()
				for !e.Finished() {
					if err := e.Next(); err != nil && err != ErrFinished {
						t.Fatal(err)
					}
					for _, ev := range e.TakeTrace() {
						if ev.Kind == TraceStateWrite {
							want = append(want, fmt.Sprintf("%s %s[%d] %v: %v (%v) -> %v", ev.State, ev.Operator, ev.Subtask, ev.Key, ev.Old, ev.HadOld, ev.New))
						}
					}
				}
				e.Close()
				var got []string
				entries := map[*LightEntry]string{}
				e = open()
				e.StartLight(0, nil)
				for !e.Finished() {
					if err := e.Next(); err != nil && err != ErrFinished {
						t.Fatal(err)
					}
					for _, w := range e.TakeLight().Writes {
						en := w.Entry
						got = append(got, fmt.Sprintf("%s %s[%d] %v: %v (%v) -> %v", en.State, en.Operator, en.Subtask, en.Key, w.Old, w.HadOld, w.New))
						if k, ok := entries[en]; ok && k != fmt.Sprint(en.Key) {
							t.Fatalf("one LightEntry for keys %s and %v", k, en.Key)
						}
						entries[en] = fmt.Sprint(en.Key)
					}
				}
				e.Close()
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("light writes:\n%s\ntraced:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				keys := map[string]bool{}
				for _, k := range entries {
					keys[k] = true
				}
				if len(want) != 160 || len(keys) != 11 {
					t.Fatalf("%d writes of %d keys", len(want), len(keys))
				}
				if max > len(keys) && len(entries) != len(keys) {
					t.Errorf("%d LightEntries for %d keys", len(entries), len(keys))
				}
				if max < len(keys) && len(entries) <= len(keys) {
					t.Errorf("%d LightEntries for %d keys with at most %d kept: they never started over", len(entries), len(keys), max)
				}
			})
		}
	}
}

// TestTracedInt64Writes: a traced executor reads and writes an int64 value
// state through the table's unboxed path (state.Int64Table, where the
// backend has one) and traces each write with the values a boxed Put
// traces: the count before (none for a key's first word) and after, as
// int64s, checked against counts made here from the job's input.
func TestTracedInt64Writes(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			e, err := NewExecutor(lightJob(), Options{Trace: true, Parallelism: 1, Backend: backend, Output: io.Discard}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			counts := map[string]int64{}
			var words []string
			for i := range 40 {
				words = append(words, strings.Fields(fmt.Sprintf("w%d w%d w%d w%d", i%7, i%3, (i*5)%11, i%7))...)
			}
			n := 0
			for !e.Finished() {
				if err := e.Next(); err != nil && err != ErrFinished {
					t.Fatal(err)
				}
				for _, ev := range e.TakeTrace() {
					if ev.Kind != TraceStateWrite {
						continue
					}
					w := words[n]
					n++
					prev, had := counts[w]
					counts[w] = prev + 1
					if ev.Key != w || ev.HadOld != had || !had && ev.Old != nil || had && ev.Old != any(prev) || ev.New != any(prev+1) {
						t.Fatalf("write %d: %v: %v (%v) -> %v, want %s: %v (%v) -> %v", n, ev.Key, ev.Old, ev.HadOld, ev.New, w, prev, had, prev+1)
					}
				}
			}
			if n != len(words) {
				t.Fatalf("%d writes traced, want %d", n, len(words))
			}
		})
	}
}

// TestLightWritesBatched: in batch mode (BatchLightWrites) TakeLight hands
// out no writes and TakeLightWrites returns all of them since its last
// call, in order, the same as per-record takes give, each with the source
// position its record ran at; both backends, with and without
// generations starting over between two batches.
func TestLightWritesBatched(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, max := range []int{maxLightEntries, 3} {
			t.Run(fmt.Sprintf("%s/max-%d", backend, max), func(t *testing.T) {
				defer func(n int) { maxLightEntries = n }(maxLightEntries)
				maxLightEntries = max
				describe := func(w LightWrite) string {
					en := w.Entry
					return fmt.Sprintf("%s %s[%d] %v: %v (%v) -> %v @%d", en.State, en.Operator, en.Subtask, en.Key, w.Old, w.HadOld, w.New, w.Position)
				}
				var want, got []string
				for _, batch := range []bool{false, true} {
					e, err := NewExecutor(lightJob(), Options{Trace: true, Parallelism: 1, Backend: backend, Output: io.Discard}, nil)
					if err != nil {
						t.Fatal(err)
					}
					e.StartLight(0, nil)
					if batch {
						e.BatchLightWrites(5)
					}
					for n := 0; !e.Finished(); n++ {
						if err := e.Next(); err != nil && err != ErrFinished {
							t.Fatal(err)
						}
						lt := e.TakeLight()
						if !batch {
							for _, w := range lt.Writes {
								if w.Position != e.Position() {
									t.Fatalf("a write at position %d, after the record at %d", w.Position, e.Position())
								}
								want = append(want, describe(w))
							}
							continue
						}
						if len(lt.Writes) != 0 {
							t.Fatalf("batch mode: TakeLight gave %d writes", len(lt.Writes))
						}
						if n%7 == 6 || e.Finished() {
							pending := e.LightWritesPending()
							ws := e.TakeLightWrites()
							if len(ws) != pending {
								t.Fatalf("%d writes pending, %d taken", pending, len(ws))
							}
							for _, w := range ws {
								got = append(got, describe(w))
							}
						}
					}
					e.Close()
				}
				if len(want) != 160 || strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("batched writes:\n%s\nper record (%d):\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
				}
			})
		}
	}
}
