package runtime

import "streamdbg/state"

// Peek describes the step that StepInto would take next, without taking
// it: which operator of which subtask handles which element. It is how a
// debugger stops before an operator runs (delve's breakpoint before a
// line), so the state can be seen as it is before the update.
//
// ok is false when nothing is in flight (the next step would read the
// source) or the job failed. Peek may move the next element from its
// subtask's input queue to the subtask's work stack: the scheduler takes
// it from there next, so the order of steps does not change.
func (e *Executor) Peek() (info StepInfo, ok bool) {
	if e.failure != nil || e.idle() {
		return StepInfo{}, false
	}
	st := e.pick()
	if st == nil || len(st.stack) == 0 {
		return StepInfo{}, false
	}
	w := st.stack[len(st.stack)-1]
	inst := st.ops[w.op]
	info = StepInfo{Task: st.task.Name, Subtask: st.index, Operator: inst.info.Name}
	switch w.kind {
	case wRecord:
		info.Kind, info.Record = "record", plainValue(w.rec.Value)
		info.Timestamp, info.HasTimestamp = w.rec.Timestamp, w.rec.HasTimestamp
		if inst.keyed != nil {
			key := w.key
			if key == nil {
				key, _ = inst.keyed.CurrentKey()
			}
			if key != nil {
				if v, err := inst.keyCodec.DecodeAny(key); err == nil {
					info.Key = v
				} else {
					info.Key = state.Hex(key)
				}
			}
		}
	case wWatermark:
		info.Kind = "watermark"
	case wProcTimers:
		info.Kind = "timer"
	case wSourcePull:
		info.Kind = "source"
	}
	return info, true
}
