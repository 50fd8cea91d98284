package streamdbgtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// Option configures a Driver.
type Option func(*config)

type config struct {
	parallelism    int
	maxParallelism int
	backend        string
	trace          bool
	start          time.Time
	maxUnread      int
	allowDropped   bool
}

// Parallelism sets the job's default parallelism (runtime.Options).
func Parallelism(n int) Option { return func(c *config) { c.parallelism = n } }

// MaxParallelism sets the number of key groups.
func MaxParallelism(n int) Option { return func(c *config) { c.maxParallelism = n } }

// Backend chooses the keyed state backend ("heap" or "pebble"; the job's
// own choice wins, as in Flink).
func Backend(name string) Option { return func(c *config) { c.backend = name } }

// Trace turns the debugger's trace of steps on (bounded, as everywhere):
// Session().Last() then lists what each push did. Outputs and state
// readers never need it.
func Trace() Option { return func(c *config) { c.trace = true } }

// StartProcessingTime sets where the virtual processing clock starts
// (default: the Unix epoch, as Flink's harnesses start at 0).
func StartProcessingTime(t time.Time) Option { return func(c *config) { c.start = t } }

// MaxUnread bounds the records each output keeps until the test reads
// them (default 1,000,000): a test that never reads an output fails
// instead of growing without bound.
func MaxUnread(n int) Option { return func(c *config) { c.maxUnread = n } }

// AllowNonRestoredState lets Restore drop the snapshot's state of
// operators the job no longer has instead of refusing it, as `streamdbg
// run --allow-non-restored-state` (Flink's --allowNonRestoredState).
func AllowNonRestoredState() Option { return func(c *config) { c.allowDropped = true } }

// Driver runs one job under a test.
type Driver struct {
	t    testing.TB
	job  *runtime.Job
	cfg  config
	sess *session.Session
	// restore, when set, is where the job starts (Restore).
	restore runtime.Restore

	inputs  map[string]input // by source name
	order   []string         // inputs in the order the test took them over
	sched   schedule
	outputs map[outputKey]*outBuffer
	// stepped: the job read or processed something (a push, Run, a
	// time command): the sources taken over are fixed.
	stepped bool
	// cur is the stamp of the last record the job emitted, delivered that
	// of the last one the readers got.
	cur, delivered stamp
	closed         bool
	// expecting: inside ExpectFailure, a job failure is the test's, not
	// a reason to fail it; failure is the one that came.
	expecting bool
	failure   *runtime.Failure
}

// input is what the driver needs of an In[T] whatever T.
type input interface {
	newSource(sub int) any // func() runtime.Source[T]
	closed() bool
}

// New loads job for the test. The job starts at the first push, Run, time
// command or state access; take its sources over (Input) before it reads
// or processes anything. The driver
// closes itself when the test ends.
func New(t testing.TB, job *runtime.Job, opts ...Option) *Driver {
	t.Helper()
	if job == nil {
		t.Fatal("streamdbgtest: New: the job is nil")
	}
	if err := job.Err(); err != nil {
		t.Fatalf("streamdbgtest: job %q cannot run: %v", job.Name, err)
	}
	d := &Driver{t: t, job: job, inputs: map[string]input{}, outputs: map[outputKey]*outBuffer{}}
	d.cfg.maxUnread = 1_000_000
	for _, o := range opts {
		o(&d.cfg)
	}
	d.sched.driven = map[string]bool{}
	t.Cleanup(func() {
		if t.Failed() && *debugFlag && d.sess != nil && !d.closed {
			d.Debug()
		}
		d.Close()
	})
	return d
}

// Job is the job under test.
func (d *Driver) Job() *runtime.Job { return d.job }

// Session is the debugger's session over the running job (starting it):
// queries, stops, breakpoints, as in the TUI. Stepping it directly
// bypasses the driver's inputs: use it to look, not to step.
func (d *Driver) Session() *session.Session {
	d.t.Helper()
	d.start()
	return d.sess
}

func (d *Driver) started() bool { return d.sess != nil }

