package export_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"streamdbg/export"
	"streamdbg/state"
)

// rowsCatalog is a catalog of one operator whose keyed states are the rows
// given, for testing every column kind the export writes.
type rowsCatalog struct {
	op    state.OperatorInfo
	metas []state.StateMeta
	rows  map[string][]state.KeyedRow // per state, in key-group order
}

func (c *rowsCatalog) Operators() []state.OperatorInfo { return []state.OperatorInfo{c.op} }
func (c *rowsCatalog) States() []state.StateMeta       { return c.metas }
func (c *rowsCatalog) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	return func(yield func(state.KeyedRow, error) bool) {
		for _, r := range c.rows[scan.StateName] {
			if scan.KeyGroups != nil && !slices.Contains(scan.KeyGroups, r.KeyGroup) {
				continue
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}
func (c *rowsCatalog) OperatorState(state.OperatorScan) iter.Seq2[state.OperatorRow, error] {
	return func(func(state.OperatorRow, error) bool) {}
}
func (c *rowsCatalog) Timers(state.TimerScan) iter.Seq2[state.TimerRow, error] {
	return func(func(state.TimerRow, error) bool) {}
}
func (c *rowsCatalog) KeyGroupOf(state.StateMeta, any) (int, bool) { return 0, false }

// kindsCatalog has states of every typed column kind, with NULLs mixed in
// (some pages all NULL, some all set, some mixed), NaN and signed zeros,
// enough rows for several pages and row groups.
func kindsCatalog(n int) *rowsCatalog {
	const maxPar, par = 16, 2
	op := state.OperatorInfo{ID: "0123456789abcdef0123456789abcdef", Name: "kinds", Parallelism: par, MaxParallelism: maxPar}
	c := &rowsCatalog{op: op, rows: map[string][]state.KeyedRow{}}
	add := func(name string, kind state.Kind, key, uk, value string, gen func(i int) (k, u, v any)) {
		c.metas = append(c.metas, state.StateMeta{OperatorID: op.ID, OperatorName: op.Name, StateName: name, Scope: state.ScopeKeyed, Kind: kind,
			KeyType: key, UserKeyType: uk, ValueType: value, NamespaceType: "void"})
		for i := range n {
			kg := i * maxPar / n
			k, u, v := gen(i)
			c.rows[name] = append(c.rows[name], state.KeyedRow{OperatorID: op.ID, OperatorName: op.Name, Subtask: kg * par / maxPar, KeyGroup: kg,
				StateName: name, Kind: kind, Key: k, UserKey: u, Value: v})
		}
	}
	nullish := func(i int) bool { return i%3 == 0 || i >= n/3 && i < n/2 } // mixed, then a long run
	add("doubles", state.KindValue, "string", "", "float64", func(i int) (any, any, any) {
		// Negative in the first file, positive in the second, with the
		// zeros the format has rules for at the edges of a row group.
		var v any = float64(i)*1.5 - float64(n)
		if i >= n/2 {
			v = float64(i-n/2) + 1
		}
		switch {
		case nullish(i):
			v = nil
		case i == 39998:
			v = math.Copysign(0, -1) // the maximum of its row group: written +0
		case i == n/2+1:
			v = 0.0 // the minimum of its row group: written -0
		case i == n-2:
			v = math.NaN() // the last row group gets no min/max
		}
		return fmt.Sprintf("k%06d", i), nil, v
	})
	add("bools", state.KindValue, "int64", "", "bool", func(i int) (any, any, any) {
		var v any = i%5 < 2
		if nullish(i) {
			v = nil
		}
		return int64(n - i), nil, v
	})
	add("times", state.KindMap, "string", "string", "time", func(i int) (any, any, any) {
		var v any = time.Unix(1_700_000_000+int64(i), int64(i)).UTC()
		if i%4 == 1 {
			v = nil
		}
		u := any(fmt.Sprintf("u%d", i%97))
		if i%11 == 0 {
			u = nil
		}
		return "same key", u, v
	})
	add("blobs", state.KindValue, "string", "", "bytes", func(i int) (any, any, any) {
		v := any(bytes.Repeat([]byte{byte(i)}, i%9))
		if i%6 == 5 {
			v = nil
		}
		if i == 3 {
			v = bytes.Repeat([]byte("long"), 40) // longer than a min/max may be
		}
		return fmt.Sprintf("b%d", i), nil, v
	})
	return c
}

// cellOf is a catalog value as the readers return it.
func cellOf(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case string:
		return []byte(x)
	case time.Time:
		return x.UnixNano()
	}
	return v
}

func sameCell(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && math.Float64bits(fa) == math.Float64bits(fb)
	}
	if ba, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && bytes.Equal(ba, bb)
	}
	return a == b
}

