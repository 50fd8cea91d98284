package runtime_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/state"
)

// testElem is IntervalJoinOperatorTest's TestElem: every element has the
// key "key".
type testElem struct {
	Key    string `json:"key"`
	TS     int64  `json:"ts"`
	Source string `json:"source"`
}

func (e testElem) String() string { return fmt.Sprintf("%s:%d", e.Source, e.TS) }

func elem(ts int64, source string) testElem { return testElem{Key: "key", TS: ts, Source: source} }

// joinPair is Tuple2<TestElem, TestElem>.
type joinPair struct{ L, R testElem }

func (p joinPair) String() string { return fmt.Sprintf("(%v,%v)", p.L, p.R) }

// streamRecordOf is the test's streamRecordOf: the pair at the later
// timestamp.
func streamRecordOf(l, r int64) optest.Element {
	return optest.Rec(joinPair{elem(l, "lhs"), elem(r, "rhs")}, max(l, r))
}

var (
	leftLateTag  = runtime.NewOutputTag[testElem]("left_late")
	rightLateTag = runtime.NewOutputTag[testElem]("right_late")
)

// joinTest is the test's JoinTestBuilder.
type joinTest struct {
	t *testing.T
	h *optest.Harness2[testElem, testElem]
}

type joinConfig struct {
	backend                      string
	lower, upper                 int64
	lowerInclusive, upperInclusi bool
	lateTags                     bool
	fn                           runtime.ProcessJoinFunction[testElem, testElem, joinPair]
}

type passthrough struct{}

func (passthrough) ProcessElement(ctx *runtime.JoinContext[joinPair], l, r testElem) error {
	ctx.Collect(joinPair{l, r})
	return nil
}

func setupJoin(t *testing.T, c joinConfig) *joinTest {
	if c.fn == nil {
		c.fn = passthrough{}
	}
	h := optest.New2(t, optest.Config2{Backend: c.backend}, func(h *optest.Harness2[testElem, testElem], in1, in2 *runtime.Stream[testElem]) {
		key := func(e testElem) string { return e.Key }
		j := runtime.IntervalJoin(runtime.KeyBy(in1, "key", key), runtime.KeyBy(in2, "key", key)).
			Between(time.Duration(c.lower)*time.Millisecond, time.Duration(c.upper)*time.Millisecond)
		if !c.lowerInclusive {
			j = j.LowerBoundExclusive()
		}
		if !c.upperInclusi {
			j = j.UpperBoundExclusive()
		}
		if c.lateTags {
			j = j.SideOutputLeftLateData(leftLateTag).SideOutputRightLateData(rightLateTag)
		}
		out := runtime.RichProcessJoin(j, "join", c.fn, runtime.UID("join"))
		optest.Collect2(h, "", out)
		if c.lateTags {
			optest.Collect2(h, leftLateTag.ID, runtime.SideOutput(out, leftLateTag))
			optest.Collect2(h, rightLateTag.ID, runtime.SideOutput(out, rightLateTag))
		}
	})
	return &joinTest{t: t, h: h}
}

func (j *joinTest) e1(ts int64) *joinTest { j.h.ProcessElement1(elem(ts, "lhs"), ts); return j }
func (j *joinTest) e2(ts int64) *joinTest { j.h.ProcessElement2(elem(ts, "rhs"), ts); return j }
func (j *joinTest) w1(ts int64) *joinTest { j.h.ProcessWatermark1(ts); return j }
func (j *joinTest) w2(ts int64) *joinTest { j.h.ProcessWatermark2(ts); return j }

// elementsAndWatermarks is processElementsAndWatermarks: from..to on one
// side with a watermark after each, then the other side.
func (j *joinTest) elementsAndWatermarks(from, to int64, lhsFaster bool) *joinTest {
	left := func() {
		for i := from; i <= to; i++ {
			j.e1(i).w1(i)
		}
	}
	right := func() {
		for i := from; i <= to; i++ {
			j.e2(i).w2(i)
		}
	}
	if lhsFaster {
		left()
		right()
	} else {
		right()
		left()
	}
	return j
}

// assertOutput is the test's assertOutput: as many records as expected,
// and each expected one among them.
func assertOutput(t *testing.T, want []optest.Element, got []optest.Element) {
	t.Helper()
	var records []optest.Element
	for _, e := range got {
		if e.Kind == optest.Record {
			records = append(records, e)
		}
	}
	if len(records) != len(want) {
		t.Fatalf("%d records %v, want %d %v", len(records), records, len(want), want)
	}
	for _, w := range want {
		if !slices.Contains(records, w) {
			t.Fatalf("record %v missing from %v", w, records)
		}
	}
}

func (j *joinTest) expect(want ...optest.Element) *joinTest {
	j.t.Helper()
	assertOutput(j.t, want, j.h.Output(""))
	return j
}

