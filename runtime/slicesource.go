package runtime

import (
	"fmt"

	"streamdbg/state"
)

// FromSlice adds a source that emits items in order: the quickest way for a
// Go test to feed a job. Like Flink's fromCollection it is not parallel (its
// parallelism is always 1). Its position is operator state ("offset"), so
// checkpoints, savepoints, Back and failure recovery resume it exactly.
func FromSlice[T any](j *Job, name string, items []T, wm WatermarkStrategy[T], opts ...Option) *Stream[T] {
	s := FromSource(j, name, func() Source[T] { return &sliceSource[T]{items: items} }, wm, opts...)
	n := s.refs[0].node
	if n.parallelism > 1 {
		j.fail(fmt.Errorf("runtime: source %q: FromSlice is not parallel; parallelism %d asked", name, n.parallelism))
	}
	n.parallelism = 1
	return s
}

type sliceSource[T any] struct {
	items       []T
	next        int
	offsetState *state.OperatorListState[int64]
	name        string
}

func (s *sliceSource[T]) InitializeState(ctx RuntimeContext) error {
	var err error
	if s.offsetState, err = state.SplitList(ctx.Operator(), "offset", state.Int64); err != nil {
		return err
	}
	s.name = ctx.OperatorName()
	if offs := s.offsetState.Get(); len(offs) > 0 {
		s.next = int(offs[0])
	}
	return nil
}

func (s *sliceSource[T]) SnapshotState(RuntimeContext) error {
	s.offsetState.Update([]int64{int64(s.next)})
	return nil
}

func (s *sliceSource[T]) Next() (SourceEvent[T], bool, error) {
	if s.next >= len(s.items) {
		return SourceEvent[T]{}, false, nil
	}
	i := s.next
	s.next++
	return SourceEvent[T]{Value: s.items[i], Where: Where{File: fmt.Sprintf("%s[%d]", s.name, i), Line: i + 1}}, true, nil
}

// Peek returns what Next returns next, without reading it.
func (s *sliceSource[T]) Peek() (SourceEvent[T], bool, error) {
	if s.next >= len(s.items) {
		return SourceEvent[T]{}, false, nil
	}
	return SourceEvent[T]{Value: s.items[s.next], Where: Where{File: fmt.Sprintf("%s[%d]", s.name, s.next), Line: s.next + 1}}, true, nil
}
