package session

import (
	"fmt"
	"strconv"
	"strings"

	"streamdbg/runtime"
)

// StepIntoInput steps into one element of input (1 or 2) of a two-input
// operator's subtask: the next element queued on that input, or, when
// nothing is in flight, the next record of the source feeding that input
// (read ahead of the source that is due). operator "" picks the job's only
// two-input operator. Back replays such a read; an element taken from a
// queue ahead of its turn is replayed in the scheduler's order.
func (s *Session) StepIntoInput(operator string, subtask, input int) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	t, err := twoInputTask(s.exec.Plan(), operator)
	if err != nil {
		return nil, err
	}
	return s.stepOne(func() (runtime.StepInfo, error) { return s.exec.StepIntoInput(t.Index, subtask, input) })
}

// twoInputTask finds the task of a two-input operator by name or uid, or
// the only one.
func twoInputTask(p *runtime.Plan, operator string) (*runtime.Task, error) {
	var names []string
	var only *runtime.Task
	for _, t := range p.Tasks {
		if t.TwoInputs() {
			names = append(names, t.Operators[0].Name)
			only = t
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("step: the job has no two-input operator")
	}
	if operator == "" {
		if len(names) > 1 {
			return nil, fmt.Errorf("step: name the two-input operator: %s", strings.Join(names, ", "))
		}
		return only, nil
	}
	info, ok := p.Operator(operator)
	if !ok || !info.Task.TwoInputs() || info.ChainIndex != 0 {
		return nil, fmt.Errorf("step: %q is not a two-input operator (they are: %s)", operator, strings.Join(names, ", "))
	}
	return info.Task, nil
}

// parseStepInput parses "INPUT [OPERATOR[SUBTASK]]": step 2, step 1 join,
// step 2 "co-broadcast"[1].
func parseStepInput(args string) (input int, operator string, subtask int, err error) {
	word, rest := splitWord(strings.TrimSpace(args))
	input, err = strconv.Atoi(word)
	if err != nil || (input != 1 && input != 2) {
		return 0, "", 0, fmt.Errorf("step: input %q: want 1 or 2", word)
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return input, "", 0, nil
	}
	if i := strings.LastIndexByte(rest, '['); i > 0 && strings.HasSuffix(rest, "]") {
		n, err := strconv.Atoi(rest[i+1 : len(rest)-1])
		if err != nil || n < 0 {
			return 0, "", 0, fmt.Errorf("step: subtask %q: want a number", rest[i+1:len(rest)-1])
		}
		subtask, rest = n, rest[:i]
	}
	return input, unquote(rest), subtask, nil
}
