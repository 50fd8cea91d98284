package runtime

import (
	"fmt"
	"slices"
	"strings"

	"streamdbg/state"
)

// CheckStatus says how one state of a snapshot fits a job.
type CheckStatus string

const (
	// CheckOK: the state restores into an operator that declares it alike.
	CheckOK CheckStatus = "ok"
	// CheckMissing: the snapshot has the state, the job has no operator
	// with its uid; the restore is refused unless non-restored state is
	// allowed (then the state is dropped).
	CheckMissing CheckStatus = "missing"
	// CheckUndeclared: the operator exists but does not declare the state
	// (at open); the restore goes on and the state is carried unread.
	CheckUndeclared CheckStatus = "undeclared"
	// CheckNew: the job declares the state, the snapshot does not have it;
	// it starts empty.
	CheckNew CheckStatus = "new"
	// CheckChanged: kind, key, user key or value type differ; the restore fails.
	CheckChanged CheckStatus = "changed"
	// CheckNotKeyed: the snapshot has keyed state for an operator whose input
	// is no longer keyed; the restore fails.
	CheckNotKeyed CheckStatus = "not keyed"
	// CheckMaxParallelism: the operator's keyed state was written with
	// another max parallelism; key groups cannot change, the restore fails.
	CheckMaxParallelism CheckStatus = "max parallelism"
)

// CheckItem is one state (or operator) compared between a snapshot and a job.
type CheckItem struct {
	Status   CheckStatus
	Operator string // name, from the job when it has the operator
	UID      string
	State    string // "" for an operator-level item
	Scope    state.Scope
	Kind     state.Kind
	Detail   string
}

// CheckReport says whether a snapshot would restore into a job, and why not.
type CheckReport struct {
	Job      string
	Snapshot RestoreInfo
	Items    []CheckItem
}

// Blocking reports whether an item stops the restore: changed types, keyed
// state on an unkeyed operator, a max parallelism change, and (unless
// allowNonRestored) state of an operator the job lacks.
func (it CheckItem) Blocking(allowNonRestored bool) bool {
	switch it.Status {
	case CheckChanged, CheckNotKeyed, CheckMaxParallelism:
		return true
	case CheckMissing:
		return !allowNonRestored
	}
	return false
}

// Restorable reports whether the snapshot would restore into the job.
func (r CheckReport) Restorable(allowNonRestored bool) bool {
	return len(r.Problems(allowNonRestored)) == 0
}

// Problems are the blocking items.
func (r CheckReport) Problems(allowNonRestored bool) []CheckItem {
	var out []CheckItem
	for _, it := range r.Items {
		if it.Blocking(allowNonRestored) {
			out = append(out, it)
		}
	}
	return out
}

// Count is the number of items with status s.
func (r CheckReport) Count(s CheckStatus) int {
	n := 0
	for _, it := range r.Items {
		if it.Status == s {
			n++
		}
	}
	return n
}

// CheckRestore compares snapshot r with a job's plan and the states its
// operators declare (known only once they are open: see CheckJob). It
// finds what NewExecutor's restore would refuse, before restoring.
func CheckRestore(plan *Plan, r Restore, declared []state.StateMeta) CheckReport {
	rep := CheckReport{Job: plan.Job, Snapshot: r.Info()}
	decl := map[string]map[string]state.StateMeta{} // operator id → state name → meta
	for _, m := range declared {
		if decl[m.OperatorID] == nil {
			decl[m.OperatorID] = map[string]state.StateMeta{}
		}
		decl[m.OperatorID][m.StateName] = m
	}
	seen := map[string]bool{}
	for _, o := range r.Operators() {
		info, ok := planOperatorByID(plan, o.ID)
		if !ok {
			for _, m := range o.States {
				rep.Items = append(rep.Items, CheckItem{Status: CheckMissing, Operator: o.Name, UID: o.UID, State: m.StateName,
					Scope: m.Scope, Kind: m.Kind, Detail: "the job has no operator with this uid"})
			}
			continue
		}
		seen[o.ID] = true
		if o.MaxParallelism != plan.MaxParallelism && hasKeyed(o.States) {
			rep.Items = append(rep.Items, CheckItem{Status: CheckMaxParallelism, Operator: info.Name, UID: info.UID,
				Detail: fmt.Sprintf("the snapshot has max parallelism %d, the job %d; key groups cannot change (keep --max-parallelism %d)",
					o.MaxParallelism, plan.MaxParallelism, o.MaxParallelism)})
		}
		for _, m := range o.States {
			it := CheckItem{Operator: info.Name, UID: info.UID, State: m.StateName, Scope: m.Scope, Kind: m.Kind}
			d, declared := decl[o.ID][m.StateName]
			switch {
			case m.Scope == state.ScopeKeyed && !info.Keyed:
				it.Status, it.Detail = CheckNotKeyed, "keyed state, but the operator's input is not keyed (KeyBy before it)"
			case !declared && m.Kind == state.KindTimers:
				it.Status, it.Detail = CheckOK, "timers (registered on first use)"
			case !declared:
				it.Status, it.Detail = CheckUndeclared, "the operator does not declare it at open; kept unread"
			default:
				if why := m.Compatible(d); why != "" {
					it.Status, it.Detail = CheckChanged, why
				} else {
					it.Status, it.Detail = CheckOK, fmt.Sprintf("%d entries", m.Entries)
				}
			}
			rep.Items = append(rep.Items, it)
		}
		for _, name := range sortedKeys(decl[o.ID]) {
			if !slices.ContainsFunc(o.States, func(m state.StateMeta) bool { return m.StateName == name }) {
				d := decl[o.ID][name]
				rep.Items = append(rep.Items, CheckItem{Status: CheckNew, Operator: info.Name, UID: info.UID, State: name,
					Scope: d.Scope, Kind: d.Kind, Detail: "not in the snapshot; starts empty"})
			}
		}
	}
	for _, info := range plan.Operators {
		if seen[info.ID] {
			continue
		}
		for _, name := range sortedKeys(decl[info.ID]) {
			d := decl[info.ID][name]
			rep.Items = append(rep.Items, CheckItem{Status: CheckNew, Operator: info.Name, UID: info.UID, State: name,
				Scope: d.Scope, Kind: d.Kind, Detail: "operator not in the snapshot; starts empty"})
		}
	}
	return rep
}

func sortedKeys(m map[string]state.StateMeta) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CheckJob opens job (without restoring, discarding output) to learn the
// states its operators declare, closes it, and compares snapshot r with it.
func CheckJob(job *Job, opts Options, r Restore) (CheckReport, error) {
	opts.Output, opts.Trace, opts.FailAt = nil, false, 0
	e, err := NewExecutor(job, opts, nil)
	if err != nil {
		return CheckReport{}, err
	}
	declared := e.Catalog().States()
	plan := e.plan
	if err := e.Close(); err != nil {
		return CheckReport{}, err
	}
	return CheckRestore(plan, r, declared), nil
}

// String describes the blocking problems in one line, for errors.
func (r CheckReport) String() string {
	var parts []string
	for _, it := range r.Items {
		if it.Status == CheckOK {
			continue
		}
		what := it.Operator
		if it.State != "" {
			what += "." + it.State
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", it.Status, what, it.Detail))
	}
	return strings.Join(parts, "; ")
}
