package querytest_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"

	"streamdbg/query"
	"streamdbg/state"
)

// failingState fails the keyed rows of one state after `after` of them,
// and the timers and operator state of the same operator not at all: a
// state whose bytes break partway (a corrupt block in one key group).
type failingState struct {
	state.Catalog
	opID, name string
	after      int
}

var errBroken = errors.New("block checksum mismatch")

func (c failingState) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	return func(yield func(state.KeyedRow, error) bool) {
		n := 0
		for r, err := range c.Catalog.Keyed(scan) {
			if err == nil && r.OperatorID == c.opID && r.StateName == c.name {
				if n == c.after {
					yield(state.KeyedRow{}, errBroken)
					return
				}
				n++
			}
			if !yield(r, err) {
				return
			}
		}
	}
}

// TestSkipUnreadableMidScan: a state that fails while it is read (not
// one the catalog lists as unreadable) fails the query naming it, unless
// SkipUnreadable: then the other states are all read, the failure is
// reported with the number of rows of the state read before it, and those
// rows are the only ones of the state in the result. (Before, the query
// failed under SkipUnreadable too: a real Flink RocksDB state with a
// corrupt block in one subtask's files hid every other state.)
func TestSkipUnreadableMidScan(t *testing.T) {
	o := newOrders(t)
	var opID string
	for _, m := range o.sp.States() {
		if m.StateName == "by_product" {
			opID = m.OperatorID
		}
	}
	if opID == "" {
		t.Fatal("no by_product state")
	}
	ctx := context.Background()
	count := func(cat query.Catalog, opts query.Options, text string) (map[string]int, error) {
		q, err := query.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := query.RunWith(ctx, cat, q, opts)
		if err != nil {
			return nil, err
		}
		got := map[string]int{}
		for r, err := range rows.All() {
			if err != nil {
				return got, err
			}
			got[r[0].(string)]++
		}
		return got, nil
	}
	const text = "SELECT state_name FROM keyed_state"
	want, err := count(o.sp, query.Options{}, text)
	if err != nil {
		t.Fatal(err)
	}
	if want["by_product"] < 4 || want["total"] < 4 {
		t.Fatalf("the orders savepoint holds %v", want)
	}
	broken := failingState{Catalog: o.sp, opID: opID, name: "by_product", after: 2}

	_, err = count(broken, query.Options{}, text)
	var se *query.ScanError
	if !errors.Is(err, errBroken) || !errors.As(err, &se) || se.Label != "all keyed states" {
		t.Fatalf("without SkipUnreadable: %v, want the scan's failure", err)
	}

	for _, text := range []string{text, "SELECT state_name FROM keyed_state WHERE value IS NOT NULL", "SELECT state_name FROM keyed_state ORDER BY key"} {
		var reports []string
		opts := query.Options{SkipUnreadable: true, Partial: func(label string, read int, err error) {
			if !errors.Is(err, errBroken) {
				t.Errorf("%s: reported %v", text, err)
			}
			reports = append(reports, label+":"+strings.Repeat("r", read))
		}}
		got, err := count(broken, opts, text)
		if err != nil {
			t.Fatalf("%s: with SkipUnreadable: %v", text, err)
		}
		if got["total"] != want["total"] || got["by_product"] != 2 {
			t.Errorf("%s: with SkipUnreadable read %v, want total %d and the 2 by_product rows read before the failure", text, got, want["total"])
		}
		if !slices.Equal(reports, []string{"sum.by_product:rr"}) {
			t.Errorf("%s: reported %q, want the state once, with 2 rows read", text, reports)
		}
	}
}
