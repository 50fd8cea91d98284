package session

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/query"
)

// Command is one entry of the command table that drives the TUI's command
// bar, its key help and headless scripts (as delve's terminal/command.go).
type Command struct {
	Name    string
	Aliases []string
	Args    string // argument synopsis, e.g. "[N]"
	Help    string
	// Runs says that the command runs the job (it may take long): a UI
	// runs it in the background with progress and a way to interrupt it.
	Runs bool
	Run  func(ctx context.Context, s *Session, args string) (Result, error)
}

// Result is what a command gave: a stop, query rows, a message, or a
// request the session cannot serve itself (Open: browse a savepoint).
type Result struct {
	Stop *Stop
	// Rows are the rows of a query; the caller reads and closes them.
	Rows *query.Rows
	// Text is a message or a listing (help, breakpoints, watches).
	Text string
	// Open is the savepoint directory that `open` asks the caller to browse.
	Open string
}

// ErrUnknownCommand marks a line whose first word is no command.
var ErrUnknownCommand = errors.New("unknown command")

// Commands returns the command table, in help order.
func Commands() []Command {
	return []Command{
		{Name: "next", Aliases: []string{"n"}, Args: "[N]", Runs: true,
			Help: "Read N source records (default 1) and run everything they cause.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				n, err := optCount(args, 1)
				if err != nil {
					return Result{}, err
				}
				st, err := s.NextN(ctx, n)
				return Result{Stop: st}, err
			}},
		{Name: "step", Aliases: []string{"s"}, Args: "[INPUT [OPERATOR[SUBTASK]]]",
			Help: "Step into: one element handled by one operator in one subtask. With INPUT (1 or 2), the element comes from that input of a two-input operator: the next one queued there, or, when nothing is in flight, the next record of the source feeding it.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				if strings.TrimSpace(args) == "" {
					st, err := s.StepInto()
					return Result{Stop: st}, err
				}
				input, op, sub, err := parseStepInput(args)
				if err != nil {
					return Result{}, err
				}
				st, err := s.StepIntoInput(op, sub, input)
				return Result{Stop: st}, err
			}},
		{Name: "continue", Aliases: []string{"c"}, Runs: true,
			Help: "Run until a breakpoint, the end of input, a failure or an interrupt.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				st, err := s.Continue(ctx)
				return Result{Stop: st}, err
			}},
		{Name: "back", Aliases: []string{"u"}, Runs: true, Help: "Go back to the state before the last next, step or continue (one record when there is none).",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				st, err := s.Back()
				return Result{Stop: st}, err
			}},
		{Name: "break", Aliases: []string{"b"}, Args: "[at|before OPERATOR] [when EXPR] [hits >|>=|==|% N]",
			Help: "Set a breakpoint: stop after OPERATOR handled a record for which EXPR holds, or with before just before it runs (its state not yet updated). " +
				"A name with spaces goes in quotes (break at \"Source: lines\"). EXPR is the query language over " + strings.Join(BreakpointNames, ", ") +
				" (state.NAME: the current key's state of the operator). hits stops only at the hits it accepts: > 3 from the 4th on, == 3 at the 3rd, % 3 at every 3rd.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				spec, whenAt, err := parseBreak(args, s.Plan().OperatorNames())
				if err != nil {
					return Result{}, err
				}
				bp, err := s.SetBreakpoint(spec)
				if err != nil {
					return Result{}, at(whenAt, err)
				}
				return Result{Text: fmt.Sprintf("breakpoint #%d: %s", bp.ID, bp.Describe())}, nil
			}},
		{Name: "condition", Aliases: []string{"cond"}, Args: "N hits >|>=|==|% K",
			Help: "Change the hit condition of breakpoint N (hits alone clears it).",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				idText, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
				id, err := breakpointID(idText)
				if err != nil {
					return Result{}, err
				}
				var h HitCond
				if rest = strings.TrimSpace(rest); !strings.EqualFold(rest, "hits") {
					hc, tail, ok := cutHits(" " + rest)
					if !ok || strings.TrimSpace(tail) != "" {
						return Result{}, fmt.Errorf("condition: want N hits > K (or >=, ==, %%), got %q", args)
					}
					h = hc
				}
				if err := s.SetHitCond(id, h); err != nil {
					return Result{}, err
				}
				bp, _ := s.Breakpoint(id)
				return Result{Text: fmt.Sprintf("breakpoint #%d: %s", id, bp.Describe())}, nil
			}},
		{Name: "breakpoints", Aliases: []string{"bl"}, Help: "List the breakpoints.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				return Result{Text: s.describeBreakpoints()}, nil
			}},
		{Name: "delete", Aliases: []string{"d"}, Args: "N", Help: "Delete breakpoint N.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				id, err := breakpointID(args)
				if err != nil {
					return Result{}, err
				}
				if err := s.DeleteBreakpoint(id); err != nil {
					return Result{}, err
				}
				return Result{Text: fmt.Sprintf("breakpoint #%d deleted", id)}, nil
			}},
		{Name: "enable", Args: "N", Help: "Enable breakpoint N.", Run: toggle(true)},
		{Name: "disable", Args: "N", Help: "Disable breakpoint N.", Run: toggle(false)},
		{Name: "watch", Aliases: []string{"w"}, Args: "QUERY",
			Help: "Re-run QUERY after every stop and show what changed.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				if args == "" {
					return Result{Text: s.describeWatches()}, nil
				}
				// The TUI's w opens the bar with "watch SELECT ": a whole
				// query typed after it is that query.
				q, off := dropRepeated(args, "select")
				w, err := s.AddWatch(q)
				if err != nil {
					return Result{}, at(off, err)
				}
				return Result{Text: fmt.Sprintf("watch #%d: %s", w.ID, w.Query)}, nil
			}},
		{Name: "unwatch", Args: "N", Help: "Delete watch N.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				id, err := breakpointID(args)
				if err != nil {
					return Result{}, err
				}
				if err := s.DeleteWatch(id); err != nil {
					return Result{}, err
				}
				return Result{Text: fmt.Sprintf("watch #%d deleted", id)}, nil
			}},
		{Name: "watermark", Aliases: []string{"wm"}, Args: "TIME", Runs: true,
			Help: "Send watermark TIME (RFC 3339 or epoch milliseconds) from every source.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				wm, err := parseTime(args)
				if err != nil {
					return Result{}, err
				}
				st, err := s.AdvanceWatermark(wm)
				return Result{Stop: st}, err
			}},
		{Name: "advance", Args: "DURATION", Runs: true,
			Help: "Move the virtual processing-time clock by DURATION (e.g. 5s).",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				d, err := time.ParseDuration(strings.TrimSpace(args))
				if err != nil || d < 0 {
					return Result{}, fmt.Errorf("advance: want a positive duration such as 5s, got %q", args)
				}
				st, err := s.AdvanceProcessingTime(d)
				return Result{Stop: st}, err
			}},
		{Name: "why", Aliases: []string{"y"}, Args: "[at OPERATOR] [KEY [TIME]]",
			Help: "Explain why a window or timer has not fired: when it fires, the operator subtask's watermark, and the input channel (up to its source partition) that holds the watermark back. KEY picks a key, TIME one of its windows (start or end) or timers.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				q, err := ParseWhy(args)
				if err != nil {
					return Result{}, err
				}
				r, err := s.Why(q)
				if err != nil {
					return Result{}, err
				}
				return Result{Text: r.String()}, nil
			}},
		{Name: "savepoint", Aliases: []string{"sp"}, Args: "DIR", Runs: true,
			Help: "Write a savepoint of the current state to DIR (which must not exist).",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				dir, err := ExpandHome(strings.TrimSpace(args))
				if err != nil {
					return Result{}, err
				}
				if dir == "" {
					return Result{}, errors.New("savepoint: which directory?")
				}
				midRecord := !s.exec.Idle()
				if err := s.Savepoint(vfs.Default, dir); err != nil {
					return Result{}, err
				}
				if midRecord {
					return Result{Text: fmt.Sprintf("record %d finished, savepoint written to %s (a savepoint is taken between records)", s.exec.Position(), dir)}, nil
				}
				return Result{Text: "savepoint written to " + dir}, nil
			}},
		{Name: "restore", Args: "DIR [--allow-non-restored-state]", Runs: true,
			Help: "Restore the savepoint in DIR into the job and go on from its position; --allow-non-restored-state drops state of operators the job does not have.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				var o RestoreOptions
				var words []string
				for _, w := range strings.Fields(args) {
					switch w {
					case "--allow-non-restored-state", "-allow-non-restored-state":
						o.AllowNonRestoredState = true
					default:
						words = append(words, w)
					}
				}
				if len(words) != 1 {
					return Result{}, errors.New("restore: which directory? (restore DIR [--allow-non-restored-state])")
				}
				dir, err := ExpandHome(words[0])
				if err != nil {
					return Result{}, err
				}
				st, err := s.RestoreDir(vfs.Default, dir, o)
				return Result{Stop: st}, err
			}},
		{Name: "open", Args: "DIR", Help: "Browse the savepoint in DIR (ours or Apache Flink's).",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				dir, err := ExpandHome(strings.TrimSpace(args))
				if err != nil {
					return Result{}, err
				}
				if dir == "" {
					return Result{}, errors.New("open: which directory?")
				}
				return Result{Open: dir}, nil
			}},
		{Name: "diff", Args: "DIR [FILTER]", Runs: true,
			Help: "Compare the savepoint in DIR with the live state: entries added, removed and changed, then a summary per state (FILTER: e.g. key = 'flink').",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				dir, filter, _ := strings.Cut(strings.TrimSpace(args), " ")
				if dir == "" {
					return Result{}, errors.New("diff: which savepoint directory?")
				}
				rows, err := s.DiffSavepoint(ctx, dir, strings.TrimSpace(filter))
				return Result{Rows: rows}, err
			}},
		{Name: "restart", Runs: true, Help: "Restore the latest checkpoint (after a failure) and go on from there.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				st, err := s.Restart()
				return Result{Stop: st}, err
			}},
		{Name: "query", Aliases: []string{"select", "explain"}, Args: "SELECT ...", Runs: true,
			Help: "Query the live state (a line starting with SELECT or EXPLAIN is a query too).",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				rows, err := s.Query(ctx, args)
				return Result{Rows: rows}, at(0, err)
			}},
		{Name: "help", Aliases: []string{"h"}, Args: "[COMMAND]", Help: "List the commands, or describe one.",
			Run: func(ctx context.Context, s *Session, args string) (Result, error) {
				return Result{Text: Help(strings.TrimSpace(args))}, nil
			}},
	}
}

