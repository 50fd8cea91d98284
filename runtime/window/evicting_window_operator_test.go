package window_test

import (
	"math"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
)

// TestEvictingWindowOperatorTest ports Flink's EvictingWindowOperatorTest.
func TestEvictingWindowOperatorTest(t *testing.T) {
	const end = math.MaxInt64 // the global window's max timestamp
	delta := window.Delta(2, func(old, new tup) float64 { return float64(new.V - old.V) })
	run := func(t *testing.T, s spec, body func(t *testing.T, c *windowCase), fn func(closed *int) func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup], closes int) {
		backends(t, func(t *testing.T, backend string) {
			closed := 0
			c := &windowCase{t: t, h: windowHarness(t, backend, s, fn(&closed))}
			body(t, c)
			if err := c.h.Close(); err != nil {
				t.Fatal(err)
			}
			if closes > 0 && closed != closes {
				t.Fatalf("the window function was closed %d times, want %d", closed, closes)
			}
		})
	}
	reduce := func(*int) func(ws *window.WindowedStream[string, tup]) *runtime.Stream[tup] { return reduceFn }
	// The elements most of the cases start with, at these timestamps.
	first := func(c *windowCase, ts ...int64) {
		keys := []string{"key2", "key2", "key1", "key1", "key1", "key2", "key2", "key2"}
		for i, k := range keys {
			c.el(k, 1, ts[i])
		}
	}
	optest.Run(t, map[string]func(t *testing.T){
		"testCountEvictorEvictAfter": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: window.CountEvictor{Max: 4, After: true}}
			run(t, s, func(t *testing.T, c *windowCase) {
				first(c, 3000, 3999, 20, 0, 999, 1998, 1999, 1000)
				c.expect(rec("key2", 2, end), rec("key2", 4, end), rec("key1", 2, end))
				c.check()
				c.el("key1", 1, 10999)
				c.el("key2", 1, 1000)
				c.expect(rec("key1", 4, end), rec("key2", 6, end))
				c.check()
				c.el("key2", 1, 1000)
				c.el("key2", 1, 1000)
				c.expect(rec("key2", 6, end))
				c.check()
			}, richSumFn, 1)
		},
		"testTimeEvictorEvictAfter": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: window.TimeEvictor{Keep: 2 * time.Second, After: true}}
			run(t, s, func(t *testing.T, c *windowCase) {
				first(c, 1000, 4000, 20, 0, 999, 3500, 2001, 1001)
				c.expect(rec("key2", 2, end), rec("key1", 2, end), rec("key2", 3, end))
				c.check()
				c.el("key1", 1, 10999)
				c.el("key2", 1, 1002)
				c.expect(rec("key1", 4, end), rec("key2", 5, end))
				c.check()
			}, richSumFn, 1)
		},
		"testTimeEvictorEvictBefore": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(4 * time.Second), trigger: window.Count(2), evictor: window.KeepWithin(2 * time.Second)}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 1000)
				c.el("key2", 1, 3999)
				c.el("key1", 1, 20)
				c.el("key1", 1, 0)
				c.el("key1", 1, 999)
				c.el("key1", 1, 5999)
				c.el("key2", 1, 3500)
				c.el("key2", 1, 2001)
				c.el("key2", 1, 1001)
				c.expect(rec("key2", 1, 3999), rec("key1", 2, 3999), rec("key2", 3, 3999))
				c.check()
				c.el("key1", 1, 6500)
				c.el("key2", 1, 1002)
				c.expect(rec("key1", 2, 7999), rec("key2", 3, 3999))
				c.check()
			}, richSumFn, 1)
		},
		"testTimeEvictorNoTimestamp": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: window.TimeEvictor{Keep: 2 * time.Second, After: true}}
			run(t, s, func(t *testing.T, c *windowCase) {
				in := func(k string) { t.Helper(); c.h.ProcessElementNoTS(tup{k, 1}) }
				for _, k := range []string{"key2", "key2", "key1", "key1", "key1", "key2", "key2", "key2"} {
					in(k)
				}
				c.expect(rec("key2", 2, end), rec("key1", 2, end), rec("key2", 4, end))
				c.check()
				in("key1")
				in("key2")
				c.expect(rec("key1", 4, end), rec("key2", 6, end))
				c.check()
			}, richSumFn, 1)
		},
		"testDeltaEvictorEvictBefore": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: delta}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 3000)
				c.el("key2", 4, 3999)
				c.el("key1", 1, 20)
				c.el("key1", 1, 0)
				c.el("key1", 5, 999)
				c.el("key2", 5, 1998)
				c.el("key2", 6, 1999)
				c.el("key2", 1, 1000)
				c.expect(rec("key2", 4, end), rec("key2", 11, end), rec("key1", 2, end))
				c.check()
				c.el("key1", 3, 10999)
				c.el("key2", 10, 1000)
				c.expect(rec("key1", 8, end), rec("key2", 10, end))
				c.check()
			}, richSumFn, 1)
		},
		"testDeltaEvictorEvictAfter": func(t *testing.T) {
			after := delta
			after.After = true
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: after}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key2", 1, 3000)
				c.el("key2", 4, 3999)
				c.el("key1", 1, 20)
				c.el("key1", 1, 0)
				c.el("key1", 5, 999)
				c.el("key2", 5, 1998)
				c.el("key2", 6, 1999)
				c.el("key2", 1, 1000)
				c.expect(rec("key2", 5, end), rec("key2", 15, end), rec("key1", 2, end))
				c.check()
				c.el("key1", 9, 10999)
				c.el("key2", 10, 1000)
				c.expect(rec("key1", 16, end), rec("key2", 22, end))
				c.check()
			}, richSumFn, 1)
		},
		"testCountTrigger": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: window.KeepLast(4)}
			run(t, s, func(t *testing.T, c *windowCase) {
				first(c, 3000, 3999, 20, 0, 999, 1998, 1999, 1000)
				c.expect(rec("key2", 2, end), rec("key2", 4, end), rec("key1", 2, end))
				c.check()
				c.el("key1", 1, 10999)
				c.el("key2", 1, 1000)
				c.expect(rec("key1", 4, end), rec("key2", 4, end))
				c.check()
			}, reduce, 0)
		},
		"testCountTriggerWithApply": func(t *testing.T) {
			s := spec{assigner: window.Global{}, trigger: window.Count(2), evictor: window.KeepLast(4)}
			run(t, s, func(t *testing.T, c *windowCase) {
				first(c, 3000, 3999, 20, 0, 999, 1998, 1999, 1000)
				c.expect(rec("key2", 2, end), rec("key2", 4, end), rec("key1", 2, end))
				c.check()
				c.el("key1", 1, 10999)
				c.el("key2", 1, 1000)
				c.expect(rec("key1", 4, end), rec("key2", 4, end))
				c.check()
			}, richSumFn, 1)
		},
		"testTumblingWindowWithApply": func(t *testing.T) {
			s := spec{assigner: window.TumblingEventTime(4 * time.Second), evictor: window.KeepLast(4)}
			run(t, s, func(t *testing.T, c *windowCase) {
				c.el("key1", 1, 10)
				c.el("key1", 1, 100)
				c.wm(1999)
				c.el("key1", 1, 1997)
				c.el("key1", 1, 1998)
				c.el("key1", 1, 2310) // not late, but more than 4
				c.el("key1", 1, 2310)
				c.el("key2", 1, 2310)
				c.el("key2", 1, 2310)
				c.wm(3999) // now the evictor runs
				c.expect(optest.WM(1999), rec("key1", 4, 3999), rec("key2", 2, 3999), optest.WM(3999))
				c.check()
			}, richSumFn, 0)
		},
	})
}
