package runtime

import (
	"fmt"

	"streamdbg/state"
	"streamdbg/state/heapstate"
)

// Backends lists the keyed state backends a job can choose.
var Backends = []string{"heap", "pebble"}

// chooseBackend applies Flink's precedence: the job's code, then the
// configuration (flag, then config file), then the default.
func chooseBackend(j *Job, o Options) (name, why string) {
	switch {
	case j.Backend != "":
		return j.Backend, "set in the job's code"
	case o.Backend != "":
		origin := o.BackendOrigin
		if origin == "" {
			origin = "options"
		}
		return o.Backend, "from " + origin
	}
	return "heap", "default"
}

func newKeyedBackend(e *Executor, info *OperatorInfo, st *subtask) (state.KeyedBackend, error) {
	switch e.backend {
	case "heap":
		return heapstate.New(e.plan.MaxParallelism, st.groups), nil
	case "pebble":
		return newPebbleBackend(e, info, st)
	}
	return nil, fmt.Errorf("unknown state backend %q (want heap or pebble)", e.backend)
}
