package runtime

import "math"

// inputValves is the watermark valve of a two-input task, as Flink builds
// it: a StatusWatermarkValve per input over that input's channels, and the
// operator's combined watermark over the two inputs (Flink's
// IndexedCombinedWatermarkStatus in AbstractStreamOperator): the minimum of
// the inputs' watermarks, an idle input excluded; idle when both are idle,
// and then it does not move (no flush across inputs).
//
// INVARIANT: the combined watermark never decreases.
type inputValves struct {
	valves  []*WatermarkValve
	first   []int // the task's channel number of each input's first channel
	partial []partialWatermark
}

// partialWatermark is what the combination knows of one input.
type partialWatermark struct {
	wm   int64
	idle bool
}

// NewTwoInputWatermarkValve makes the valve of a two-input task whose
// first input has n1 channels and second n2; channels are numbered over
// both inputs, the first input's first.
func NewTwoInputWatermarkValve(n1, n2 int) *WatermarkValve {
	in := &inputValves{valves: []*WatermarkValve{NewWatermarkValve(n1), NewWatermarkValve(n2)},
		first: []int{0, n1}, partial: []partialWatermark{{wm: MinWatermark}, {wm: MinWatermark}}}
	return &WatermarkValve{wm: MinWatermark, inputs: in}
}

func (in *inputValves) len() int {
	return in.first[len(in.first)-1] + in.valves[len(in.valves)-1].Len()
}

// locate turns a task channel number into an input and its channel.
func (in *inputValves) locate(ch int) (input, c int) {
	for i := len(in.first) - 1; i > 0; i-- {
		if ch >= in.first[i] {
			return i, ch - in.first[i]
		}
	}
	return 0, ch
}

// combine applies what input i's valve emitted to the combined watermark
// and status of v: its watermark first, then its status, as Flink's
// operator processes them. When both steps move the watermark, the output
// holds the last (highest) one.
func (in *inputValves) combine(v *WatermarkValve, i int, out ValveOutput) ValveOutput {
	var res ValveOutput
	if out.HasWatermark {
		in.partial[i].wm = out.Watermark
		if wm, ok := in.update(v); ok {
			res.Watermark, res.HasWatermark = wm, true
		}
	}
	if out.HasStatus {
		wasIdle := v.idle
		in.partial[i].idle = out.Idle
		if wm, ok := in.update(v); ok {
			res.Watermark, res.HasWatermark = wm, true
		}
		if wasIdle != v.idle {
			res.Idle, res.HasStatus = v.idle, true
		}
	}
	return res
}

// update is Flink's CombinedWatermarkStatus.updateCombinedWatermark.
func (in *inputValves) update(v *WatermarkValve) (int64, bool) {
	m, allIdle := int64(math.MaxInt64), true
	for _, p := range in.partial {
		if !p.idle {
			m, allIdle = min(m, p.wm), false
		}
	}
	v.idle = allIdle
	if !allIdle && m > v.wm {
		v.wm = m
		return m, true
	}
	return 0, false
}

// holdingBack is the channel holding the combined watermark back: the one
// holding back the active input with the lowest watermark (the first input
// on ties), or -1.
func (in *inputValves) holdingBack() int {
	best := -1
	for i, p := range in.partial {
		if p.idle || (best >= 0 && p.wm >= in.partial[best].wm) {
			continue
		}
		if in.valves[i].HoldingBack() >= 0 {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	return in.first[best] + in.valves[best].HoldingBack()
}

// InputStatus is what a two-input task's valve combines of one input.
type InputStatus struct {
	Input     int // 1 or 2
	Watermark int64
	Idle      bool
}

// Inputs returns the watermark and status of each input of a two-input
// task's valve (nil for a one-input valve).
func (v *WatermarkValve) Inputs() []InputStatus {
	if v.inputs == nil {
		return nil
	}
	out := make([]InputStatus, len(v.inputs.partial))
	for i, p := range v.inputs.partial {
		out[i] = InputStatus{Input: i + 1, Watermark: p.wm, Idle: p.idle}
	}
	return out
}
