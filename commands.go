package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/export"
	"streamdbg/fixtures"
	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
	"streamdbg/savepoint/flink"
	"streamdbg/state"
	"streamdbg/tui"
)

// env is what every command gets: where to write and log.
type env struct {
	stdout, stderr io.Writer
	log            *slog.Logger
}

func newEnv(verbose bool, stdout, stderr io.Writer) *env {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return &env{stdout: stdout, stderr: stderr,
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))}
}

// jobFlags are shared by debug and run.
type jobFlags struct {
	Job                   string   `arg:"" optional:"" default:"wordcount" help:"Example job (see 'streamdbg jobs')."`
	Input                 []string `help:"Input fixture (.txt, .jsonl, .csv) instead of the job's embedded one; NAME=FILE feeds the source NAME of a job with several sources (repeatable)." placeholder:"[NAME=]FILE" sep:"none"`
	Backend               string   `help:"Keyed state backend: heap or pebble (the job's code wins; then this flag; then the config file)." enum:",heap,pebble" default:""`
	StateDir              string   `help:"Directory for the pebble backend (default: a temporary directory removed on exit)."`
	Parallelism           int      `help:"Default parallelism of the job's operators."`
	MaxParallelism        int      `help:"Max parallelism: the number of key groups (default 128; with --from-savepoint, the savepoint's)."`
	Config                string   `help:"Config file (default: streamdbg.yaml in the working directory, if present)."`
	FromSavepoint         string   `help:"Start from this savepoint directory."`
	AllowNonRestoredState bool     `help:"Drop savepoint state whose operator is not in the job instead of refusing."`
	CheckpointInterval    int      `help:"Source records between in-memory checkpoints (default 1000)."`
	OnBadRecord           string   `help:"What to do with a malformed input line: fail or skip (logged)." enum:"fail,skip" default:"fail"`
	WallClock             bool     `help:"Let processing time follow the wall clock instead of the virtual clock (runs are then not deterministic)."`
	MaxLineBytes          int      `help:"Longest input line accepted, in bytes (default 1 MiB); a longer one is a bad record."`
}

// open builds the job and a session over it, applying the precedence job
// code > flag > config file > default.
func (f *jobFlags) open(e *env, out io.Writer, trace bool) (*session.Session, error) {
	cfg, err := loadConfig(f.Config)
	if err != nil {
		return nil, usageError{err}
	}
	fc := fixtures.Config{OnBadRecord: f.OnBadRecord, Log: e.log}
	if f.MaxLineBytes < 0 {
		return nil, usageError{errors.New("--max-line-bytes must not be negative")}
	}
	if len(f.Input) > 0 {
		fc.Input, fc.Inputs, err = fixtures.ParseInputs(f.Job, f.Input, fixtures.ParseOptions{MaxLineBytes: f.MaxLineBytes})
		var ie *fixtures.InputError
		if errors.As(err, &ie) {
			return nil, usageError{err}
		}
		if err != nil {
			return nil, err
		}
	}
	job, err := fixtures.Build(f.Job, fc)
	if err != nil {
		var ie *fixtures.InputError
		if strings.HasPrefix(err.Error(), "unknown job") || errors.As(err, &ie) {
			return nil, usageError{err}
		}
		return nil, err
	}
	opts := session.Options{Options: runtime.Options{Output: out, Log: e.log, Trace: trace,
		Parallelism: f.Parallelism, MaxParallelism: f.MaxParallelism, StateDir: f.StateDir,
		AllowNonRestoredState: f.AllowNonRestoredState}, CheckpointInterval: f.CheckpointInterval}
	switch {
	case f.Backend != "":
		opts.Backend, opts.BackendOrigin = f.Backend, "the --backend flag"
	default:
		if b, ok := cfg.str("state.backend.type"); ok {
			if b != "heap" && b != "pebble" {
				return nil, usageError{fmt.Errorf("config %s: state.backend.type: %q (want heap or pebble)", cfg.path, b)}
			}
			opts.Backend, opts.BackendOrigin = b, "state.backend.type in "+cfg.path
		}
	}
	if opts.StateDir == "" {
		opts.StateDir, _ = cfg.str("state.backend.pebble.dir")
	}
	for key, dst := range map[string]*int{"parallelism.default": &opts.Parallelism, "pipeline.max-parallelism": &opts.MaxParallelism, "execution.checkpointing.interval": &opts.CheckpointInterval} {
		if *dst != 0 {
			continue
		}
		n, ok, err := cfg.int(key)
		if err != nil {
			return nil, usageError{err}
		}
		if ok {
			*dst = n
		}
	}
	if f.WallClock {
		opts.WallClock = func() int64 { return time.Now().UnixMilli() }
		opts.StartProcessingTime = opts.WallClock()
	}
	if opts.Parallelism < 0 || opts.MaxParallelism < 0 || opts.CheckpointInterval < 0 {
		return nil, usageError{errors.New("--parallelism, --max-parallelism and --checkpoint-interval must not be negative")}
	}
	if f.FromSavepoint != "" {
		if flink.IsFlink(f.FromSavepoint) {
			return nil, fmt.Errorf("%s is an Apache Flink savepoint: streamdbg reads it (streamdbg query %s \"SELECT * FROM state_meta\", savepoint inspect, open) but cannot restore a job from it; --from-savepoint takes a savepoint written by streamdbg", f.FromSavepoint, f.FromSavepoint)
		}
		sp, err := savepoint.Open(vfs.Default, f.FromSavepoint)
		if err != nil {
			return nil, err
		}
		opts.Restore = runtime.FromSavepoint(sp)
		if mp := sp.MaxParallelism(); opts.MaxParallelism == 0 && job.MaxParallelism == state.DefaultMaxParallelism && mp > 0 {
			// Set by neither a flag nor the config, and the job's is
			// the default: the savepoint's, as Flink rescales an unset
			// max parallelism to the restored state's. (A job that sets
			// 128 itself cannot be told from one that sets nothing.)
			opts.MaxParallelism = mp
			e.log.Info("max parallelism from the savepoint", "max_parallelism", mp)
		}
	}
	s, err := session.New(job, opts)
	var oe *runtime.OptionsError
	if errors.As(err, &oe) {
		return nil, usageError{err}
	}
	return s, err
}