// noLateRecords is TestHarnessUtil.assertNoLateRecords: no record at or
// below a watermark emitted before it.
func (j *joinTest) noLateRecords() *joinTest {
	j.t.Helper()
	hi := int64(runtime.MinWatermark)
	for _, e := range j.h.Output("") {
		switch e.Kind {
		case optest.Watermark:
			hi = e.Watermark
		case optest.Record:
			if hi >= e.Timestamp {
				j.t.Fatalf("late data emitted after the join: %v after watermark %d", e, hi)
			}
		}
	}
	return j
}

func (j *joinTest) expectLate(tag string, want ...optest.Element) *joinTest {
	j.t.Helper()
	assertOutput(j.t, want, j.h.Output(tag))
	return j
}

// buffer returns the timestamps (map keys) of one join buffer.
func (j *joinTest) buffer(name string) []int64 {
	j.t.Helper()
	var ts []int64
	for en, err := range j.h.KeyedEntries("join", name) {
		if err != nil {
			j.t.Fatal(err)
		}
		v, err := state.Int64.Decode(en.UserKey)
		if err != nil {
			j.t.Fatal(err)
		}
		ts = append(ts, v)
	}
	return ts
}

// containsOnly is assertLeft/RightBufferContainsOnly (and Empty).
func (j *joinTest) containsOnly(name string, want ...int64) *joinTest {
	j.t.Helper()
	got := j.buffer(name)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		j.t.Fatalf("%s holds %v, want exactly %v", name, got, want)
	}
	return j
}

func (j *joinTest) left(want ...int64) *joinTest {
	j.t.Helper()
	return j.containsOnly(runtime.LeftBufferState, want...)
}
func (j *joinTest) right(want ...int64) *joinTest {
	j.t.Helper()
	return j.containsOnly(runtime.RightBufferState, want...)
}

// stateCleanup is the body of the testStateCleanup cases.
func stateCleanup(t *testing.T, c joinConfig, leftAt1, rightAt1, leftAt4, rightAt4 []int64) {
	j := setupJoin(t, c)
	for i := int64(1); i <= 5; i++ {
		j.e1(i)
	}
	for i := int64(1); i <= 5; i++ {
		j.e2(i) // fill both buffers with values
	}
	j.w1(1).w2(1) // common watermark 1: cleaned
	j.left(leftAt1...).right(rightAt1...)
	j.w1(4).w2(4)
	j.left(leftAt4...).right(rightAt4...)
	j.w1(6).w2(6) // all buffers are empty
	j.left().right()
}

// timestampCheck is the join function of the testContext* and
// testReturnsCorrectTimestamp cases: it fails on a wrong timestamp and
// counts the pairs it checked.
type timestampCheck struct {
	check func(ctx *runtime.JoinContext[joinPair], l, r testElem) error
	n     *int
}

func (f timestampCheck) ProcessElement(ctx *runtime.JoinContext[joinPair], l, r testElem) error {
	*f.n++
	return f.check(ctx, l, r)
}

