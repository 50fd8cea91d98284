package session_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// trials is n, or STREAMDBG_TRIALS when set: the property tests run a few
// trials by default and many on request.
func trials(t testing.TB, n int) int {
	if v := os.Getenv("STREAMDBG_TRIALS"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m <= 0 {
			t.Fatalf("STREAMDBG_TRIALS=%q: want a positive number", v)
		}
		return m
	}
	return n
}

// seeded returns a random source whose seed is logged, so a failing trial
// can be rerun with STREAMDBG_SEED.
func seeded(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("STREAMDBG_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("STREAMDBG_SEED=%q: %v", v, err)
		}
	}
	t.Logf("STREAMDBG_SEED=%d", seed)
	return rand.New(rand.NewPCG(seed, 0))
}

func buildJob(t testing.TB, name string) *runtime.Job {
	t.Helper()
	job, err := fixtures.Build(name, fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func openSession(t testing.TB, job *runtime.Job, opts session.Options) *session.Session {
	t.Helper()
	s, err := session.New(job, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stateDump is the job's state independent of parallelism: every keyed
// entry and every operator state element, without subtask, key group or
// list position, sorted.
func stateDump(t testing.TB, s *session.Session) string {
	t.Helper()
	var lines []string
	for _, q := range []string{
		"SELECT operator_name, state_name, key, namespace, user_key, value FROM keyed_state",
		"SELECT operator_name, state_name, mode, value FROM operator_state WHERE mode != 'broadcast'",
	} {
		rows, err := query.RunText(context.Background(), s.Catalog(), q)
		if err != nil {
			t.Fatal(err)
		}
		for row, err := range rows.All() {
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprint(row...))
		}
		rows.Close()
	}
	// Every subtask holds the whole broadcast state: the dump has it once,
	// after checking that all subtasks hold the same.
	rows, err := query.RunText(context.Background(), s.Catalog(), "SELECT subtask, operator_name, state_name, position, value FROM operator_state WHERE mode = 'broadcast'")
	if err != nil {
		t.Fatal(err)
	}
	bySubtask := map[string][]string{}
	for row, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprint(row[1], " ", row[0])
		bySubtask[k] = append(bySubtask[k], fmt.Sprint(row[1:]...))
	}
	rows.Close()
	copies := map[string][]string{}
	for k, ls := range bySubtask {
		slices.Sort(ls)
		op := strings.SplitN(k, " ", 2)[0]
		if c, ok := copies[op]; ok && !slices.Equal(c, ls) {
			t.Fatalf("operator %s: the subtasks' broadcast states differ:\n%v\n%v", op, c, ls)
		}
		copies[op] = ls
	}
	for _, ls := range copies {
		lines = append(lines, ls...)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// runToEnd runs the session to the end of its input.
func runToEnd(t testing.TB, s *session.Session, o session.RunOptions) session.RunResult {
	t.Helper()
	res, err := s.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished {
		t.Fatalf("run stopped at record %d before the end", res.Position)
	}
	return res
}

// reference is the final state and record count of an uninterrupted,
// failure-free run.
type reference struct {
	dump    string
	records int64
	keyed   int // keyed entries, to make sure the dump is not trivially empty
	// outputs are the sink lines, sorted (parallelism changes their order
	// across subtasks, not the lines).
	outputs []string
}

func referenceRun(t testing.TB, name string) reference {
	var out bytes.Buffer
	s := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Output: &out}})
	res := runToEnd(t, s, session.RunOptions{})
	d := stateDump(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return reference{dump: d, records: res.Position, keyed: strings.Count(d, "\n"), outputs: outputLines(out.Bytes())}
}

// outputLines splits sink output into its lines, sorted.
func outputLines(b []byte) []string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	slices.Sort(lines)
	return lines
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: got %q, want %q (%d vs %d lines)", i+1, a, b, len(g), len(w))
		}
	}
	return "equal"
}

