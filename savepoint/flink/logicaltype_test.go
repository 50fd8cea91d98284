package flink

import (
	"errors"
	"strings"
	"testing"
)

// ltObject is a LogicalType object as Java serialization gives it: the
// class LogicalType (typeRoot, isNullable) above class, with ints.
func ltObject(class, root string, ints map[string]int64) *jObject {
	top := &jClassDesc{name: "org.apache.flink.table.types.logical.LogicalType",
		fields: []jField{{code: 'Z', name: "isNullable"}, {code: 'L', name: "typeRoot"}}}
	own := &jClassDesc{name: "org.apache.flink.table.types.logical." + class, super: top}
	var vals []any
	for name, v := range ints {
		own.fields = append(own.fields, jField{code: 'I', name: name})
		vals = append(vals, v)
	}
	return &jObject{class: own, data: []jClassData{
		{desc: top, values: []any{true, &jEnum{name: root}}},
		{desc: own, values: vals},
	}}
}

// TestLogicalTypeBounds: precisions and scales outside Flink's are corrupt
// data (a mutated DECIMAL scale of 2^31-1 made one value a 2 GB string);
// the bounds themselves are accepted.
func TestLogicalTypeBounds(t *testing.T) {
	for _, tc := range []struct {
		class, root string
		ints        map[string]int64
		bad         string // "" when valid
	}{
		{"DecimalType", "DECIMAL", map[string]int64{"precision": 38, "scale": 38}, ""},
		{"DecimalType", "DECIMAL", map[string]int64{"precision": 10, "scale": 2147483647}, "scale 2147483647 outside [0, 10]"},
		{"DecimalType", "DECIMAL", map[string]int64{"precision": 39, "scale": 0}, "precision 39 outside [1, 38]"},
		{"DecimalType", "DECIMAL", map[string]int64{"precision": 5, "scale": -1}, "scale -1 outside"},
		{"TimestampType", "TIMESTAMP_WITHOUT_TIME_ZONE", map[string]int64{"precision": 9}, ""},
		{"TimestampType", "TIMESTAMP_WITHOUT_TIME_ZONE", map[string]int64{"precision": 10}, "precision 10 outside [0, 9]"},
		{"TimeType", "TIME_WITHOUT_TIME_ZONE", map[string]int64{"precision": -1}, "precision -1"},
		{"DayTimeIntervalType", "INTERVAL_DAY_TIME", map[string]int64{"dayPrecision": 2, "fractionalPrecision": 1000}, "fractional precision 1000"},
		{"YearMonthIntervalType", "INTERVAL_YEAR_MONTH", map[string]int64{"yearPrecision": 0}, "year precision 0"},
		{"VarCharType", "VARCHAR", map[string]int64{"length": -5}, "length -5"},
		{"VarCharType", "VARCHAR", map[string]int64{"length": 2147483647}, ""},
	} {
		lt, err := logicalTypeOf(ltObject(tc.class, tc.root, tc.ints), 0)
		if tc.bad == "" {
			if err != nil || lt == nil {
				t.Errorf("%s %v: %v", tc.root, tc.ints, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), tc.root) {
			t.Errorf("%s %v: error %v, want ErrCorrupt saying %q", tc.root, tc.ints, err, tc.bad)
		}
	}
}
