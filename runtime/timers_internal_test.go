package runtime

import (
	"bytes"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
	"streamdbg/state/heapstate"
	"streamdbg/state/pebblestate"
)

// TestBoundedOutOfOrdernessWatermarksTest ports Flink's
// BoundedOutOfOrdernessWatermarksTest (bound 10 ms).
func TestBoundedOutOfOrdernessWatermarksTest(t *testing.T) {
	cases := map[string]func(t *testing.T){
		"testWatermarkBeforeRecords": func(t *testing.T) {
			g := newBoundedOutOfOrderness(10)
			if got := g.watermark(); got != MinWatermark {
				t.Fatalf("watermark before records %d, want MinWatermark", got)
			}
		},
		"testWatermarkAfterEvent": func(t *testing.T) {
			g := newBoundedOutOfOrderness(10)
			g.onEvent(1337)
			if got := g.watermark(); got != 1326 {
				t.Fatalf("watermark %d, want 1326", got)
			}
		},
		"testWatermarkAfterNonMonotonousEvents": func(t *testing.T) {
			g := newBoundedOutOfOrderness(10)
			for _, ts := range []int64{12345, 12300, 12340, 12280} {
				g.onEvent(ts)
			}
			if got := g.watermark(); got != 12334 {
				t.Fatalf("watermark %d, want 12334", got)
			}
		},
		"testRepeatedProbe": func(t *testing.T) {
			g := newBoundedOutOfOrderness(10)
			g.onEvent(723456)
			g.watermark()
			if got := g.watermark(); got != 723445 {
				t.Fatalf("second probe %d, want 723445", got)
			}
		},
	}
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		t.Run(name, cases[name])
	}
}

// timerHarness is one timer service over one keyed backend, with the
// subtask's processing-time service, driven as Flink's test drives
// InternalTimerServiceImpl: the test sets the current key, registers and
// deletes timers, advances the watermark and the processing-time clock,
// and the "triggerable" records each timer that fires (with the key set).
type timerHarness struct {
	t       *testing.T
	backend state.KeyedBackend
	groups  state.KeyGroupRange
	maxP    int
	svc     timerService
	pts     procTimeService
	now     int64
	fired   []firedTimer
	// touched are the key groups of the timers registered: listing them
	// and checking the queues' lengths finds every timer without reading
	// 32767 key groups.
	touched map[int]bool
	// onProcessing runs inside the triggerable's onProcessingTime.
	onProcessing func()
}

type firedTimer struct {
	domain TimeDomain
	ts     int64
	key    int64
	ns     string
}

func newTimerHarness(t *testing.T, backend string, groups state.KeyGroupRange, maxP int) *timerHarness {
	t.Helper()
	h := &timerHarness{t: t, backend: newBackend(t, backend, groups, maxP), groups: groups, maxP: maxP}
	h.start()
	return h
}

func newBackend(t *testing.T, backend string, groups state.KeyGroupRange, maxP int) state.KeyedBackend {
	t.Helper()
	var kb state.KeyedBackend = heapstate.New(maxP, groups)
	if backend == "pebble" {
		pb, err := pebblestate.Open(pebblestate.Options{FS: vfs.NewMem(), MaxParallelism: maxP, KeyGroups: groups})
		if err != nil {
			t.Fatal(err)
		}
		kb = pb
	}
	t.Cleanup(func() { kb.Close() })
	return kb
}

func timerMeta(name string) state.StateMeta {
	return state.StateMeta{StateName: state.TimerStateName(name), Scope: state.ScopeKeyed, Kind: state.KindTimers,
		KeyType: "int64", NamespaceType: "string", ValueType: "int64"}
}

