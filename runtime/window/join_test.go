package window_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/window"
)

// tuple2 and tuple3 are Flink's Tuple2<String, Integer> and
// Tuple3<String, String, Integer>; String prints them as Java does.
type tuple2 struct {
	F0 string `json:"f0"`
	F1 int64  `json:"f1"`
}

func (t tuple2) String() string { return fmt.Sprintf("(%s,%d)", t.F0, t.F1) }

type tuple3 struct {
	F0, F1 string
	F2     int64
}

func (t tuple3) String() string { return fmt.Sprintf("(%s,%s,%d)", t.F0, t.F1, t.F2) }

// runToEnd runs job until its input ends.
func runToEnd(t *testing.T, job *runtime.Job, backend string) {
	t.Helper()
	e, err := runtime.NewExecutor(job, runtime.Options{Backend: backend}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for {
		if err := e.Next(); err != nil {
			if errors.Is(err, runtime.ErrFinished) {
				return
			}
			t.Fatal(err)
		}
	}
}

// punctuated is the tests' timestamp extractors: the element's number is
// its timestamp and each element is followed by the watermark one below
// it; bounded out-of-orderness 0 gives that watermark for inputs in order.
func punctuated[T any](ts func(T) int64) runtime.WatermarkStrategy[T] {
	return runtime.BoundedOutOfOrderness(0, func(v T) (int64, error) { return ts(v), nil })
}

func collectStrings(s *runtime.Stream[string], into *[]string) {
	runtime.Sink(s, "sink", func(v string) error {
		*into = append(*into, v)
		return nil
	}, runtime.UID("sink"))
}

func expectSortedStrings(t *testing.T, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("results\n got %q\nwant %q", got, want)
	}
}

var (
	t3Key = func(v tuple3) string { return v.F0 }
	t2Key = func(v tuple2) string { return v.F0 }
)

func source1Join(job *runtime.Job) *runtime.Stream[tuple3] {
	return runtime.FromSlice(job, "Source: 1", []tuple3{{"a", "x", 0}, {"a", "y", 1}, {"a", "z", 2}, {"b", "u", 3}, {"b", "w", 5},
		{"a", "i", 6}, {"a", "j", 7}, {"a", "k", 8}}, punctuated(func(v tuple3) int64 { return v.F2 }), runtime.UID("source-1"))
}

func joinStrings(a, b tuple3) (string, error) { return a.String() + ":" + b.String(), nil }