// start opens the session at the first use: the sources taken over so far
// are the test's for the whole run.
func (d *Driver) start() {
	d.t.Helper()
	if d.closed {
		d.t.Fatal("streamdbgtest: the driver is closed")
	}
	if d.sess != nil {
		return
	}
	ro := runtime.Options{Parallelism: d.cfg.parallelism, MaxParallelism: d.cfg.maxParallelism, Backend: d.cfg.backend,
		BackendOrigin: "streamdbgtest", Trace: d.cfg.trace, StartProcessingTime: d.cfg.start.UnixMilli(),
		Schedule: &d.sched, Capture: d.capture, AllowNonRestoredState: d.cfg.allowDropped}
	if d.cfg.start.IsZero() {
		ro.StartProcessingTime = 0
	}
	if len(d.inputs) > 0 {
		ro.Sources = map[string]any{}
		for name, in := range d.inputs {
			ro.Sources[name] = in.newSource(0)
		}
	}
	s, err := session.New(d.job, session.Options{Options: ro, Restore: d.restore})
	if err != nil {
		d.t.Fatalf("streamdbgtest: job %q cannot start: %v", d.job.Name, withOptionRemedy(err))
	}
	d.sess = s
	d.sched.base = s.Executor().Reads()
	// A source the test drives reads in its subtask 0; its other subtasks
	// are idle from the start, so that they hold no watermark back.
	for _, name := range d.order {
		for sub := 1; sub < d.parallelismOf(name); sub++ {
			d.read(name, sub, readEvent{kind: runtime.EventIdle})
		}
	}
	d.stepped = false // those reads follow from the inputs alone
}

// withOptionRemedy makes a restore refusal name the driver's option that
// overcomes it instead of the CLI's flag, which a Go test cannot pass.
func withOptionRemedy(err error) error {
	var mp *runtime.MaxParallelismError
	if errors.As(err, &mp) {
		mp.Remedy = fmt.Sprintf("restore with streamdbgtest.MaxParallelism(%d)", mp.Snapshot)
	}
	var us *runtime.UnmatchedStateError
	if errors.As(err, &us) {
		us.Remedy = "pass streamdbgtest.AllowNonRestoredState() to Restore to drop it"
	}
	return err
}

func (d *Driver) parallelismOf(operator string) int {
	for _, o := range d.sess.Plan().Operators {
		if o.Name == operator {
			return o.Parallelism
		}
	}
	return 1
}

// stop closes the session before anything ran, so that start opens a
// new one.
func (d *Driver) stop() {
	d.t.Helper()
	if err := d.sess.Close(); err != nil {
		d.t.Fatalf("streamdbgtest: close job %q: %v", d.job.Name, err)
	}
	d.sess = nil
	d.sched.log = nil
}

// Close releases the job's state; the driver is unusable after it. Tests
// need not call it: New registers it with t.Cleanup.
func (d *Driver) Close() {
	if d.closed {
		return
	}
	d.closed = true
	if d.sess != nil {
		if err := d.sess.Close(); err != nil {
			d.t.Errorf("streamdbgtest: close job %q: %v", d.job.Name, err)
		}
	}
}

// read schedules one read of a source subtask (source "" lets the
// executor choose one of the sources the test does not drive) and runs it
// and everything it causes. It reports false when nothing could be read
// (only for source "": those sources are at their end or wait).
func (d *Driver) read(source string, sub int, ev readEvent) bool {
	d.t.Helper()
	d.start()
	d.checkNotFailed()
	d.stepped = true
	ev.source, ev.subtask = source, sub
	d.sched.log = append(d.sched.log, ev)
	want := d.sched.base + int64(len(d.sched.log))
	st, err := d.sess.Next()
	if err != nil {
		d.t.Fatalf("streamdbgtest: %v", err)
	}
	if d.checkStop(st) {
		return true
	}
	if got := d.sess.Executor().Reads(); got != want {
		d.sched.log = d.sched.log[:len(d.sched.log)-1]
		if source == "" {
			return false
		}
		d.t.Fatalf("streamdbgtest: source %q subtask %d did not read what the test pushed (%s)", source, sub, st.Message)
	}
	return true
}

// checkStop fails the test on a job failure, with everything the failure
// says (operator, record, key, stack); inside ExpectFailure it keeps the
// failure instead and reports true.
func (d *Driver) checkStop(st *session.Stop) bool {
	d.t.Helper()
	if st == nil || st.Failure == nil {
		return false
	}
	if d.expecting {
		d.failure = st.Failure
		return true
	}
	d.t.Fatalf("streamdbgtest: job %q failed: %v%s", d.job.Name, st.Failure, stackOf(st.Failure))
	return true
}

// checkNotFailed refuses input after the failure ExpectFailure saw.
func (d *Driver) checkNotFailed() {
	d.t.Helper()
	if d.failure != nil {
		d.t.Fatalf("streamdbgtest: job %q failed (%v): it takes no more input; its state is still there to read", d.job.Name, d.failure)
	}
}

