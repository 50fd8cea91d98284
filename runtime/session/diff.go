package session

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/query"
	"streamdbg/savepoint"
	"streamdbg/savepoint/diff"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
)

// OpenCatalog opens a savepoint directory, ours or Apache Flink's, as a
// catalog (for views that browse or compare savepoints); a path to its
// _metadata file names it too (SavepointDir).
func OpenCatalog(dir string) (state.Catalog, error) {
	dir = SavepointDir(dir)
	if flink.IsFlink(dir) {
		return flink.Open(dir)
	}
	sp, err := savepoint.Open(vfs.Default, dir)
	if err != nil {
		return nil, withMetadataHint(dir, err)
	}
	return sp, nil
}

// DiffColumns are the columns of DiffRows.
var DiffColumns = diff.Columns

// DiffRows compares catalog a (old) with b (new) for display: the rows that
// differ (columns DiffColumns), then per state one row with change
// "summary" (old_value: the counts of changes, new_value: the entries
// unchanged) and one row "not compared" per gap, so that what could not be
// read is in view with the rest. filter is diff's filter expression.
func DiffRows(ctx context.Context, a, b state.Catalog, nameA, nameB, filter string) *query.Rows {
	return query.NewRows(diff.Columns, func(yield func([]any) bool) error {
		stopped := false
		res, err := diff.Run(ctx, a, b, diff.Options{Filter: filter, NameA: nameA, NameB: nameB}, func(r diff.Row) bool {
			if !yield(r.Values()) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil || stopped {
			return err
		}
		for _, s := range res.Summaries {
			counts := fmt.Sprintf("%d changed, %d added, %d removed", s.Changed, s.Added, s.Removed)
			if s.Note != "" {
				counts += " (" + s.Note + ")"
			}
			if !yield([]any{"summary", s.OperatorName, s.StateName, nil, nil, nil, counts, fmt.Sprintf("%d unchanged", s.Unchanged)}) {
				return nil
			}
		}
		for _, g := range res.Gaps {
			if !yield([]any{"not compared", nil, nil, nil, nil, nil, g, nil}) {
				return nil
			}
		}
		return nil
	})
}

// DiffSavepoint compares the savepoint in dir (old) with the live state
// (new): what the job changed since the savepoint, or what a restore of it
// would undo.
func (s *Session) DiffSavepoint(ctx context.Context, dir, filter string) (*query.Rows, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	sp, err := OpenCatalog(dir)
	if err != nil {
		return nil, err
	}
	return DiffRows(ctx, sp, s.Catalog(), dir, "live", filter), nil
}
