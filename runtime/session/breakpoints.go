package session

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/state"
)

// Breakpoint stops a run when an operator handles a record (At) for which a
// condition holds (When). It keeps the condition's text for display and its
// compiled form for evaluation, as delve does.
type Breakpoint struct {
	ID      int
	At      string // operator name; "" = any operator
	When    string // condition text; "" = always
	Enabled bool
	// Hits counts the records that matched; After stops only from hit
	// After+1 on (0 stops at every hit).
	Hits  int
	After int

	cond *query.Compiled
}

// Describe prints the breakpoint as it was set.
func (b *Breakpoint) Describe() string {
	var parts []string
	if b.At != "" {
		parts = append(parts, "at "+b.At)
	}
	if b.When != "" {
		parts = append(parts, "when "+b.When)
	}
	if b.After > 0 {
		parts = append(parts, fmt.Sprintf("after %d", b.After))
	}
	if len(parts) == 0 {
		return "every record"
	}
	return strings.Join(parts, " ")
}

// BreakpointNames are the names a condition can use.
var BreakpointNames = []string{"key", "value", "record", "operator", "subtask", "timestamp", "state"}

// AddBreakpoint sets a breakpoint. at names an operator (checked against
// the plan); when is an expression of the query language over key, value
// (= record), operator, subtask, timestamp and state (the current key's
// state values of that operator by name: state.count).
func (s *Session) AddBreakpoint(at, when string) (*Breakpoint, error) {
	bp := &Breakpoint{At: at, When: when, Enabled: true}
	if at != "" {
		if _, ok := s.Plan().Operator(at); !ok {
			return nil, fmt.Errorf("no operator %q%s (operators: %s)", at, didYouMean(at, s.Plan().OperatorNames()), strings.Join(s.Plan().OperatorNames(), ", "))
		}
	}
	if when != "" {
		e, err := query.ParseExpr(when)
		if err != nil {
			return nil, err
		}
		c, err := query.CompileExpr(e, BreakpointNames)
		if err != nil {
			return nil, err
		}
		bp.cond = c
	}
	s.nextBPID++
	bp.ID = s.nextBPID
	s.breakpoints = append(s.breakpoints, bp)
	return bp, nil
}

// Breakpoints lists the breakpoints.
func (s *Session) Breakpoints() []*Breakpoint { return s.breakpoints }

// Breakpoint finds a breakpoint by id.
func (s *Session) Breakpoint(id int) (*Breakpoint, bool) {
	for _, b := range s.breakpoints {
		if b.ID == id {
			return b, true
		}
	}
	return nil, false
}

