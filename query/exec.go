package query

import (
	"context"
	"errors"
	"iter"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"streamdbg/state"
)

// Catalog is what a query reads: live state (runtime/session) and
// savepoints implement it. It has exactly the method set of state.Catalog,
// so a state.Catalog is a Catalog and holders of state never import query.
type Catalog interface {
	Operators() []state.OperatorInfo
	States() []state.StateMeta
	Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error]
	OperatorState(scan state.OperatorScan) iter.Seq2[state.OperatorRow, error]
	Timers(scan state.TimerScan) iter.Seq2[state.TimerRow, error]
	KeyGroupOf(meta state.StateMeta, key any) (kg int, ok bool)
}

var _ Catalog = state.Catalog(nil)

// Rows is the streaming result of a query. Read it once, either with
// Next/Row/Err (and Close when stopping early) or by ranging over All.
// Rows are produced while the catalog is read: a query without ORDER BY
// or GROUP BY holds one row at a time.
type Rows struct {
	cols  []string
	notes []string
	run   func(yield func([]any) bool) error

	next func() ([]any, error, bool)
	stop func()
	row  []any
	err  error
}

// Columns are the names of the result's columns, in order.
func (r *Rows) Columns() []string { return r.cols }

// Notes are what the plan noticed about the query, for the user to see
// beside its rows: an operator_name, operator_id or state_name it pins
// that no state has ("no state has operator_name 'Count'; did you mean
// "count"?"), so that reading nothing is not mistaken for an empty state.
func (r *Rows) Notes() []string { return r.notes }

