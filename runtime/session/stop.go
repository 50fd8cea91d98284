package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"streamdbg/internal/numfmt"
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
	// ReasonWaiting: no source has anything to read now (the sources a
	// test drives wait for it to push more).
	ReasonWaiting Reason = "waiting for input"
)

// Stop is what a command did: why it stopped, where, and what changed.
// One command is one stop, however many records it ran.
type Stop struct {
	Reason     Reason
	Message    string
	Breakpoint *Breakpoint
	// Before says the stop is before Last's step runs (a `break before`
	// breakpoint): the state is as it was before the operator's update.
	Before   bool
	Position int64
	// Records is the number of source records the command read.
	Records int64
	// Replayed is, for Back, the source records replayed from the
	// checkpoint it returned to (what Back cost besides the roll back).
	Replayed int64
	// Steps are the steps taken (for StepInto, exactly one).
	Steps int
	// Last is the last step taken (with Before: the one about to run).
	Last runtime.StepInfo
	// Events are the trace of the steps: emissions, outputs, state writes,
	// timers, watermarks. Long runs keep only the last MaxEvents.
	Events    []runtime.TraceEvent
	Truncated int
	// Changes are the entries the command wrote, with their values before
	// and after, complete up to MaxChanges entries whatever the events kept.
	Changes map[EntryID]Change
	// ChangesDropped counts the command's writes to entries beyond the
	// first MaxChanges it changed (writes, not entries: an entry written
	// ten times counts ten).
	ChangesDropped int
	Failure        *runtime.Failure
	Watches        []WatchResult
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
	s       *Session
	events  []runtime.TraceEvent
	trunc   int
	steps   int
	records int64
	last    runtime.StepInfo
	// changes are the entries the command wrote, in first-write order;
	// changeAt indexes the first indexed of them (changeIndex indexes the
	// rest when asked: a light run's entries find theirs by their
	// history, light.go's changeLight, and seldom ask).
	changes  []Change
	changeID []EntryID
	changeAt map[EntryID]int32
	indexed  int
	dropped  int
	// gen tells this command's change indexes in the histories
	// (histEntry.chGen) from older ones.
	gen uint64
	// light is the light run of the command, once it started (light.go).
	light *lightRun
	// progress, when set, gets the final position at the stop.
	progress *Progress
	// startSteps and startPos are the executor's step count and position
	// when the command began.
	startSteps int64
	startPos   int64
}

// take moves the executor's trace into the command's: outputs and state
// writes are absorbed at the current position, and the events kept are the
// last MaxEvents (trimmed in batches, so a long run does not copy them at
// every record).
func (c *collector) take() {
	if c.light != nil {
		c.takeLight()
		return
	}
	c.trunc += c.s.exec.TraceDropped()
	ev := c.s.exec.TakeTrace()
	c.s.absorb(ev, c.s.exec.Position(), c)
	c.events = append(c.events, ev...)
	if over := len(c.events) - MaxEvents; over > MaxEvents {
		// In place: nothing else holds c.events while the command runs.
		c.trunc += over
		n := copy(c.events, c.events[over:])
		clear(c.events[n:])
		c.events = c.events[:n]
	}
}

// sourceRecord fills in the record a source step read (the first it
// emitted), from the trace, when a breakpoint at that source needs it.
func (c *collector) sourceRecord(info runtime.StepInfo) runtime.StepInfo {
	if info.Kind != "source" || !c.s.breaksAt(info.Operator) {
		return info
	}
	c.take()
	for i := len(c.events) - 1; i >= 0; i-- {
		e := &c.events[i]
		if e.Kind == runtime.TraceStep && e.Operator == info.Operator {
			for _, f := range c.events[i+1:] {
				if f.Kind == runtime.TraceEmitted && f.Operator == info.Operator {
					info.Record = f.Value
					return info
				}
			}
			return info
		}
	}
	return info
}

// change adds a traced write of id to the command's changes; he is the
// entry's history (byID's).
func (c *collector) change(id EntryID, he *histEntry, e *runtime.TraceEvent) {
	i, ok := c.changeIndex(id)
	if !ok {
		if len(c.changes) >= maxChanges {
			c.dropped++
			return
		}
		i = c.addChange(id, Change{Old: e.Old, HadOld: e.HadOld, KeyGroup: e.KeyGroup, Key: e.Key, Namespace: e.Namespace, UserKey: e.UserKey}, he)
	}
	ch := &c.changes[i]
	ch.New, ch.Cleared = e.New, e.Cleared
	ch.Writes++
}

