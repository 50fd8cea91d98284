package runtime

import "math"

// WatermarkValve combines the watermarks and watermark statuses of a
// subtask's input channels into the subtask's own, as Flink's
// StatusWatermarkValve: the subtask's watermark is the minimum over the
// channels that are active and aligned; it only moves forward; when every
// channel is idle the subtask is idle, and its watermark is flushed to the
// largest watermark any channel reached.
//
// A channel that was idle and becomes active again is not aligned while its
// watermark is below the subtask's: it takes part in the minimum again once
// it caught up (realignment), so a channel coming back cannot move the
// subtask's watermark backwards.
//
// Channels are numbered over every input of a task (all upstream subtasks
// of its first input edge, then of the next, ...), so a task with several
// inputs uses one valve for all of them: its watermark is the minimum over
// the active channels of all inputs.
//
// INVARIANT: Watermark() never decreases.
type WatermarkValve struct {
	channels []ChannelStatus
	wm       int64
	idle     bool
	// inputs makes this the valve of a two-input task (see
	// NewTwoInputWatermarkValve): channels is then unused.
	inputs *inputValves
}

// ChannelStatus is what a valve knows of one input channel.
type ChannelStatus struct {
	// Watermark is the highest watermark the channel sent while active.
	Watermark int64
	// Idle is the channel's watermark status.
	Idle bool
	// Aligned says the channel takes part in the minimum: it is active and
	// its watermark caught up with the valve's since it was last idle.
	Aligned bool
}

// ValveOutput is what one input made the valve emit: a new watermark, then
// (in that order) a status change, or nothing.
type ValveOutput struct {
	Watermark    int64
	HasWatermark bool
	// Idle is the new status when HasStatus.
	Idle      bool
	HasStatus bool
}

// NewWatermarkValve starts a valve of n channels, all active, aligned and
// at MinWatermark.
func NewWatermarkValve(n int) *WatermarkValve {
	v := &WatermarkValve{channels: make([]ChannelStatus, n), wm: MinWatermark}
	for i := range v.channels {
		v.channels[i] = ChannelStatus{Watermark: MinWatermark, Aligned: true}
	}
	return v
}

// Len is the number of channels.
func (v *WatermarkValve) Len() int {
	if v.inputs != nil {
		return v.inputs.len()
	}
	return len(v.channels)
}

// Watermark is the last watermark the valve emitted (MinWatermark before
// the first).
func (v *WatermarkValve) Watermark() int64 { return v.wm }

// Idle reports whether every channel is idle.
func (v *WatermarkValve) Idle() bool { return v.idle }

// Channel returns the status of channel i.
func (v *WatermarkValve) Channel(i int) ChannelStatus {
	if v.inputs != nil {
		in, c := v.inputs.locate(i)
		return v.inputs.valves[in].Channel(c)
	}
	return v.channels[i]
}

// InputWatermark takes watermark wm from channel ch. A watermark of an idle
// channel, of an idle valve or below the channel's last one is ignored.
func (v *WatermarkValve) InputWatermark(ch int, wm int64) ValveOutput {
	if v.inputs != nil {
		in, c := v.inputs.locate(ch)
		return v.inputs.combine(v, in, v.inputs.valves[in].InputWatermark(c, wm))
	}
	c := &v.channels[ch]
	if v.idle || c.Idle || wm <= c.Watermark {
		return ValveOutput{}
	}
	c.Watermark = wm
	if !c.Aligned && wm >= v.wm {
		c.Aligned = true
	}
	return v.advanceToMin()
}

// InputStatus takes a watermark status from channel ch; only a change of
// the channel's status has an effect.
func (v *WatermarkValve) InputStatus(ch int, idle bool) ValveOutput {
	if v.inputs != nil {
		in, c := v.inputs.locate(ch)
		return v.inputs.combine(v, in, v.inputs.valves[in].InputStatus(c, idle))
	}
	c := &v.channels[ch]
	switch {
	case idle && !c.Idle:
		c.Idle, c.Aligned = true, false
		if !v.anyActive() {
			// No channel will move any more: flush to the highest
			// watermark reached. The others were already accounted for as
			// they went idle one by one, so this is needed only when the
			// last one was the minimum.
			var out ValveOutput
			if c.Watermark == v.wm {
				out = v.advanceToMax()
			}
			v.idle = true
			out.Idle, out.HasStatus = true, true
			return out
		}
		if c.Watermark == v.wm {
			return v.advanceToMin()
		}
	case !idle && c.Idle:
		c.Idle = false
		if c.Watermark >= v.wm {
			c.Aligned = true
		}
		if v.idle {
			v.idle = false
			return ValveOutput{Idle: false, HasStatus: true}
		}
	}
	return ValveOutput{}
}

func (v *WatermarkValve) anyActive() bool {
	for _, c := range v.channels {
		if !c.Idle {
			return true
		}
	}
	return false
}

func (v *WatermarkValve) advanceToMin() ValveOutput {
	m, aligned := int64(math.MaxInt64), false
	for _, c := range v.channels {
		if c.Aligned {
			aligned = true
			m = min(m, c.Watermark)
		}
	}
	if aligned && m > v.wm {
		v.wm = m
		return ValveOutput{Watermark: m, HasWatermark: true}
	}
	return ValveOutput{}
}

func (v *WatermarkValve) advanceToMax() ValveOutput {
	m := int64(MinWatermark)
	for _, c := range v.channels {
		m = max(m, c.Watermark)
	}
	if m > v.wm {
		v.wm = m
		return ValveOutput{Watermark: m, HasWatermark: true}
	}
	return ValveOutput{}
}

// HoldingBack returns the channel that holds the valve's watermark back:
// the aligned active channel with the lowest watermark (the first of them
// on ties), or -1 when there is none (no channels, or all idle).
func (v *WatermarkValve) HoldingBack() int {
	if v.inputs != nil {
		return v.inputs.holdingBack()
	}
	best := -1
	for i, c := range v.channels {
		if c.Aligned && !c.Idle && (best < 0 || c.Watermark < v.channels[best].Watermark) {
			best = i
		}
	}
	return best
}

// valveState is a valve's complete state, for checkpoints that resume
// exactly (back).
type valveState struct {
	channels []ChannelStatus
	wm       int64
	idle     bool
	// inputs and partial are a two-input valve's.
	inputs  []valveState
	partial []partialWatermark
}

func (v *WatermarkValve) save() valveState {
	s := valveState{channels: append([]ChannelStatus(nil), v.channels...), wm: v.wm, idle: v.idle}
	if v.inputs != nil {
		for _, iv := range v.inputs.valves {
			s.inputs = append(s.inputs, iv.save())
		}
		s.partial = append([]partialWatermark(nil), v.inputs.partial...)
	}
	return s
}

func (v *WatermarkValve) load(s valveState) {
	if v.inputs != nil {
		if len(s.inputs) == len(v.inputs.valves) {
			for i, iv := range v.inputs.valves {
				iv.load(s.inputs[i])
			}
			copy(v.inputs.partial, s.partial)
			v.wm, v.idle = s.wm, s.idle
		}
		return
	}
	if len(s.channels) == len(v.channels) {
		copy(v.channels, s.channels)
		v.wm, v.idle = s.wm, s.idle
	}
}