type jobsCmd struct{}

func (jobsCmd) Run(e *env) error {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, ex := range fixtures.Examples() {
		def := ""
		if ex.Name == fixtures.DefaultJob {
			def = " (default)"
		}
		fmt.Fprintf(w, "%s%s\t%s\tinput: %s\n", ex.Name, def, ex.Description, ex.Inputs())
	}
	return w.Flush()
}

type runCmd struct {
	jobFlags
	Steps     int64  `help:"Read at most N source records, then stop."`
	Savepoint string `help:"Write a savepoint to this directory when the run stops."`
	Query     string `help:"Run this query on the live state when the run stops and print its rows instead of the sink output."`
	Format    string `help:"Query output: table, json or csv." enum:"table,json,csv" default:"table"`
	FailAt    int64  `help:"Inject one failure while source record N is read, to exercise recovery."`
}

func (r *runCmd) Run(e *env) error {
	var out io.Writer = e.stdout
	var q *query.Query
	if r.Query != "" {
		var err error
		if q, err = parseQuery(r.Query); err != nil {
			return err
		}
		out = nil
	}
	if r.Steps < 0 || r.FailAt < 0 {
		return usageError{errors.New("--steps and --fail-at must not be negative")}
	}
	if r.Savepoint != "" {
		// Found at start, not after the whole run: a savepoint is never
		// overwritten.
		if _, err := os.Lstat(r.Savepoint); err == nil {
			return usageError{fmt.Errorf("--savepoint %s: the directory exists, and a savepoint is never written over anything; name a new directory", r.Savepoint)}
		}
	}
	// From here an interrupt stops the run where it is (before the first
	// record if it comes while the job is built).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := r.open(e, out, false)
	if err != nil {
		return err
	}
	defer s.Close()
	start := s.Position()
	switch {
	case r.FailAt > 0 && r.FailAt <= start:
		e.log.Warn("--fail-at is at or before the restored position: no failure will be injected", "fail_at", r.FailAt, "restored_at", start)
	case r.FailAt > 0 && r.Steps > 0 && r.FailAt > start+r.Steps:
		e.log.Warn("--fail-at is beyond the records --steps reads: no failure will be injected", "fail_at", r.FailAt, "last_record", start+r.Steps)
	}
	s.SetFailAt(r.FailAt)
	res, err := s.Run(ctx, session.RunOptions{Steps: r.Steps, MaxRestarts: 3})
	interrupted := err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled)
	if interrupted {
		// A second interrupt ends the process at once.
		stop()
	} else if err != nil {
		return err
	}
	e.log.Info("run stopped", "records", res.Position, "finished", res.Finished, "restarts", res.Restarts)
	if r.FailAt > start && res.Restarts == 0 && (r.Steps == 0 || r.FailAt <= start+r.Steps) && !interrupted {
		e.log.Warn("--fail-at is beyond the input: no failure was injected", "fail_at", r.FailAt, "records", res.Position)
	}
	if r.Savepoint != "" {
		// Interrupted too: Flink's stop-with-savepoint, at the record the
		// run stopped after.
		if err := s.Savepoint(vfs.Default, r.Savepoint); err != nil {
			return err
		}
		e.log.Info("savepoint written", "dir", r.Savepoint, "records", s.Position())
	}
	if q != nil {
		rows, err := query.Run(context.Background(), s.Catalog(), q)
		if err != nil {
			return err
		}
		if err := query.Format(e.stdout, rows, r.Format); err != nil {
			return err
		}
	}
	if interrupted {
		msg := fmt.Sprintf("interrupted after source record %d", res.Position)
		if r.Savepoint != "" {
			msg += fmt.Sprintf("; the savepoint %s holds the state at that record (resume with --from-savepoint %s)", r.Savepoint, r.Savepoint)
		}
		return interruptedError{errors.New(msg)}
	}
	return nil
}

