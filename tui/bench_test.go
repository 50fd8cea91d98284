package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
	in.WriteString("w0000001 w0000002\n")
	input, err := fixtures.Parse("bench.txt", []byte(in.String()))
	if err != nil {
		b.Fatal(err)
	}
	// Feed the keys headless (no trace), keep them in a savepoint, and
	// debug a traced session restored from it.
	feed := func(restore runtime.Restore, trace bool) *session.Session {
		job, err := fixtures.Build("wordcount", fixtures.Config{Input: input})
		if err != nil {
			b.Fatal(err)
		}
		s, err := session.New(job, session.Options{Options: runtime.Options{Trace: trace, Parallelism: 1}, Restore: restore, CheckpointInterval: 1 << 30})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	dir := filepath.Join(b.TempDir(), "sp")
	s := feed(nil, false)
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
	s = feed(runtime.FromSavepoint(sp), true)
	if _, err := s.Execute(context.Background(), "next"); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkRender is one View() of the debug screen at 120×40 with 10k and
// 1M keys in the selected state: the time must not depend on the size
// (budget: 5 ms a frame). BenchmarkRenderScroll adds a page down (a read
// of one page and at most one key group) before each frame.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			s := benchSession(b, n)
			m := New(s, Options{})
			m.SetSize(120, 40)
			if got := m.snap.subtasks[m.plan.sel].operator.Name; got != "count" {
				b.Fatalf("selected %s", got)
			}
			if len(m.state.pager.page) == 0 {
				b.Fatal("empty state page")
			}
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
