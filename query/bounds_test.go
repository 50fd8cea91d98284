package query

import (
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
)

// Queries beyond the bounds are refused before parsing, naming where and
// the bound; within them the worst shapes allocate a bounded amount.
// (Before: 32,700 nested parentheses took 676 MB.)
func TestQueryBounds(t *testing.T) {
	deep := "SELECT * FROM state_meta WHERE " + strings.Repeat("(", 33) + "1" + strings.Repeat(")", 33) + " = 1"
	_, err := Parse(deep)
	var qe *Error
	if !errors.As(err, &qe) || qe.Pos.Col != 31+33 || !strings.Contains(err.Error(), "nested more than 32 deep") {
		t.Fatalf("33 levels: %v", err)
	}
	if _, err := Parse("SELECT * FROM state_meta WHERE " + strings.Repeat("(", 32) + "1" + strings.Repeat(")", 32) + " = 1"); err != nil {
		t.Fatalf("32 levels: %v", err)
	}
	// Parentheses in strings, quoted names and comments do not count.
	if _, err := Parse("SELECT * FROM state_meta WHERE state_name = '" + strings.Repeat("(", 100) + "' -- " + strings.Repeat("[", 100) + "\n"); err != nil {
		t.Fatalf("quoted parentheses: %v", err)
	}
	if _, err := ParseExpr(strings.Repeat("x", maxText+1)); err == nil || !strings.Contains(err.Error(), "expression too long") || !strings.Contains(err.Error(), "at most 8 KiB") {
		t.Fatalf("long expression: %v", err)
	}
	pad := func(prefix, unit, suffix string) string {
		return prefix + strings.Repeat(unit, (maxText-len(prefix)-len(suffix))/len(unit)) + suffix
	}
	for name, q := range map[string]string{
		"NOT chain":    pad("SELECT * FROM state_meta WHERE ", "NOT ", "TRUE"),
		"minus chain":  pad("SELECT * FROM state_meta WHERE ", "- ", "1 = 1"),
		"index chain":  pad("SELECT * FROM state_meta WHERE value", "[0]", " = 1"),
		"field chain":  pad("SELECT * FROM state_meta WHERE value", ".a", " = 1"),
		"plus chain":   pad("SELECT * FROM state_meta WHERE 1", " + 1", " = 1"),
		"nested at 32": pad("SELECT * FROM state_meta WHERE ", strings.Repeat("(", 32)+"1"+strings.Repeat(")", 32)+" = 1 AND ", "TRUE"),
	} {
		var a, b goruntime.MemStats
		goruntime.ReadMemStats(&a)
		_, err := Parse(q)
		goruntime.ReadMemStats(&b)
		d := b.TotalAlloc - a.TotalAlloc
		t.Logf("%s: %d bytes of query, %d MB allocated, %v", name, len(q), d>>20, err)
		if d > 64<<20 && !raceEnabled { // see raceEnabled
			t.Errorf("%s: %d bytes of query allocated %d MB", name, len(q), d>>20)
		}
	}
}