// parseQuery parses and checks a query given on the command line: a bad
// one is a usage error under `query` and `run --query` alike.
func parseQuery(text string) (*query.Query, error) {
	q, err := query.Parse(text)
	if err != nil {
		return nil, usageError{err}
	}
	if err := query.Check(q); err != nil {
		return nil, usageError{err}
	}
	return q, nil
}

type debugCmd struct {
	jobFlags
	FailAt int64 `help:"Inject one failure while source record N is read, to watch a failure, R (restart) and u (back)."`
}

func (d *debugCmd) Run(e *env) error {
	if !term.IsTerminal(os.Stdout.Fd()) {
		return usageError{errors.New(tui.NotTerminalHint("debug"))}
	}
	// Logs never go to the screen while the TUI runs.
	te, closeLog := tuiEnv(e)
	defer closeLog()
	s, err := d.open(te, nil, true)
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			return err
		}
		return tui.RunFailure(err, tui.Options{})
	}
	defer s.Close()
	s.SetFailAt(d.FailAt)
	return tui.Run(s, tui.Options{})
}

// tuiEnv sends logging to a file in the user cache directory (or discards
// it) while a TUI owns the terminal.
func tuiEnv(e *env) (*env, func()) {
	te := *e
	te.log = slog.New(slog.DiscardHandler)
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "streamdbg")
	if os.MkdirAll(dir, 0o755) != nil {
		return &te, func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, "streamdbg.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return &te, func() {}
	}
	te.log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &te, func() { f.Close() }
}

// openCatalog opens a savepoint directory, ours or Flink's.
func openCatalog(dir string) (state.Catalog, error) {
	return session.OpenCatalog(dir)
}

