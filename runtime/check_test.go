package runtime_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// wordcountSavepoint runs wordcount for n records and writes a savepoint.
func wordcountSavepoint(t *testing.T, n int) runtime.Restore {
	t.Helper()
	job, err := fixtures.Build("wordcount", fixtures.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.NewExecutor(job, runtime.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range n {
		if err := e.Next(); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := e.SavepointSnapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMem()
	if err := savepoint.Write(fs, "/sp", snap); err != nil {
		t.Fatal(err)
	}
	sp, err := savepoint.Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	return runtime.FromSavepoint(sp)
}

// stringCounter is wordcount's count with its ValueState declared as string.
type stringCounter struct{ count *state.ValueState[string] }

func (c *stringCounter) Open(ctx runtime.RuntimeContext) (err error) {
	c.count, err = state.Value("count", state.String).Bind(ctx)
	return err
}
func (c *stringCounter) Close() error                 { return nil }
func (c *stringCounter) Map(w string) (string, error) { return w, c.count.Update(w) }

// changedWordCount is wordcount with count's value type changed and a new
// operator "extra" with state of its own.
func changedWordCount(t *testing.T) *runtime.Job {
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
	counts := runtime.RichMap(byWord, "count", &stringCounter{}, runtime.UID("count"))
	again := runtime.KeyBy(counts, "word", func(w string) string { return w })
	extra := runtime.RichMap(again, "extra", &stringCounter{}, runtime.UID("extra"))
	runtime.JSONSink(extra, "out", runtime.UID("out"))
	if err := job.Err(); err != nil {
		t.Fatal(err)
	}
	return job
}

func statuses(rep runtime.CheckReport) string {
	var b strings.Builder
	for _, it := range rep.Items {
		b.WriteString(string(it.Status) + " " + it.Operator + "." + it.State + "\n")
	}
	return b.String()
}

func TestCheckRestore(t *testing.T) {
	sp := wordcountSavepoint(t, 40)
	build := func(name string) func(t *testing.T) *runtime.Job {
		return func(t *testing.T) *runtime.Job {
			j, err := fixtures.Build(name, fixtures.Config{})
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
	}
	for _, tc := range []struct {
		name           string
		job            func(t *testing.T) *runtime.Job
		maxParallelism int
		want           string
		restorable     bool // without --allow-non-restored-state
		allowed        bool // with it
	}{
		{name: "same job", job: build("wordcount"), restorable: true, allowed: true,
			want: "ok count.count\nok Source: lines.offsets\n"},
		{name: "other job", job: build("orders"), restorable: false, allowed: true,
			want: "missing count.count\nmissing Source: lines.offsets\n" +
				"new Source: orders.offsets\nnew sum.by_product\nnew sum.total\n"},
		{name: "type changed and new operator", job: changedWordCount, restorable: false, allowed: false,
			want: "changed count.count\nok Source: lines.offsets\nnew extra.count\n"},
		{name: "max parallelism", job: build("wordcount"), maxParallelism: 64, restorable: false, allowed: false,
			want: "max parallelism count.\nok count.count\nok Source: lines.offsets\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := runtime.CheckJob(tc.job(t), runtime.Options{MaxParallelism: tc.maxParallelism}, sp)
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(rep); got != tc.want {
				t.Errorf("items:\n%s\nwant:\n%s", got, tc.want)
			}
			if got := rep.Restorable(false); got != tc.restorable {
				t.Errorf("Restorable(false) = %v, want %v (%s)", got, tc.restorable, rep)
			}
			if got := rep.Restorable(true); got != tc.allowed {
				t.Errorf("Restorable(true) = %v, want %v (%s)", got, tc.allowed, rep)
			}
			// The check agrees with the restore itself.
			_, err = runtime.NewExecutor(tc.job(t), runtime.Options{MaxParallelism: tc.maxParallelism}, sp)
			if (err == nil) != tc.restorable {
				t.Errorf("restore error %v, check said restorable=%v", err, tc.restorable)
			}
			e, err := runtime.NewExecutor(tc.job(t), runtime.Options{MaxParallelism: tc.maxParallelism, AllowNonRestoredState: true}, sp)
			if (err == nil) != tc.allowed {
				t.Errorf("restore with AllowNonRestoredState: error %v, check said restorable=%v", err, tc.allowed)
			}
			if e != nil {
				e.Close()
			}
		})
	}
	rep, _ := runtime.CheckJob(changedWordCount(t), runtime.Options{}, sp)
	if p := rep.Problems(false); len(p) != 1 || !strings.Contains(p[0].Detail, "value type changed from int64 to string") {
		t.Errorf("problems %+v, want the value type change of count.count", p)
	}
}