// LookupCommand finds a command by name or alias.
func LookupCommand(name string) (Command, bool) {
	name = strings.ToLower(name)
	for _, c := range Commands() {
		if c.Name == name {
			return c, true
		}
		for _, a := range c.Aliases {
			if a == name {
				return c, true
			}
		}
	}
	return Command{}, false
}

// ParseLine splits a command line into its command and arguments. A bare
// SELECT or EXPLAIN is the query command with the whole line as argument.
func ParseLine(line string) (Command, string, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return Command{}, "", errors.New("empty command")
	}
	word, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(word) {
	case "select", "explain":
		c, _ := LookupCommand("query")
		return c, line, nil
	}
	c, ok := LookupCommand(word)
	if !ok {
		names := make([]string, 0, 20)
		for _, c := range Commands() {
			names = append(names, c.Name)
		}
		return Command{}, "", fmt.Errorf("%w %q%s (type help)", ErrUnknownCommand, word, didYouMean(word, names))
	}
	return c, rest, nil
}

// Execute parses a line against the command table and runs it. An error
// at a place in the line (a query's, a condition's) is a *LineError.
func (s *Session) Execute(ctx context.Context, line string) (Result, error) {
	c, args, err := ParseLine(line)
	if err != nil {
		return Result{}, err
	}
	res, err := c.Run(ctx, s, args)
	var ae *argError
	if errors.As(err, &ae) {
		err = ae.lineError(line, args)
	}
	return res, err
}