// openCatalogPlan is openCatalog naming a Flink savepoint's operators from
// a compiled SQL plan: planFile, or plan.json beside the savepoint
// directory (or in it) when planFile is "", with a log line saying so.
func openCatalogPlan(e *env, dir, planFile string, keyTypes []string) (state.Catalog, error) {
	if !flink.IsFlink(dir) {
		// A directory that is no savepoint at all says so first.
		cat, err := session.OpenCatalog(dir)
		if err != nil {
			return nil, err
		}
		if planFile != "" {
			return nil, usageError{fmt.Errorf("--plan applies to Apache Flink savepoints; %s is not one", dir)}
		}
		if len(keyTypes) > 0 {
			return nil, usageError{fmt.Errorf("--key-type applies to Apache Flink savepoints; %s is not one", dir)}
		}
		return cat, nil
	}
	sp, err := flink.Open(dir)
	if err != nil {
		return nil, err
	}
	for _, kt := range keyTypes {
		i := strings.LastIndexByte(kt, '=')
		if i <= 0 {
			return nil, usageError{fmt.Errorf("--key-type %q: want OPERATOR=TYPE, e.g. flatmap=Tuple1<Long>", kt)}
		}
		if err := sp.SetKeyType(kt[:i], kt[i+1:]); err != nil {
			return nil, usageError{err}
		}
	}
	if planFile == "" {
		planFile = flink.FindPlan(dir)
		if planFile != "" {
			e.log.Info("using the compiled plan found beside the savepoint", "plan", planFile)
		}
	}
	if planFile != "" {
		if err := sp.ApplyPlanFile(planFile); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

type queryCmd struct {
	Target         string   `arg:"" help:"Savepoint directory (ours or Apache Flink's)."`
	Query          string   `arg:"" help:"The query, e.g. \"SELECT key, value FROM keyed_state WHERE key = 'key_662'\"."`
	Format         string   `help:"Output: table, json or csv." enum:"table,json,csv" default:"table"`
	Plan           string   `help:"Flink SQL compiled plan (COMPILE PLAN JSON) naming the operators of a Flink savepoint (default: plan.json beside the savepoint directory, if present)."`
	SkipUnreadable bool     `help:"Read the states that can be read when the query needs some that cannot (warning on stderr for each), instead of failing."`
	KeyType        []string `help:"Key type of an operator whose Flink checkpoint does not store its key serializer (a changelog checkpoint before its first materialization, without timers): Long, String, Tuple1<Long>, ... (repeatable)." placeholder:"OPERATOR=TYPE" sep:"none"`
}

func (q *queryCmd) Run(e *env) error {
	parsed, err := parseQuery(q.Query)
	if err != nil {
		return err
	}
	cat, err := openCatalogPlan(e, q.Target, q.Plan, q.KeyType)
	if err != nil {
		return err
	}
	if closer, ok := cat.(io.Closer); ok {
		defer closer.Close()
	}
	opts := query.Options{SkipUnreadable: q.SkipUnreadable, Warn: func(m state.StateMeta) {
		fmt.Fprintln(e.stderr, "streamdbg: warning: skipped:", query.UnreadableText(m))
	}, Partial: func(label string, read int, err error) {
		if read == 0 {
			fmt.Fprintf(e.stderr, "streamdbg: warning: skipped %s: %v\n", label, err)
			return
		}
		fmt.Fprintf(e.stderr, "streamdbg: warning: skipped the rest of %s: %v (the %d rows read before the failure are in the result)\n", label, err, read)
	}}
	rows, err := query.RunWith(context.Background(), cat, parsed, opts)
	if err != nil {
		var u *query.UnreadableError
		if errors.As(err, &u) {
			return fmt.Errorf("%w (--skip-unreadable reads the other states)", err)
		}
		return err
	}
	for _, n := range rows.Notes() {
		fmt.Fprintln(e.stderr, "streamdbg: note:", n)
	}
	err = query.Format(e.stdout, rows, q.Format)
	if se := (*query.ScanError)(nil); errors.As(err, &se) && !q.SkipUnreadable {
		return fmt.Errorf("%w (--skip-unreadable reads the other states)", err)
	}
	return err
}

type openCmd struct {
	Dir     string   `arg:"" help:"Savepoint directory (ours or Apache Flink's)."`
	Plan    string   `help:"Flink SQL compiled plan (COMPILE PLAN JSON) naming the operators of a Flink savepoint (default: plan.json beside the savepoint directory, if present)."`
	KeyType []string `help:"Key type of an operator whose Flink checkpoint does not store its key serializer (a changelog checkpoint before its first materialization, without timers): Long, String, Tuple1<Long>, ... (repeatable)." placeholder:"OPERATOR=TYPE" sep:"none"`
}

func (o *openCmd) Run(e *env) error {
	if !term.IsTerminal(os.Stdout.Fd()) {
		return usageError{errors.New(tui.NotTerminalHint("open"))}
	}
	te, closeLog := tuiEnv(e)
	defer closeLog()
	cat, err := openCatalogPlan(te, o.Dir, o.Plan, o.KeyType)
	if err != nil {
		return err
	}
	if closer, ok := cat.(io.Closer); ok {
		defer closer.Close()
	}
	return tui.BrowseSavepoint(session.NewSavepoint(cat, o.Dir), tui.Options{})
}

type savepointCmd struct {
	Inspect inspectCmd `cmd:"" help:"Print a savepoint's metadata and StateMeta table."`
	Check   checkCmd   `cmd:"" help:"Would this savepoint restore into JOB? Lists missing, new and changed states."`
}

type inspectCmd struct {
	Dir     string   `arg:"" help:"Savepoint directory (ours or Apache Flink's)."`
	Plan    string   `help:"Flink SQL compiled plan (COMPILE PLAN JSON) naming the operators of a Flink savepoint (default: plan.json beside the savepoint directory, if present)."`
	KeyType []string `help:"Key type of an operator whose Flink checkpoint does not store its key serializer (a changelog checkpoint before its first materialization, without timers): Long, String, Tuple1<Long>, ... (repeatable)." placeholder:"OPERATOR=TYPE" sep:"none"`
}

func (i *inspectCmd) Run(e *env) error {
	cat, err := openCatalogPlan(e, i.Dir, i.Plan, i.KeyType)
	if err != nil {
		return err
	}
	fsp, isFlink := cat.(*flink.Savepoint)
	if isFlink {
		fmt.Fprintf(e.stdout, "Apache Flink _metadata version %d, checkpoint id %d\n\n", fsp.Version(), fsp.CheckpointID())
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OPERATOR\tID\tUID\tPARALLELISM\tMAX PARALLELISM\tNOTES")
	for _, o := range cat.Operators() {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\n", o.Name, o.ID, o.UID, o.Parallelism, o.MaxParallelism, strings.Join(append(slices.Clone(o.Notes), o.Unsupported...), "; "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "OPERATOR\tSTATE\tSCOPE\tKIND\tKEY\tNAMESPACE\tUSER KEY\tVALUE\tENTRIES\tBYTES\tSTATUS")
	// An operator whose name another shares (Flink names every unnamed
	// map "Map") goes by its id here, as in export's partitions.
	names := export.OperatorPartitions(cat.Operators())
	for _, m := range cat.States() {
		status := m.Status
		if status == "" {
			status = "ok"
		}
		name, ok := names[m.OperatorID]
		if !ok {
			name = m.OperatorName
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, m.StateName, m.Scope, m.Kind,
			dash(m.KeyType), dash(m.NamespaceType), dash(m.UserKeyType), dash(m.ValueType), figure(m.Entries, m.EntriesUnknown), figure(m.Bytes, m.BytesUnknown), status)
	}
	// Master states (a master hook's, e.g. an external system's
	// checkpoint) are the job's, not an operator's: listed, not decoded
	// (each hook serializes its own way).
	if isFlink && len(fsp.MasterStates()) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "MASTER STATE\tVERSION\tBYTES")
		for _, m := range fsp.MasterStates() {
			fmt.Fprintf(w, "%s\t%d\t%d\n", m.Name, m.Version, m.Size)
		}
	}
	return w.Flush()
}

// figure is an entry or byte count, "-" where the reader does not know it.
func figure(n int64, unknown bool) string {
	if unknown {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type checkCmd struct {
	Dir                   string `arg:"" help:"Savepoint directory."`
	Job                   string `arg:"" optional:"" default:"wordcount" help:"Example job."`
	MaxParallelism        int    `help:"Max parallelism the job would run with (default: the job's; if it sets none, the savepoint's)."`
	AllowNonRestoredState bool   `help:"Check as a restore with --allow-non-restored-state would: state of missing operators is dropped."`
}

func (c *checkCmd) Run(e *env) error {
	job, err := fixtures.Build(c.Job, fixtures.Config{Log: e.log})
	if err != nil {
		return usageError{err}
	}
	if flink.IsFlink(c.Dir) {
		return fmt.Errorf("%s is an Apache Flink savepoint: it can be queried and inspected, not restored", c.Dir)
	}
	sp, err := savepoint.Open(vfs.Default, c.Dir)
	if err != nil {
		return err
	}
	// Restorable means readable: every checksum and every state's count,
	// not only _metadata.
	if err := sp.Verify(); err != nil {
		return fmt.Errorf("savepoint %s would not restore: %w", c.Dir, err)
	}
	maxPar := c.MaxParallelism
	if maxPar == 0 && job.MaxParallelism == state.DefaultMaxParallelism {
		maxPar = sp.MaxParallelism() // as a restore takes it, see jobFlags.open
	}
	rep, err := runtime.CheckJob(job, runtime.Options{MaxParallelism: maxPar}, runtime.FromSavepoint(sp))
	if err != nil {
		return err
	}
	if err := printCheck(e.stdout, rep, c.AllowNonRestoredState); err != nil {
		return err
	}
	if !rep.Restorable(c.AllowNonRestoredState) {
		return fmt.Errorf("savepoint %s would not restore into %s: %s", c.Dir, c.Job, checkSummary(rep, c.AllowNonRestoredState))
	}
	return nil
}
