package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/runtime"
	"streamdbg/savepoint"
	"streamdbg/savepoint/flink"
)

// RunOptions configure a headless run.
type RunOptions struct {
	// Steps is the number of source events to read (0: to the end).
	Steps int64
	// MaxRestarts bounds the restarts after failures (Flink's fixed-delay
	// restart strategy, without the delay).
	MaxRestarts int
}

// RunResult says how a headless run ended.
type RunResult struct {
	Position int64
	Finished bool
	Restarts int
}

// Run runs the job headless: no trace, checkpoints every
// CheckpointInterval events, and on a failure a restart from the latest
// checkpoint (at most MaxRestarts times), replaying the source from its
// checkpointed offsets. State is exactly once; sink output is at least once
// (records between the checkpoint and the failure are emitted again).
func (s *Session) Run(ctx context.Context, o RunOptions) (RunResult, error) {
	var res RunResult
	start := s.exec.Position()
	failAt := s.opts.FailAt
	for {
		if err := ctx.Err(); err != nil {
			res.Position = s.exec.Position()
			return res, err
		}
		if o.Steps > 0 && s.exec.Position()-start >= o.Steps && s.exec.Idle() {
			break
		}
		if s.exec.Finished() {
			res.Finished = true
			break
		}
		err := s.exec.Next()
		if errors.Is(err, runtime.ErrFinished) {
			res.Finished = true
			break
		}
		var f *runtime.Failure
		if errors.As(err, &f) {
			if res.Restarts >= o.MaxRestarts {
				res.Position = s.exec.Position()
				return res, f
			}
			res.Restarts++
			cp := s.LatestCheckpoint()
			s.log.Warn("task failed; restarting from the latest checkpoint", "error", f.Error(),
				"checkpoint", cp.Info().CheckpointID, "record", cp.Info().Position, "restart", res.Restarts, "of", o.MaxRestarts)
			if failAt > 0 {
				// The injected failure happens once.
				s.opts.FailAt, failAt = 0, 0
			}
			if err := s.exec.Flush(); err != nil {
				return res, err
			}
			if err := s.exec.CheckFunctionState(); err != nil {
				s.log.Warn("the restart loses state a function keeps outside its declared state", "error", err.Error())
			}
			if err := s.restart(cp, cp.Info().Position, false); err != nil {
				return res, fmt.Errorf("restart from checkpoint %d: %w", cp.Info().CheckpointID, err)
			}
			continue
		}
		if err != nil {
			return res, err
		}
		// With tracing on, the trace goes where a command's would (sink
		// records to Outputs, writes to History, both bounded) instead of
		// growing with the run.
		s.absorb(s.exec.TakeTrace(), s.exec.Position(), nil)
		if err := s.afterNext(); err != nil {
			return res, err
		}
	}
	res.Position = s.exec.Position()
	return res, s.exec.Flush()
}

// Savepoint writes a savepoint of the current state to dir (which must not
// exist). The session must be between source events: after StepInto, the
// event in flight is finished first, and what it emits and writes goes to
// the outputs and histories as after Next.
func (s *Session) Savepoint(fs vfs.FS, dir string) error {
	if err := s.usable(); err != nil {
		return err
	}
	if !s.exec.Idle() {
		if err := s.exec.Next(); err != nil && !errors.Is(err, runtime.ErrFinished) {
			return err
		}
		s.absorb(s.exec.TakeTrace(), s.exec.Position(), nil)
		if err := s.afterNext(); err != nil {
			return err
		}
	}
	if err := s.exec.CheckFunctionState(); err != nil {
		return fmt.Errorf("session: savepoint: %w", err)
	}
	s.nextCPID++
	snap, err := s.exec.SavepointSnapshot(s.nextCPID)
	if err != nil {
		return err
	}
	return savepoint.Write(fs, dir, snap)
}

// Restore replaces the running job's state with a snapshot (a savepoint on
// disk: runtime.FromSavepoint), as a job started with --from-savepoint. The
// session starts over at the snapshot's position: breakpoints and watches
// stay, checkpoints, recorded commands and Back's history go.
func (s *Session) Restore(from runtime.Restore, o RestoreOptions) (*Stop, error) {
	if s.exec == nil {
		return nil, errors.New("session: closed")
	}
	opts := s.opts.Options
	opts.AllowNonRestoredState = opts.AllowNonRestoredState || o.AllowNonRestoredState
	exec, err := runtime.NewExecutor(s.job, opts, from)
	if err != nil {
		return nil, err
	}
	old := s.exec
	s.exec = exec
	s.releaseCheckpoints(0)
	old.Close()
	s.commands, s.marks = nil, nil
	s.output, s.outSeq, s.pendingBefore = nil, 0, false
	s.hist.reset()
	if err := s.checkpoint(); err != nil {
		return nil, err
	}
	s.origin = "where the savepoint was restored"
	info := from.Info()
	return s.stop(Stop{Reason: ReasonRestored, Message: fmt.Sprintf("restored checkpoint %d of job %q at record %d", info.CheckpointID, info.Job, info.Position)}), nil
}

// RestoreOptions are the options of one restore.
type RestoreOptions struct {
	// AllowNonRestoredState drops state of operators the job does not have
	// (the session's own option holds too).
	AllowNonRestoredState bool
}

// RestoreDir restores the savepoint in dir (ours; or named by its
// _metadata file) into the session. An Apache Flink savepoint is refused
// with what can be done with it instead.
func (s *Session) RestoreDir(fs vfs.FS, dir string, o RestoreOptions) (*Stop, error) {
	if fs.PathBase(dir) == "_metadata" {
		if st, err := fs.Stat(dir); err == nil && st.Mode().IsRegular() {
			dir = fs.PathDir(dir)
		}
	}
	if isFlinkDir(fs, dir) {
		return nil, fmt.Errorf("restore %s: this is an Apache Flink savepoint; a job here restores only savepoints that streamdbg wrote. Browse it with 'open %s' or query it with 'streamdbg query %s \"SELECT ...\"'", dir, dir, dir)
	}
	sp, err := savepoint.Open(fs, dir)
	if err != nil {
		return nil, err
	}
	return s.Restore(runtime.FromSavepoint(sp), o)
}

// isFlinkDir reports whether dir's _metadata starts with Flink's magic
// number.
func isFlinkDir(fs vfs.FS, dir string) bool {
	f, err := fs.Open(fs.PathJoin(dir, "_metadata"))
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return binary.BigEndian.Uint32(b[:]) == flink.Magic
}
