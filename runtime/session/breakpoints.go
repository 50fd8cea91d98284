package session

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/state"
)

// Breakpoint stops a run when an operator handles a record (At) for which a
// condition holds (When): after the operator ran, or with Before just
// before it runs, so the state is still the one before its update. It
// keeps the condition's text for display and its compiled form for
// evaluation, as delve does.
type Breakpoint struct {
	ID      int
	At      string // operator name; "" = any operator
	When    string // condition text; "" = always
	Before  bool
	Enabled bool
	// Hits counts the records that matched; HitCond, when set, stops only
	// at the hits it accepts (delve's cond -hitcount).
	Hits    int
	HitCond HitCond

	cond *query.Compiled
}

// HitCond is a condition on a breakpoint's hit count: "> 3" stops from the
// fourth hit on, "== 3" at the third only, "% 3" at every third. The zero
// HitCond accepts every hit.
type HitCond struct {
	Op string // "", ">", ">=", "==", "%"
	N  int
}

func (h HitCond) accepts(hits int) bool {
	switch h.Op {
	case ">":
		return hits > h.N
	case ">=":
		return hits >= h.N
	case "==":
		return hits == h.N
	case "%":
		return h.N > 0 && hits%h.N == 0
	}
	return true
}

func (h HitCond) String() string {
	if h.Op == "" {
		return ""
	}
	return fmt.Sprintf("hits %s %d", h.Op, h.N)
}

// Describe prints the breakpoint as it was set.
func (b *Breakpoint) Describe() string {
	var parts []string
	if b.At != "" {
		word := "at "
		if b.Before {
			word = "before "
		}
		parts = append(parts, word+quoteOperator(b.At))
	} else if b.Before {
		parts = append(parts, "before every operator")
	}
	if b.When != "" {
		parts = append(parts, "when "+b.When)
	}
	if hc := b.HitCond.String(); hc != "" {
		parts = append(parts, hc)
	}
	if len(parts) == 0 {
		return "every record"
	}
	return strings.Join(parts, " ")
}

// quoteOperator quotes an operator name that has spaces, as `break` reads it.
func quoteOperator(name string) string {
	if strings.ContainsAny(name, " \t") {
		return `"` + name + `"`
	}
	return name
}

// BreakpointNames are the names a condition can use.
var BreakpointNames = []string{"key", "value", "record", "operator", "subtask", "timestamp", "state"}

// BreakpointSpec is what a breakpoint is set from.
type BreakpointSpec struct {
	At     string // operator name or uid; "" = any
	When   string // condition; "" = always
	Before bool   // stop before the operator runs
	Hits   HitCond
}

// AddBreakpoint sets a breakpoint after the operator at (any when "") ran
// on a record for which when holds. See SetBreakpoint.
func (s *Session) AddBreakpoint(at, when string) (*Breakpoint, error) {
	return s.SetBreakpoint(BreakpointSpec{At: at, When: when})
}

// SetBreakpoint sets a breakpoint. At names an operator (checked against
// the plan); When is an expression of the query language over key, value
// (= record), operator, subtask, timestamp (the record's event time, NULL
// without one) and state (the current key's
// state values of that operator by name: state.count). The states a
// condition names are checked against the operator's: a condition that
// could never hold is refused, not kept silently.
func (s *Session) SetBreakpoint(spec BreakpointSpec) (*Breakpoint, error) {
	bp := &Breakpoint{At: spec.At, When: spec.When, Before: spec.Before, HitCond: spec.Hits, Enabled: true}
	var op *runtime.OperatorInfo
	if spec.At != "" {
		o, ok := s.Plan().Operator(spec.At)
		if !ok {
			return nil, fmt.Errorf("no operator %q%s (operators: %s)", spec.At, didYouMean(spec.At, s.Plan().OperatorNames()), strings.Join(quotedNames(s.Plan().OperatorNames()), ", "))
		}
		op, bp.At = o, o.Name
	}
	if spec.When != "" {
		e, err := query.ParseExpr(spec.When)
		if err != nil {
			return nil, err
		}
		c, err := query.CompileExpr(e, BreakpointNames)
		if err != nil {
			return nil, err
		}
		if err := s.checkStatePaths(e, op); err != nil {
			return nil, err
		}
		bp.cond = c
	}
	switch spec.Hits.Op {
	case "", ">", ">=", "==", "%":
	default:
		return nil, fmt.Errorf("hits %s: want one of >, >=, ==, %%", spec.Hits.Op)
	}
	if spec.Hits.Op == "%" && spec.Hits.N <= 0 {
		return nil, errors.New("hits % N: N must be positive")
	}
	s.nextBPID++
	bp.ID = s.nextBPID
	s.breakpoints = append(s.breakpoints, bp)
	return bp, nil
}

func quotedNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteOperator(n)
	}
	return out
}

// scalarTypes are value types without fields: a path into one can never
// be anything but NULL.
var scalarTypes = map[string]bool{"string": true, "int64": true, "float64": true, "bool": true, "bytes": true, "time": true, "position": true}

// checkStatePaths checks the state.NAME paths of a condition against the
// keyed states of op (of every keyed operator when op is nil).
func (s *Session) checkStatePaths(e *query.Expr, op *runtime.OperatorInfo) error {
	paths, err := query.Paths(e)
	if err != nil {
		return err
	}
	var ops []*runtime.OperatorInfo
	if op != nil {
		ops = []*runtime.OperatorInfo{op}
	} else {
		for _, o := range s.Plan().Operators {
			if o.Keyed {
				ops = append(ops, o)
			}
		}
	}
	for _, p := range paths {
		if p.Names[0] != "state" || len(p.Names) < 2 {
			continue
		}
		name := p.Names[1]
		if op != nil && !op.Keyed {
			return &query.Error{Pos: p.Pos[0], Msg: fmt.Sprintf("operator %q is not keyed: it has no keyed state for state.%s", op.Name, name),
				Hint: "state.NAME reads the current key's state of a keyed operator; break at one (after KeyBy)"}
		}
		var names []string
		var meta *state.StateMeta
		for _, o := range ops {
			for _, m := range s.exec.DescribeStates(o) {
				if m.Scope != state.ScopeKeyed || m.Kind == state.KindTimers {
					continue
				}
				names = append(names, m.StateName)
				if m.StateName == name && meta == nil {
					meta = &m
				}
			}
		}
		if meta == nil {
			where := "no keyed operator has a state"
			if op != nil {
				where = fmt.Sprintf("operator %q has no state", op.Name)
			}
			hint := didYouMean(name, names)
			if hint == "" && len(names) > 0 {
				hint = "its states: " + strings.Join(names, ", ")
			}
			return &query.Error{Pos: p.Pos[1], Msg: fmt.Sprintf("%s %q", where, name), Hint: strings.TrimPrefix(hint, "; ")}
		}
		depth := 2 // the value itself
		if meta.Kind == state.KindMap || meta.Kind.IsList() {
			depth = 3 // an element
		}
		if len(p.Names) > depth && scalarTypes[meta.ValueType] {
			return &query.Error{Pos: p.Pos[depth], Msg: fmt.Sprintf("state.%s is %s %s: it has no field %q", name, article(meta.Kind.String()), meta.ValueType, p.Names[depth])}
		}
	}
	return nil
}

func article(kind string) string {
	if strings.IndexByte("aeiou", kind[0]) >= 0 {
		return "an " + kind + " of"
	}
	return "a " + kind + " of"
}

// Breakpoints lists copies of the breakpoints.
func (s *Session) Breakpoints() []Breakpoint {
	out := make([]Breakpoint, len(s.breakpoints))
	for i, b := range s.breakpoints {
		out[i] = *b
	}
	return out
}

// Breakpoint returns a copy of a breakpoint by id.
func (s *Session) Breakpoint(id int) (Breakpoint, bool) {
	for _, b := range s.breakpoints {
		if b.ID == id {
			return *b, true
		}
	}
	return Breakpoint{}, false
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
	for _, b := range s.breakpoints {
		if b.ID == id {
			b.Enabled = on
			return nil
		}
	}
	return fmt.Errorf("no breakpoint #%d", id)
}

