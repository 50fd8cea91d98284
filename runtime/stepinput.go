package runtime

import (
	"fmt"
	"slices"
)

// StepIntoInput steps into one element of input (1 or 2) of subtask index of the
// two-input task: the oldest element queued on that input, ahead of the
// other input's (as Flink's two-input task may pick either input); when
// nothing is in flight, it reads the next record of the source feeding
// that input instead of the one due (the session replays that choice after
// a restart). It fails when the input has nothing queued while elements
// are in flight elsewhere, or when a chained call is still running.
func (e *Executor) StepIntoInput(task, index, input int) (StepInfo, error) {
	if e.failure != nil {
		return StepInfo{}, e.failure
	}
	if task < 0 || task >= len(e.plan.Tasks) {
		return StepInfo{}, fmt.Errorf("runtime: no task %d", task)
	}
	t := e.plan.Tasks[task]
	if !t.TwoInputs() {
		return StepInfo{}, fmt.Errorf("runtime: task %q has one input", t.Name)
	}
	if input != 1 && input != 2 {
		return StepInfo{}, fmt.Errorf("runtime: task %q has inputs 1 and 2, not %d", t.Name, input)
	}
	if index < 0 || index >= t.Parallelism {
		return StepInfo{}, fmt.Errorf("runtime: task %q has subtasks 0 to %d, not %d", t.Name, t.Parallelism-1, index)
	}
	var st *subtask
	for _, s := range e.subtasks {
		if s.task == t && s.index == index {
			st = s
		}
	}
	if e.active != nil && len(e.active.stack) > 0 {
		return StepInfo{}, fmt.Errorf("runtime: %s[%d] is in the middle of a call; step on before choosing an input", e.active.task.Name, e.active.index)
	}
	want := uint8(input - 1)
	for {
		el, ok := st.inbox.take(func(el inElem) bool { return st.channels[el.channel].input == want })
		if !ok {
			break
		}
		if e.deliver(st, el) {
			info, _, err := e.step()
			return info, err
		}
		// a watermark that did not move the subtask's: take the next
	}
	if !e.idle() {
		return StepInfo{}, fmt.Errorf("runtime: input %d of %s[%d] has nothing queued; the element in flight is elsewhere", input, t.Name, index)
	}
	srcs := e.sourcesOf(t, input-1)
	var pick *subtask
	for _, s := range e.sources {
		if slices.Contains(srcs, s) && !s.done && (pick == nil || s.ops[0].src.orderable() && s.ops[0].src.due() < pick.ops[0].src.due()) {
			pick = s
		}
	}
	if pick == nil {
		return StepInfo{}, fmt.Errorf("runtime: the sources of input %d of %q are at the end of their input", input, t.Name)
	}
	if e.forced == nil {
		e.forced = map[int64]int{}
	}
	e.forced[e.position] = slices.Index(e.sources, pick)
	return e.StepInto()
}

// sourcesOf lists the source subtasks upstream of input of task t.
func (e *Executor) sourcesOf(t *Task, input int) []*subtask {
	seen := map[*Task]bool{}
	var tasks []*Task
	var walk func(t *Task)
	walk = func(t *Task) {
		if seen[t] {
			return
		}
		seen[t] = true
		if t.Operators[0].IsSource {
			tasks = append(tasks, t)
			return
		}
		for _, in := range t.nodes[0].inputs {
			walk(e.infoOf(in.from).Task)
		}
	}
	for _, in := range t.nodes[0].inputs {
		if in.input == input {
			walk(e.infoOf(in.from).Task)
		}
	}
	var out []*subtask
	for _, s := range e.sources {
		if slices.Contains(tasks, s.task) {
			out = append(out, s)
		}
	}
	return out
}

// ForgetReadsAfter drops the source choices of StepIntoInput at positions
// from pos on: Back undid them.
func (e *Executor) ForgetReadsAfter(pos int64) {
	for p := range e.forced {
		if p >= pos {
			delete(e.forced, p)
		}
	}
}