func (c *collector) changeIndex(id EntryID) (int32, bool) {
	if c.indexed < len(c.changeID) {
		if c.changeAt == nil {
			c.changeAt = make(map[EntryID]int32, len(c.changeID))
		}
		for ; c.indexed < len(c.changeID); c.indexed++ {
			c.changeAt[c.changeID[c.indexed]] = int32(c.indexed)
		}
	}
	i, ok := c.changeAt[id]
	return i, ok
}

// addChange adds the change of id, whose history in byID is he: he keeps
// its index too (history.chGen).
func (c *collector) addChange(id EntryID, ch Change, he *histEntry) int32 {
	i := int32(len(c.changes))
	if len(c.changes) == cap(c.changes) {
		// Doubled up to MaxChanges (append grows a large array by a
		// quarter at a time: a light run that changes MaxChanges entries
		// allocated five times what they take).
		n := min(max(2*len(c.changes), 64), maxChanges)
		if n <= len(c.changes) {
			n = len(c.changes) + 1
		}
		c.changes = append(make([]Change, 0, n), c.changes...)
		c.changeID = append(make([]EntryID, 0, n), c.changeID...)
	}
	c.changes = append(c.changes, ch)
	c.changeID = append(c.changeID, id)
	he.chGen, he.ch = c.gen, i
	return i
}

// changeMap is the changes as a stop lists them.
func (c *collector) changeMap() map[EntryID]Change {
	if len(c.changes) == 0 {
		return nil
	}
	m := make(map[EntryID]Change, len(c.changes))
	for i, id := range c.changeID {
		m[id] = c.changes[i]
	}
	return m
}

func (s *Session) addOutput(e *runtime.TraceEvent, pos int64) {
	s.addOutputOf(e.Operator, e.Subtask, e.Value, pos)
}

func (s *Session) addOutputOf(sink string, subtask int, v any, pos int64) {
	s.outSeq++
	// Trim in batches: copying the kept records on every output cost
	// O(OutputLimit) time and garbage per record. A new array keeps the
	// slices Outputs returned earlier unchanged.
	if limit := s.opts.OutputLimit; len(s.output) >= 2*limit {
		s.output = append(make([]Output, 0, 2*limit), s.output[len(s.output)-limit+1:]...)
	}
	s.output = append(s.output, Output{Seq: s.outSeq, Sink: sink, Subtask: subtask, Value: v, Position: pos})
}

func (s *Session) newCollector() *collector {
	s.cmdGen++
	s.hist.chGen = s.cmdGen
	return &collector{s: s, startSteps: s.exec.Steps(), startPos: s.exec.Position(), gen: s.cmdGen}
}

func (c *collector) stop(reason Reason, msg string) *Stop {
	c.take()
	c.steps = int(c.s.exec.Steps() - c.startSteps)
	c.records = c.s.exec.Position() - c.startPos
	if c.light != nil {
		if err := c.finishLight(); err != nil {
			var f *runtime.Failure
			if !errors.As(err, &f) {
				return c.s.stop(Stop{Reason: ReasonFailure, Message: "replaying the last records for the stop: " + err.Error(),
					Records: c.records, Steps: c.steps, Failure: &runtime.Failure{Operator: "session", Err: err, Position: c.s.exec.Position()}})
			}
		}
	}
	c.progress.report(c.s.exec.Position(), c.records)
	if over := len(c.events) - MaxEvents; over > 0 {
		c.trunc += over
		c.events = append(c.events[:0:0], c.events[over:]...)
	}
	return c.s.stop(Stop{Reason: reason, Message: msg, Records: c.records, Steps: c.steps, Last: c.last, Events: c.events, Truncated: c.trunc,
		Changes: c.changeMap(), ChangesDropped: c.dropped})
}

