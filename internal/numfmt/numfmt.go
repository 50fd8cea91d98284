// Package numfmt prints numbers for people: the TUI's panes and the
// session's stop messages share it, so a count reads the same in both.
package numfmt

import "strconv"

// Commas prints n with thousands separators: 2,318.
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := s
	if n < 0 {
		digits = s[1:]
	}
	if len(digits) <= 3 {
		return s
	}
	b := make([]byte, 0, len(s)+len(digits)/3)
	if n < 0 {
		b = append(b, '-')
	}
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, digits[i])
	}
	return string(b)
}

// Count prints n and the noun that goes with it: "1 entry", "2 entries".
func Count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
