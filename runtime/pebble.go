package runtime

import (
	"errors"

	"streamdbg/state"
)

func newPebbleBackend(e *Executor, info *OperatorInfo, st *subtask) (state.KeyedBackend, error) {
	return nil, errors.New("the pebble backend is not built yet")
}