// TestIntervalJoinOperatorTest ports Flink's IntervalJoinOperatorTest, each
// case with the left input faster than the right and the right faster
// (Flink's lhsFasterThanRhs parameter), on heap and pebble.
func TestIntervalJoinOperatorTest(t *testing.T) {
	cases := map[string]func(t *testing.T, backend string, lhsFaster bool){
		"testImplementationMirrorsCorrectly": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: 1, lowerInclusive: true, upper: 3, upperInclusi: false}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(1, 2), streamRecordOf(1, 3), streamRecordOf(2, 3), streamRecordOf(2, 4), streamRecordOf(3, 4)).
				noLateRecords()
			setupJoin(t, joinConfig{backend: b, lower: -3, lowerInclusive: false, upper: -1, upperInclusi: true}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(2, 1), streamRecordOf(3, 1), streamRecordOf(3, 2), streamRecordOf(4, 2), streamRecordOf(4, 3)).
				noLateRecords()
		},
		"testNegativeInclusiveAndNegativeInclusive": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: -2, lowerInclusive: true, upper: -1, upperInclusi: true}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(2, 1), streamRecordOf(3, 1), streamRecordOf(3, 2), streamRecordOf(4, 2), streamRecordOf(4, 3)).
				noLateRecords()
		},
		"testNegativeInclusiveAndPositiveInclusive": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(1, 1), streamRecordOf(1, 2), streamRecordOf(2, 1), streamRecordOf(2, 2), streamRecordOf(2, 3),
					streamRecordOf(3, 2), streamRecordOf(3, 3), streamRecordOf(3, 4), streamRecordOf(4, 3), streamRecordOf(4, 4)).
				noLateRecords()
		},
		"testPositiveInclusiveAndPositiveInclusive": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: 1, lowerInclusive: true, upper: 2, upperInclusi: true}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(1, 2), streamRecordOf(1, 3), streamRecordOf(2, 3), streamRecordOf(2, 4), streamRecordOf(3, 4)).
				noLateRecords()
		},
		"testNegativeExclusiveAndNegativeExlusive": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: -3, upper: -1}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(3, 1), streamRecordOf(4, 2)).
				noLateRecords()
		},
		"testNegativeExclusiveAndPositiveExlusive": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: -1, upper: 1}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(1, 1), streamRecordOf(2, 2), streamRecordOf(3, 3), streamRecordOf(4, 4)).
				noLateRecords()
		},
		"testPositiveExclusiveAndPositiveExlusive": func(t *testing.T, b string, fast bool) {
			setupJoin(t, joinConfig{backend: b, lower: 1, upper: 3}).
				elementsAndWatermarks(1, 4, fast).
				expect(streamRecordOf(1, 3), streamRecordOf(2, 4)).
				noLateRecords()
		},
		"testStateCleanupNegativeInclusiveNegativeInclusive": func(t *testing.T, b string, _ bool) {
			stateCleanup(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 0, upperInclusi: true},
				[]int64{2, 3, 4, 5}, []int64{1, 2, 3, 4, 5}, []int64{5}, []int64{4, 5})
		},
		"testStateCleanupNegativePositiveNegativeExlusive": func(t *testing.T, b string, _ bool) {
			stateCleanup(t, joinConfig{backend: b, lower: -2, upper: 1},
				[]int64{2, 3, 4, 5}, []int64{1, 2, 3, 4, 5}, []int64{5}, []int64{4, 5})
		},
		"testStateCleanupPositiveInclusivePositiveInclusive": func(t *testing.T, b string, _ bool) {
			stateCleanup(t, joinConfig{backend: b, lower: 0, lowerInclusive: true, upper: 1, upperInclusi: true},
				[]int64{1, 2, 3, 4, 5}, []int64{2, 3, 4, 5}, []int64{4, 5}, []int64{5})
		},
		"testStateCleanupPositiveExlusivePositiveExclusive": func(t *testing.T, b string, _ bool) {
			stateCleanup(t, joinConfig{backend: b, lower: -1, upper: 2},
				[]int64{1, 2, 3, 4, 5}, []int64{2, 3, 4, 5}, []int64{4, 5}, []int64{5})
		},
		"testRestoreFromSnapshot": func(t *testing.T, b string, _ bool) {
			j := setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true})
			j.e1(1).w1(1).e2(1).w2(1).e1(2).w1(2).e2(2).w2(2).e1(3).w1(3).e2(3).w2(3)
			cp := j.h.Snapshot()
			j.noLateRecords().expect(streamRecordOf(1, 1), streamRecordOf(1, 2), streamRecordOf(2, 1), streamRecordOf(2, 2),
				streamRecordOf(2, 3), streamRecordOf(3, 2), streamRecordOf(3, 3))
			// a new harness from the snapshot
			j.h.Restore(cp, 0)
			j.e1(4).w1(4).e2(4).w2(4)
			j.noLateRecords().expect(streamRecordOf(3, 4), streamRecordOf(4, 3), streamRecordOf(4, 4))
		},
		"testContextCorrectLeftTimestamp": func(t *testing.T, b string, fast bool) {
			n := 0
			f := timestampCheck{n: &n, check: func(ctx *runtime.JoinContext[joinPair], l, r testElem) error {
				if ctx.LeftTimestamp() != l.TS {
					return fmt.Errorf("left timestamp %d, want %d", ctx.LeftTimestamp(), l.TS)
				}
				return nil
			}}
			setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true, fn: f}).elementsAndWatermarks(1, 4, fast)
			if n != 10 {
				t.Fatalf("%d pairs checked, want 10", n)
			}
		},
		"testReturnsCorrectTimestamp": func(t *testing.T, b string, fast bool) {
			n := 0
			f := timestampCheck{n: &n, check: func(ctx *runtime.JoinContext[joinPair], l, r testElem) error {
				if ts, ok := ctx.Timestamp(); !ok || ts != max(l.TS, r.TS) {
					return fmt.Errorf("timestamp %d (%v), want %d", ts, ok, max(l.TS, r.TS))
				}
				return nil
			}}
			setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true, fn: f}).elementsAndWatermarks(1, 4, fast)
			if n != 10 {
				t.Fatalf("%d pairs checked, want 10", n)
			}
		},
		"testContextCorrectRightTimestamp": func(t *testing.T, b string, fast bool) {
			n := 0
			f := timestampCheck{n: &n, check: func(ctx *runtime.JoinContext[joinPair], l, r testElem) error {
				if ctx.RightTimestamp() != r.TS {
					return fmt.Errorf("right timestamp %d, want %d", ctx.RightTimestamp(), r.TS)
				}
				return nil
			}}
			setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true, fn: f}).elementsAndWatermarks(1, 4, fast)
			if n != 10 {
				t.Fatalf("%d pairs checked, want 10", n)
			}
		},
		"testFailsWithNoTimestampsLeft": func(t *testing.T, b string, _ bool) {
			j := setupJoin(t, joinConfig{backend: b, lower: 0, lowerInclusive: true, upper: 0, upperInclusi: true})
			expectNoTimestampError(t, j.h.TryProcessElement1(elem(0, "lhs"), 0, false), "left")
		},
		"testFailsWithNoTimestampsRight": func(t *testing.T, b string, _ bool) {
			j := setupJoin(t, joinConfig{backend: b, lower: 0, lowerInclusive: true, upper: 0, upperInclusi: true})
			expectNoTimestampError(t, j.h.TryProcessElement2(elem(0, "rhs"), 0, false), "right")
		},
		"testDiscardsLateData": func(t *testing.T, b string, _ bool) {
			setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true}).
				e1(1).e2(1).e1(2).e2(2).e1(3).e2(3).w1(3).w2(3).
				e1(1). // late: not joined again
				e1(4).e2(4).e1(5).e2(5).
				expect(streamRecordOf(1, 1), streamRecordOf(1, 2), streamRecordOf(2, 1), streamRecordOf(2, 2), streamRecordOf(2, 3),
					streamRecordOf(3, 2), streamRecordOf(3, 3), streamRecordOf(3, 4), streamRecordOf(4, 3), streamRecordOf(4, 4),
					streamRecordOf(4, 5), streamRecordOf(5, 4), streamRecordOf(5, 5)).
				noLateRecords()
		},
		"testLateData": func(t *testing.T, b string, _ bool) {
			setupJoin(t, joinConfig{backend: b, lower: -1, lowerInclusive: true, upper: 1, upperInclusi: true, lateTags: true}).
				e1(3).e2(3).w1(3).w2(3).e1(4).e2(4).
				e1(1). // the left element is late
				e2(2). // the right element is late
				e1(5).e2(5).
				expect(streamRecordOf(3, 3), streamRecordOf(3, 4), streamRecordOf(4, 3), streamRecordOf(4, 4), streamRecordOf(4, 5),
					streamRecordOf(5, 4), streamRecordOf(5, 5)).
				expectLate(leftLateTag.ID, optest.Rec(elem(1, "lhs"), 1)).
				expectLate(rightLateTag.ID, optest.Rec(elem(2, "rhs"), 2))
		},
	}
	wrapped := map[string]func(t *testing.T){}
	for name, c := range cases {
		wrapped[name] = func(t *testing.T) {
			for _, fast := range []bool{true, false} {
				t.Run(fmt.Sprintf("lhs faster than rhs: %v", fast), func(t *testing.T) {
					backends(t, func(t *testing.T, backend string) { c(t, backend, fast) })
				})
			}
		}
	}
	optest.Run(t, wrapped)
}