// ExpectFailure runs body, whose pushes (or Run, or
// AdvanceProcessingTime) must make the job fail, and returns the failure
// for the test to check: operator, record, key and the error the function
// returned or the panic (errors.Is and errors.As reach the function's
// error), as Flink's harness throws it to the test. The test fails if the
// job does not fail. The job stays failed: its state as the failure left
// it can be read, but it takes no more input (body's pushes after the
// failing one fail the test too).
func (d *Driver) ExpectFailure(body func()) *runtime.Failure {
	d.t.Helper()
	d.checkNotFailed()
	d.expecting = true
	defer func() { d.expecting = false }()
	body()
	if d.failure == nil {
		d.t.Fatalf("streamdbgtest: ExpectFailure: job %q did not fail", d.job.Name)
	}
	return d.failure
}

func stackOf(f *runtime.Failure) string {
	if f.Stack == "" {
		return ""
	}
	return "\n" + f.Stack
}

// Run reads the sources the test does not drive to their end (or until
// they wait), with everything they cause, in the runtime's own order;
// the sources the test drives read nothing meanwhile. It returns the
// number of source events read (records and control records; the end of
// an input is none).
func (d *Driver) Run() int {
	d.t.Helper()
	d.start()
	from := d.sess.Position()
	for d.failure == nil && d.read("", 0, readEvent{kind: readAny}) {
	}
	return int(d.sess.Position() - from)
}

// AdvanceProcessingTime moves the virtual processing clock by dur and
// fires the processing-time timers that came due, with everything they
// cause.
func (d *Driver) AdvanceProcessingTime(dur time.Duration) {
	d.t.Helper()
	if dur < 0 {
		d.t.Fatalf("streamdbgtest: AdvanceProcessingTime(%s): processing time does not go back", dur)
	}
	d.start()
	d.stepped = true
	d.checkNotFailed()
	st, err := d.sess.AdvanceProcessingTime(dur)
	if err != nil {
		d.t.Fatalf("streamdbgtest: %v", err)
	}
	d.checkStop(st)
}

// ProcessingTime is the virtual processing clock.
func (d *Driver) ProcessingTime() time.Time {
	d.t.Helper()
	d.start()
	return time.UnixMilli(d.sess.Executor().ProcessingTime()).UTC()
}

// Query runs a query of the debugger's language on the live state (the
// tables of DESIGN 6: keyed_state, operator_state, timers, state_meta,
// "operator"."state") and returns its rows, each a map from column to
// value.
func (d *Driver) Query(q string) []map[string]any {
	d.t.Helper()
	d.start()
	rows, err := d.sess.Query(context.Background(), q)
	if err != nil {
		d.t.Fatalf("streamdbgtest: query %q: %v", q, err)
	}
	defer rows.Close()
	var out []map[string]any
	cols := rows.Columns()
	for row, err := range rows.All() {
		if err != nil {
			d.t.Fatalf("streamdbgtest: query %q: %v", q, err)
		}
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			m[c] = row[i]
		}
		out = append(out, m)
	}
	return out
}

// schedule is the driver's runtime.SourceSchedule: the log of the source
// reads the test asked for, by the executor's read index.
type schedule struct {
	base   int64
	log    []readEvent
	driven map[string]bool
	// cur is the index in log of the read being served.
	cur int
}

// readKind extends runtime.EventKind with what the driver schedules.
type readKind = runtime.EventKind

const (
	readEnd readKind = 100 + iota // the end of a driven source's input
	readAny                       // one read of a source the test does not drive
)

type readEvent struct {
	source  string
	subtask int
	kind    readKind
	value   any // the record (kind EventRecord)
	ts      int64
	hasTS   bool
	wm      int64
	where   runtime.Where
}

func (s *schedule) Due(read int64) (string, int, bool) {
	i := read - s.base
	if i < 0 || i >= int64(len(s.log)) {
		return "", 0, false
	}
	s.cur = int(i)
	return s.log[i].source, s.log[i].subtask, true
}

func (s *schedule) Driven(source string) bool { return s.driven[source] }

// caller is where the test called the driver: the first frame outside
// this package, as a record's origin in messages.
func caller() runtime.Where {
	for skip := 2; skip < 20; skip++ {
		pc, file, line, ok := goruntime.Caller(skip)
		if !ok {
			break
		}
		fn := goruntime.FuncForPC(pc)
		if fn != nil && strings.HasPrefix(fn.Name(), "streamdbg/streamdbgtest.") && !strings.HasSuffix(file, "_test.go") {
			continue
		}
		return runtime.Where{File: filepath.Base(file), Line: line}
	}
	return runtime.Where{File: "test"}
}