// LineError is an error at a column of a command line: a UI puts a caret
// under it.
type LineError struct {
	Line string
	Col  int // 1-based, in runes
	Err  error
}

func (e *LineError) Error() string { return e.Err.Error() }
func (e *LineError) Unwrap() error { return e.Err }

// argError is an error of an expression that starts at byte offset off of
// a command's arguments.
type argError struct {
	off int
	err error
}

func (e *argError) Error() string { return e.err.Error() }
func (e *argError) Unwrap() error { return e.err }

// at marks a query error as one of the expression at byte offset off of
// the arguments; other errors pass unchanged.
func at(off int, err error) error {
	var qe *query.Error
	if err == nil || !errors.As(err, &qe) || qe.Pos.Line != 1 {
		return err
	}
	return &argError{off: off, err: err}
}

func (e *argError) lineError(line, args string) error {
	var qe *query.Error
	errors.As(e.err, &qe)
	start := strings.LastIndex(line, args)
	if start < 0 {
		return e.err
	}
	prefix := line[:start+e.off]
	return &LineError{Line: line, Col: len([]rune(prefix)) + qe.Pos.Col, Err: e.err}
}

// Help lists the commands, or describes one.
func Help(name string) string {
	var b strings.Builder
	if name != "" {
		c, ok := LookupCommand(name)
		if !ok {
			return fmt.Sprintf("no command %q", name)
		}
		writeHelp(&b, c)
		return b.String()
	}
	for _, c := range Commands() {
		writeHelp(&b, c)
	}
	return b.String()
}

