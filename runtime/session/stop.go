package session

import (
	"context"
	"errors"
	"fmt"

	"streamdbg/runtime"
	"streamdbg/state"
)

// Reason says why a session stopped.
type Reason string

const (
	ReasonStep        Reason = "step"
	ReasonNext        Reason = "next"
	ReasonBreakpoint  Reason = "breakpoint"
	ReasonEnd         Reason = "end of input"
	ReasonFailure     Reason = "failure"
	ReasonInterrupted Reason = "interrupted"
	ReasonBack        Reason = "back"
	ReasonRestarted   Reason = "restarted"
	ReasonTime        Reason = "time"
	ReasonRestored    Reason = "restored"
	ReasonBreakError  Reason = "breakpoint error"
)

// Stop is what a command did: why it stopped, where, and what changed.
type Stop struct {
	Reason     Reason
	Message    string
	Breakpoint *Breakpoint
	Position   int64
	// Steps are the steps taken (for StepInto, exactly one).
	Steps int
	// Last is the last step taken.
	Last runtime.StepInfo
	// Events are the trace of the steps: emissions, outputs, state writes,
	// timers, watermarks. Long runs keep only the last MaxEvents.
	Events    []runtime.TraceEvent
	Truncated int
	Failure   *runtime.Failure
	Watches   []WatchResult
	// Replayed is, for Back, the source records replayed from the
	// checkpoint it returned to (what Back cost besides the roll back).
	Replayed int64
}

// MaxEvents bounds the events a stop keeps.
const MaxEvents = 2000

func (s *Session) stop(st Stop) *Stop {
	st.Position = s.exec.Position()
	if f := s.exec.Failure(); f != nil && st.Failure == nil {
		st.Failure = f
		st.Reason = ReasonFailure
		if st.Message == "" {
			st.Message = f.Error()
		}
	}
	st.Watches = s.evalWatches()
	s.last = &st
	return &st
}

// collector gathers the trace of the steps of one command.
type collector struct {
	s      *Session
	events []runtime.TraceEvent
	trunc  int
	steps  int
	last   runtime.StepInfo
	// startSteps is the executor's step count when the command began.
	startSteps int64
}

func (c *collector) take() {
	ev := c.s.exec.TakeTrace()
	for _, e := range ev {
		if e.Kind == runtime.TraceOutput {
			c.s.addOutput(e)
		}
	}
	c.events = append(c.events, ev...)
	if over := len(c.events) - MaxEvents; over > 0 {
		c.trunc += over
		c.events = append(c.events[:0:0], c.events[over:]...)
	}
}

func (s *Session) addOutput(e runtime.TraceEvent) {
	s.outSeq++
	// Trim in batches: copying the kept records on every output cost
	// O(OutputLimit) time and garbage per record. A new array keeps the
	// slices Outputs returned earlier unchanged.
	if limit := s.opts.OutputLimit; len(s.output) >= 2*limit {
		s.output = append(make([]Output, 0, 2*limit), s.output[len(s.output)-limit+1:]...)
	}
	s.output = append(s.output, Output{Seq: s.outSeq, Sink: e.Operator, Subtask: e.Subtask, Value: e.Value, Position: s.exec.Position()})
}

func (s *Session) newCollector() *collector {
	return &collector{s: s, startSteps: s.exec.Steps()}
}

func (c *collector) stop(reason Reason, msg string) *Stop {
	c.take()
	c.steps = int(c.s.exec.Steps() - c.startSteps)
	return c.s.stop(Stop{Reason: reason, Message: msg, Steps: c.steps, Last: c.last, Events: c.events, Truncated: c.trunc})
}

func (c *collector) failed(err error) (*Stop, error) {
	var f *runtime.Failure
	if errors.As(err, &f) {
		c.take()
		c.steps = int(c.s.exec.Steps() - c.startSteps)
		return c.s.stop(Stop{Reason: ReasonFailure, Message: f.Error(), Failure: f, Steps: c.steps, Last: c.last, Events: c.events, Truncated: c.trunc}), nil
	}
	if errors.Is(err, runtime.ErrFinished) {
		return c.stop(ReasonEnd, "end of input"), nil
	}
	return nil, err
}

// StepInto handles one element by one operator.
func (s *Session) StepInto() (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	s.mark()
	c := s.newCollector()
	info, err := s.exec.StepInto()
	if err != nil {
		return c.failed(err)
	}
	c.steps, c.last = 1, info
	if err := s.afterNext(); err != nil {
		return nil, err
	}
	if bp, err := s.checkBreakpoints(info); err != nil {
		return c.stop(ReasonBreakError, err.Error()), nil
	} else if bp != nil {
		return c.breakAt(bp), nil
	}
	if s.exec.Finished() {
		return c.stop(ReasonEnd, "end of input"), nil
	}
	return c.stop(ReasonStep, describeStep(info)), nil
}

func (c *collector) breakAt(bp *Breakpoint) *Stop {
	st := c.stop(ReasonBreakpoint, fmt.Sprintf("breakpoint #%d (%s)", bp.ID, bp.Describe()))
	st.Breakpoint = bp
	return st
}

func describeStep(i runtime.StepInfo) string {
	switch i.Kind {
	case "source":
		return fmt.Sprintf("%s read %s", i.Operator, i.Where)
	case "":
		return "nothing to do"
	}
	return fmt.Sprintf("%s[%d] handled a %s", i.Operator, i.Subtask, i.Kind)
}

