package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

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