func writeHelp(b *strings.Builder, c Command) {
	syn := c.Name
	if c.Args != "" {
		syn += " " + c.Args
	}
	if len(c.Aliases) > 0 {
		syn += " (" + strings.Join(c.Aliases, ", ") + ")"
	}
	fmt.Fprintf(b, "%-44s %s\n", syn, c.Help)
}

func (s *Session) describeBreakpoints() string {
	if len(s.breakpoints) == 0 {
		return "no breakpoints"
	}
	var b strings.Builder
	for _, bp := range s.breakpoints {
		on := "on "
		if !bp.Enabled {
			on = "off"
		}
		fmt.Fprintf(&b, "#%d %s hits %d  %s\n", bp.ID, on, bp.Hits, bp.Describe())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *Session) describeWatches() string {
	if len(s.watches) == 0 {
		return "no watches"
	}
	var b strings.Builder
	for _, w := range s.watches {
		fmt.Fprintf(&b, "#%d %s\n", w.ID, w.Query)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func toggle(on bool) func(context.Context, *Session, string) (Result, error) {
	return func(ctx context.Context, s *Session, args string) (Result, error) {
		id, err := breakpointID(args)
		if err != nil {
			return Result{}, err
		}
		if err := s.EnableBreakpoint(id, on); err != nil {
			return Result{}, err
		}
		what := "enabled"
		if !on {
			what = "disabled"
		}
		return Result{Text: fmt.Sprintf("breakpoint #%d %s", id, what)}, nil
	}
}

func optCount(args string, def int) (int, error) {
	args = strings.TrimSpace(args)
	if args == "" {
		return def, nil
	}
	n, err := strconv.Atoi(args)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a positive count, got %q", args)
	}
	return n, nil
}

func breakpointID(args string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(args), "#"))
	if err != nil {
		return 0, fmt.Errorf("want a number such as 1, got %q", args)
	}
	return n, nil
}

// dropRepeated drops the first word of s when it is word (any case) and
// the word after it is word too ("SELECT SELECT …"), and reports how many
// bytes it dropped.
func dropRepeated(s, word string) (string, int) {
	first, rest, ok := strings.Cut(s, " ")
	if !ok || !strings.EqualFold(first, word) {
		return s, 0
	}
	trimmed := strings.TrimLeft(rest, " \t")
	if next, _, _ := strings.Cut(trimmed, " "); !strings.EqualFold(next, word) {
		return s, 0
	}
	return trimmed, len(s) - len(trimmed)
}

