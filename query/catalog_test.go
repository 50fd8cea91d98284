package query

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"streamdbg/state"
)

// memCatalog is a Catalog over slices. It records every scan it serves and
// the rows it yields, so tests can assert that pushdown read one key group.
type memCatalog struct {
	ops    []state.OperatorInfo
	metas  []state.StateMeta
	keyed  []state.KeyedRow // ordered by key group, state, key (state.Entry order)
	opRows []state.OperatorRow
	timers []state.TimerRow

	reads    []string // one line per scan served
	rowsRead int
}

var _ Catalog = (*memCatalog)(nil)

func (c *memCatalog) Operators() []state.OperatorInfo { return c.ops }
func (c *memCatalog) States() []state.StateMeta       { return c.metas }

func (c *memCatalog) Keyed(s state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	kgs := "all"
	if s.KeyGroups != nil {
		kgs = fmt.Sprint(s.KeyGroups)
	}
	c.reads = append(c.reads, fmt.Sprintf("keyed %s/%s key groups %s", orAll(s.OperatorID), orAll(s.StateName), kgs))
	return func(yield func(state.KeyedRow, error) bool) {
		lo, hi := 0, len(c.keyed)
		if s.KeyGroups != nil {
			// Read only the requested groups, as a savepoint reads file sections.
			for _, kg := range s.KeyGroups {
				start, _ := slices.BinarySearchFunc(c.keyed, kg, func(r state.KeyedRow, kg int) int { return cmp.Compare(r.KeyGroup, kg) })
				for i := start; i < len(c.keyed) && c.keyed[i].KeyGroup == kg; i++ {
					if !c.yieldKeyed(s, c.keyed[i], yield) {
						return
					}
				}
			}
			return
		}
		for i := lo; i < hi; i++ {
			if !c.yieldKeyed(s, c.keyed[i], yield) {
				return
			}
		}
	}
}

func (c *memCatalog) yieldKeyed(s state.KeyedScan, r state.KeyedRow, yield func(state.KeyedRow, error) bool) bool {
	if s.OperatorID != "" && r.OperatorID != s.OperatorID || s.StateName != "" && r.StateName != s.StateName {
		return true
	}
	c.rowsRead++
	return yield(r, nil)
}