// TestCoGroupJoinITCase ports Flink's CoGroupJoinITCase: coGroup, join and
// self-join of finite sources in tumbling event-time windows of 3 ms.
func TestCoGroupJoinITCase(t *testing.T) {
	for _, backend := range runtime.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Run("testCoGroup", func(t *testing.T) {
				job := runtime.NewJob("CoGroup Test")
				ts := punctuated(func(v tuple2) int64 { return v.F1 })
				s1 := runtime.FromSlice(job, "Source: 1", []tuple2{{"a", 0}, {"a", 1}, {"a", 2}, {"b", 3}, {"b", 4}, {"b", 5}, {"a", 6}, {"a", 7}, {"a", 8}}, ts, runtime.UID("source-1"))
				s2 := runtime.FromSlice(job, "Source: 2", []tuple2{{"a", 0}, {"a", 1}, {"b", 3}, {"c", 6}, {"c", 7}, {"c", 8}}, ts, runtime.UID("source-2"))
				var results []string
				out := window.CoGroupApply(window.CoGroup(s1, s2, "f0", t2Key, t2Key).Window(window.TumblingEventTime(3*time.Millisecond)), "co-group",
					func(first, second []tuple2, out runtime.Collector[string]) error {
						s := "F:"
						for _, v := range first {
							s += v.String()
						}
						s += " S:"
						for _, v := range second {
							s += v.String()
						}
						out.Collect(s)
						return nil
					}, runtime.UID("co-group"))
				collectStrings(out, &results)
				runToEnd(t, job, backend)
				expectSortedStrings(t, results, []string{"F:(a,0)(a,1)(a,2) S:(a,0)(a,1)", "F:(b,3)(b,4)(b,5) S:(b,3)", "F:(a,6)(a,7)(a,8) S:", "F: S:(c,6)(c,7)(c,8)"})
			})
			t.Run("testJoin", func(t *testing.T) {
				job := runtime.NewJob("Join Test")
				s1 := source1Join(job)
				s2 := runtime.FromSlice(job, "Source: 2", []tuple3{{"a", "u", 0}, {"a", "w", 1}, {"b", "i", 3}, {"b", "k", 5}, {"a", "x", 6}, {"a", "z", 8}},
					punctuated(func(v tuple3) int64 { return v.F2 }), runtime.UID("source-2"))
				var results []string
				out := window.JoinApply(window.Join(s1, s2, "f0", t3Key, t3Key).Window(window.TumblingEventTime(3*time.Millisecond)), "join",
					joinStrings, runtime.UID("join"))
				collectStrings(out, &results)
				runToEnd(t, job, backend)
				expectSortedStrings(t, results, []string{
					"(a,x,0):(a,u,0)", "(a,x,0):(a,w,1)", "(a,y,1):(a,u,0)", "(a,y,1):(a,w,1)", "(a,z,2):(a,u,0)", "(a,z,2):(a,w,1)",
					"(b,u,3):(b,i,3)", "(b,u,3):(b,k,5)", "(b,w,5):(b,i,3)", "(b,w,5):(b,k,5)",
					"(a,i,6):(a,x,6)", "(a,i,6):(a,z,8)", "(a,j,7):(a,x,6)", "(a,j,7):(a,z,8)", "(a,k,8):(a,x,6)", "(a,k,8):(a,z,8)"})
			})
			t.Run("testSelfJoin", func(t *testing.T) {
				job := runtime.NewJob("Self-Join Test")
				s1 := source1Join(job)
				var results []string
				out := window.JoinApply(window.Join(s1, s1, "f0", t3Key, t3Key).Window(window.TumblingEventTime(3*time.Millisecond)), "join",
					joinStrings, runtime.UID("join"))
				collectStrings(out, &results)
				runToEnd(t, job, backend)
				expectSortedStrings(t, results, []string{
					"(a,x,0):(a,x,0)", "(a,x,0):(a,y,1)", "(a,x,0):(a,z,2)", "(a,y,1):(a,x,0)", "(a,y,1):(a,y,1)", "(a,y,1):(a,z,2)",
					"(a,z,2):(a,x,0)", "(a,z,2):(a,y,1)", "(a,z,2):(a,z,2)", "(b,u,3):(b,u,3)", "(b,u,3):(b,w,5)", "(b,w,5):(b,u,3)", "(b,w,5):(b,w,5)",
					"(a,i,6):(a,i,6)", "(a,i,6):(a,j,7)", "(a,i,6):(a,k,8)", "(a,j,7):(a,i,6)", "(a,j,7):(a,j,7)", "(a,j,7):(a,k,8)",
					"(a,k,8):(a,i,6)", "(a,k,8):(a,j,7)", "(a,k,8):(a,k,8)"})
			})
			// Flink's case only checks that the coGroup's operator can be
			// snapshotted (FLINK-6808, serializer snapshots); here the
			// snapshot is also restored, at another parallelism, and the
			// run finishes with the results of one without a snapshot.
			t.Run("testCoGroupOperatorWithCheckpoint", func(t *testing.T) {
				var results []string
				build := func() *runtime.Job {
					job := runtime.NewJob("CoGroup checkpoint")
					ts := punctuated(func(v tuple2) int64 { return v.F1 })
					s1 := runtime.FromSlice(job, "Source: 1", []tuple2{{"a", 0}, {"b", 3}}, ts, runtime.UID("source-1"))
					s2 := runtime.FromSlice(job, "Source: 2", []tuple2{{"a", 1}, {"b", 6}}, ts, runtime.UID("source-2"))
					out := window.CoGroupApply(window.CoGroup(s1, s2, "f0", t2Key, t2Key).Window(window.TumblingEventTime(3*time.Millisecond)), "co-group",
						func(first, second []tuple2, out runtime.Collector[string]) error {
							out.Collect(fmt.Sprint(first, ":", second))
							return nil
						}, runtime.UID("co-group"))
					collectStrings(out, &results)
					return job
				}
				e, err := runtime.NewExecutor(build(), runtime.Options{Backend: backend}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for range 2 {
					if err := e.Next(); err != nil {
						t.Fatal(err)
					}
				}
				cp, err := e.Checkpoint(1)
				if err != nil {
					t.Fatal(err)
				}
				if err := cp.Materialize(); err != nil {
					t.Fatal(err)
				}
				e.Close()
				var meta []string
				for _, o := range cp.Operators() {
					for _, m := range o.States {
						meta = append(meta, o.Name+"."+m.StateName)
					}
				}
				if !slices.Contains(meta, "co-group."+window.ContentsState) {
					t.Fatalf("checkpoint states %v lack the coGroup's window contents", meta)
				}
				results = nil
				r, err := runtime.NewExecutor(build(), runtime.Options{Backend: backend, Parallelism: 2}, cp)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for {
					if err := r.Next(); errors.Is(err, runtime.ErrFinished) {
						break
					} else if err != nil {
						t.Fatal(err)
					}
				}
				expectSortedStrings(t, results, []string{"[(a,0)]:[(a,1)]", "[(b,3)]:[]", "[]:[(b,6)]"})
			})
		})
	}
}