// start opens the queues (restored ones included) and sets the physical
// timer, as Flink's startTimerService.
func (h *timerHarness) start() {
	h.t.Helper()
	var err error
	if h.svc.event, err = h.backend.Timers("event_timers", timerMeta("event_timers")); err != nil {
		h.t.Fatal(err)
	}
	if h.svc.proc, err = h.backend.Timers("processing_timers", timerMeta("processing_timers")); err != nil {
		h.t.Fatal(err)
	}
	h.svc.pts = &h.pts
	if err := h.svc.rearm(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *timerHarness) keyBytes(key int64) ([]byte, int) {
	k := state.Int64.Append(nil, key)
	return k, state.KeyGroupFor(k, h.maxP)
}

// keyIn returns the first key from `from` on whose key group is in g.
func keyIn(g state.KeyGroupRange, maxP int, from int64) int64 {
	for k := from; ; k++ {
		if g.Contains(state.KeyGroupFor(state.Int64.Append(nil, k), maxP)) {
			return k
		}
	}
}

func (h *timerHarness) timer(key int64, ns string, ts int64) state.Timer {
	k, kg := h.keyBytes(key)
	if h.touched == nil {
		h.touched = map[int]bool{}
	}
	h.touched[kg] = true
	return state.Timer{Timestamp: ts, KeyGroup: kg, Key: k, Namespace: state.String.Append(nil, ns)}
}

func (h *timerHarness) registerEvent(key int64, ns string, ts int64) {
	h.t.Helper()
	if _, err := h.svc.event.Add(h.timer(key, ns, ts)); err != nil {
		h.t.Fatal(err)
	}
}

func (h *timerHarness) registerProcessing(key int64, ns string, ts int64) {
	h.t.Helper()
	if _, err := h.svc.addProcessing(h.timer(key, ns, ts)); err != nil {
		h.t.Fatal(err)
	}
}

func (h *timerHarness) deleteTimer(q state.TimerQueue, key int64, ns string, ts int64) {
	h.t.Helper()
	if ok, err := remove(q, h.timer(key, ns, ts)); err != nil || !ok {
		h.t.Fatalf("delete timer %d %s %d: deleted %v, %v", key, ns, ts, ok, err)
	}
}

func (h *timerHarness) record(d TimeDomain, tm state.Timer) {
	h.t.Helper()
	key, err := state.Int64.Decode(tm.Key)
	if err != nil {
		h.t.Fatal(err)
	}
	ns, err := state.String.Decode(tm.Namespace)
	if err != nil {
		h.t.Fatal(err)
	}
	h.backend.SetCurrentKey(tm.Key, tm.KeyGroup)
	h.fired = append(h.fired, firedTimer{domain: d, ts: tm.Timestamp, key: key, ns: ns})
}

// advanceWatermark fires the event-time timers due at wm.
func (h *timerHarness) advanceWatermark(wm int64) {
	h.t.Helper()
	for {
		tm, ok, err := due(h.svc.event, wm)
		if err != nil {
			h.t.Fatal(err)
		}
		if !ok {
			return
		}
		h.record(EventTime, tm)
	}
}

// setCurrentTime moves the processing clock and fires the physical timers
// due, each firing its service's timers due at the physical timer's time,
// as the executor does step by step.
func (h *timerHarness) setCurrentTime(now int64) {
	h.t.Helper()
	h.now = now
	h.pts.clockMoved()
	for {
		pt, ok := h.pts.next(now)
		if !ok {
			return
		}
		h.svc.physicalFired()
		for {
			tm, ok, err := due(h.svc.proc, pt.time)
			if err != nil {
				h.t.Fatal(err)
			}
			if !ok {
				break
			}
			h.record(ProcessingTime, tm)
			if h.onProcessing != nil {
				h.onProcessing()
			}
		}
		if err := h.svc.rearm(); err != nil {
			h.t.Fatal(err)
		}
	}
}

// timers lists every timer of a queue per key group, with its key set as
// Flink's forEach*Timer does.
func (h *timerHarness) timers(queue string) map[int][]firedTimer {
	h.t.Helper()
	out := map[int][]firedTimer{}
	n := 0
	for _, kg := range slices.Sorted(maps.Keys(h.touched)) {
		if !h.groups.Contains(kg) {
			continue
		}
		for e, err := range h.backend.Entries(kg, state.TimerStateName(queue)) {
			if err != nil {
				h.t.Fatal(err)
			}
			key, _ := state.Int64.Decode(e.Key)
			ns, _ := state.String.Decode(e.Namespace)
			ts, _ := state.Int64.Decode(e.UserKey)
			out[kg] = append(out[kg], firedTimer{ts: ts, key: key, ns: ns})
			n++
		}
	}
	q := h.svc.event
	if queue == "processing_timers" {
		q = h.svc.proc
	}
	if q.Len() != n {
		h.t.Fatalf("%s: %d timers in the key groups used, %d in the queue", queue, n, q.Len())
	}
	return out
}

func (h *timerHarness) count(queue, ns string) int {
	n := 0
	for _, ts := range h.timers(queue) {
		for _, tm := range ts {
			if ns == "" || tm.ns == ns {
				n++
			}
		}
	}
	return n
}

func (h *timerHarness) expectCounts(queue string, total int, perNS map[string]int) {
	h.t.Helper()
	if got := h.count(queue, ""); got != total {
		h.t.Fatalf("%s: %d timers, want %d", queue, got, total)
	}
	for ns, want := range perNS {
		if got := h.count(queue, ns); got != want {
			h.t.Fatalf("%s: %d timers of namespace %s, want %d", queue, got, ns, want)
		}
	}
}

func (h *timerHarness) expectPhysical(want ...int64) {
	h.t.Helper()
	if got := h.pts.times(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		h.t.Fatalf("physical timers at %v, want %v", got, want)
	}
}

func (h *timerHarness) expectFired(want ...firedTimer) {
	h.t.Helper()
	got := slices.Clone(h.fired)
	cmp := func(a, b firedTimer) int {
		return bytes.Compare([]byte(fmt.Sprint(a)), []byte(fmt.Sprint(b)))
	}
	slices.SortFunc(got, cmp)
	want = slices.Clone(want)
	slices.SortFunc(want, cmp)
	if !slices.Equal(got, want) {
		h.t.Fatalf("fired %v, want %v", got, want)
	}
}

// snapshot writes the timers of groups as a snapshot stream, as a
// checkpoint does.
func (h *timerHarness) snapshot(groups state.KeyGroupRange) []byte {
	h.t.Helper()
	var buf bytes.Buffer
	if err := state.WriteKeyGroups(&buf, groups, func(kg int) iter.Seq2[state.Entry, error] {
		if !h.touched[kg] {
			return func(func(state.Entry, error) bool) {}
		}
		return h.backend.Entries(kg, "")
	}); err != nil {
		h.t.Fatal(err)
	}
	return buf.Bytes()
}

// restoreTimerHarness starts a new service over groups from snapshots.
func restoreTimerHarness(t *testing.T, backend string, groups state.KeyGroupRange, maxP int, snaps ...[]byte) *timerHarness {
	t.Helper()
	h := &timerHarness{t: t, backend: newBackend(t, backend, groups, maxP), groups: groups, maxP: maxP}
	metas := []state.StateMeta{timerMeta("event_timers"), timerMeta("processing_timers")}
	entries := func(yield func(state.Entry, error) bool) {
		for _, b := range snaps {
			for e, err := range state.NewStreamReaderBytes(b, 0).All() {
				if err != nil {
					yield(e, err)
					return
				}
				if groups.Contains(e.KeyGroup) && !yield(e, nil) {
					return
				}
			}
		}
	}
	if err := h.backend.Restore(metas, entries); err != nil {
		t.Fatal(err)
	}
	h.start()
	return h
}

// TestInternalTimerServiceImplTest ports Flink's InternalTimerServiceImplTest
// over both keyed backends and its key-group ranges. Keys are int64 in
// streamdbg's encoding and key-group hash; "a key in the range" is the
// first such key rather than a random one.
func TestInternalTimerServiceImplTest(t *testing.T) {
	params := []struct{ start, end, maxP int }{
		{0, 32766, 32767}, {0, 10, 32767}, {0, 10, 10}, {10, 32766, 32767}, {2, 5, 100}, {2, 5, 6},
	}
	for _, p := range params {
		for _, backend := range Backends {
			groups := state.KeyGroupRange{Start: p.start, End: p.end}
			if backend == "pebble" && groups.End >= p.maxP {
				// Flink's range 0-10 at max parallelism 10 has a key group
				// no key maps to; pebble refuses a range beyond max
				// parallelism, so it gets the groups keys can have.
				groups.End = p.maxP - 1
			}
			t.Run(fmt.Sprintf("start=%d,end=%d,max=%d/%s", p.start, p.end, p.maxP, backend), func(t *testing.T) {
				timerServiceCases(t, backend, groups, p.maxP)
			})
		}
	}
}

func timerServiceCases(t *testing.T, backend string, groups state.KeyGroupRange, maxP int) {
	twoKeys := func(g state.KeyGroupRange) (int64, int64) {
		k1 := keyIn(g, maxP, 0)
		return k1, keyIn(g, maxP, k1+1)
	}
	cases := map[string]func(t *testing.T){
		"testKeyGroupStartIndexSetting": func(t *testing.T) {
			g := state.KeyGroupRange{Start: 7, End: 21}
			h := newTimerHarness(t, backend, g, 128)
			if got := h.backend.KeyGroups().Start; got != 7 {
				t.Fatalf("key groups start at %d, want 7", got)
			}
			k := keyIn(g, 128, 0)
			h.registerEvent(k, "ns", 1)
			outside := keyIn(state.KeyGroupRange{Start: 0, End: 6}, 128, 0)
			if _, err := h.svc.event.Add(h.timer(outside, "ns", 1)); err == nil || !strings.Contains(err.Error(), "key group 1 outside") || !strings.Contains(err.Error(), "7–21") {
				t.Fatalf("a timer of key group %d was accepted by a service of groups %s", state.KeyGroupFor(state.Int64.Append(nil, outside), 128), g)
			}
		},
		"testTimerAssignmentToKeyGroups": func(t *testing.T) {
			g := state.KeyGroupRange{Start: 0, End: 99}
			h := newTimerHarness(t, backend, g, 100)
			want := map[int][]firedTimer{}
			for i := range int64(100) {
				tm := firedTimer{ts: 10 + i, key: i, ns: fmt.Sprintf("hello_world_%d", i)}
				_, kg := h.keyBytes(i)
				want[kg] = append(want[kg], tm)
				h.registerEvent(i, tm.ns, tm.ts)
				h.registerProcessing(i, tm.ns, tm.ts)
			}
			for _, q := range []string{"event_timers", "processing_timers"} {
				got := h.timers(q)
				for kg := range 100 {
					a, b := slices.Clone(got[kg]), slices.Clone(want[kg])
					slices.SortFunc(a, func(x, y firedTimer) int { return int(x.key - y.key) })
					slices.SortFunc(b, func(x, y firedTimer) int { return int(x.key - y.key) })
					if !slices.Equal(a, b) {
						t.Fatalf("%s key group %d: %v, want %v", q, kg, a, b)
					}
				}
			}
		},
		"testOnlySetsOnePhysicalProcessingTimeTimer": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k := keyIn(groups, maxP, 0)
			h.registerProcessing(k, "ciao", 10)
			h.registerProcessing(k, "ciao", 20)
			h.registerProcessing(k, "ciao", 30)
			h.registerProcessing(k, "hello", 10)
			h.registerProcessing(k, "hello", 20)
			h.expectCounts("processing_timers", 5, map[string]int{"hello": 2, "ciao": 3})
			h.expectPhysical(10)
			h.setCurrentTime(10)
			h.expectCounts("processing_timers", 3, map[string]int{"hello": 1, "ciao": 2})
			h.expectPhysical(20)
			h.setCurrentTime(20)
			h.expectCounts("processing_timers", 1, map[string]int{"hello": 0, "ciao": 1})
			h.expectPhysical(30)
			h.setCurrentTime(30)
			h.expectCounts("processing_timers", 0, nil)
			h.expectPhysical()
			h.registerProcessing(k, "ciao", 40)
			h.expectPhysical(40)
		},
		"testRegisterEarlierProcessingTimerMovesPhysicalProcessingTimer": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k := keyIn(groups, maxP, 0)
			h.registerProcessing(k, "ciao", 20)
			h.expectCounts("processing_timers", 1, nil)
			h.expectPhysical(20)
			h.registerProcessing(k, "ciao", 10)
			h.expectCounts("processing_timers", 2, nil)
			h.expectPhysical(10)
		},
		"testRegisteringProcessingTimeTimerInOnProcessingTimeDoesNotLeakPhysicalTimers": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k := keyIn(groups, maxP, 0)
			h.registerProcessing(k, "ciao", 10)
			h.expectCounts("processing_timers", 1, nil)
			h.expectPhysical(10)
			h.onProcessing = func() { h.registerProcessing(k, "ciao", 20) }
			h.setCurrentTime(10)
			h.expectPhysical(20)
			h.onProcessing = func() { h.registerProcessing(k, "ciao", 30) }
			h.setCurrentTime(20)
			h.expectCounts("processing_timers", 1, nil)
			h.expectPhysical(30)
		},
		"testSetAndFireEventTimeTimers": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k1, k2 := twoKeys(groups)
			for _, k := range []int64{k1, k2} {
				h.registerEvent(k, "ciao", 10)
				h.registerEvent(k, "hello", 10)
			}
			h.expectCounts("event_timers", 4, map[string]int{"hello": 2, "ciao": 2})
			h.advanceWatermark(10)
			h.expectFired(firedTimer{EventTime, 10, k1, "ciao"}, firedTimer{EventTime, 10, k1, "hello"},
				firedTimer{EventTime, 10, k2, "ciao"}, firedTimer{EventTime, 10, k2, "hello"})
			h.expectCounts("event_timers", 0, nil)
		},
		"testSetAndFireProcessingTimeTimers": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k1, k2 := twoKeys(groups)
			for _, k := range []int64{k1, k2} {
				h.registerProcessing(k, "ciao", 10)
				h.registerProcessing(k, "hello", 10)
			}
			h.expectCounts("processing_timers", 4, map[string]int{"hello": 2, "ciao": 2})
			h.setCurrentTime(10)
			h.expectFired(firedTimer{ProcessingTime, 10, k1, "ciao"}, firedTimer{ProcessingTime, 10, k1, "hello"},
				firedTimer{ProcessingTime, 10, k2, "ciao"}, firedTimer{ProcessingTime, 10, k2, "hello"})
			h.expectCounts("processing_timers", 0, nil)
		},
		"testDeleteEventTimeTimers": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k1, k2 := twoKeys(groups)
			for _, k := range []int64{k1, k2} {
				h.registerEvent(k, "ciao", 10)
				h.registerEvent(k, "hello", 10)
			}
			h.expectCounts("event_timers", 4, map[string]int{"hello": 2, "ciao": 2})
			h.deleteTimer(h.svc.event, k1, "hello", 10)
			h.deleteTimer(h.svc.event, k2, "ciao", 10)
			h.expectCounts("event_timers", 2, map[string]int{"hello": 1, "ciao": 1})
			h.advanceWatermark(10)
			h.expectFired(firedTimer{EventTime, 10, k1, "ciao"}, firedTimer{EventTime, 10, k2, "hello"})
			h.expectCounts("event_timers", 0, nil)
		},
		"testDeleteProcessingTimeTimers": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k1, k2 := twoKeys(groups)
			for _, k := range []int64{k1, k2} {
				h.registerProcessing(k, "ciao", 10)
				h.registerProcessing(k, "hello", 10)
			}
			h.expectCounts("processing_timers", 4, map[string]int{"hello": 2, "ciao": 2})
			h.deleteTimer(h.svc.proc, k1, "hello", 10)
			h.deleteTimer(h.svc.proc, k2, "ciao", 10)
			h.expectCounts("processing_timers", 2, map[string]int{"hello": 1, "ciao": 1})
			h.setCurrentTime(10)
			h.expectFired(firedTimer{ProcessingTime, 10, k1, "ciao"}, firedTimer{ProcessingTime, 10, k2, "hello"})
			h.expectCounts("processing_timers", 0, nil)
		},
		"testForEachEventTimeTimers": func(t *testing.T) {
			forEachTimers(t, newTimerHarness(t, backend, groups, maxP), "event_timers", twoKeys)
		},
		"testForEachProcessingTimeTimers": func(t *testing.T) {
			forEachTimers(t, newTimerHarness(t, backend, groups, maxP), "processing_timers", twoKeys)
		},
		"testSnapshotAndRestore": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			k1, k2 := twoKeys(groups)
			h.registerProcessing(k1, "ciao", 10)
			h.registerEvent(k1, "hello", 10)
			h.registerEvent(k2, "ciao", 10)
			h.registerProcessing(k2, "hello", 10)
			h.expectCounts("processing_timers", 2, map[string]int{"hello": 1, "ciao": 1})
			h.expectCounts("event_timers", 2, map[string]int{"hello": 1, "ciao": 1})
			r := restoreTimerHarness(t, backend, groups, maxP, h.snapshot(groups))
			r.setCurrentTime(10)
			r.advanceWatermark(10)
			r.expectFired(firedTimer{ProcessingTime, 10, k1, "ciao"}, firedTimer{ProcessingTime, 10, k2, "hello"},
				firedTimer{EventTime, 10, k1, "hello"}, firedTimer{EventTime, 10, k2, "ciao"})
			r.expectCounts("event_timers", 0, nil)
		},
		"testSnapshotAndRebalancingRestore": func(t *testing.T) {
			h := newTimerHarness(t, backend, groups, maxP)
			mid := groups.Start + (groups.End-groups.Start)/2
			g1, g2 := state.KeyGroupRange{Start: groups.Start, End: mid}, state.KeyGroupRange{Start: mid + 1, End: groups.End}
			k1, k2 := keyIn(g1, maxP, 0), keyIn(g2, maxP, 0)
			h.registerProcessing(k1, "ciao", 10)
			h.registerEvent(k1, "hello", 10)
			h.registerEvent(k2, "ciao", 10)
			h.registerProcessing(k2, "hello", 10)
			h.expectCounts("processing_timers", 2, map[string]int{"hello": 1, "ciao": 1})
			h.expectCounts("event_timers", 2, map[string]int{"hello": 1, "ciao": 1})
			r1 := restoreTimerHarness(t, backend, g1, maxP, h.snapshot(g1))
			r2 := restoreTimerHarness(t, backend, g2, maxP, h.snapshot(g2))
			r1.setCurrentTime(10)
			r1.advanceWatermark(10)
			r1.expectFired(firedTimer{ProcessingTime, 10, k1, "ciao"}, firedTimer{EventTime, 10, k1, "hello"})
			r1.expectCounts("event_timers", 0, nil)
			r2.setCurrentTime(10)
			r2.advanceWatermark(10)
			r2.expectFired(firedTimer{ProcessingTime, 10, k2, "hello"}, firedTimer{EventTime, 10, k2, "ciao"})
			r2.expectCounts("event_timers", 0, nil)
		},
	}
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		t.Run(name, cases[name])
	}
}

func forEachTimers(t *testing.T, h *timerHarness, queue string, twoKeys func(state.KeyGroupRange) (int64, int64)) {
	k1, k2 := twoKeys(h.groups)
	want := map[firedTimer]bool{}
	for _, k := range []int64{k1, k2} {
		for _, ns := range []string{"ciao", "hello"} {
			want[firedTimer{ts: 10, key: k, ns: ns}] = true
			if queue == "event_timers" {
				h.registerEvent(k, ns, 10)
			} else {
				h.registerProcessing(k, ns, 10)
			}
		}
	}
	got := map[firedTimer]bool{}
	for _, ts := range h.timers(queue) {
		for _, tm := range ts {
			got[tm] = true
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("timers %v, want %v", got, want)
	}
}
