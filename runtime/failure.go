package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Failure is a task failure: user code panicked or returned an error. It
// names everything a person needs to find the cause.
type Failure struct {
	Task     string
	Subtask  int
	Operator string
	Record   string // the record (or source position) being handled
	Key      string
	Position int64 // source events read when it failed
	Err      error
	Stack    string // for panics
}

func (f *Failure) Error() string {
	var ke *KeyedStateError
	if errors.As(f.Err, &ke) {
		return ke.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "operator %q (task %q, subtask %d) failed", f.Operator, f.Task, f.Subtask)
	if f.Record != "" {
		fmt.Fprintf(&b, " on record %s", f.Record)
	}
	if f.Key != "" {
		fmt.Fprintf(&b, " (key %s)", f.Key)
	}
	fmt.Fprintf(&b, ": %v", f.Err)
	return b.String()
}

func (f *Failure) Unwrap() error { return f.Err }

// describeValue prints a record or key for messages: JSON when it can, Go
// syntax otherwise, cut to a readable length.
func describeValue(v any) string {
	var s string
	if b, err := json.Marshal(v); err == nil {
		s = string(b)
	} else {
		s = fmt.Sprintf("%#v", v)
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
