package tui

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
)

// benchSession is wordcount at parallelism 1 fed n distinct words, so the
// selected state (count[0]) holds n keys; then one traced step.
func benchSession(b *testing.B, n int) *session.Session {
	b.Helper()
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "w%07d", i)
		if i%1000 == 999 {
			in.WriteByte('\n')
		} else {
			in.WriteByte(' ')
		}
	}
	// The lines after the keys: the same small step for every stop of
	// BenchmarkRender's stop sub-benchmarks, whatever the state size.
	for range renderExtraLines {
		in.WriteString("w0000001 w0000002\n")
	}
	input, err := fixtures.Parse("bench.txt", []byte(in.String()))
	if err != nil {
		b.Fatal(err)
	}
	// Feed the keys headless (no trace), keep them in a savepoint, and
	// debug a traced session restored from it.
	feed := func(restore runtime.Restore, trace bool, interval int) *session.Session {
		job, err := fixtures.Build("wordcount", fixtures.Config{Input: input})
		if err != nil {
			b.Fatal(err)
		}
		s, err := session.New(job, session.Options{Options: runtime.Options{Trace: trace, Parallelism: 1}, Restore: restore, CheckpointInterval: interval})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	dir := filepath.Join(b.TempDir(), "sp")
	s := feed(nil, false, 1<<30)
	if _, err := s.Run(context.Background(), session.RunOptions{Steps: int64((n + 999) / 1000)}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Execute(context.Background(), "savepoint "+dir); err != nil {
		b.Fatal(err)
	}
	sp, err := savepoint.Open(vfs.Default, dir)
	if err != nil {
		b.Fatal(err)
	}
	s = feed(runtime.FromSavepoint(sp), true, 0) // the default checkpoints
	if _, err := s.Execute(context.Background(), "next"); err != nil {
		b.Fatal(err)
	}
	return s
}

// renderExtraLines bounds the stops BenchmarkRender's stop sub-benchmarks
// can take.
const renderExtraLines = 20_000

// BenchmarkRender measures one TUI stop at 120×40 with 10k and 1M keys in
// the selected state. stop is the whole per-stop cost, what a user waits
// for after pressing n: the session's next (one line of two words, the
// same at both sizes, traced, with the default checkpoints), the model
// taking the result (the snapshot of plan, state page, output and watches,
// the pager's load of the visible rows) and View(). view is View() alone
// on an unchanged model. Budget (DESIGN 12): under 5 ms a stop,
// independent of the state size.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		m := (*Model)(nil)
		setup := func(b *testing.B) *Model {
			if m == nil {
				s := benchSession(b, n)
				m = New(s, Options{})
				m.SetSize(120, 40)
				if op, _ := m.state.operator(); op.Name != "count" {
					b.Fatalf("selected %s", op.Name)
				}
				if len(m.state.page()) == 0 {
					b.Fatal("empty state page")
				}
			}
			return m
		}
		b.Run(fmt.Sprintf("stop/keys=%d", n), func(b *testing.B) {
			m := setup(b)
			if b.N > renderExtraLines/2 {
				b.Skipf("%d stops: more than the input holds", b.N)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, cmd := m.Update(keyMsg("n"))
				if cmd == nil {
					b.Fatal("n started nothing")
				}
				// The batch holds the command and a progress tick: run the
				// command, not the timer.
				batch, ok := cmd().(tea.BatchMsg)
				if !ok || len(batch) == 0 {
					b.Fatal("n did not start a background command")
				}
				d, ok := batch[0]().(doneMsg)
				if !ok || d.err != nil || d.res.Stop == nil || d.res.Stop.Reason != session.ReasonNext {
					b.Fatalf("next: %+v", d)
				}
				m.Update(d)
				_ = m.View()
			}
		})
		b.Run(fmt.Sprintf("view/keys=%d", n), func(b *testing.B) {
			m := setup(b)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

func BenchmarkRenderScroll(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			s := benchSession(b, n)
			m := New(s, Options{})
			m.SetSize(120, 40)
			b.ReportAllocs()
			for b.Loop() {
				m.state.Update(keyMsg("pgdown"))
				_ = m.View()
			}
		})
	}
}

