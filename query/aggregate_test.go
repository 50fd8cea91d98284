package query

import (
	"math"
	"strings"
	"testing"
)

// TestAvgAndSumExact: AVG of int64 numbers is their exact mean correctly
// rounded, SUM is exact, and the float a sum becomes when a float joins
// it is the exact sum rounded. The expected values are worked out by hand.
// (AVG(-value) over two values of 25 gave 0: the 128-bit sum's halves
// were added as floats, and 2^64 - 50 rounds to 2^64.)
func TestAvgAndSumExact(t *testing.T) {
	avg := &aggSpec{fn: "avg", text: "AVG(x)"}
	sum := &aggSpec{fn: "sum", text: "SUM(x)"}
	run := func(spec *aggSpec, vs ...any) (any, error) {
		var a accumulator
		for _, v := range vs {
			a.add(spec, v)
		}
		return a.result(spec)
	}
	for _, c := range []struct {
		name string
		vs   []any
		want float64
	}{
		{"two negatives", []any{int64(-25), int64(-25)}, -25},
		{"eight -1", []any{int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1)}, -1},
		{"mixed signs", []any{int64(-1000), int64(999), int64(-7)}, -8.0 / 3},
		{"negative past int64", []any{int64(math.MinInt64), int64(math.MinInt64), int64(-2)}, (-2*math.Pow(2, 63) - 2) / 3},
		// 2^53+1 four times: the mean is 2^53+1, which a float64 rounds
		// to even, 2^53 (float64(sum)/4 rounded twice, up to 2^53+2).
		{"past 2^53", []any{int64(1<<53 + 1), int64(1<<53 + 1), int64(1<<53 + 1), int64(1<<53 + 1)}, 1 << 53},
		{"NULLs skipped", []any{nil, int64(-3), nil}, -3},
	} {
		got, err := run(avg, c.vs...)
		if err != nil || got != c.want {
			t.Errorf("AVG %s = %v (%v), want %v", c.name, got, err, c.want)
		}
	}
	if got, err := run(sum, int64(math.MaxInt64), int64(1), int64(-5)); err != nil || got != int64(math.MaxInt64-4) {
		t.Errorf("SUM that overflows on the way = %v (%v), want %d", got, err, int64(math.MaxInt64-4))
	}
	// A float joins negative integers: the sum so far is -50, not 0.
	if got, err := run(sum, int64(-25), int64(-25), 0.5); err != nil || got != -49.5 {
		t.Errorf("SUM(-25, -25, 0.5) = %v (%v), want -49.5", got, err)
	}
	// The overflow error gives the total.
	if _, err := run(sum, int64(math.MinInt64), int64(-1)); err == nil || !strings.Contains(err.Error(), "-9.22337e+18") {
		t.Errorf("SUM below int64: %v, want an overflow error with the total", err)
	}
}