func orAll(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func (c *memCatalog) OperatorState(s state.OperatorScan) iter.Seq2[state.OperatorRow, error] {
	c.reads = append(c.reads, fmt.Sprintf("operator %s/%s", orAll(s.OperatorID), orAll(s.StateName)))
	return func(yield func(state.OperatorRow, error) bool) {
		for _, r := range c.opRows {
			if s.OperatorID != "" && r.OperatorID != s.OperatorID || s.StateName != "" && r.StateName != s.StateName {
				continue
			}
			c.rowsRead++
			if !yield(r, nil) {
				return
			}
		}
	}
}

func (c *memCatalog) Timers(s state.TimerScan) iter.Seq2[state.TimerRow, error] {
	c.reads = append(c.reads, fmt.Sprintf("timers %s", orAll(s.OperatorID)))
	return func(yield func(state.TimerRow, error) bool) {
		for _, r := range c.timers {
			if s.OperatorID != "" && r.OperatorID != s.OperatorID {
				continue
			}
			if s.KeyGroups != nil && !slices.Contains(s.KeyGroups, r.KeyGroup) {
				continue
			}
			c.rowsRead++
			if !yield(r, nil) {
				return
			}
		}
	}
}

// KeyGroupOf encodes string keys with the string codec, as the example
// jobs key by strings; other keys cannot be encoded (the query scans).
func (c *memCatalog) KeyGroupOf(meta state.StateMeta, key any) (int, bool) {
	s, ok := key.(string)
	if !ok || meta.KeyType != "string" {
		return 0, false
	}
	return state.KeyGroupFor(state.String.Append(nil, s), maxPar), true
}

func (c *memCatalog) resetReads() { c.reads, c.rowsRead = nil, 0 }

const maxPar = 128

func keyGroup(key string) int { return state.KeyGroupFor(state.String.Append(nil, key), maxPar) }

// sortKeyed puts keyed rows in state.Entry order.
func (c *memCatalog) sortKeyed() {
	slices.SortStableFunc(c.keyed, func(a, b state.KeyedRow) int {
		return cmp.Or(cmp.Compare(a.KeyGroup, b.KeyGroup), strings.Compare(a.StateName, b.StateName),
			strings.Compare(fmt.Sprint(a.Key), fmt.Sprint(b.Key)), strings.Compare(fmt.Sprint(a.UserKey), fmt.Sprint(b.UserKey)))
	})
}

// order is one record of the orders fixture.
type order struct {
	customer, product string
	amount            int64
}

// testOrders is a small orders input; totals in tests are sums over it.
var testOrders = []order{
	{"key_662", "p3", 17}, {"key_7", "p1", 5}, {"key_662", "p1", 3}, {"u1", "p2", 40},
	{"key_42", "p3", 8}, {"key_662", "p3", 22}, {"key_7", "p2", 1}, {"u2", "p1", 100},
	{"it's", "p1", 2},
}

// newTestCatalog builds the state of the orders job after testOrders (with
// 2 source partitions' offsets), plus an `enrich` operator with JSON values,
// a broadcast state and timers.
func newTestCatalog() *memCatalog {
	c := &memCatalog{}
	src := state.OperatorInfo{ID: strings.Repeat("a", 32), UID: "orders-source", Name: "Source: orders", Parallelism: 2, MaxParallelism: maxPar}
	sum := state.OperatorInfo{ID: strings.Repeat("b", 32), UID: "sum", Name: "sum", Parallelism: 2, MaxParallelism: maxPar}
	enrich := state.OperatorInfo{ID: strings.Repeat("c", 32), UID: "enrich", Name: "enrich", Parallelism: 1, MaxParallelism: maxPar}
	c.ops = []state.OperatorInfo{src, sum, enrich}

	totals := map[string]int64{}
	byProduct := map[string]map[string]int64{}
	for _, o := range testOrders {
		totals[o.customer] += o.amount
		if byProduct[o.customer] == nil {
			byProduct[o.customer] = map[string]int64{}
		}
		byProduct[o.customer][o.product] += o.amount
	}
	keyed := func(op state.OperatorInfo, name string, kind state.Kind, key string, ns, uk, v any) {
		kg := keyGroup(key)
		c.keyed = append(c.keyed, state.KeyedRow{OperatorID: op.ID, OperatorName: op.Name, Subtask: state.SubtaskFor(maxPar, op.Parallelism, kg),
			KeyGroup: kg, StateName: name, Kind: kind, Key: key, Namespace: ns, UserKey: uk, Value: v})
	}
	for _, k := range slices.Sorted(func(y func(string) bool) {
		for k := range totals {
			if !y(k) {
				return
			}
		}
	}) {
		keyed(sum, "total", state.KindReducing, k, nil, nil, totals[k])
		for p, a := range byProduct[k] {
			keyed(sum, "by_product", state.KindMap, k, nil, p, a)
		}
	}
	since := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	keyed(enrich, "profile", state.KindValue, "u1", nil, nil, map[string]any{
		"name": "Ada", "amount": int64(40), "ratio": 0.5, "items": []any{"p2", int64(7)}, "since": since, "tags": map[string]any{"p3": "gold"},
	})
	keyed(enrich, "profile", state.KindValue, "u2", nil, nil, map[string]any{
		"name": "Bob", "amount": 100.25, "items": []any{}, "since": since.Add(36 * time.Hour), "raw": []byte{0xca, 0xfe},
	})
	keyed(enrich, "profile", state.KindValue, "u3", map[string]any{"start": since, "end": since.Add(10 * time.Second)}, nil, nil)
	c.sortKeyed()

	c.opRows = []state.OperatorRow{
		{OperatorID: src.ID, OperatorName: src.Name, Subtask: 0, StateName: "offsets", Kind: state.KindSplitList, Position: 0, Value: int64(5)},
		{OperatorID: src.ID, OperatorName: src.Name, Subtask: 0, StateName: "offsets", Kind: state.KindSplitList, Position: 1, Value: int64(4)},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, Subtask: 0, StateName: "rules", Kind: state.KindBroadcast, Key: "vip", Value: map[string]any{"min": int64(50)}},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, Subtask: 0, StateName: "rules", Kind: state.KindBroadcast, Key: "blocked", Value: state.Hex{0x00, 0xff}},
	}
	c.timers = []state.TimerRow{
		{OperatorID: enrich.ID, OperatorName: enrich.Name, KeyGroup: keyGroup("u1"), StateName: "_timer_state/event_timers", Key: "u1", Domain: "event",
			Timestamp: since.UnixMilli() + 1500},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, KeyGroup: keyGroup("u2"), StateName: "_timer_state/processing_timers", Key: "u2", Domain: "processing",
			Timestamp: since.UnixMilli()},
		// A second event timer state, as a Flink process table function
		// keeps them, with a timer at one of Flink's sentinels.
		{OperatorID: enrich.ID, OperatorName: enrich.Name, KeyGroup: keyGroup("u3"), StateName: "_timer_state/event_user-timers", Key: "u3", Domain: "event",
			Timestamp: math.MinInt64 + 10},
	}

	c.metas = []state.StateMeta{
		{OperatorID: src.ID, OperatorName: src.Name, StateName: "offsets", Scope: state.ScopeOperator, Kind: state.KindSplitList, ValueType: "int64", Entries: 2},
		{OperatorID: sum.ID, OperatorName: sum.Name, StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", NamespaceType: "void", ValueType: "int64"},
		{OperatorID: sum.ID, OperatorName: sum.Name, StateName: "by_product", Scope: state.ScopeKeyed, Kind: state.KindMap, KeyType: "string", NamespaceType: "void", UserKeyType: "string", ValueType: "int64"},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, StateName: "profile", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", NamespaceType: "window", ValueType: "json:main.Profile"},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, StateName: "rules", Scope: state.ScopeOperator, Kind: state.KindBroadcast, UserKeyType: "string", ValueType: "json:main.Rule"},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, StateName: "_timer_state/event_timers", Scope: state.ScopeKeyed, Kind: state.KindTimers, KeyType: "string", NamespaceType: "void"},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, StateName: "_timer_state/processing_timers", Scope: state.ScopeKeyed, Kind: state.KindTimers, KeyType: "string", NamespaceType: "void"},
		{OperatorID: enrich.ID, OperatorName: enrich.Name, StateName: "_timer_state/event_user-timers", Scope: state.ScopeKeyed, Kind: state.KindTimers, KeyType: "string", NamespaceType: "void"},
	}
	// Entries counted from the rows, keyed and operator state alike (the
	// broadcast rules were listed with 0 entries while returning 2 rows).
	for i, m := range c.metas {
		if m.Scope != state.ScopeKeyed {
			n := int64(0)
			for _, r := range c.opRows {
				if r.OperatorID == m.OperatorID && r.StateName == m.StateName {
					n++
				}
			}
			if m.Entries != 0 && m.Entries != n {
				panic(fmt.Sprintf("test catalog: %s lists %d entries and has %d rows", m.StateName, m.Entries, n))
			}
			c.metas[i].Entries = n
			continue
		}
		for _, r := range c.keyed {
			if r.OperatorID == m.OperatorID && r.StateName == m.StateName {
				c.metas[i].Entries++
			}
		}
		for _, r := range c.timers {
			if r.OperatorID == m.OperatorID && r.StateName == m.StateName {
				c.metas[i].Entries++
			}
		}
	}
	return c
}
