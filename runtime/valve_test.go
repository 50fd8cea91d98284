package runtime_test

import (
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
)

// valveOut collects what a valve emitted, in order, as Flink's test output
// does: watermarks as int64, statuses as "IDLE" / "ACTIVE".
type valveOut struct{ seen []any }

func (o *valveOut) add(out runtime.ValveOutput) {
	if out.HasWatermark {
		o.seen = append(o.seen, out.Watermark)
	}
	if out.HasStatus {
		s := "ACTIVE"
		if out.Idle {
			s = "IDLE"
		}
		o.seen = append(o.seen, s)
	}
}

// pop returns the oldest output not yet popped, nil when there is none.
func (o *valveOut) pop() any {
	if len(o.seen) == 0 {
		return nil
	}
	v := o.seen[0]
	o.seen = o.seen[1:]
	return v
}

type valveCase struct {
	t   *testing.T
	v   *runtime.WatermarkValve
	out valveOut
}

func newValve(t *testing.T, n int) *valveCase {
	return &valveCase{t: t, v: runtime.NewWatermarkValve(n)}
}

func (c *valveCase) wm(ch int, wm int64)   { c.out.add(c.v.InputWatermark(ch, wm)) }
func (c *valveCase) idle(ch int)           { c.out.add(c.v.InputStatus(ch, true)) }
func (c *valveCase) active(ch int)         { c.out.add(c.v.InputStatus(ch, false)) }
func (c *valveCase) expectWM(want int64)   { c.t.Helper(); c.expect(want) }
func (c *valveCase) expectStatus(s string) { c.t.Helper(); c.expect(s) }

func (c *valveCase) expect(want any) {
	c.t.Helper()
	if got := c.out.pop(); got != want {
		c.t.Fatalf("valve emitted %v, want %v", got, want)
	}
}

func (c *valveCase) expectNothing() {
	c.t.Helper()
	if got := c.out.pop(); got != nil {
		c.t.Fatalf("valve emitted %v, want nothing", got)
	}
}

