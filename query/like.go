package query

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Pattern bounds: a longer pattern is an error, not minutes of matching
// (60,000 % took 26 s over 2,204 rows as a regular expression, .* x 30,000
// 10 s). A REGEXP costs up to its size per byte matched, so its bound is
// the smaller; LIKE matches in time linear in the pattern and the string.
const (
	maxLikePattern   = 4096
	maxRegexpPattern = 1024
)

// matcher is a compiled LIKE or REGEXP pattern.
type matcher interface{ MatchString(s string) bool }

// compilePattern compiles a LIKE or REGEXP pattern, refusing patterns
// longer than their bound.
func compilePattern(regexpOp bool, pattern string) (matcher, error) {
	if regexpOp {
		if len(pattern) > maxRegexpPattern {
			return nil, fmt.Errorf("pattern is %d bytes, more than the %d a REGEXP pattern may have", len(pattern), maxRegexpPattern)
		}
		return regexp.Compile(pattern)
	}
	if len(pattern) > maxLikePattern {
		return nil, fmt.Errorf("pattern is %d bytes, more than the %d a LIKE pattern may have", len(pattern), maxLikePattern)
	}
	return compileLike(pattern), nil
}

// likePattern is a LIKE pattern as the segments between its % signs: %
// any run of characters, _ any one character, a backslash makes the next
// character literal (a trailing backslash is itself). It matches without
// backtracking over %: the first segment is anchored at the start, the
// last at the end, and each one between is matched at its leftmost place,
// which is always as good as any later one.
type likePattern struct {
	segs          []likeSeg
	anchoredStart bool // no leading %
	anchoredEnd   bool // no trailing %
	minRunes      int  // characters a match has at least
}

// likeSeg is a run of literal text and _ between two %.
type likeSeg struct {
	toks  []likeTok
	runes int // characters it matches
	// The segment's Shift-And automaton, to find it between two % in one
	// pass over the string (no restart per position: linear however the
	// text nearly matches).
	sa *shiftAnd
}

// likeTok is one literal run or one _.
type likeTok struct {
	lit string // "" for _
}

func compileLike(pattern string) *likePattern {
	p := &likePattern{anchoredStart: true, anchoredEnd: true}
	var seg likeSeg
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			seg.toks = append(seg.toks, likeTok{lit: lit.String()})
			lit.Reset()
		}
	}
	endSeg := func() {
		flush()
		p.segs = append(p.segs, seg)
		seg = likeSeg{}
	}
	escaped := false
	for i, r := range pattern {
		p.anchoredEnd = true
		switch {
		case escaped:
			lit.WriteRune(r)
			seg.runes++
			escaped = false
		case r == '\\':
			escaped = true
		case r == '%':
			if i == 0 {
				p.anchoredStart = false
			}
			endSeg()
			p.anchoredEnd = false
			continue
		case r == '_':
			flush()
			seg.toks = append(seg.toks, likeTok{})
			seg.runes++
		default:
			lit.WriteRune(r)
			seg.runes++
		}
	}
	if escaped {
		lit.WriteByte('\\')
		seg.runes++
	}
	endSeg()
	// Segments left empty by runs of % match anywhere: drop them, keeping
	// the anchored first and last.
	segs := p.segs[:0]
	for i, s := range p.segs {
		if len(s.toks) == 0 && !(i == 0 && p.anchoredStart) && !(i == len(p.segs)-1 && p.anchoredEnd) {
			continue
		}
		segs = append(segs, s)
		p.minRunes += s.runes
	}
	p.segs = segs
	for k := range p.segs {
		p.segs[k].buildShiftAnd()
	}
	return p
}

// shiftAnd is a Shift-And automaton: bit j of a mask is set when character
// j of the segment accepts the rune.
type shiftAnd struct {
	words int
	any   []uint64          // the _ positions
	ascii [128][]uint64     // per ASCII rune
	other map[rune][]uint64 // per other rune
}

func (seg *likeSeg) buildShiftAnd() {
	g := &shiftAnd{}
	seg.sa = g
	g.words = (seg.runes + 63) / 64
	g.any = make([]uint64, g.words)
	set := func(m []uint64, j int) { m[j/64] |= 1 << (j % 64) }
	j := 0
	for _, t := range seg.toks {
		if t.lit == "" {
			set(g.any, j)
			j++
			continue
		}
		for _, r := range t.lit {
			var m []uint64
			if r < 128 {
				if g.ascii[r] == nil {
					g.ascii[r] = make([]uint64, g.words)
				}
				m = g.ascii[r]
			} else {
				if g.other == nil {
					g.other = map[rune][]uint64{}
				}
				if g.other[r] == nil {
					g.other[r] = make([]uint64, g.words)
				}
				m = g.other[r]
			}
			set(m, j)
			j++
		}
	}
}

// find returns the byte after the match of the segment that ends first at
// or after byte i of s, or -1. Matches of one segment all have the same
// number of characters, so ending first is also starting first.
func (seg *likeSeg) find(s string, i int) int {
	if seg.runes == 0 {
		return i
	}
	g := seg.sa
	var buf [4]uint64
	d := buf[:0]
	if g.words <= len(buf) {
		d = buf[:g.words]
	} else {
		d = make([]uint64, g.words)
	}
	top, topBit := (seg.runes-1)/64, uint64(1)<<((seg.runes-1)%64)
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		i += n
		var m []uint64
		if r < 128 {
			m = g.ascii[r]
		} else {
			m = g.other[r]
		}
		carry := uint64(1) // a match may begin at every character
		for w := range d {
			next := d[w] >> 63
			v := d[w]<<1 | carry
			accept := g.any[w]
			if m != nil {
				accept |= m[w]
			}
			d[w] = v & accept
			carry = next
		}
		if d[top]&topBit != 0 {
			return i
		}
	}
	return -1
}

// matchAt matches the segment at byte i of s and returns the byte after
// it, or -1.
func (g *likeSeg) matchAt(s string, i int) int {
	for _, t := range g.toks {
		if t.lit == "" {
			if i >= len(s) {
				return -1
			}
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if !strings.HasPrefix(s[i:], t.lit) {
			return -1
		}
		i += len(t.lit)
	}
	return i
}

// MatchString reports whether s matches the whole pattern.
func (p *likePattern) MatchString(s string) bool {
	segs := p.segs
	if len(segs) == 0 {
		return true // only %
	}
	if utf8.RuneCountInString(s) < p.minRunes {
		return false
	}
	if p.anchoredStart && p.anchoredEnd && len(segs) == 1 {
		return segs[0].matchAt(s, 0) == len(s)
	}
	i := 0
	if p.anchoredStart {
		if i = segs[0].matchAt(s, 0); i < 0 {
			return false
		}
		segs = segs[1:]
	}
	var last *likeSeg
	if p.anchoredEnd {
		last = &segs[len(segs)-1]
		segs = segs[:len(segs)-1]
	}
	for k := range segs {
		if i = segs[k].find(s, i); i < 0 {
			return false
		}
	}
	if last == nil {
		return true
	}
	// The last segment ends at the end: it starts last.runes characters
	// before it, and not before what the others took.
	j := len(s)
	for range last.runes {
		if j == 0 {
			return false
		}
		_, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
	}
	return j >= i && last.matchAt(s, j) == len(s)
}
