package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"

	"streamdbg/query"
	"streamdbg/savepoint/diff"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
)

type diffCmd struct {
	A              string `arg:"" help:"The old savepoint directory (ours or Apache Flink's)."`
	B              string `arg:"" help:"The new savepoint directory (ours or Apache Flink's)."`
	Filter         string `arg:"" optional:"" help:"Keep the rows for which this expression holds, e.g. \"key = 'flink'\" (names: change, operator_name, state_name, key, namespace, user_key, old_value, new_value, operator_id, key_group, kind). Pinned keys read only their key groups."`
	Format         string `help:"Output: table, json or csv." enum:"table,json,csv" default:"table"`
	SkipUnreadable bool   `help:"Exit 0 even when some state could not be read (it is still listed as a gap)."`
	Plan           string `help:"Flink SQL compiled plan (COMPILE PLAN JSON) naming the operators of the Apache Flink savepoints compared (default: plan.json beside each Flink savepoint directory, if present)."`
}

func (c *diffCmd) Run(e *env) error {
	a, err := c.open(e, c.A)
	if err != nil {
		return err
	}
	defer closeCatalog(a)
	b, err := c.open(e, c.B)
	if err != nil {
		return err
	}
	defer closeCatalog(b)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return printDiff(ctx, e, a, b, diff.Options{Filter: c.Filter, NameA: c.A, NameB: c.B}, c.Format, c.SkipUnreadable)
}

// open opens one side; --plan names the operators of a Flink side only, so
// that ours can be compared with a Flink SQL job's savepoint.
func (c *diffCmd) open(e *env, dir string) (state.Catalog, error) {
	if !flink.IsFlink(dir) {
		return openCatalog(dir)
	}
	return openCatalogPlan(e, dir, c.Plan, nil)
}

// printDiff writes the rows of a diff in a query format, then one summary
// line per state: on stdout after a table, on stderr after json or csv (so
// that the data stays one JSON object or CSV record per line).
func printDiff(ctx context.Context, e *env, a, b state.Catalog, opts diff.Options, format string, skipUnreadable bool) error {
	var res *diff.Result
	var runErr error
	rows := query.NewRows(diff.Columns, func(yield func([]any) bool) error {
		res, runErr = diff.Run(ctx, a, b, opts, func(r diff.Row) bool { return yield(r.Values()) })
		return runErr
	})
	if err := query.Format(e.stdout, rows, format); err != nil {
		var qe *query.Error
		if errors.As(err, &qe) {
			return usageError{fmt.Errorf("filter: %w", err)}
		}
		return err
	}
	if res == nil {
		return runErr
	}
	var w io.Writer = e.stdout
	if format != "table" {
		w = e.stderr
	}
	for _, s := range nameSharers(res.Summaries) {
		fmt.Fprintln(w, "#", s.String())
	}
	for _, g := range res.Gaps {
		fmt.Fprintln(w, "# NOT COMPARED:", g)
	}
	if err := res.Err(); err != nil && !skipUnreadable {
		return err
	}
	return nil
}

func closeCatalog(c state.Catalog) {
	if closer, ok := c.(io.Closer); ok {
		closer.Close()
	}
}

// nameSharers names the operators of summaries by name and id where
// several share a name (Flink's "Flat Map"), so that each line says which
// operator it counts.
func nameSharers(sums []diff.Summary) []diff.Summary {
	ids := map[string]map[string]bool{}
	for _, s := range sums {
		if ids[s.OperatorName] == nil {
			ids[s.OperatorName] = map[string]bool{}
		}
		ids[s.OperatorName][s.OperatorID] = true
	}
	out := slices.Clone(sums)
	for i, s := range out {
		if len(ids[s.OperatorName]) > 1 && s.OperatorName != s.OperatorID {
			out[i].OperatorName = fmt.Sprintf("%s (%s)", s.OperatorName, s.OperatorID)
		}
	}
	return out
}
