package state

import (
	"testing"
	"time"
)

// Built-in codecs register their display; displaying through the registry
// must decode, not call back into the registry.
func TestDisplayBuiltins(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		typ  string
		b    []byte
		want any
	}{
		{"string", String.Append(nil, "flink"), "flink"},
		{"int64", Int64.Append(nil, -42), int64(-42)},
		{"position", Position.Append(nil, 3), int64(3)},
		{"float64", Float64.Append(nil, 0.5), 0.5},
		{"bool", Bool.Append(nil, true), true},
		{"time", Time.Append(nil, ts), ts},
		{"void", nil, nil},
	} {
		got, err := DisplayBytes(tc.typ, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("DisplayBytes(%s) = %v, %v; want %v", tc.typ, got, err, tc.want)
		}
	}
	if got, err := Erase(String).Display(String.Append(nil, "x")); err != nil || got != "x" {
		t.Errorf("Erase(String).Display = %v, %v", got, err)
	}
}