// DeleteBreakpoint removes a breakpoint.
func (s *Session) DeleteBreakpoint(id int) error {
	for i, b := range s.breakpoints {
		if b.ID == id {
			s.breakpoints = append(s.breakpoints[:i], s.breakpoints[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("no breakpoint #%d", id)
}

// EnableBreakpoint turns a breakpoint on or off.
func (s *Session) EnableBreakpoint(id int, on bool) error {
	b, ok := s.Breakpoint(id)
	if !ok {
		return fmt.Errorf("no breakpoint #%d", id)
	}
	b.Enabled = on
	return nil
}

func (s *Session) activeBreakpoints() []*Breakpoint {
	var out []*Breakpoint
	for _, b := range s.breakpoints {
		if b.Enabled {
			out = append(out, b)
		}
	}
	return out
}

// checkBreakpoints returns the first breakpoint that the step hit. A
// condition that fails to evaluate stops with its error rather than being
// skipped silently.
func (s *Session) checkBreakpoints(info runtime.StepInfo) (*Breakpoint, error) {
	if info.Kind != "record" {
		return nil, nil
	}
	for _, b := range s.breakpoints {
		if !b.Enabled || b.At != "" && b.At != info.Operator {
			continue
		}
		if b.cond != nil {
			ok, err := b.cond.EvalBool(s.stepEnv(info))
			if err != nil {
				return nil, fmt.Errorf("breakpoint #%d (%s): %w", b.ID, b.Describe(), err)
			}
			if !ok {
				continue
			}
		}
		b.Hits++
		if b.Hits > b.After {
			return b, nil
		}
	}
	return nil, nil
}

// stepEnv is what a condition sees of a step.
func (s *Session) stepEnv(info runtime.StepInfo) query.Env {
	rec := state.ToDynamic(info.Record)
	return &stepEnv{s: s, info: info, rec: rec}
}

type stepEnv struct {
	s    *Session
	info runtime.StepInfo
	rec  any
	st   map[string]any
}

func (e *stepEnv) Names() []string { return BreakpointNames }

func (e *stepEnv) Lookup(name string) (any, bool) {
	switch name {
	case "key":
		return state.ToDynamic(e.info.Key), true
	case "value", "record":
		return e.rec, true
	case "operator":
		return e.info.Operator, true
	case "subtask":
		return int64(e.info.Subtask), true
	case "timestamp":
		return nil, true
	case "state":
		if e.st == nil {
			e.st = e.s.currentKeyState(e.info)
		}
		return e.st, true
	}
	return nil, false
}

// currentKeyState reads the values of the step's key in every keyed state of
// the step's operator.
func (s *Session) currentKeyState(info runtime.StepInfo) map[string]any {
	out := map[string]any{}
	op, ok := s.Plan().Operator(info.Operator)
	if !ok || !op.Keyed || info.Key == nil {
		return out
	}
	meta := state.StateMeta{KeyType: op.KeyType}
	cat := s.exec.Catalog()
	kg, ok := cat.KeyGroupOf(meta, state.ToDynamic(info.Key))
	if !ok {
		return out
	}
	key := state.ToDynamic(info.Key)
	for r, err := range cat.Keyed(state.KeyedScan{OperatorID: op.ID, KeyGroups: []int{kg}, Keys: []any{key}}) {
		if err != nil {
			break
		}
		if !reflect.DeepEqual(r.Key, key) {
			continue
		}
		if r.UserKey != nil {
			m, _ := out[r.StateName].(map[string]any)
			if m == nil {
				m = map[string]any{}
				out[r.StateName] = m
			}
			m[fmt.Sprint(r.UserKey)] = r.Value
			continue
		}
		out[r.StateName] = r.Value
	}
	return out
}

// Watch is a query re-run after every stop, with what changed.
type Watch struct {
	ID    int
	Query string
	last  map[string]int
	rows  [][]any
	res   WatchResult
}

// Last is the watch's result at the last stop (or when it was added).
func (w *Watch) Last() WatchResult { return w.res }

// WatchResult is a watch's rows after a stop, with the rows that appeared
// and disappeared since the previous stop.
type WatchResult struct {
	Watch   *Watch
	Columns []string
	Rows    [][]any
	Added   [][]any
	Removed [][]any
	Err     error
}

// AddWatch adds a watch; the query is checked now.
func (s *Session) AddWatch(text string) (*Watch, error) {
	q, err := query.Parse(text)
	if err != nil {
		return nil, err
	}
	if err := query.Check(q); err != nil {
		return nil, err
	}
	s.nextWatchID++
	w := &Watch{ID: s.nextWatchID, Query: text}
	s.watches = append(s.watches, w)
	s.evalWatch(w)
	return w, nil
}

// Watches lists the watches.
func (s *Session) Watches() []*Watch { return s.watches }

// DeleteWatch removes a watch.
func (s *Session) DeleteWatch(id int) error {
	for i, w := range s.watches {
		if w.ID == id {
			s.watches = append(s.watches[:i], s.watches[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("no watch #%d", id)
}

// WatchRowLimit bounds the rows a watch result keeps; a result that long
// may have more.
const WatchRowLimit = 200

func (s *Session) evalWatches() []WatchResult {
	var out []WatchResult
	for _, w := range s.watches {
		out = append(out, s.evalWatch(w))
	}
	return out
}

func (s *Session) evalWatch(w *Watch) WatchResult {
	res := WatchResult{Watch: w}
	rows, err := s.Query(context.Background(), w.Query)
	if err != nil {
		res.Err = err
		return res
	}
	res.Columns = rows.Columns()
	cur := map[string]int{}
	for row, err := range rows.All() {
		if err != nil {
			res.Err = err
			break
		}
		k := fmt.Sprint(row)
		cur[k]++
		if len(res.Rows) < WatchRowLimit {
			res.Rows = append(res.Rows, row)
		}
		if w.last != nil && w.last[k] < cur[k] {
			res.Added = append(res.Added, row)
		}
	}
	if w.last != nil {
		for _, r := range w.rows {
			k := fmt.Sprint(r)
			if cur[k] == 0 {
				res.Removed = append(res.Removed, r)
			}
		}
	}
	w.last, w.rows, w.res = cur, res.Rows, res
	return res
}

func didYouMean(name string, known []string) string {
	best, bestD := "", 4
	for _, k := range known {
		if d := levenshtein(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