// TestJoinedStreamsTest ports Flink's JoinedStreamsTest: the allowed
// lateness of a join is the lateness of its coGroup's window operator.
func TestJoinedStreamsTest(t *testing.T) {
	lateness := 42 * time.Millisecond
	newJoin := func(job *runtime.Job) (*window.WindowedCoGroup[string, string, string], *runtime.Stream[string], *runtime.Stream[string]) {
		s1 := runtime.FromSlice(job, "Source: 1", []string{"a1", "a2", "a3"}, runtime.WatermarkStrategy[string]{}, runtime.UID("source-1"))
		s2 := runtime.FromSlice(job, "Source: 2", []string{"a1", "a2"}, runtime.WatermarkStrategy[string]{}, runtime.UID("source-2"))
		id := func(s string) string { return s }
		return window.Join(s1, s2, "value", id, id).Window(window.TumblingEventTime(time.Millisecond)).AllowedLateness(lateness), s1, s2
	}
	t.Run("testSetAllowedLateness", func(t *testing.T) {
		w, _, _ := newJoin(runtime.NewJob("lateness"))
		if got := w.AllowedLatenessDuration(); got != lateness {
			t.Fatalf("allowed lateness %s, want %s", got, lateness)
		}
	})
	// The window operator of the join keeps late elements within the
	// lateness: (a,0) of the second input comes after the watermark 19
	// passed the end of its window [0,1); 42 ms of lateness keep the window
	// (its cleanup is at 42), so it fires again and the pair joins.
	t.Run("testDelegateToCoGrouped", func(t *testing.T) {
		for _, backend := range runtime.Backends {
			for _, lateness := range []time.Duration{42 * time.Millisecond, 0} {
				job := runtime.NewJob("lateness")
				ts := punctuated(func(v tuple2) int64 { return v.F1 })
				s1 := runtime.FromSlice(job, "Source: 1", []tuple2{{"a", 0}, {"z", 20}}, ts, runtime.UID("source-1"))
				s2 := runtime.FromSlice(job, "Source: 2", []tuple2{{"z", 20}, {"a", 0}}, ts, runtime.UID("source-2"))
				w := window.Join(s1, s2, "f0", t2Key, t2Key).Window(window.TumblingEventTime(time.Millisecond)).AllowedLateness(lateness)
				var results []string
				collectStrings(window.JoinApply(w, "join", func(a, b tuple2) (string, error) {
					return a.String() + ":" + b.String(), nil
				}, runtime.UID("join")), &results)
				runToEnd(t, job, backend)
				want := []string{"(z,20):(z,20)"}
				if lateness > 0 {
					want = append(want, "(a,0):(a,0)")
				}
				expectSortedStrings(t, results, want)
			}
		}
	})
}
