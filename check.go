package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"streamdbg/runtime"
)

// printCheck prints a savepoint check as a table, one row per state, and a
// verdict line.
func printCheck(w io.Writer, rep runtime.CheckReport, allowNonRestored bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "savepoint of job %q at record %d (checkpoint %d) against job %q\n\n",
		rep.Snapshot.Job, rep.Snapshot.Position, rep.Snapshot.CheckpointID, rep.Job)
	fmt.Fprintln(tw, "STATUS\tOPERATOR\tUID\tSTATE\tSCOPE\tKIND\tDETAIL")
	for _, it := range rep.Items {
		status := string(it.Status)
		if it.Blocking(allowNonRestored) {
			status = "✗ " + status
		} else if it.Status == runtime.CheckMissing {
			status += " (dropped)"
		}
		scope, kind := "-", "-"
		if it.Scope != 0 {
			scope = it.Scope.String()
		}
		if it.Kind != 0 {
			kind = it.Kind.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", status, it.Operator, it.UID, dash(it.State), scope, kind, it.Detail)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "%d ok, %d missing, %d new, %d changed", rep.Count(runtime.CheckOK), rep.Count(runtime.CheckMissing),
		rep.Count(runtime.CheckNew), rep.Count(runtime.CheckChanged))
	if n := rep.Count(runtime.CheckUndeclared); n > 0 {
		fmt.Fprintf(tw, ", %d undeclared", n)
	}
	fmt.Fprintln(tw)
	if rep.Restorable(allowNonRestored) {
		fmt.Fprintln(tw, "restorable: yes")
	} else {
		fmt.Fprintf(tw, "restorable: no (%s)\n", checkSummary(rep, allowNonRestored))
	}
	return tw.Flush()
}

// checkSummary names the blocking problems and the remedy.
func checkSummary(rep runtime.CheckReport, allowNonRestored bool) string {
	var parts []string
	missing := false
	for _, it := range rep.Problems(allowNonRestored) {
		what := it.Operator
		if it.State != "" {
			what += "." + it.State
		}
		switch it.Status {
		case runtime.CheckMissing:
			parts = append(parts, fmt.Sprintf("missing %s", what))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s", what, it.Detail))
		}
		missing = missing || it.Status == runtime.CheckMissing
	}
	s := strings.Join(parts, ", ")
	if missing {
		s += "; --allow-non-restored-state drops the state of missing operators"
	}
	return s
}
