package window_test

import (
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
)

// TestWindowSideOutputTimestamp: what a window function emits to a side
// output carries the window's max timestamp, as what it collects does,
// whatever fired the window: an element (count trigger), a processing-time
// timer or an event-time timer (Flink's WindowOperator.WindowContext.output:
// new StreamRecord<>(value, window.maxTimestamp())). Before, the side
// output carried the firing element's timestamp, or none for a
// processing-time window.
func TestWindowSideOutputTimestamp(t *testing.T) {
	side := runtime.NewOutputTag[string]("side")
	cases := map[string]spec{
		"count trigger":   {assigner: window.TumblingEventTime(2 * time.Second), trigger: window.Count(2)},
		"processing time": {assigner: window.TumblingProcessingTime(2 * time.Second)},
		"event time":      {assigner: window.TumblingEventTime(2 * time.Second)},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := optest.New(t, optest.Config{Backend: backend}, func(h *optest.Harness[tup], in *runtime.Stream[tup]) {
					out := window.Process(s.windowed(in), "w", func(ctx *window.Context[tup], k string, es []tup) error {
						ctx.Output(side.ID, "side "+k)
						ctx.Collect(tup{k, len(es)})
						return nil
					})
					optest.Collect(h, "", out)
					optest.Collect(h, "side", runtime.SideOutput(out, side))
				})
				h.ProcessElement(tup{"a", 1}, 100)
				h.ProcessElement(tup{"a", 1}, 200)
				h.SetProcessingTime(5000)
				h.ProcessWatermark(5000)
				expectSorted(t, records(h.Output("")), []optest.Element{rec("a", 2, 1999)})
				expectSorted(t, records(h.Output("side")), []optest.Element{optest.Rec("side a", 1999)})
			})
		})
	}
}
