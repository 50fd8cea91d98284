package window_test

import (
	"fmt"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
	"streamdbg/runtime/window"
	"streamdbg/state"
)

// firings counts, per window (WindowState) and per key (GlobalState), how
// often a window fired, and drops the per-window count in Clear.
type firings struct{}

func (firings) Process(ctx *window.Context[string], key string, es []tup) error {
	fires, err := state.Value("fires", state.Int64).Bind(ctx.WindowState())
	if err != nil {
		return err
	}
	total, err := state.Value("total-fires", state.Int64).Bind(ctx.GlobalState())
	if err != nil {
		return err
	}
	f, _, err := fires.Value()
	if err != nil {
		return err
	}
	g, _, err := total.Value()
	if err != nil {
		return err
	}
	if err := fires.Update(f + 1); err != nil {
		return err
	}
	if err := total.Update(g + 1); err != nil {
		return err
	}
	w := ctx.Window()
	ctx.Collect(fmt.Sprintf("%s [%d,%d) elements=%d fires=%d total=%d", key, w.Start, w.End, len(es), f+1, g+1))
	return nil
}

func (firings) Clear(ctx *window.Context[string]) error {
	fires, err := state.Value("fires", state.Int64).Bind(ctx.WindowState())
	if err != nil {
		return err
	}
	return fires.Clear()
}

// keyedValue reads a value state of key under namespace ns from the window
// operator's backend.
func keyedValue(t *testing.T, h *optest.Harness[tup], stateName, key string, ns []byte) (any, bool) {
	t.Helper()
	k := state.String.Append(nil, key)
	kg := state.KeyGroupFor(k, h.Executor().Plan().MaxParallelism)
	for _, st := range h.Executor().Subtasks() {
		for _, op := range st.Operators {
			if op.Info.Name != "window" || op.Keyed == nil || !op.Keyed.KeyGroups().Contains(kg) {
				continue
			}
			for e, err := range op.Keyed.Entries(kg, stateName) {
				if err != nil {
					t.Fatal(err)
				}
				if string(e.Key) == string(k) && string(e.Namespace) == string(ns) {
					v, err := state.Int64.Decode(e.Value)
					if err != nil {
						t.Fatal(err)
					}
					return v, true
				}
			}
		}
	}
	return nil, false
}

// TestProcessWindowFunctionState: per-window state lives under the window
// and goes with Clear at cleanup; global state lives under the key and
// stays.
func TestProcessWindowFunctionState(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		s := spec{assigner: window.TumblingEventTime(2 * time.Second), lateness: time.Second}
		c := &windowCase{t: t, h: windowHarness(t, backend, s, func(ws *window.WindowedStream[string, tup]) *runtime.Stream[string] {
			return window.RichProcess(ws, "window", firings{}, runtime.UID("window"))
		})}
		first := state.WindowCodec.Append(nil, tw(0, 2000))
		c.el("a", 1, 500)
		c.wm(1999)
		c.el("a", 1, 1000) // late, within the lateness: fires again
		if v, ok := keyedValue(t, c.h, "fires", "a", first); !ok || v != int64(2) {
			t.Fatalf("per-window fires of [0,2000): %v %v, want 2", v, ok)
		}
		c.wm(2999) // cleanup of [0,2000)
		if v, ok := keyedValue(t, c.h, "fires", "a", first); ok {
			t.Fatalf("per-window state of [0,2000) survived its cleanup: %v", v)
		}
		c.el("a", 1, 2500)
		c.wm(3999)
		if v, ok := keyedValue(t, c.h, "total-fires", "a", nil); !ok || v != int64(3) {
			t.Fatalf("global fires of a: %v %v, want 3", v, ok)
		}
		c.expect(optest.Rec("a [0,2000) elements=1 fires=1 total=1", 1999), optest.WM(1999),
			optest.Rec("a [0,2000) elements=2 fires=2 total=2", 1999), optest.WM(2999),
			optest.Rec("a [2000,4000) elements=1 fires=1 total=3", 3999), optest.WM(3999))
		c.check()
	})
}

// TestStaggerPerSubtask: a natural stagger takes each window operator
// subtask's offset from its own first element.
func TestStaggerPerSubtask(t *testing.T) {
	s := spec{assigner: window.TumblingProcessingTime(5 * time.Second).Staggered(window.Natural)}
	backends(t, func(t *testing.T, backend string) {
		c := &windowCase{t: t, h: windowHarness(t, backend, s, reduceFn)}
		c.pt(150)
		c.el("k", 1, 0) // the offset is 150 from here on
		c.pt(5000)
		c.el("k", 1, 0) // still in [150,5150)
		c.pt(5150)
		c.expect(rec("k", 2, 5149))
		c.check()
	})
}