func expectNoTimestampError(t *testing.T, err error, side string) {
	t.Helper()
	if err == nil {
		t.Fatalf("a %s element without a timestamp was accepted", side)
	}
	var f *runtime.Failure
	if !errors.As(err, &f) || f.Operator != "join" {
		t.Fatalf("error %v is not a failure of the join", err)
	}
	if want := fmt.Sprintf("a record of the %s input has no timestamp", side); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// TestIntervalJoinLateRule: an element is late only when its timestamp is
// below the operator's watermark (Flink's isLate: timestamp <
// currentWatermark); one at the watermark still joins. Buffered entries
// that joined say so (HasBeenJoined), as Flink's heap backend keeps it.
func TestIntervalJoinLateRule(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		j := setupJoin(t, joinConfig{backend: backend, lower: 0, lowerInclusive: true, upper: 2, upperInclusi: true, lateTags: true})
		j.e1(3).w1(3).w2(3)
		j.e2(3) // at the watermark: joins
		j.e2(2) // below it: late
		j.expect(streamRecordOf(3, 3)).expectLate(rightLateTag.ID, optest.Rec(elem(2, "rhs"), 2))
		j.right(3)
		var joined []bool
		for en, err := range j.h.KeyedEntries("join", runtime.LeftBufferState) {
			if err != nil {
				t.Fatal(err)
			}
			entries, err := state.JSON[[]runtime.BufferEntry[testElem]]().Decode(en.Value)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				joined = append(joined, e.HasBeenJoined)
			}
		}
		if !slices.Equal(joined, []bool{true}) {
			t.Fatalf("left buffer entries joined %v, want [true]", joined)
		}
	})
}
