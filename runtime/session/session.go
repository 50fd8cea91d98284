package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/state"
)

// Options configure a session.
type Options struct {
	runtime.Options
	// CheckpointInterval is the number of source events between in-memory
	// checkpoints (default 1000). Checkpoints make Back and failure
	// recovery cheap; they are incremental (runtime.IncrementalCheckpoint),
	// so taking one costs nothing per keyed entry.
	CheckpointInterval int
	// KeepCheckpoints is how many recent checkpoints are kept besides the
	// first one (default 4).
	KeepCheckpoints int
	// Restore starts the job from a savepoint or checkpoint.
	Restore runtime.Restore
	// OutputLimit bounds the sink records kept for views (default 1000).
	OutputLimit int
}

// Session is one job under the debugger.
type Session struct {
	job  *runtime.Job
	opts Options
	exec *runtime.Executor
	log  *slog.Logger

	checkpoints []*runtime.Checkpoint // ascending positions; [0] is the start
	nextCPID    int64
	commands    []timeCommand // recorded for replay by Back
	marks       []int64       // where stepping commands started, for Back
	// origin says what checkpoints[0] is, for Back's refusal to go
	// before it.
	origin string

	breakpoints []*Breakpoint
	nextBPID    int
	// pendingBefore: the last stop was before a step (break before); the
	// next run takes that step without stopping before it again.
	pendingBefore bool
	watches       []*Watch
	nextWatchID   int

	output []Output
	outSeq int64 // sink records written so far (the last one's Seq)
	// cpOutSeq is outSeq at each kept checkpoint (by id), so that going
	// back to one also takes back the sink records after it.
	cpOutSeq map[int64]int64
	hist     history
	replays  replayCheck
	// cmdGen counts commands (collectors), for light runs' caches.
	cmdGen uint64
	// pinned is the checkpoint a light run may replay from (light.go):
	// kept when the checkpoints are trimmed, and then (pinnedOut) released
	// once unpinned.
	pinned    *runtime.Checkpoint
	pinnedOut bool
	// fullTrace turns light runs off (tests compare the two); lightRuns
	// counts them.
	fullTrace bool
	lightRuns int
	// lazyFound counts the lazy histories a light run found for another
	// LightEntry of their entry (collector.lazyOf; tests).
	lazyFound int
	last      *Stop
	started   time.Time
}

// Output is one record a sink received.
type Output struct {
	Seq      int64
	Sink     string
	Subtask  int
	Value    any
	Position int64
}

// timeCommand is a watermark or processing-time command, kept so that Back
// replays it at the same position.
type timeCommand struct {
	position int64
	// reads is the executor's source reads when the command ran: several
	// reads can share a position (those that find the end of an input).
	reads     int64
	watermark bool
	value     int64
}

// New loads a job. The job's operators are opened (as a task starts); an
// error here is a job that cannot start, such as keyed state on a stream
// that is not keyed.
func New(job *runtime.Job, opts Options) (*Session, error) {
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = 1000
	}
	if opts.KeepCheckpoints <= 0 {
		opts.KeepCheckpoints = 4
	}
	if opts.OutputLimit <= 0 {
		opts.OutputLimit = 1000
	}
	// The entries the session's executors write, for light runs
	// (collector.historyOf): its own, since its history is its own.
	opts.Options.Written = runtime.NewWrittenEntries()
	s := &Session{job: job, opts: opts, log: opts.Log, origin: "where the session started"}
	if opts.Restore != nil {
		s.origin = "where the session started from its savepoint"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	exec, err := runtime.NewExecutor(job, opts.Options, opts.Restore)
	if err != nil {
		return nil, err
	}
	s.exec = exec
	if err := s.checkpoint(); err != nil {
		exec.Close()
		return nil, err
	}
	return s, nil
}

// SetFailAt injects one failure while source event n is read (0: none),
// to exercise recovery.
func (s *Session) SetFailAt(n int64) {
	s.opts.FailAt = n
	if s.exec != nil {
		s.exec.SetFailAt(n)
	}
}

// Close releases the job's state.
func (s *Session) Close() error {
	if s.exec == nil {
		return nil
	}
	s.releaseCheckpoints(0)
	err := errors.Join(s.exec.Flush(), s.exec.Close())
	s.exec = nil
	return err
}

// Job is the job being debugged.
func (s *Session) Job() *runtime.Job { return s.job }

// Plan is the executed plan.
func (s *Session) Plan() *runtime.Plan { return s.exec.Plan() }

// Executor gives views direct read access to the running job. Callers must
// not step it.
func (s *Session) Executor() *runtime.Executor { return s.exec }