// SetHitCond changes the hit condition of a breakpoint.
func (s *Session) SetHitCond(id int, h HitCond) error {
	for _, b := range s.breakpoints {
		if b.ID == id {
			b.HitCond = h
			return nil
		}
	}
	return fmt.Errorf("no breakpoint #%d", id)
}

// breaksAt reports whether an enabled breakpoint names the operator.
func (s *Session) breaksAt(operator string) bool {
	for _, b := range s.breakpoints {
		if b.Enabled && b.At == operator {
			return true
		}
	}
	return false
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

// checkBreakpoints counts the hits of the breakpoints of one kind (before
// or after the step) on a record step, and returns a copy of the first
// whose hit condition accepts its count. A condition that fails to
// evaluate stops with its error rather than being skipped silently.
func (s *Session) checkBreakpoints(info runtime.StepInfo, before bool) (*Breakpoint, error) {
	// A source's step reads a record: breakpoints at that source see it.
	source := info.Kind == "source" && !before
	if info.Kind != "record" && !source {
		return nil, nil
	}
	var hit *Breakpoint
	env := s.stepEnv(info)
	for _, b := range s.breakpoints {
		if !b.Enabled || b.Before != before || b.At != "" && b.At != info.Operator || source && b.At == "" {
			continue
		}
		if b.cond != nil {
			ok, err := b.cond.EvalBool(env)
			if err != nil {
				return nil, fmt.Errorf("breakpoint #%d (%s): %w", b.ID, b.Describe(), err)
			}
			if !ok {
				continue
			}
		}
		b.Hits++
		if hit == nil && b.HitCond.accepts(b.Hits) {
			c := *b
			hit = &c
		}
	}
	return hit, nil
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
		// The record's event time, compared with RFC 3339 strings
		// (timestamp >= '2026-03-01T12:00:05Z'); NULL for a record
		// without one and for the record a source step reads.
		if !e.info.HasTimestamp {
			return nil, true
		}
		return time.UnixMilli(e.info.Timestamp).UTC(), true
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
// and disappeared since the previous stop. It is a plain value: it holds
// no reference to the session.
type WatchResult struct {
	WatchID int
	Query   string
	Columns []string
	Rows    [][]any
	// Capped says Rows holds only the first WatchRowLimit rows.
	Capped  bool
	Added   [][]any
	Removed [][]any
	Err     error
}

// AddWatch adds a watch. Its query is run at once: a query that fails
// (an unknown table, a column of the wrong type) is refused with its
// error, as the same query typed as a command is.
func (s *Session) AddWatch(text string) (*Watch, error) {
	q, err := query.Parse(text)
	if err != nil {
		return nil, err
	}
	if err := query.Check(q); err != nil {
		return nil, err
	}
	w := &Watch{ID: s.nextWatchID + 1, Query: text}
	if res := s.evalWatch(w); res.Err != nil {
		return nil, res.Err
	}
	s.nextWatchID++
	s.watches = append(s.watches, w)
	return w, nil
}

// Watches lists copies of the watches.
func (s *Session) Watches() []Watch {
	out := make([]Watch, len(s.watches))
	for i, w := range s.watches {
		out[i] = Watch{ID: w.ID, Query: w.Query, res: w.res}
	}
	return out
}

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

// evalWatch runs a watch's query. A query that fails at a stop (it passed
// when the watch was added) gives a result with Err, never a missing one.
func (s *Session) evalWatch(w *Watch) WatchResult {
	res := WatchResult{WatchID: w.ID, Query: w.Query}
	rows, err := s.Query(context.Background(), w.Query)
	if err != nil {
		res.Err = err
		w.res = res
		return res
	}
	defer rows.Close()
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
		} else {
			res.Capped = true
		}
		if w.last != nil && w.last[k] < cur[k] {
			res.Added = append(res.Added, row)
		}
	}
	if w.last != nil && res.Err == nil {
		for _, r := range w.rows {
			k := fmt.Sprint(r)
			if cur[k] == 0 {
				res.Removed = append(res.Removed, r)
			}
		}
	}
	if res.Err == nil {
		w.last, w.rows = cur, res.Rows
	}
	w.res = res
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
