package state

import (
	"bytes"
	"testing"
)

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any // nil: not a number
	}{
		{"3", int64(3)},
		{" -42 ", int64(-42)},
		{"+7", int64(7)},
		{"007", int64(7)},
		{"2.5", 2.5},
		{"-0.125", -0.125},
		{"1e3", 1000.0},
		{"1E-2", 0.01},
		{"9223372036854775807", int64(9223372036854775807)},
		{"9223372036854775808", 9223372036854775808.0}, // beyond int64: a float
		{"-9223372036854775808", int64(-9223372036854775808)},
		{"1e400", nil}, // beyond float64
		{"", nil},
		{"  ", nil},
		{"x", nil},
		{"3x", nil},
		{"0x1f", nil},
		{"1_000", nil},
		{".5", nil},
		{"5.", nil},
		{"1e", nil},
		{"1e+", nil},
		{"--1", nil},
		{"NaN", nil},
		{"Inf", nil},
		{"1 2", nil},
	} {
		got, ok := ParseNumber(tc.in)
		if ok != (tc.want != nil) || got != tc.want {
			t.Errorf("ParseNumber(%q) = %#v, %v; want %#v", tc.in, got, ok, tc.want)
		}
	}
}

func TestIntLiteral(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{int64(5), 5, true},
		{5.0, 5, true},
		{5.5, 0, false},
		{"5", 5, true},
		{" 5.0 ", 5, true},
		{"5.5", 0, false},
		{"five", 0, false},
		{true, 0, false},
		{1e19, 0, false},
	} {
		got, ok := IntLiteral(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("IntLiteral(%#v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestEncodeKeyLiteralNumericStrings: a string that reads as a number
// finds a numeric key of that number, a string key of its text, and no
// key of a JSON type whose kind is unknown (either could equal it).
func TestEncodeKeyLiteralNumericStrings(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		lit  any
		want []byte // nil: not encodable (the caller scans)
	}{
		{"int64", "42", Int64.Append(nil, 42)},
		{"int64", " 42.0", Int64.Append(nil, 42)},
		{"int64", "42.5", nil},
		{"int64", "x", nil},
		{"float64", "2.5", Float64.Append(nil, 2.5)},
		{"float64", "2", Float64.Append(nil, 2)},
		{"float64", "two", nil},
		{"string", "42", String.Append(nil, "42")},
		{"json:string", "42", []byte(`"42"`)},
		{"json:int", "42", []byte(`42`)},
		{"json:float64", "2.5", []byte(`2.5`)},
		{"json:main.UserID", "42", nil},
		{"json:main.UserID", "u42", []byte(`"u42"`)},
		{"json:main.UserID", int64(42), []byte(`42`)},
	} {
		got, ok := EncodeKeyLiteral(tc.typ, tc.lit)
		if ok != (tc.want != nil) || !bytes.Equal(got, tc.want) {
			t.Errorf("EncodeKeyLiteral(%q, %#v) = %q, %v; want %q", tc.typ, tc.lit, got, ok, tc.want)
		}
	}
}

func TestTupleField(t *testing.T) {
	for name, want := range map[string]int{"f0": 0, "f1": 1, "f9": 9, "f10": 10, "f24": 24, "f99": 99, "_1": 0, "_2": 1, "_22": 21} {
		if got, ok := TupleField(name); !ok || got != want {
			t.Errorf("TupleField(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"", "f", "f01", "f00", "g0", "F0", "f-1", "f1x", "f100", "x", "_", "_0", "_01", "_+1", "_1x"} {
		if got, ok := TupleField(name); ok {
			t.Errorf("TupleField(%q) = %d, true; want not a field", name, got)
		}
	}
}