// Position is the number of source events read.
func (s *Session) Position() int64 { return s.exec.Position() }

// Finished reports whether the input ended and everything is processed.
func (s *Session) Finished() bool { return s.exec.Finished() }

// Failure is the failure that stopped the job, if any.
func (s *Session) Failure() *runtime.Failure { return s.exec.Failure() }

// Last is the last stop.
func (s *Session) Last() *Stop { return s.last }

// OutputTotal is the number of sink records written so far (Outputs keeps
// the last OutputLimit of them).
func (s *Session) OutputTotal() int64 { return s.outSeq }

// Outputs returns the sink records kept for views, oldest first.
func (s *Session) Outputs() []Output {
	if over := len(s.output) - s.opts.OutputLimit; over > 0 {
		return s.output[over:]
	}
	return s.output
}

// Catalog is the live state as a catalog.
func (s *Session) Catalog() state.Catalog { return s.exec.Catalog() }

// Query runs a query on the live state.
func (s *Session) Query(ctx context.Context, text string) (*query.Rows, error) {
	return query.RunText(ctx, s.exec.Catalog(), text)
}

func (s *Session) checkpoint() error {
	s.nextCPID++
	// The first checkpoint, where the session started, is a full copy (of
	// a state that is usually empty or just restored): it is kept for ever,
	// so the backends need not keep every change since it. The others are
	// incremental marks, released oldest first, which drops the head of the
	// backends' change logs.
	take := s.exec.IncrementalCheckpoint
	if len(s.checkpoints) == 0 {
		take = s.exec.Checkpoint
	}
	cp, err := take(s.nextCPID)
	if err != nil {
		return err
	}
	s.checkpoints = append(s.checkpoints, cp)
	if s.cpOutSeq == nil {
		s.cpOutSeq = map[int64]int64{}
	}
	s.cpOutSeq[cp.Info().CheckpointID] = s.outSeq
	// Keep the first checkpoint (Back always has somewhere to go) and the
	// most recent ones.
	if n := len(s.checkpoints); n > s.opts.KeepCheckpoints+1 {
		drop := s.checkpoints[1 : n-s.opts.KeepCheckpoints]
		for _, cp := range drop {
			if cp == s.pinned {
				s.pinnedOut = true // a light run may replay from it (light.go)
				continue
			}
			cp.Release()
			delete(s.cpOutSeq, cp.Info().CheckpointID)
		}
		s.checkpoints = append(s.checkpoints[:1], s.checkpoints[n-s.opts.KeepCheckpoints:]...)
	}
	return nil
}

// releaseCheckpoints releases the checkpoints from index from on and
// forgets them.
func (s *Session) releaseCheckpoints(from int) {
	if from == 0 {
		s.unpin()
	}
	for _, cp := range s.checkpoints[min(from, len(s.checkpoints)):] {
		if cp == s.pinned {
			s.pinned = nil
		}
		cp.Release()
		delete(s.cpOutSeq, cp.Info().CheckpointID)
	}
	s.checkpoints = s.checkpoints[:min(from, len(s.checkpoints))]
}

// afterNext is called whenever the executor became idle after a source
// event: it takes the periodic checkpoint.
func (s *Session) afterNext() error {
	if s.exec.Failure() != nil || !s.exec.Idle() {
		return nil
	}
	pos := s.exec.Position()
	last := s.checkpoints[len(s.checkpoints)-1]
	if pos-last.Info().Position >= int64(s.opts.CheckpointInterval) {
		return s.checkpoint()
	}
	return nil
}

// LatestCheckpoint is the most recent in-memory checkpoint. It is
// incremental: readable while the session runs, and only until the session
// drops it (Materialize it to keep it).
func (s *Session) LatestCheckpoint() *runtime.Checkpoint { return s.checkpoints[len(s.checkpoints)-1] }

// restart replaces the executor with one restored from cp and replays the
// source and recorded commands up to position target (idle). exact resumes
// the checkpoint's event time too (back); otherwise event time starts over
// as in Flink's recovery. What the undone future wrote goes: sink records
// and entry revisions after the checkpoint are dropped and the replay
// writes them again, so views show the outputs and history of the position
// they are at.
func (s *Session) restart(cp *runtime.Checkpoint, target int64, exact bool) error {
	return s.restartTo(cp, target, 0, exact)
}

