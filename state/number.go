package state

import (
	"math"
	"strconv"
	"strings"
)

// ParseNumber reads a string the way the query language reads a number
// literal: digits, with a fraction or an exponent or both, an optional sign
// before them, and spaces around them ignored. An integer that fits is an
// int64; any other number is a float64. ok is false for anything else:
// "x", "", "0x1f", "NaN", "1_000", ".5", a float beyond float64's range.
// A query compares a string literal that reads as a number with a number
// as that number (Flink SQL casts '3' to the column's numeric type), and
// the catalogs find the key of such a literal with it.
func ParseNumber(s string) (v any, ok bool) {
	s = strings.TrimSpace(s)
	digits := s
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	n := leadingDigits(digits)
	if n == 0 {
		return nil, false
	}
	rest, integer := digits[n:], true
	if rest != "" && rest[0] == '.' {
		f := leadingDigits(rest[1:])
		if f == 0 {
			return nil, false
		}
		rest, integer = rest[1+f:], false
	}
	if rest != "" && (rest[0] == 'e' || rest[0] == 'E') {
		e := rest[1:]
		if e != "" && (e[0] == '-' || e[0] == '+') {
			e = e[1:]
		}
		d := leadingDigits(e)
		if d == 0 {
			return nil, false
		}
		rest, integer = e[d:], false
	}
	if rest != "" {
		return nil, false
	}
	if integer {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, false
	}
	return f, true
}

// IntLiteral is a literal as an int64 when it is one: an int64, an
// integral float64 within int64's range, or a string ParseNumber reads as
// one of those.
func IntLiteral(v any) (int64, bool) {
	if s, ok := v.(string); ok {
		n, ok := ParseNumber(s)
		if !ok {
			return 0, false
		}
		v = n
	}
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x), true
		}
	}
	return 0, false
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// TupleField is the index a tuple's field name stands for: "f0" is 0,
// "f12" 12 (a Java Tuple's fields, f0 to f24), and "_1" is 0 (a Scala
// tuple's, _1 to _22). ok is false for any other name ("f01", "_0", "x").
func TupleField(name string) (int, bool) {
	if len(name) < 2 || len(name) > 3 || name[0] != 'f' && name[0] != '_' || name[1] == '0' && len(name) > 2 {
		return 0, false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	i, _ := strconv.Atoi(name[1:])
	if name[0] == '_' {
		if i == 0 {
			return 0, false
		}
		i--
	}
	return i, true
}
