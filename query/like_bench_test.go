package query

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLike matches 2,204 keys ("key_<i>_some_word") against LIKE
// patterns with compileLike (this package's matcher) and, as the
// baseline in the same run, with the regular expression the pattern
// translates to (what LIKE compiled to before). Both sides do the same
// work: one MatchString per key per iteration, after compiling once.
func BenchmarkLike(b *testing.B) {
	keys := make([]string, 2204)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%d_some_word", i)
	}
	for _, p := range []struct{ name, pattern string }{
		{"prefix", "key_1%"},
		{"infix", "%_some_%"},
		{"percent-x1000", strings.Repeat("%", 1000) + "z"},
		{"percent-a-x200", strings.Repeat("%a", 200)},
	} {
		for _, side := range []struct {
			name string
			m    matcher
		}{
			{"like", compileLike(p.pattern)},
			{"regexp-baseline", likeReference(p.pattern)},
		} {
			b.Run(p.name+"/"+side.name, func(b *testing.B) {
				n := 0
				for b.Loop() {
					for _, k := range keys {
						if side.m.MatchString(k) {
							n++
						}
					}
				}
				b.ReportMetric(float64(len(keys)), "keys/op")
				_ = n
			})
		}
	}
}
