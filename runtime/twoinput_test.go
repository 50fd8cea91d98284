package runtime_test

import (
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
)

// passBoth is a CoMap that passes both inputs' strings on.
type passBoth struct{}

func (passBoth) Map1(s string) (string, error) { return s, nil }
func (passBoth) Map2(s string) (string, error) { return s, nil }

func coMapHarness(t *testing.T, backend string, channels int) *optest.Harness2[string, string] {
	return optest.New2(t, optest.Config2{Backend: backend, Channels: channels}, func(h *optest.Harness2[string, string], in1, in2 *runtime.Stream[string]) {
		optest.Collect2(h, "", runtime.CoMap(runtime.Connect(in1, in2), "co-map", runtime.CoMapFunction[string, string, string](passBoth{}), runtime.UID("co-map")))
	})
}

// TestTwoInputOperatorWatermarks runs Flink's TwoInputStreamTaskTest
// watermark case on a real two-input operator (two channels per input),
// and the case where Flink's valve per input, combined by the operator,
// differs from one valve over all channels: when every channel is idle, an
// input idle before the other does not flush the watermark to its highest.
func TestTwoInputOperatorWatermarks(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWatermarkAndWatermarkStatusForwarding": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := coMapHarness(t, backend, 2)
				var want []optest.Element
				check := func() { t.Helper(); expectOutput(t, h.Output(""), want) }
				h.ProcessWatermarkOn(1, 0, 0)
				h.ProcessWatermarkOn(1, 1, 0)
				h.ProcessWatermarkOn(2, 0, 0)
				check() // input 2 has not sent a watermark on every channel yet
				h.ProcessWatermarkOn(2, 1, 0)
				want = append(want, optest.WM(0))
				check()

				// records are not held back by watermarks
				if err := h.TryProcessElementOn(1, 0, "Hello", "", 0); err != nil {
					t.Fatal(err)
				}
				if err := h.TryProcessElementOn(2, 1, "", "42", 0); err != nil {
					t.Fatal(err)
				}
				want = append(want, optest.Rec("Hello", 0), optest.Rec("42", 0))
				check()

				h.ProcessWatermarkOn(1, 0, 4)
				h.ProcessWatermarkOn(1, 1, 3)
				h.ProcessWatermarkOn(2, 0, 3)
				h.ProcessWatermarkOn(2, 1, 2)
				want = append(want, optest.WM(2)) // the minimum, after the records
				check()

				h.ProcessWatermarkOn(2, 1, 4)
				want = append(want, optest.WM(3))
				check()

				h.ProcessWatermarkOn(1, 1, 4)
				h.ProcessWatermarkOn(2, 0, 4)
				want = append(want, optest.WM(4))
				check()

				// idle channels do not count for the minimum
				h.ProcessStatus(1, 1, true)
				h.ProcessStatus(2, 0, true)
				h.ProcessWatermarkOn(1, 0, 6)
				h.ProcessWatermarkOn(2, 1, 5)
				h.ProcessStatus(2, 1, true)
				want = append(want, optest.WM(5), optest.WM(6))
				check()

				// all idle: the operator's idle status is forwarded
				h.ProcessStatus(1, 0, true)
				want = append(want, optest.Idle)
				check()

				// active again: forwarded once
				h.ProcessStatus(2, 0, false)
				h.ProcessStatus(1, 1, false)
				want = append(want, optest.Active)
				check()
			})
		},
		"idleInputIsNotFlushed": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := coMapHarness(t, backend, 2)
				h.ProcessWatermarkOn(1, 0, 5)
				h.ProcessWatermarkOn(1, 1, 5)
				h.ProcessWatermarkOn(2, 0, 10)
				h.ProcessWatermarkOn(2, 1, 10)
				// input 2 goes idle: input 1 alone holds the watermark
				h.ProcessStatus(2, 0, true)
				h.ProcessStatus(2, 1, true)
				h.ProcessWatermarkOn(1, 0, 7)
				h.ProcessStatus(1, 1, true)
				// input 1's valve flushes to its highest (7); input 2's 10
				// does not count: it is idle
				h.ProcessStatus(1, 0, true)
				expectOutput(t, h.Output(""), []optest.Element{optest.WM(5), optest.WM(7), optest.Idle})
				sv := h.Executor().Subtasks()
				for _, v := range sv {
					if v.Task.TwoInputs() && (v.Watermark != 7 || !v.Idle) {
						t.Fatalf("two-input subtask watermark %d idle %v, want 7 and idle", v.Watermark, v.Idle)
					}
				}
			})
		},
	})
}
