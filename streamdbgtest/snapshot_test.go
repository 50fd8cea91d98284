package streamdbgtest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rt "streamdbg/runtime"
	"streamdbg/streamdbgtest"
)

// TestSnapshotRestoreParallelism: state snapshotted at one parallelism
// restores at others, with every key's state in the subtask that holds
// its key group now, and the job counts on from there.
func TestSnapshotRestoreParallelism(t *testing.T) {
	words := make([]string, 40)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	d := streamdbgtest.New(t, wordJob(), streamdbgtest.Parallelism(1))
	in := streamdbgtest.Input[string](d, "lines")
	for i, w := range words {
		for range i%3 + 1 {
			in.Push(w)
		}
	}
	snap := d.Snapshot()
	if snap.Position() != 79 { // 14 words once, 13 twice, 13 three times
		t.Fatalf("snapshot at record %d, want 79", snap.Position())
	}
	if got := subtasks(d); !slices.Equal(got, []int64{0}) {
		t.Fatalf("parallelism 1 holds state in subtasks %v", got)
	}
	for _, p := range []int{3, 2, 1} {
		t.Run(fmt.Sprint("parallelism ", p), func(t *testing.T) {
			r := streamdbgtest.Restore(t, wordJob(), snap, p)
			if p > 1 {
				if got := subtasks(r); len(got) != p {
					t.Fatalf("restored at parallelism %d: state in subtasks %v", p, got)
				}
			}
			count := streamdbgtest.ValueState[int64](r, "count", "count")
			for i, w := range words {
				if n, ok := count.Get(w); !ok || n != int64(i%3+1) {
					t.Fatalf("count of %s after restore: %d %v, want %d", w, n, ok, i%3+1)
				}
			}
			rin := streamdbgtest.Input[string](r, "lines")
			out := streamdbgtest.Output[Count](r, "out")
			rin.Push("w05 w06 new")
			out.ExpectAnyOrder(Count{"w05", 4}, Count{"w06", 2}, Count{"new", 1})
			// A snapshot of the restored job restores again.
			again := streamdbgtest.Restore(t, wordJob(), r.Snapshot(), 2)
			if n, _ := streamdbgtest.ValueState[int64](again, "count", "count").Get("w05"); n != 4 {
				t.Fatalf("w05 after a second restore: %d, want 4", n)
			}
		})
	}
}

// subtasks lists the subtasks that hold count's state.
func subtasks(d *streamdbgtest.Driver) []int64 {
	var out []int64
	for _, r := range d.Query(`SELECT subtask FROM "count"."count" GROUP BY subtask ORDER BY subtask`) {
		out = append(out, r["subtask"].(int64))
	}
	return out
}

// TestRestoreKeepsMaxParallelism: a snapshot taken with MaxParallelism(4)
// restores without repeating it, its keys in their key groups, as Flink
// rescales a max parallelism the job does not set to the restored
// state's (before: "the snapshot has max parallelism 4, the job 128").
func TestRestoreKeepsMaxParallelism(t *testing.T) {
	d := streamdbgtest.New(t, wordJob(), streamdbgtest.MaxParallelism(4), streamdbgtest.Parallelism(2))
	streamdbgtest.Input[string](d, "lines").PushAll("a", "b", "a", "c")
	r := streamdbgtest.Restore(t, wordJob(), d.Snapshot(), 3)
	if n, _ := streamdbgtest.ValueState[int64](r, "count", "count").Get("a"); n != 2 {
		t.Fatalf("a after restore: %d, want 2", n)
	}
	rows := r.Query(`SELECT max(key_group) AS kg FROM "count"."count"`)
	if kg, _ := rows[0]["kg"].(int64); kg >= 4 {
		t.Fatalf("key group %d after restore, want < 4", kg)
	}
	streamdbgtest.Input[string](r, "lines").Push("a")
	if n, _ := streamdbgtest.ValueState[int64](r, "count", "count").Get("a"); n != 3 {
		t.Fatalf("a counted on after restore: %d, want 3", n)
	}
}

// TestRestoreOtherMaxParallelism: a restore with another max parallelism
// than the snapshot's is refused, naming the driver's option that keeps
// the snapshot's (before: the CLI's --max-parallelism).
func TestRestoreOtherMaxParallelism(t *testing.T) {
	d := streamdbgtest.New(t, wordJob(), streamdbgtest.MaxParallelism(4))
	streamdbgtest.Input[string](d, "lines").PushAll("a", "b")
	snap := d.Snapshot()
	msg := fatal(t, func(ft testing.TB) {
		streamdbgtest.Restore(ft, wordJob(), snap, 1, streamdbgtest.MaxParallelism(8)).Run()
	})
	want := `streamdbgtest: job "words" cannot start: runtime: cannot restore operator "count": the snapshot has max parallelism 4, the job 8; ` +
		`key groups cannot change (restore with streamdbgtest.MaxParallelism(4))`
	if msg != want {
		t.Fatalf("restore with another max parallelism:\n got %q\nwant %q", msg, want)
	}
}

// TestRestoreAllowNonRestoredState: a snapshot with state of an operator
// the job no longer has is refused, naming the option that drops it, and
// restores with AllowNonRestoredState, the rest of its state kept (before:
// no option for it; the refusal named the CLI flag, which a test cannot
// pass).
func TestRestoreAllowNonRestoredState(t *testing.T) {
	d := streamdbgtest.New(t, wordJob())
	streamdbgtest.Input[string](d, "lines").PushAll("a", "a")
	snap := d.Snapshot()

	fewer := func() *rt.Job { // wordJob without its counter: count's state has no operator
		job := rt.NewJob("words")
		lines := rt.FromSlice(job, "lines", []string{"x"}, rt.WatermarkStrategy[string]{}, rt.UID("lines"))
		rt.JSONSink(lines, "out", rt.UID("out"))
		return job
	}
	msg := fatal(t, func(ft testing.TB) { streamdbgtest.Restore(ft, fewer(), snap, 1).Run() })
	if !strings.Contains(msg, "operators the job does not have: count") ||
		!strings.Contains(msg, "; pass streamdbgtest.AllowNonRestoredState() to Restore to drop it") || strings.Contains(msg, "--") {
		t.Fatalf("restore without the option: %q", msg)
	}
	r := streamdbgtest.Restore(t, fewer(), snap, 1, streamdbgtest.AllowNonRestoredState())
	out := streamdbgtest.Output[string](r, "out")
	r.Run()
	if got := out.ReadAll(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("output %v, want x", got)
	}
	if rows := r.Query("SELECT count(*) AS n FROM keyed_state"); rows[0]["n"] != int64(0) {
		t.Fatalf("keyed state after dropping count's: %v", rows)
	}
}