// TestColumnKinds exports states of every column kind (DOUBLE with NaN and
// -0, BOOLEAN, TIMESTAMP, BYTE_ARRAY, map user keys, NULLs in every
// pattern) in small row groups; both readers return the catalog's rows, and
// every chunk's statistics are the exact minimum, maximum and NULL count of
// its values as the test's own reader decodes them.
func TestColumnKinds(t *testing.T) {
	const n = 150_000
	cat := kindsCatalog(n)
	dir := t.TempDir()
	rep, err := export.Parquet(context.Background(), cat, dir, export.Options{RowsPerRowGroup: 40_000})
	if err != nil || rep.Err() != nil {
		t.Fatal(err, rep.Err())
	}
	for _, m := range cat.metas {
		files := stateFiles(t, cat, dir, cat.op, m)
		if len(files) != 2 {
			t.Fatalf("%s: %d files", m.StateName, len(files))
		}
		var want [][]any
		for _, r := range cat.rows[m.StateName] {
			want = append(want, []any{int64(r.KeyGroup), int64(r.Subtask), cellOf(r.Key), nil, cellOf(r.UserKey), cellOf(r.Value)})
		}
		for name, got := range map[string][][]any{"library": readLibrary(t, files), "minimal": readSecond(t, files)} {
			if len(got) != len(want) {
				t.Fatalf("%s, %s reader: %d rows, want %d", m.StateName, name, len(got), len(want))
			}
			for i := range want {
				for j := range want[i] {
					if !sameCell(got[i][j], want[i][j]) {
						t.Fatalf("%s, %s reader, row %d, %s: %v, want %v", m.StateName, name, i, export.Columns[j], got[i][j], want[i][j])
					}
				}
			}
		}
		for _, path := range files {
			checkStatistics(t, path)
		}
	}
}

// checkStatistics compares the statistics of every column chunk with the
// values of that chunk as the minimal reader decodes them.
func checkStatistics(t *testing.T, path string) {
	t.Helper()
	cols, rows, err := readMinParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	if md.NumRows != rows || len(md.RowGroups) < 2 {
		t.Fatalf("%s: %d rows in %d row groups", path, md.NumRows, len(md.RowGroups))
	}
	start := int64(0)
	for g, rg := range md.RowGroups {
		for ci, cc := range rg.Columns {
			col := cols[ci]
			vals := col.values[start : start+rg.NumRows]
			st := cc.MetaData.Statistics
			var nulls int64
			var set []any
			nan, long := false, false
			for _, v := range vals {
				switch x := v.(type) {
				case nil:
					nulls++
					continue
				case float64:
					nan = nan || math.IsNaN(x)
				case []byte:
					long = long || len(x) > 64
				}
				set = append(set, v)
			}
			where := fmt.Sprintf("%s row group %d column %s", path, g, col.name)
			if st.NullCount != nulls {
				t.Fatalf("%s: null count %d, want %d", where, st.NullCount, nulls)
			}
			if len(set) == 0 || nan || long {
				if st.MinValue != nil || st.MaxValue != nil {
					t.Fatalf("%s: min/max %x/%x where they cannot be exact", where, st.MinValue, st.MaxValue)
				}
				continue
			}
			lo, hi := slices.MinFunc(set, cmpCell), slices.MaxFunc(set, cmpCell)
			if x, ok := lo.(float64); ok && x == 0 {
				lo = math.Copysign(0, -1)
			}
			if x, ok := hi.(float64); ok && x == 0 {
				hi = 0.0
			}
			if !bytes.Equal(st.MinValue, plainStat(lo, col.ptype)) || !bytes.Equal(st.MaxValue, plainStat(hi, col.ptype)) {
				t.Fatalf("%s: min/max %x/%x, want %v/%v", where, st.MinValue, st.MaxValue, lo, hi)
			}
		}
		start += rg.NumRows
	}
}

func cmpCell(a, b any) int {
	switch x := a.(type) {
	case int64:
		return int(min(max(x-b.(int64), -1), 1))
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case []byte:
		return bytes.Compare(x, b.([]byte))
	}
	panic(fmt.Sprintf("%T", a))
}

// plainStat is a statistic as the format stores it: PLAIN, without a length.
func plainStat(v any, ptype int64) []byte {
	switch x := v.(type) {
	case int64:
		if ptype == 1 {
			return binary.LittleEndian.AppendUint32(nil, uint32(x))
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(x))
	case float64:
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))
	case bool:
		if x {
			return []byte{1}
		}
		return []byte{0}
	case []byte:
		return x
	}
	panic(fmt.Sprintf("%T", v))
}