// TestStatusWatermarkValveTest ports Flink's StatusWatermarkValveTest: every
// input is followed by the exact outputs expected, and nothing more.
func TestStatusWatermarkValveTest(t *testing.T) {
	cases := map[string]func(t *testing.T){
		"testSingleInputIncreasingWatermarks": func(t *testing.T) {
			c := newValve(t, 1)
			c.wm(0, 0)
			c.expectWM(0)
			c.expectNothing()
			c.wm(0, 25)
			c.expectWM(25)
			c.expectNothing()
		},
		"testSingleInputDecreasingWatermarksYieldsNoOutput": func(t *testing.T) {
			c := newValve(t, 1)
			c.wm(0, 25)
			c.expectWM(25)
			c.wm(0, 18)
			c.expectNothing()
			c.wm(0, 42)
			c.expectWM(42)
			c.expectNothing()
		},
		"testSingleInputWatermarkStatusToggling": func(t *testing.T) {
			c := newValve(t, 1)
			c.active(0) // channels start active: no change
			c.expectNothing()
			c.idle(0)
			c.expectStatus("IDLE")
			c.idle(0)
			c.expectNothing()
			c.active(0)
			c.expectStatus("ACTIVE")
			c.expectNothing()
		},
		"testSingleInputWatermarksIntactDuringIdleness": func(t *testing.T) {
			c := newValve(t, 1)
			c.wm(0, 25)
			c.expectWM(25)
			c.expectNothing()
			c.idle(0)
			c.expectStatus("IDLE")
			c.wm(0, 50)
			c.expectNothing()
			if got := c.v.Channel(0).Watermark; got != 25 {
				t.Fatalf("idle channel's watermark %d, want 25", got)
			}
			c.active(0)
			c.expectStatus("ACTIVE")
			c.expectNothing()
			c.wm(0, 50)
			c.expectWM(50)
			c.expectNothing()
		},
		"testMultipleInputYieldsWatermarkOnlyWhenAllChannelsReceivesWatermarks": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 0)
			c.wm(1, 0)
			c.expectNothing()
			c.wm(2, 0)
			c.expectWM(0)
			c.expectNothing()
		},
		"testMultipleInputIncreasingWatermarks": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 0)
			c.wm(1, 0)
			c.wm(2, 0)
			c.expectWM(0)
			c.wm(0, 12)
			c.wm(2, 8)
			c.wm(2, 10)
			c.expectNothing()
			c.wm(1, 15)
			c.expectWM(10) // channel 2 is the lowest
			c.expectNothing()
			c.wm(2, 17)
			c.expectWM(12) // channel 0
			c.expectNothing()
			c.wm(0, 20)
			c.expectWM(15) // channel 1
			c.expectNothing()
		},
		"testMultipleInputDecreasingWatermarksYieldsNoOutput": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 25)
			c.wm(1, 10)
			c.wm(2, 17)
			c.expectWM(10)
			c.wm(0, 12)
			c.wm(1, 8)
			c.wm(2, 15)
			c.expectNothing()
		},
		"testMultipleInputWatermarkStatusToggling": func(t *testing.T) {
			c := newValve(t, 2)
			c.active(0)
			c.active(1)
			c.expectNothing()
			c.idle(1)
			c.expectNothing()
			c.idle(0) // now all idle
			c.expectStatus("IDLE")
			c.idle(0)
			c.idle(1)
			c.expectNothing()
			c.active(1) // one active channel makes the valve active
			c.expectStatus("ACTIVE")
			c.active(0)
			c.expectNothing()
		},
		"testMultipleInputWatermarkAdvancingWithPartiallyIdleChannels": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 15)
			c.wm(1, 10)
			c.expectNothing()
			c.idle(2)
			c.expectWM(10)
			c.expectNothing()
			c.wm(1, 18)
			c.expectWM(15)
			c.expectNothing()
			c.wm(0, 20)
			c.expectWM(18)
			c.expectNothing()
		},
		"testMultipleInputWatermarkAdvancingAsChannelsIndividuallyBecomeIdle": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 25)
			c.wm(1, 10)
			c.wm(2, 17)
			c.expectWM(10)
			c.idle(1)
			c.expectWM(17)
			c.idle(2)
			c.expectWM(25)
			c.expectNothing()
		},
		"testMultipleInputFlushMaxWatermarkAndWatermarkStatusOnceAllInputsBecomeIdle": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 10)
			c.wm(1, 5)
			c.wm(2, 3)
			c.expectWM(3)
			c.idle(0)
			c.idle(1)
			c.expectNothing()
			c.idle(2)
			c.expectWM(10)
			c.expectStatus("IDLE")
			c.expectNothing()
		},
		"testMultipleInputWatermarkRealignmentAfterResumeActive": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 10)
			c.wm(1, 7)
			c.wm(2, 3)
			c.expectWM(3)
			c.expectNothing()
			c.idle(2)
			c.expectWM(7)
			c.expectNothing()
			c.active(2)
			if c.v.Channel(2).Aligned {
				t.Fatal("channel 2 came back below the valve's watermark but is aligned")
			}
			c.wm(2, 5)
			if got := c.v.Channel(2).Watermark; got != 5 {
				t.Fatalf("channel 2 watermark %d, want 5", got)
			}
			c.expectNothing()
			c.wm(2, 9)
			if !c.v.Channel(2).Aligned {
				t.Fatal("channel 2 caught up but is not aligned")
			}
			c.expectNothing()
			c.wm(1, 12)
			c.expectWM(9)
			c.expectNothing()
		},
		"testNoOutputWhenAllActiveChannelsAreUnaligned": func(t *testing.T) {
			c := newValve(t, 3)
			c.wm(0, 10)
			c.wm(1, 7)
			c.idle(2)
			c.expectWM(7)
			c.expectNothing()
			c.active(2)
			c.expectNothing()
			c.idle(0)
			c.idle(1)
			c.expectNothing()
		},
		"testUnalignedActiveChannelBecomesIdle": func(t *testing.T) {
			c := newValve(t, 2)
			c.wm(0, 7)
			c.wm(1, 10)
			c.expectWM(7)
			c.idle(0)
			c.expectWM(10)
			c.active(0)
			c.wm(0, 9)
			c.expectNothing()
			c.idle(0)
			c.expectNothing()
		},
	}
	optest.Run(t, cases)
}

// TestWatermarkValveHoldingBack checks which channel `why` names.
func TestWatermarkValveHoldingBack(t *testing.T) {
	v := runtime.NewWatermarkValve(3)
	v.InputWatermark(0, 10)
	v.InputWatermark(1, 4)
	if got := v.HoldingBack(); got != 2 {
		t.Fatalf("holding back: channel %d, want 2 (no watermark yet)", got)
	}
	v.InputWatermark(2, 12)
	if got := v.HoldingBack(); got != 1 {
		t.Fatalf("holding back: channel %d, want 1", got)
	}
	v.InputStatus(1, true)
	if got := v.HoldingBack(); got != 0 {
		t.Fatalf("holding back: channel %d, want 0 after 1 went idle", got)
	}
	v.InputStatus(0, true)
	v.InputStatus(2, true)
	if got := v.HoldingBack(); got != -1 {
		t.Fatalf("holding back: channel %d, want none when all are idle", got)
	}
}