func (c *collector) failed(err error) (*Stop, error) {
	var f *runtime.Failure
	if errors.As(err, &f) {
		st := c.stop(ReasonFailure, f.Error())
		st.Failure = f
		if errors.Is(f, runtime.ErrInjected) {
			// Injected once (as Run does): a restart or a replay after
			// back goes on past it. Not before the stop, whose replay of
			// the last records (finishLight) fails there again.
			c.s.SetFailAt(0)
		}
		return st, nil
	}
	if errors.Is(err, runtime.ErrFinished) {
		return c.stop(ReasonEnd, c.endMessage()), nil
	}
	if errors.Is(err, runtime.ErrNoInput) {
		return c.stop(ReasonWaiting, "waiting for input: the sources a test drives read only what it pushes"), nil
	}
	return nil, err
}

// endMessage says where the input ended and how much of it the command
// read.
func (c *collector) endMessage() string {
	pos := c.s.exec.Position()
	switch n := pos - c.startPos; {
	case n == 0:
		return "the input ended"
	case n == pos:
		return "the input ended after record " + numfmt.Commas(pos)
	default:
		return "the input ended after record " + numfmt.Commas(pos) + "; this command read " + fmtRecords(n)
	}
}

// StepInto handles one element by one operator.
func (s *Session) StepInto() (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	return s.stepOne(s.exec.StepInto)
}

// stepOne runs one step taken by take (StepInto, or StepIntoInput's) as a
// command: marked for back, its trace collected, the breakpoints after it
// checked.
func (s *Session) stepOne(take func() (runtime.StepInfo, error)) (*Stop, error) {
	s.pendingBefore = false
	s.mark()
	c := s.newCollector()
	info, err := take()
	if err != nil {
		return c.failed(err)
	}
	info = c.sourceRecord(info)
	c.steps, c.last = 1, info
	if err := s.afterNext(); err != nil {
		return nil, err
	}
	if bp, err := s.checkBreakpoints(info, false); err != nil {
		return c.stop(ReasonBreakError, err.Error()), nil
	} else if bp != nil {
		return c.breakAt(bp, false), nil
	}
	if s.exec.Finished() {
		return c.stop(ReasonEnd, "the input ended"), nil
	}
	return c.stop(ReasonStep, describeStep(info)), nil
}

