package runtime

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
	"streamdbg/state/pebblestate"
)

// executorGen numbers executors in this process so that an executor built
// for a restart never shares a pebble directory with the one it replaces.
var executorGen atomic.Int64

// newPebbleBackend opens one pebble database per operator subtask, as Flink
// opens one RocksDB instance per keyed operator subtask. Its files are a
// working copy, rebuilt from checkpoints: they go in a fresh directory under
// Options.StateDir (removed on close), or in a temporary directory.
func newPebbleBackend(e *Executor, info *OperatorInfo, st *subtask) (state.KeyedBackend, error) {
	opts := pebblestate.Options{MaxParallelism: e.plan.MaxParallelism, KeyGroups: st.groups}
	if e.opts.StateDir != "" {
		if e.stateDir == "" {
			removeStaleStateDirs(e.opts.StateDir, sanitize(e.plan.Job), e.log)
			e.stateDir = filepath.Join(e.opts.StateDir, fmt.Sprintf("%s-%d-%d", sanitize(e.plan.Job), os.Getpid(), executorGen.Add(1)))
		}
		opts.Dir = filepath.Join(e.stateDir, fmt.Sprintf("%s-%d", sanitize(info.UID), st.index))
		if err := os.RemoveAll(opts.Dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	return pebblestate.Open(opts)
}

func sanitize(s string) string { return uidUnsafe.ReplaceAllString(s, "_") }

// removeStaleStateDirs removes the directories that runs of job killed
// before they could remove their own (SIGKILL, a crash, power loss) left
// in stateDir: JOB-PID-N whose process is gone and none of whose pebble
// databases is open (its LOCK can be taken). Their files are a working
// copy, useless once their process is gone; kept, they would add up run
// after run. A directory in use is never touched: its process lives (it
// may not have opened its databases yet), or it holds their locks (a
// process that this one cannot see, in another PID namespace).
func removeStaleStateDirs(stateDir, job string, log *slog.Logger) {
	ents, err := os.ReadDir(stateDir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		pid, ok := stateDirPID(ent.Name(), job)
		if !ok || !ent.IsDir() || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		dir := filepath.Join(stateDir, ent.Name())
		if !unlocked(dir) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("cannot remove the state directory of a run that ended without removing it", "dir", dir, "err", err)
			continue
		}
		log.Info("removed the state directory of a run that ended without removing it", "dir", dir, "pid", pid)
	}
}

// stateDirPID is the PID in the name of a state directory of job
// (JOB-PID-N), if name is one.
func stateDirPID(name, job string) (int, bool) {
	rest, ok := strings.CutPrefix(name, job+"-")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if _, err2 := strconv.Atoi(n); err != nil || err2 != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// unlocked reports whether every pebble database under dir (one per
// operator subtask, DIR/UID-N) can be locked: none is open.
func unlocked(dir string) bool {
	subs, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	var held []io.Closer
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for _, sub := range subs {
		lock := filepath.Join(dir, sub.Name(), "LOCK")
		if _, err := os.Stat(lock); err != nil {
			continue // no database (yet, or any more)
		}
		c, err := vfs.Default.Lock(lock)
		if err != nil {
			return false
		}
		held = append(held, c)
	}
	return true
}
