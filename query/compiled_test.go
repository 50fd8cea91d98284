package query

import (
	"testing"

	"streamdbg/state"
)

// A compiled row filter gives the prefilter of its byte-decidable parts
// (the savepoint browser's f filter reads through it), which drops
// exactly the rows the filter rejects on them and nothing else; a filter
// with no such part gives none.
func TestCompiledPrefilter(t *testing.T) {
	meta := state.StateMeta{StateName: "total", KeyType: "string", ValueType: "int64"}
	for _, c := range []struct {
		filter string
		none   bool
		keep   map[int64]bool // value → kept
	}{
		{filter: "value % 1000 = 7", keep: map[int64]bool{7: true, 1007: true, 8: false}},
		{filter: "value > 10 AND user_key IS NULL", keep: map[int64]bool{11: true, 10: false}},
		{filter: "user_key IS NULL", none: true},
		{filter: "value > 10 OR user_key IS NULL", none: true},
	} {
		e, err := ParseExpr(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		comp, err := CompileExpr(e, nil)
		if err != nil {
			t.Fatal(err)
		}
		pf := comp.Prefilter()
		var pre func(key, value []byte, kg int) bool
		if pf != nil {
			pre = pf(meta)
		}
		if c.none {
			if pre != nil {
				t.Errorf("%s: a prefilter, want none (nothing of it is decided on bytes)", c.filter)
			}
			continue
		}
		if pre == nil {
			t.Fatalf("%s: no prefilter", c.filter)
		}
		for v, want := range c.keep {
			if got := pre([]byte("k"), state.Int64.Append(nil, v), 0); got != want {
				t.Errorf("%s: value %d kept %v, want %v", c.filter, v, got, want)
			}
		}
	}
	var nilc *Compiled
	if nilc.Prefilter() != nil {
		t.Error("no filter: a prefilter")
	}
}