// Next reads one source event and runs everything it causes.
func (s *Session) Next() (*Stop, error) { return s.NextN(context.Background(), 1) }

// NextN runs n source events (or fewer: a breakpoint, the end, a failure or
// ctx's cancellation stops it).
func (s *Session) NextN(ctx context.Context, n int) (*Stop, error) {
	return s.run(ctx, n, ReasonNext)
}

// Continue runs until a breakpoint, the end of input, a failure or ctx's
// cancellation.
func (s *Session) Continue(ctx context.Context) (*Stop, error) {
	return s.run(ctx, -1, ReasonEnd)
}

// usable refuses to step a closed or failed session.
func (s *Session) usable() error {
	if s.exec == nil {
		return errors.New("session: closed")
	}
	if f := s.exec.Failure(); f != nil {
		return fmt.Errorf("session: the job failed (%v); restart from the last checkpoint or go back", f)
	}
	return nil
}

func (s *Session) run(ctx context.Context, n int, done Reason) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	s.mark()
	c := s.newCollector()
	checkEach := len(s.activeBreakpoints()) > 0
	events := 0
	for n < 0 || events < n {
		if ctx.Err() != nil {
			return c.stop(ReasonInterrupted, "interrupted"), nil
		}
		if s.exec.Finished() {
			return c.stop(ReasonEnd, "end of input"), nil
		}
		if !checkEach {
			if err := s.exec.Next(); err != nil {
				return c.failed(err)
			}
			c.steps++
		} else {
			for {
				info, err := s.exec.StepInto()
				if err != nil {
					return c.failed(err)
				}
				c.steps++
				c.last = info
				bp, err := s.checkBreakpoints(info)
				if err != nil {
					return c.stop(ReasonBreakError, err.Error()), nil
				}
				if bp != nil {
					if s.exec.Idle() {
						_ = s.afterNext()
					}
					return c.breakAt(bp), nil
				}
				if s.exec.Idle() {
					break
				}
			}
		}
		events++
		if err := s.afterNext(); err != nil {
			return nil, err
		}
		// Keep the trace of long runs bounded while they go.
		if c.steps%256 == 0 {
			c.take()
		}
	}
	if s.exec.Finished() {
		return c.stop(ReasonEnd, "end of input"), nil
	}
	return c.stop(done, fmt.Sprintf("%d records", events)), nil
}

// mark remembers where a stepping command started, for Back: the position
// of the event in flight's start, or the current position when idle.
func (s *Session) mark() {
	p := s.exec.Position()
	if !s.exec.Idle() {
		p--
	}
	if n := len(s.marks); n == 0 || s.marks[n-1] != p {
		s.marks = append(s.marks, p)
	}
}

// Back returns to the state before the last next (or step, or continue):
// it restores the nearest checkpoint and replays deterministically. Without
// such a command to undo it goes back one record.
func (s *Session) Back() (*Stop, error) {
	if s.exec == nil {
		return nil, errors.New("session: closed")
	}
	pos, idle := s.exec.Position(), s.exec.Idle() && s.exec.Failure() == nil
	target := pos - 1
	for len(s.marks) > 0 {
		m := s.marks[len(s.marks)-1]
		s.marks = s.marks[:len(s.marks)-1]
		if m < pos || m == pos && !idle {
			target = m
			break
		}
	}
	if target < s.checkpoints[0].Info().Position {
		return nil, fmt.Errorf("session: cannot go back before record %d, where the session started", s.checkpoints[0].Info().Position)
	}
	s.dropCommandsAfter(target)
	// Forget checkpoints of the undone future (positions ascend).
	keep := 1
	for keep < len(s.checkpoints) && s.checkpoints[keep].Info().Position <= target {
		keep++
	}
	s.releaseCheckpoints(keep)
	cp := s.nearestCheckpoint(target)
	if err := s.restart(cp, target, true); err != nil {
		var f *runtime.Failure
		if errors.As(err, &f) {
			return s.stop(Stop{Reason: ReasonFailure, Failure: f, Message: f.Error()}), nil
		}
		return nil, err
	}
	return s.stop(Stop{Reason: ReasonBack, Message: fmt.Sprintf("back to record %d", s.exec.Position()),
		Replayed: s.exec.Position() - cp.Info().Position}), nil
}

// AdvanceWatermark sends the watermark wm (epoch ms) from every source.
func (s *Session) AdvanceWatermark(wm int64) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	c := s.newCollector()
	if err := s.exec.AdvanceWatermark(wm); err != nil {
		return c.failed(err)
	}
	s.commands = append(s.commands, timeCommand{position: s.exec.Position(), watermark: true, value: wm})
	return c.stop(ReasonTime, "watermark "+state.FormatMillis(wm)), nil
}

// AdvanceProcessingTime moves the virtual processing clock by ms.
func (s *Session) AdvanceProcessingTime(ms int64) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	c := s.newCollector()
	if err := s.exec.AdvanceProcessingTime(ms); err != nil {
		return c.failed(err)
	}
	s.commands = append(s.commands, timeCommand{position: s.exec.Position(), value: ms})
	return c.stop(ReasonTime, "processing time "+state.FormatMillis(s.exec.ProcessingTime())), nil
}