// All yields the rows; an error ends the sequence as its last pair.
func (r *Rows) All() iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		stopped := false
		err := r.run(func(row []any) bool {
			if !yield(row, nil) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}

// Next advances to the next row; false at the end or on an error (Err).
func (r *Rows) Next() bool {
	if r.next == nil {
		r.next, r.stop = iter.Pull2(r.All())
	}
	if r.err != nil {
		return false
	}
	row, err, ok := r.next()
	if !ok {
		return false
	}
	if err != nil {
		r.err = err
		return false
	}
	r.row = row
	return true
}

// Row is the current row; its values are dynamic values (see state.Hex).
func (r *Rows) Row() []any { return r.row }

// Err is the error that ended Next, if any.
func (r *Rows) Err() error { return r.err }

// Close stops reading; it is safe to call more than once.
func (r *Rows) Close() error {
	if r.stop != nil {
		r.stop()
	}
	return nil
}

// Explain plans a query against a catalog and prints the plan: the table,
// the states read and their key groups, what was pushed down, the filter
// evaluated on every row, grouping, order and limit.
func Explain(cat Catalog, q *Query) (string, error) {
	p, err := compileQuery(q)
	if err != nil {
		return "", err
	}
	pl, err := planQuery(cat, p, Options{SkipUnreadable: true})
	if err != nil {
		return "", err
	}
	return pl.explain() + explainReads(cat, pl), nil
}

// ReadExplainer is a catalog that can say which files and blocks a keyed
// scan reads (Flink's RocksDB state: the SST blocks an index seek selects).
// EXPLAIN adds its lines as "reads:".
type ReadExplainer interface {
	ExplainKeyed(scan state.KeyedScan) []string
}

func explainReads(cat Catalog, pl *plan) string {
	ex, ok := cat.(ReadExplainer)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, s := range pl.scans {
		if s.keyed == nil {
			continue
		}
		for _, l := range ex.ExplainKeyed(*s.keyed) {
			b.WriteString("reads: " + l + "\n")
		}
	}
	return b.String()
}

// Run checks and plans a query and returns its rows, which are read from
// the catalog as they are consumed. An EXPLAIN query returns one column,
// plan, with one row per line of the plan. A query that needs a state the
// catalog cannot read fails with an *UnreadableError (see RunWith).
func Run(ctx context.Context, cat Catalog, q *Query) (*Rows, error) {
	return RunWith(ctx, cat, q, Options{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, cat Catalog, q *Query, opts Options) (*Rows, error) {
	p, err := compileQuery(q)
	if err != nil {
		return nil, err
	}
	pl, err := planQuery(cat, p, opts)
	if err != nil {
		return nil, err
	}
	if q.Explain {
		lines := strings.Split(strings.TrimSuffix(pl.explain()+explainReads(cat, pl), "\n"), "\n")
		return &Rows{cols: []string{"plan"}, run: func(yield func([]any) bool) error {
			for _, l := range lines {
				if !yield([]any{l}) {
					return nil
				}
			}
			return nil
		}}, nil
	}
	return &Rows{cols: p.cols, notes: pl.notes, run: func(yield func([]any) bool) error {
		return pl.execute(ctx, cat, yield)
	}}, nil
}

// RunText parses and runs a query.
func RunText(ctx context.Context, cat Catalog, text string) (*Rows, error) {
	q, err := Parse(text)
	if err != nil {
		return nil, err
	}
	return Run(ctx, cat, q)
}

// checkEvery is how many rows are read between looks at the context.
const checkEvery = 1024

// read yields every row the plan's scans produce. It reuses one srcRow.
func (pl *plan) read(ctx context.Context, cat Catalog, yield func(*srcRow) bool) error {
	var (
		r     srcRow
		kr    state.KeyedRow
		or    state.OperatorRow
		tr    state.TimerRow
		n     int
		metas []state.StateMeta
	)
	tick := func() error {
		n++
		if n%checkEvery == 0 {
			return ctx.Err()
		}
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, s := range pl.scans {
		switch {
		case s.meta:
			metas = withUIDs(cat.States(), cat.Operators())
			for i := range metas {
				r = srcRow{meta: &metas[i]}
				if !yield(&r) {
					return nil
				}
			}
		case s.keyed != nil:
			if s.keyed.KeyGroups != nil && len(s.keyed.KeyGroups) == 0 {
				continue // the pinned keys contradict each other
			}
			read := 0
			for row, err := range cat.Keyed(*s.keyed) {
				if err != nil {
					if pl.partial(s.label, read, err) {
						break
					}
					return &ScanError{Label: s.label, Err: err}
				}
				read++
				kr = row
				r = srcRow{keyed: &kr}
				if !yield(&r) {
					return nil
				}
				if err := tick(); err != nil {
					return err
				}
			}
		case s.operator != nil:
			read := 0
			for row, err := range cat.OperatorState(*s.operator) {
				if err != nil {
					if pl.partial(s.label, read, err) {
						break
					}
					return &ScanError{Label: s.label, Err: err}
				}
				read++
				or = row
				r = srcRow{op: &or}
				if !yield(&r) {
					return nil
				}
				if err := tick(); err != nil {
					return err
				}
			}
		case s.timers != nil:
			read := 0
			for row, err := range cat.Timers(*s.timers) {
				if err != nil {
					if pl.partial("timers of "+s.label, read, err) {
						break
					}
					return &ScanError{Label: "timers of " + s.label, Err: err}
				}
				read++
				tr = row
				r = srcRow{timer: &tr}
				if !yield(&r) {
					return nil
				}
				if err := tick(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ScanError is a state (or an operator's timers) that failed while it was
// read: Label names it (operator.state, "all keyed states", "timers of
// OPERATOR").
type ScanError struct {
	Label string
	Err   error
}

func (e *ScanError) Error() string { return "query: reading " + e.Label + ": " + e.Err.Error() }
func (e *ScanError) Unwrap() error { return e.Err }

// partial says whether a scan that failed after read rows ends there and
// the query goes on with the other scans (Options.SkipUnreadable; the
// failure is reported to Options.Partial), or fails. A cancelled query
// always fails.
func (pl *plan) partial(label string, read int, err error) bool {
	if !pl.opts.SkipUnreadable || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if pl.opts.Partial != nil {
		pl.opts.Partial(label, read, err)
	}
	return true
}

// execute runs the plan, yielding output rows.
func (pl *plan) execute(ctx context.Context, cat Catalog, yield func([]any) bool) error {
	switch {
	case pl.grouped:
		return pl.executeGrouped(ctx, cat, yield)
	case len(pl.order) > 0:
		return pl.executeSorted(ctx, cat, yield)
	}
	// Streaming: one row at a time, and LIMIT stops the read.
	var (
		ec      evalCtx
		skipped int64
		emitted int64
		err     error
	)
	if pl.limit == 0 {
		return nil
	}
	readErr := pl.read(ctx, cat, func(r *srcRow) bool {
		ec.row = r
		var ok bool
		if ok, err = pl.keep(&ec); err != nil || !ok {
			return err == nil
		}
		if skipped < pl.offset {
			skipped++
			return true
		}
		var out []any
		if out, err = project(&ec, pl.outputs); err != nil {
			return false
		}
		emitted++
		if !yield(out) {
			return false
		}
		return pl.limit < 0 || emitted < pl.limit
	})
	if err != nil {
		return err
	}
	return readErr
}

func (pl *plan) keep(ec *evalCtx) (bool, error) {
	if pl.where == nil {
		return true, nil
	}
	v, err := pl.where.eval(ec)
	return truth(v), err
}

func project(ec *evalCtx, nodes []node) ([]any, error) {
	out := make([]any, len(nodes))
	for i, n := range nodes {
		v, err := n.eval(ec)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// sorter holds rows (outputs then hidden ORDER BY keys) for ORDER BY. With a
// LIMIT it keeps only the rows that can still make the result, so memory is
// bounded by OFFSET+LIMIT rather than by the state size.
type sorter struct {
	order []orderKey
	keep  int64 // -1: all
	rows  [][]any
}

func (s *sorter) cmp(a, b []any) int {
	for _, k := range s.order {
		c := orderCompare(a[k.col], b[k.col])
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (s *sorter) add(row []any) {
	s.rows = append(s.rows, row)
	if s.keep >= 0 && int64(len(s.rows)) >= 2*s.keep+checkEvery {
		s.sort()
	}
}

func (s *sorter) sort() {
	slices.SortStableFunc(s.rows, s.cmp)
	if s.keep >= 0 && int64(len(s.rows)) > s.keep {
		clear(s.rows[s.keep:])
		s.rows = s.rows[:s.keep]
	}
}

func (pl *plan) newSorter() *sorter {
	keep := int64(-1)
	if pl.limit >= 0 && pl.offset <= math.MaxInt64-pl.limit {
		keep = pl.offset + pl.limit
	}
	return &sorter{order: pl.order, keep: keep}
}

// emit yields the sorted rows after OFFSET, up to LIMIT, without the hidden
// ORDER BY keys.
func (pl *plan) emit(rows [][]any, yield func([]any) bool) {
	n := len(pl.outputs)
	var emitted int64
	for i, row := range rows {
		if int64(i) < pl.offset {
			continue
		}
		if pl.limit >= 0 && emitted >= pl.limit {
			return
		}
		emitted++
		if !yield(row[:n:n]) {
			return
		}
	}
}

func (pl *plan) executeSorted(ctx context.Context, cat Catalog, yield func([]any) bool) error {
	var (
		ec  evalCtx
		err error
	)
	s := pl.newSorter()
	all := append(slices.Clip(pl.outputs), pl.hidden...)
	readErr := pl.read(ctx, cat, func(r *srcRow) bool {
		ec.row = r
		var ok bool
		if ok, err = pl.keep(&ec); err != nil || !ok {
			return err == nil
		}
		var row []any
		if row, err = project(&ec, all); err != nil {
			return false
		}
		s.add(row)
		return true
	})
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	s.sort()
	pl.emit(s.rows, yield)
	return nil
}

// group is one GROUP BY group: its key values and accumulators.
type group struct {
	keys []any
	accs []accumulator
}

type accumulator struct {
	n int64 // rows counted, or numbers summed
	// sumHi:sumLo is the exact sum of int64 numbers, a 128-bit two's
	// complement integer: SUM fails only if the total does not fit, AVG
	// never does.
	sumHi   int64
	sumLo   uint64
	sumF    float64
	isFloat bool
	best    any // MIN/MAX so far
}

func (a *accumulator) addInt(x int64) {
	lo := a.sumLo + uint64(x)
	carry := int64(0)
	if lo < a.sumLo {
		carry = 1
	}
	a.sumHi += x>>63 + carry
	a.sumLo = lo
}

// intSum is the exact sum as an int64, if it fits.
func (a *accumulator) intSum() (int64, bool) {
	return int64(a.sumLo), a.sumHi == int64(a.sumLo)>>63
}

// bigSum is the exact sum.
func (a *accumulator) bigSum() *big.Int {
	hi := new(big.Int).Lsh(big.NewInt(a.sumHi), 64)
	return hi.Add(hi, new(big.Int).SetUint64(a.sumLo))
}

// floatSum is the sum as a float64, correctly rounded. (Adding the halves
// as floats cancelled a small negative total: -25 is 2^64 - 25 in sumLo,
// which rounds to 2^64, and came out 0.)
func (a *accumulator) floatSum() float64 {
	if s, ok := a.intSum(); ok {
		return float64(s)
	}
	f, _ := new(big.Float).SetInt(a.bigSum()).Float64()
	return f
}

// intAvg is the exact mean of the int64 numbers summed, correctly rounded
// to a float64.
func (a *accumulator) intAvg() float64 {
	if s, ok := a.intSum(); ok && s > -1<<53 && s < 1<<53 {
		return float64(s) / float64(a.n) // both exact: one rounding
	}
	f, _ := new(big.Rat).SetFrac(a.bigSum(), big.NewInt(a.n)).Float64()
	return f
}

func (a *accumulator) add(spec *aggSpec, v any) {
	switch spec.fn {
	case "count":
		if spec.star || v != nil {
			a.n++
		}
	case "sum", "avg":
		switch x := v.(type) {
		case int64:
			a.n++
			if a.isFloat {
				a.sumF += float64(x)
			} else {
				a.addInt(x)
			}
		case float64, state.Decimal:
			f, _ := toFloat(x)
			a.n++
			if !a.isFloat {
				a.isFloat, a.sumF = true, a.floatSum()
			}
			a.sumF += f
		}
	case "min", "max":
		if v == nil {
			return
		}
		c := orderCompare(v, a.best)
		if a.best == nil || (spec.fn == "min" && c < 0) || (spec.fn == "max" && c > 0) {
			a.best = v
		}
	}
}

func (a *accumulator) result(spec *aggSpec) (any, error) {
	switch spec.fn {
	case "count":
		return a.n, nil
	case "sum":
		switch {
		case a.n == 0:
			return nil, nil
		case a.isFloat:
			return a.sumF, nil
		}
		if s, ok := a.intSum(); ok {
			return s, nil
		}
		return nil, errorf(spec.pos, "integer overflow: %s is %.6g, more than int64 holds", spec.text, a.floatSum()).
			hint("SUM(1.0 * x) sums in float64, inexactly")
	case "avg":
		if a.n == 0 {
			return nil, nil
		}
		if a.isFloat {
			return a.sumF / float64(a.n), nil
		}
		return a.intAvg(), nil
	}
	return a.best, nil
}

func (pl *plan) executeGrouped(ctx context.Context, cat Catalog, yield func([]any) bool) error {
	var (
		ec     evalCtx
		err    error
		groups = map[string]*group{}
		order  []*group // first appearance, for a deterministic result
		keyBuf []byte
		keys   = make([]any, len(pl.groupBy))
	)
	readErr := pl.read(ctx, cat, func(r *srcRow) bool {
		ec.row = r
		var ok bool
		if ok, err = pl.keep(&ec); err != nil || !ok {
			return err == nil
		}
		keyBuf = keyBuf[:0]
		for i, n := range pl.groupBy {
			if keys[i], err = n.eval(&ec); err != nil {
				return false
			}
			keyBuf = appendGroupKey(keyBuf, keys[i])
		}
		g, ok := groups[string(keyBuf)]
		if !ok {
			g = &group{keys: slices.Clone(keys), accs: make([]accumulator, len(pl.aggs))}
			groups[string(keyBuf)] = g
			order = append(order, g)
		}
		for i, spec := range pl.aggs {
			var v any
			if spec.arg != nil {
				if v, err = spec.arg.eval(&ec); err != nil {
					return false
				}
			}
			g.accs[i].add(spec, v)
		}
		return true
	})
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	if len(order) == 0 && len(pl.groupBy) == 0 {
		// Aggregates over no rows still make one row: COUNT(*) = 0.
		order = append(order, &group{accs: make([]accumulator, len(pl.aggs))})
	}
	s := pl.newSorter()
	all := append(slices.Clip(pl.outputs), pl.hidden...)
	for _, g := range order {
		ec = evalCtx{groups: g.keys, aggs: make([]any, len(pl.aggs))}
		for i, spec := range pl.aggs {
			if ec.aggs[i], err = g.accs[i].result(spec); err != nil {
				return err
			}
		}
		row, err := project(&ec, all)
		if err != nil {
			return err
		}
		if len(pl.order) > 0 {
			s.add(row)
		} else {
			s.rows = append(s.rows, row)
		}
	}
	if len(pl.order) > 0 {
		s.sort()
	}
	pl.emit(s.rows, yield)
	return nil
}

// appendGroupKey encodes a value so that equal values (1 and 1.0 included)
// encode equally and different ones differently.
func appendGroupKey(b []byte, v any) []byte {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		v = int64(f)
	}
	switch x := v.(type) {
	case nil:
		return append(b, 'N', 0)
	case int64:
		b = append(b, 'i')
		b = strconv.AppendInt(b, x, 10)
	case float64:
		b = append(b, 'f')
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		b = append(b, x...)
	default:
		s := formatText(v)
		b = append(b, 'o')
		b = append(b, typeName(v)...)
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	return append(b, 0)
}

// withUIDs fills in each state's operator uid from its operator where the
// reader of the states left it out (ours, live and saved, keep the uid on
// the operator only).
func withUIDs(metas []state.StateMeta, ops []state.OperatorInfo) []state.StateMeta {
	metas = slices.Clone(metas) // the catalog's own, perhaps
	uids := make(map[string]string, len(ops))
	for _, op := range ops {
		uids[op.ID] = op.UID
	}
	for i := range metas {
		if metas[i].OperatorUID == "" {
			metas[i].OperatorUID = uids[metas[i].OperatorID]
		}
	}
	return metas
}