// TestSavepointRestoreProperty stops wordcount, orders and the two-input
// jobs enrich (broadcast state) and payments (interval join buffers and
// timers) at random records, writes a savepoint, restores it at a random
// parallelism (1..8, or the same) and runs to the end: the final state is
// the uninterrupted run's, and so are the sink records (those written
// before the savepoint and after the restore together).
func TestSavepointRestoreProperty(t *testing.T) {
	rng := seeded(t)
	jobs := []string{"wordcount", "orders", "enrich", "payments"}
	// The final state of payments is small: its timers have fired and its
	// join buffers are clean; its outputs carry the check.
	minRows := map[string]int{"wordcount": 50, "orders": 50, "enrich": 15, "payments": 3}
	refs := map[string]reference{}
	for _, j := range jobs {
		refs[j] = referenceRun(t, j)
		if refs[j].keyed < minRows[j] || len(refs[j].outputs) < 100 {
			t.Fatalf("%s: reference state has only %d rows, %d outputs", j, refs[j].keyed, len(refs[j].outputs))
		}
	}
	n := trials(t, 24)
	divergences := 0
	for i := range n {
		name := jobs[i%len(jobs)]
		ref := refs[name]
		stop := rng.Int64N(ref.records + 1)
		p1 := 1 + rng.IntN(8)
		p2 := p1
		if i%3 != 0 {
			p2 = 1 + rng.IntN(8)
		}
		var out bytes.Buffer
		s := openSession(t, buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: p1, Output: &out}, CheckpointInterval: 1 + rng.IntN(100)})
		if stop > 0 {
			if _, err := s.Run(context.Background(), session.RunOptions{Steps: stop}); err != nil {
				t.Fatal(err)
			}
		}
		fs := vfs.NewMem()
		if err := s.Savepoint(fs, "/sp"); err != nil {
			t.Fatalf("trial %d: savepoint: %v", i, err)
		}
		s.Close()
		sp, err := savepoint.Open(fs, "/sp")
		if err != nil {
			t.Fatal(err)
		}
		if got := sp.Meta().Position; got != stop {
			t.Fatalf("trial %d: savepoint at record %d, want %d", i, got, stop)
		}
		r, err := session.New(buildJob(t, name), session.Options{Options: runtime.Options{Parallelism: p2, Output: &out}, Restore: runtime.FromSavepoint(sp)})
		if err != nil {
			t.Fatalf("trial %d: restore %s stopped at %d (parallelism %d) at parallelism %d: %v", i, name, stop, p1, p2, err)
		}
		res := runToEnd(t, r, session.RunOptions{})
		if got := stateDump(t, r); got != ref.dump || res.Position != ref.records {
			divergences++
			t.Errorf("trial %d: %s stopped at record %d (parallelism %d), restored at parallelism %d: ended at record %d (want %d); state differs: %s",
				i, name, stop, p1, p2, res.Position, ref.records, firstDiff(got, ref.dump))
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if got := outputLines(out.Bytes()); !slices.Equal(got, ref.outputs) {
			divergences++
			t.Errorf("trial %d: %s stopped at record %d (parallelism %d), restored at parallelism %d: %d sink records, want %d; %s",
				i, name, stop, p1, p2, len(got), len(ref.outputs), firstDiff(strings.Join(got, "\n"), strings.Join(ref.outputs, "\n")))
		}
	}
	t.Logf("%d trials, %d divergences", n, divergences)
}

// TestSavepointMaxParallelismChange: a heap savepoint restores only with
// the max parallelism it was taken with.
func TestSavepointMaxParallelismChange(t *testing.T) {
	for _, name := range []string{"wordcount", "orders"} {
		s := openSession(t, buildJob(t, name), session.Options{})
		if _, err := s.Run(context.Background(), session.RunOptions{Steps: 20}); err != nil {
			t.Fatal(err)
		}
		fs := vfs.NewMem()
		if err := s.Savepoint(fs, "/sp"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		sp, err := savepoint.Open(fs, "/sp")
		if err != nil {
			t.Fatal(err)
		}
		keyedOp := map[string]string{"wordcount": "count", "orders": "sum"}[name]
		for _, maxP := range []int{64, 256} {
			_, err = session.New(buildJob(t, name), session.Options{Options: runtime.Options{MaxParallelism: maxP}, Restore: runtime.FromSavepoint(sp)})
			want := fmt.Sprintf("cannot restore operator %q: the snapshot has max parallelism 128, the job %d; key groups cannot change (keep --max-parallelism 128)", keyedOp, maxP)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: restore at max parallelism %d: error %v, want %q", name, maxP, err, want)
			}
			// Even with --allow-non-restored-state: the operator is there.
			_, err = session.New(buildJob(t, name), session.Options{Options: runtime.Options{MaxParallelism: maxP, AllowNonRestoredState: true}, Restore: runtime.FromSavepoint(sp)})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: restore at max parallelism %d with AllowNonRestoredState: error %v, want %q", name, maxP, err, want)
			}
		}
	}
}