// parseBreak reads "[at|before OPERATOR] [when EXPR] [hits OP N]"; a bare
// expression is a condition. An operator name may have spaces: it is the
// longest of names the words start with, or a quoted string. whenAt is the
// byte offset of the condition in args.
func parseBreak(args string, operators []string) (spec BreakpointSpec, whenAt int, err error) {
	rest := args
	skip := func() { // leading blanks, counted in whenAt
		t := strings.TrimLeft(rest, " \t")
		whenAt += len(rest) - len(t)
		rest = t
	}
	cut := func(n int) { whenAt += n; rest = rest[n:] }
	skip()
	if h, tail, ok := cutHits(rest); ok {
		spec.Hits, rest = h, tail
	}
	word, _, _ := strings.Cut(rest, " ")
	switch strings.ToLower(word) {
	case "at", "before":
		spec.Before = strings.EqualFold(word, "before")
		cut(len(word))
		skip()
		name, n, err := operatorName(rest, operators)
		if err != nil {
			return spec, 0, fmt.Errorf("break %s: %w", strings.ToLower(word), err)
		}
		spec.At = name
		cut(n)
		skip()
	}
	if w, _, _ := strings.Cut(rest, " "); strings.EqualFold(w, "when") {
		cut(len(w))
		skip()
		// The TUI's b opens the bar with "break at OP when ": a condition
		// typed with its own when is that condition.
		if w, _, _ := strings.Cut(rest, " "); strings.EqualFold(w, "when") {
			cut(len(w))
			skip()
		}
		if strings.TrimSpace(rest) == "" {
			return spec, 0, errors.New("break when: which condition?")
		}
	}
	spec.When = strings.TrimSpace(rest)
	if spec.When == "" && spec.At == "" && !spec.Before && rest != "" {
		return spec, 0, fmt.Errorf("break: cannot read %q", args)
	}
	return spec, whenAt, nil
}

// operatorName reads an operator name at the start of s: quoted ("..." or
// '...'), or the longest known name followed by the end or a blank, or one
// word. n is the number of bytes read.
func operatorName(s string, operators []string) (name string, n int, err error) {
	if s == "" {
		return "", 0, errors.New("which operator?")
	}
	if q := s[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", 0, fmt.Errorf("the quote before %s is not closed", s)
		}
		return s[1 : end+1], end + 2, nil
	}
	best := ""
	for _, op := range operators {
		if len(op) > len(best) && strings.HasPrefix(s, op) && (len(s) == len(op) || s[len(op)] == ' ') {
			best = op
		}
	}
	if best != "" {
		return best, len(best), nil
	}
	// An unknown name: up to the condition, for the error's did-you-mean.
	if i := strings.Index(strings.ToLower(s), " when "); i >= 0 {
		return s[:i], i, nil
	}
	return s, len(s), nil
}

// hitsClause is a trailing "hits OP N".
var hitsClause = regexp.MustCompile(`(?i)(^|\s)hits\s*(>=|>|==|=|%)\s*(\d+)\s*$`)

// cutHits cuts a trailing hit condition off s.
func cutHits(s string) (HitCond, string, bool) {
	m := hitsClause.FindStringSubmatchIndex(s)
	if m == nil {
		return HitCond{}, s, false
	}
	op := s[m[4]:m[5]]
	if op == "=" {
		op = "=="
	}
	n, err := strconv.Atoi(s[m[6]:m[7]])
	if err != nil {
		return HitCond{}, s, false
	}
	return HitCond{Op: op, N: n}, strings.TrimRight(s[:m[0]], " \t"), true
}

// parseTime reads RFC 3339 or epoch milliseconds.
func parseTime(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("want a time such as 2026-01-01T00:00:10Z or epoch milliseconds, got %q", s)
	}
	return t.UnixMilli(), nil
}
