package state

import (
	"math"
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

// FormatMillis writes RFC 3339 inside the years 0000–9999 and a Sentinel
// outside them, where RFC 3339 has no form (before: -292275055-05-16T…Z
// for a Flink timer at Long.MIN_VALUE+10).
func TestFormatMillis(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want string
	}{
		{0, "1970-01-01T00:00:00.000Z"},
		{1772366409999, "2026-03-01T12:00:09.999Z"},
		{-62167219200000, "0000-01-01T00:00:00.000Z"},
		{253402300799999, "9999-12-31T23:59:59.999Z"},
		{math.MinInt64, "-∞"},
		{math.MaxInt64, "+∞"},
		{math.MinInt64 + 10, "Long.MIN_VALUE+10"},
		{math.MaxInt64 - 1, "Long.MAX_VALUE-1"},
		{-62167219200001, "-62167219200001 ms"},
		{253402300800000, "253402300800000 ms"},
	} {
		got := FormatMillis(c.ms)
		s, ok := Sentinel(c.ms)
		if got != c.want || ok != (s == c.want) || ok && s != got {
			t.Errorf("FormatMillis(%d) = %q, Sentinel = %q, %v; want %q", c.ms, got, s, ok, c.want)
		}
	}
}