func (c *collector) breakAt(bp *Breakpoint, before bool) *Stop {
	where := fmt.Sprintf("%s[%d]", c.last.Operator, c.last.Subtask)
	msg := fmt.Sprintf("breakpoint #%d (%s) · hit %d · ", bp.ID, bp.Describe(), bp.Hits)
	if before {
		msg += "before " + where + " handles the record"
	} else {
		msg += "after " + where
	}
	st := c.stop(ReasonBreakpoint, msg)
	st.Breakpoint, st.Before = bp, before
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
// ctx's cancellation stops it). After a stop in the middle of a record (a
// breakpoint, a step) the first of them is the rest of that record.
func (s *Session) NextN(ctx context.Context, n int) (*Stop, error) {
	return s.run(ctx, n, ReasonNext)
}

// Continue runs until a breakpoint, the end of input, a failure or ctx's
// cancellation.
func (s *Session) Continue(ctx context.Context) (*Stop, error) {
	return s.run(ctx, -1, ReasonEnd)
}

// usable refuses to step a closed or failed session, saying what can be
// done instead.
func (s *Session) usable() error {
	if s.exec == nil {
		return errors.New("session: closed")
	}
	if f := s.exec.Failure(); f != nil {
		cp := s.LatestCheckpoint().Info()
		return fmt.Errorf("session: the job failed in %s at record %d; restart goes on from checkpoint %d at record %d (R), back returns to before the last command (u): %v",
			f.Operator, f.Position, cp.CheckpointID, cp.Position, f)
	}
	return nil
}

// progressEvery is how many source records go by between two reports to
// a Progress: cheap atomics, often enough for a 10 Hz progress line.
const progressEvery = 64

func (s *Session) run(ctx context.Context, n int, done Reason) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	skipBefore := s.pendingBefore
	s.pendingBefore = false
	s.mark()
	c := s.newCollector()
	defer func() {
		if c.light != nil { // returned an error, not a stop
			c.abandonLight()
		}
	}()
	p := progressOf(ctx)
	p.begin(s.exec.Position())
	c.progress = p
	active := s.activeBreakpoints()
	checkEach := len(active) > 0
	before := false
	for _, b := range active {
		before = before || b.Before
	}
	// units counts source events finished: a record started before this
	// command (a step, a breakpoint) is the first of them.
	units := 0
	mayGoLight := s.mayGoLight(checkEach)
	for n < 0 || units < n {
		if ctx.Err() != nil {
			return c.stop(ReasonInterrupted, "interrupted after "+fmtRecords(int64(units))), nil
		}
		if s.exec.Finished() {
			return c.stop(ReasonEnd, c.endMessage()), nil
		}
		if !checkEach {
			if err := s.exec.Next(); err != nil {
				return c.failed(err)
			}
		} else {
			for {
				if before && !skipBefore {
					if info, ok := s.exec.Peek(); ok {
						bp, err := s.checkBreakpoints(info, true)
						if err != nil {
							return c.stop(ReasonBreakError, err.Error()), nil
						}
						if bp != nil {
							c.last = info
							s.pendingBefore = true
							return c.breakAt(bp, true), nil
						}
					}
				}
				skipBefore = false
				info, err := s.exec.StepInto()
				if err != nil {
					return c.failed(err)
				}
				info = c.sourceRecord(info)
				c.last = info
				bp, err := s.checkBreakpoints(info, false)
				if err != nil {
					return c.stop(ReasonBreakError, err.Error()), nil
				}
				if bp != nil {
					if s.exec.Idle() {
						_ = s.afterNext()
					}
					return c.breakAt(bp, false), nil
				}
				if s.exec.Idle() {
					break
				}
			}
		}
		units++
		c.take()
		cp := s.LatestCheckpoint()
		if err := s.afterNext(); err != nil {
			return nil, err
		}
		c.afterRecord(cp, mayGoLight)
		if units%progressEvery == 0 {
			p.report(s.exec.Position(), s.exec.Position()-c.startPos)
		}
	}
	if s.exec.Finished() {
		return c.stop(ReasonEnd, c.endMessage()), nil
	}
	return c.stop(done, fmtRecords(int64(units))), nil
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
		return nil, fmt.Errorf("session: cannot go back before record %d, %s", s.checkpoints[0].Info().Position, s.origin)
	}
	if err := s.exec.CheckFunctionState(); err != nil {
		return nil, fmt.Errorf("session: cannot go back: %w", err)
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

// AdvanceWatermark sends the watermark wm (epoch ms) from every source. A
// watermark that does not move event time forward changes nothing (Flink's
// sources and operators ignore it), and the stop says it was ignored.
func (s *Session) AdvanceWatermark(wm int64) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	c := s.newCollector()
	if cur := s.sourceWatermark(); wm <= cur {
		return c.stop(ReasonTime, fmt.Sprintf("watermark %s ignored: it is not after the sources' watermark %s (event time only moves forward)", state.FormatMillis(wm), state.FormatMillis(cur))), nil
	}
	if err := s.exec.AdvanceWatermark(wm); err != nil {
		return c.failed(err)
	}
	s.commands = append(s.commands, timeCommand{position: s.exec.Position(), reads: s.exec.Reads(), watermark: true, value: wm})
	return c.stop(ReasonTime, "watermark "+state.FormatMillis(wm)), nil
}

// sourceWatermark is the lowest watermark of the source operators: a
// watermark command moves event time when it is above it.
func (s *Session) sourceWatermark() int64 {
	wm := int64(math.MaxInt64)
	seen := false
	for _, v := range s.exec.Subtasks() {
		for _, op := range v.Operators {
			if op.Info.IsSource {
				wm, seen = min(wm, op.Watermark), true
			}
		}
	}
	if !seen {
		return math.MinInt64
	}
	return wm
}

// AdvanceProcessingTime moves the virtual processing clock by d (whole
// milliseconds).
func (s *Session) AdvanceProcessingTime(d time.Duration) (*Stop, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	c := s.newCollector()
	if err := s.exec.AdvanceProcessingTime(d); err != nil {
		return c.failed(err)
	}
	s.commands = append(s.commands, timeCommand{position: s.exec.Position(), reads: s.exec.Reads(), value: d.Milliseconds()})
	return c.stop(ReasonTime, "processing time "+state.FormatMillis(s.exec.ProcessingTime())), nil
}