// restartTo is restart that also replays source reads until there were
// reads of them (the reads that find the end of an input do not move the
// position).
func (s *Session) restartTo(cp *runtime.Checkpoint, target, reads int64, exact bool) error {
	exec, err := s.exec.Restart(s.job, s.opts.Options, cp)
	if err != nil {
		return err
	}
	s.exec = exec
	if exact {
		if err := exec.ResumeTime(cp); err != nil {
			return err
		}
	}
	s.pendingBefore = false
	pos := cp.Info().Position
	s.dropOutputsAfter(s.cpOutSeq[cp.Info().CheckpointID])
	s.hist.truncate(pos)
	if exact {
		s.replays.replay = map[int64][]emitDigest{}
		defer func() { s.replays.replay = nil }()
	} else {
		s.replays.forgetAfter(pos)
	}
	for {
		if err := s.replayCommands(pos); err != nil {
			return err
		}
		s.absorb(exec.TakeTrace(), pos, nil)
		if pos >= target && exec.Reads() >= reads {
			break
		}
		if err := exec.Next(); err != nil {
			if errors.Is(err, runtime.ErrFinished) {
				break
			}
			return err
		}
		pos = exec.Position()
		s.absorb(exec.TakeTrace(), pos, nil)
	}
	exec.TakeTrace()
	if exact {
		err := s.replays.compare(cp.Info().Position, exec.Position())
		s.replays.forgetAfter(exec.Position())
		return err
	}
	return nil
}

// dropOutputsAfter forgets the sink records after the seq-th.
func (s *Session) dropOutputsAfter(seq int64) {
	n := len(s.output)
	for n > 0 && s.output[n-1].Seq > seq {
		n--
	}
	s.outSeq = seq
	if n == len(s.output) {
		return
	}
	// A new array: slices Outputs returned earlier stay as they were.
	s.output = append([]Output(nil), s.output[:n]...)
	s.outSeq = seq
}

func (s *Session) replayCommands(pos int64) error {
	for _, c := range s.commands {
		if c.position != pos || c.reads != s.exec.Reads() {
			continue
		}
		var err error
		if c.watermark {
			err = s.exec.AdvanceWatermark(c.value)
		} else {
			err = s.exec.AdvanceProcessingTime(time.Duration(c.value) * time.Millisecond)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropCommandsAfter forgets the commands of a future that Back undid, and
// the source reads step chose there.
func (s *Session) dropCommandsAfter(pos int64) {
	s.exec.ForgetReadsAfter(pos)
	kept := s.commands[:0]
	for _, c := range s.commands {
		if c.position <= pos {
			kept = append(kept, c)
		}
	}
	s.commands = kept
}

func (s *Session) nearestCheckpoint(pos int64) *runtime.Checkpoint {
	best := s.checkpoints[0]
	for _, cp := range s.checkpoints {
		if cp.Info().Position <= pos {
			best = cp
		}
	}
	return best
}

// Restart restores the latest checkpoint after a failure, as Flink's
// restart strategy does; the job goes on from there.
func (s *Session) Restart() (*Stop, error) {
	if s.exec == nil {
		return nil, errors.New("session: closed")
	}
	cp := s.LatestCheckpoint()
	s.dropCommandsAfter(cp.Info().Position)
	s.marks = dropAfter(s.marks, cp.Info().Position)
	if err := s.restart(cp, cp.Info().Position, false); err != nil {
		return nil, err
	}
	return s.stop(Stop{Reason: ReasonRestarted, Message: fmt.Sprintf("restarted from checkpoint %d at record %d", cp.Info().CheckpointID, cp.Info().Position)}), nil
}

// dropAfter keeps the marks at or before pos.
func dropAfter(marks []int64, pos int64) []int64 {
	n := len(marks)
	for n > 0 && marks[n-1] > pos {
		n--
	}
	return marks[:n]
}

// Tracing reports whether steps are traced.
func (s *Session) Tracing() bool { return s.opts.Trace }

// SetTrace turns the trace of steps on or off: stops list their events
// and changes, Outputs and History fill, only with it on. The job restarts
// from its nearest checkpoint and replays to where it is (as Back does),
// so that every state it declared is traced from then on. It must be
// called between source events.
func (s *Session) SetTrace(on bool) error {
	if err := s.usable(); err != nil {
		return err
	}
	if s.opts.Trace == on {
		return nil
	}
	if !s.exec.Idle() {
		return errors.New("session: the trace can only change between source events (finish the record in flight with next)")
	}
	if err := s.exec.CheckFunctionState(); err != nil {
		return fmt.Errorf("session: cannot replay the job to trace it: %w", err)
	}
	s.opts.Trace = on
	pos := s.exec.Position()
	return s.restartTo(s.nearestCheckpoint(pos), pos, s.exec.Reads(), true)
}
