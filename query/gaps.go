package query

import (
	"fmt"
	"strings"

	"streamdbg/state"
)

// Options change how a query runs.
type Options struct {
	// SkipUnreadable makes a query that needs states the catalog cannot
	// read (StateMeta.Status not empty) read the other states instead of
	// failing; Warn is told about each state left out.
	SkipUnreadable bool
	Warn           func(skipped state.StateMeta)
	// Partial, under SkipUnreadable, is told about a state (label: its
	// operator.state, or "timers of OPERATOR") whose reading failed after
	// read rows: those rows are in the result, the rest of the state is
	// not, and the query goes on with the other states.
	Partial func(label string, read int, err error)
}

// UnreadableError is returned when a query needs states that the catalog
// lists but cannot read: rather than an incomplete result, the query fails
// naming each state and why.
type UnreadableError struct {
	States []state.StateMeta
}

func (e *UnreadableError) Error() string {
	var b strings.Builder
	b.WriteString("query: ")
	for i, m := range e.States {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == 3 && len(e.States) > 4 {
			fmt.Fprintf(&b, "and %d more unreadable states", len(e.States)-3)
			break
		}
		b.WriteString(UnreadableText(m))
	}
	return b.String()
}

// Unwrap gives the causes the catalog knows (StateMeta.Cause), so that
// errors.Is tells the kind of each (e.g. flink.ErrCorrupt).
func (e *UnreadableError) Unwrap() []error {
	var out []error
	for _, m := range e.States {
		if m.Cause != nil {
			out = append(out, m.Cause)
		}
	}
	return out
}

// UnreadableText says which state cannot be read and why, for errors and
// warnings: cannot read state "STATE" of operator "NAME" (ID): REASON.
func UnreadableText(m state.StateMeta) string {
	op := fmt.Sprintf("%q (%s)", m.OperatorName, m.OperatorID)
	if m.OperatorName == m.OperatorID || m.OperatorName == "" {
		op = m.OperatorID
	}
	return fmt.Sprintf("cannot read state %q of operator %s: %s", m.StateName, op, m.Status)
}

// gaps splits the states a plan would read into the readable ones and the
// others: an error when there are others, unless opts skips them (each is
// then reported to opts.Warn and listed by EXPLAIN).
func (pl *plan) gaps(metas []state.StateMeta, opts Options) (readable []state.StateMeta, skipped bool, err error) {
	var bad []state.StateMeta
	for _, m := range metas {
		if m.Status != "" {
			bad = append(bad, m)
			continue
		}
		readable = append(readable, m)
	}
	if len(bad) == 0 {
		return readable, false, nil
	}
	if !opts.SkipUnreadable {
		return nil, false, &UnreadableError{States: bad}
	}
	for _, m := range bad {
		pl.skipped = append(pl.skipped, m)
		if opts.Warn != nil {
			opts.Warn(m)
		}
	}
	return readable, true, nil
}
