package numfmt

import (
	"math"
	"testing"
)

func TestCommas(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {2318, "2,318"}, {18941, "18,941"},
		{100000, "100,000"}, {1234567, "1,234,567"}, {-1, "-1"}, {-999, "-999"}, {-1000, "-1,000"},
		{-1234567, "-1,234,567"}, {math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Commas(c.n); got != c.want {
			t.Errorf("Commas(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 entries"}, {1, "1 entry"}, {2, "2 entries"}, {1000, "1000 entries"}} {
		if got := Count(c.n, "entry", "entries"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
