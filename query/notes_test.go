package query

import (
	"context"
	"slices"
	"testing"
)

// TestRowsNotes: a pinned operator_name, operator_id or state_name that no
// state has is a note of the result, with the nearest name; names that
// exist, unpinned ones and state_meta give none.
func TestRowsNotes(t *testing.T) {
	cat := newTestCatalog()
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"SELECT * FROM keyed_state WHERE operator_name = 'sum'", nil},
		{"SELECT * FROM keyed_state WHERE operator_name = 'Sum'", []string{`no state has operator_name 'Sum'; did you mean "sum"?`}},
		{"SELECT * FROM keyed_state WHERE state_name IN ('total', 'totls')", []string{`no state has state_name 'totls'; did you mean "total"?`}},
		{"SELECT * FROM operator_state WHERE operator_id = 'ffff'", []string{`no state has operator_id 'ffff'`}},
		{"SELECT * FROM keyed_state WHERE operator_name LIKE 'Sum'", nil},            // not pinned
		{"SELECT * FROM keyed_state WHERE operator_name = 'Sum' OR key = 'u1'", nil}, // OR pins nothing
		{"SELECT * FROM state_meta WHERE operator_name = 'Sum'", nil},                // state_meta lists the names
		{"SELECT * FROM timers WHERE operator_name = 'enrich'", nil},
		{"SELECT * FROM keyed_state WHERE kind = 'reducing'", nil},
		{"SELECT * FROM keyed_state WHERE kind = 'Reducing'", []string{`no row has kind 'Reducing' (kind is one of: value, list, map, reducing, aggregating, split_list, union_list, broadcast, timers, unknown); did you mean "reducing"?`}},
		{"SELECT * FROM state_meta WHERE scope = 'keyd'", []string{`no row has scope 'keyd' (scope is one of: keyed, operator); did you mean "keyed"?`}},
		{"SELECT * FROM operator_state WHERE mode = 'unoin'", []string{`no row has mode 'unoin' (mode is one of: split, union, broadcast); did you mean "union"?`}},
		{"SELECT * FROM timers WHERE domain IN ('event', 'proc')", []string{`no row has domain 'proc' (domain is one of: event, processing)`}},
		{"SELECT * FROM keyed_state WHERE key = 'Sum'", nil}, // keys are not known without reading
	} {
		rows, err := RunText(context.Background(), cat, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := rows.Notes(); !slices.Equal(got, c.want) {
			t.Errorf("%s: notes %q, want %q", c.q, got, c.want)
		}
		rows.Close()
	}
}