// renamedCounter is wordcount's count, under another uid.
type renamedCounter struct{ count *state.ValueState[int64] }

func (c *renamedCounter) Open(ctx runtime.RuntimeContext) (err error) {
	c.count, err = state.Value("count", state.Int64).Bind(ctx)
	return err
}
func (c *renamedCounter) Close() error { return nil }
func (c *renamedCounter) Map(w string) (string, error) {
	n, _, err := c.count.Value()
	if err != nil {
		return "", err
	}
	return w, c.count.Update(n + 1)
}

// wordCountRenamed is wordcount whose count operator has uid "count-v2":
// a savepoint of wordcount has state for an operator it lacks.
func wordCountRenamed(t testing.TB) *runtime.Job {
	in, err := fixtures.Embedded("words.txt")
	if err != nil {
		t.Fatal(err)
	}
	job := runtime.NewJob("wordcount")
	job.Parallelism = 2
	lines := runtime.FromSource(job, "Source: lines", fixtures.NewLineSource(fixtures.SourceConfig{Input: in}, fixtures.ParseText),
		runtime.WatermarkStrategy[string]{}, runtime.UID("lines"), runtime.Parallelism(1))
	words := runtime.FlatMap(lines, "tokenize", func(line string, out runtime.Collector[string]) error {
		fixtures.Tokenize(line, out.Collect)
		return nil
	}, runtime.UID("tokenize"), runtime.Parallelism(1))
	byWord := runtime.KeyBy(words, "word", func(w string) string { return w })
	counts := runtime.RichMap(byWord, "count", &renamedCounter{}, runtime.UID("count-v2"))
	runtime.JSONSink(counts, "out", runtime.UID("out"))
	if err := job.Err(); err != nil {
		t.Fatal(err)
	}
	return job
}

// TestAllowNonRestoredState: state of an operator the job lacks is refused
// with an error naming it, and dropped with AllowNonRestoredState.
func TestAllowNonRestoredState(t *testing.T) {
	const stop = 50
	s := openSession(t, buildJob(t, "wordcount"), session.Options{})
	if _, err := s.Run(context.Background(), session.RunOptions{Steps: stop}); err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMem()
	if err := s.Savepoint(fs, "/sp"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	sp, err := savepoint.Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	_, err = session.New(wordCountRenamed(t), session.Options{Restore: runtime.FromSavepoint(sp)})
	want := `the snapshot has state for operators the job does not have: count (uid "count", 1 states); restore with --allow-non-restored-state to drop it`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("restore error %v, want %q", err, want)
	}
	r, err := session.New(wordCountRenamed(t), session.Options{Options: runtime.Options{AllowNonRestoredState: true}, Restore: runtime.FromSavepoint(sp)})
	if err != nil {
		t.Fatalf("restore with AllowNonRestoredState: %v", err)
	}
	defer r.Close()
	runToEnd(t, r, session.RunOptions{})
	// The source resumed after record stop; count-v2 started empty, so it
	// counts the words of the lines after the savepoint only.
	in, err := fixtures.Embedded("words.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Counted with a regexp of the tokenizing rule, not the job's Tokenize.
	want2 := map[string]int64{}
	word := regexp.MustCompile(`[\p{L}\p{Nd}]+`)
	for _, l := range in.Lines[stop:] {
		for _, w := range word.FindAllString(strings.ToLower(string(l)), -1) {
			want2[w]++
		}
	}
	rows, err := r.Query(context.Background(), "SELECT key, value FROM keyed_state WHERE operator_name = 'count'")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for row, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		got[row[0].(string)] = row[1].(int64)
	}
	if len(got) != len(want2) {
		t.Fatalf("count-v2 has %d keys, want %d", len(got), len(want2))
	}
	for w, n := range want2 {
		if got[w] != n {
			t.Errorf("count-v2[%q] = %d, want %d", w, got[w], n)
		}
	}
}