// BenchmarkSortRows sorts 100k state rows (string keys, as wordcount's, in
// a scrambled order; the sort limit) by key, as S does. sortRows makes each
// row's sort key once; per-comparison is the same stable sort with
// compareValues and the tie-break cells joined at every comparison, as S
// sorted before. Both sort the same rows into the same order (checked);
// x-per-comparison is per-comparison's time over sortRows'.
func BenchmarkSortRows(b *testing.B) {
	rows := make([]pageRow, sortLimit)
	for i := range rows {
		k := fmt.Sprintf("w%d", (i*7919)%sortLimit)
		rows[i] = pageRow{cells: []string{"count", k, "·", "1"}, row: session.Row{Key: k, Value: int64(i % 17)}}
	}
	keyOf := func(r pageRow) string { return strings.Join(r.cells[:min(4, len(r.cells))], "\x00") }
	perComparison := func() []pageRow {
		out := slices.Clone(rows)
		slices.SortStableFunc(out, func(a, b pageRow) int {
			return cmp.Or(compareValues(a.row.Key, b.row.Key), strings.Compare(keyOf(a), keyOf(b)))
		})
		return out
	}
	if got, want := sortRows(rows, sortKey), perComparison(); !slices.EqualFunc(got, want, func(a, b pageRow) bool { return a.cells[1] == b.cells[1] }) {
		b.Fatal("sortRows and the per-comparison sort disagree")
	}
	var once, each time.Duration
	for b.Loop() {
		t0 := time.Now()
		sortRows(rows, sortKey)
		t1 := time.Now()
		perComparison()
		once, each = once+t1.Sub(t0), each+time.Since(t1)
	}
	b.ReportMetric(once.Seconds()*1e3/float64(b.N), "sortRows-ms/op")
	b.ReportMetric(each.Seconds()*1e3/float64(b.N), "per-comparison-ms/op")
	b.ReportMetric(float64(each)/float64(once), "x-per-comparison")
}

// BenchmarkFilter is f over a state of 100k keys: filter reads every row
// of the selected subtask's table through the pane's row source and
// evaluates `value > 1` on each (as the pane's count of a filtered table
// does); scan reads the same rows through the same source with no filter.
// filter/scan is what evaluating the filter adds to reading the rows;
// set-filter-ms is the whole f: compiling it, counting the rows it keeps
// and loading the first page.
func BenchmarkFilter(b *testing.B) {
	s := benchSession(b, 100_000)
	m := New(s, Options{NoColor: true})
	m.SetSize(120, 40)
	cond, err := compileFilter("value > 1")
	if err != nil {
		b.Fatal(err)
	}
	count := func(src rowSource) (n int) {
		for _, err := range src.rows(src.first(), src.last()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		return n
	}
	plain := m.state.source()
	filtered := m.state.source()
	filtered.(*keyedSource).cond = cond
	all, kept := count(plain), count(filtered)
	if all < 100_000 || kept == 0 || kept >= all {
		b.Fatalf("%d rows, %d kept by the filter", all, kept)
	}
	var scan, filter, set time.Duration
	for b.Loop() {
		t0 := time.Now()
		count(plain)
		t1 := time.Now()
		count(filtered)
		t2 := time.Now()
		if err := m.state.setFilter("value > 1"); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if err := m.state.setFilter(""); err != nil {
			b.Fatal(err)
		}
		scan, filter, set = scan+t1.Sub(t0), filter+t2.Sub(t1), set+t3.Sub(t2)
	}
	b.ReportMetric(float64(filter)/float64(scan), "filter/scan")
	b.ReportMetric(set.Seconds()*1e3/float64(b.N), "set-filter-ms")
	b.ReportMetric(scan.Seconds()*1e3/float64(b.N), "scan-ms")
}
