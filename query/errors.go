package query

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Pos is a position in query text: 1-based line and column (in bytes), and
// the 0-based byte offset.
type Pos struct {
	Offset, Line, Col int
}

func posOf(p lexer.Position) Pos { return Pos{Offset: p.Offset, Line: p.Line, Col: p.Column} }

// Error is a problem with a query or expression at a position: a parse
// error, an unknown name, a type mismatch, a misplaced aggregate. The TUI
// puts a caret under Pos.Col; Error() reads "line:col: message; hint".
type Error struct {
	Pos  Pos
	Msg  string
	Hint string // may be empty
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", e.Pos.Line, e.Pos.Col)
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func errorf(p lexer.Position, format string, args ...any) *Error {
	return &Error{Pos: posOf(p), Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) hint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// parseError turns a participle error into an *Error, with a hint when the
// unexpected token looks like a misspelt keyword.
func parseError(err error) error {
	var pe participle.Error
	if !errors.As(err, &pe) {
		return &Error{Pos: Pos{Line: 1, Col: 1}, Msg: err.Error()}
	}
	e := &Error{Pos: posOf(pe.Position()), Msg: pe.Message()}
	var ute *participle.UnexpectedTokenError
	switch {
	case errors.As(err, &ute):
		tok := ute.Unexpected
		e.Msg = fmt.Sprintf("unexpected %q", tok.Value)
		if tok.EOF() {
			e.Msg = "unexpected end of input"
		}
		// Participle's expectation is a grammar fragment; its first
		// symbol is what a person needs.
		if exp, _, _ := strings.Cut(strings.TrimLeft(ute.Expect, "("), " "); exp != "" {
			e.Msg += " (expected " + exp + ")"
		}
		e.Hint = keywordHint(tok, keywords)
	case strings.HasPrefix(pe.Message(), "lexer: invalid input text \"'"):
		e.Msg = "unterminated string"
		e.Hint = "strings are in single quotes, '' for a quote inside"
	case strings.HasPrefix(pe.Message(), "lexer: invalid input text \"\\\""):
		e.Msg = "unterminated quoted name"
		e.Hint = `names are in double quotes, "" for a quote inside`
	case strings.HasPrefix(pe.Message(), "lexer: invalid input text"):
		e.Msg = "unexpected character"
	}
	return e
}

// keywordHint is "did you mean KW?" for a word that is a misspelt keyword
// of kws, or "". A keyword itself is misplaced, not misspelt, and a
// literal or a one-letter name is no keyword's typo: no hint for those
// (before: 'did you mean FALSE?' at a misplaced VALUES, AS at LIMIT 'a').
func keywordHint(tok lexer.Token, kws []string) string {
	w := strings.ToUpper(tok.Value)
	if tok.EOF() || len(w) < 2 || !isWord(w) || slices.Contains(kws, w) {
		return ""
	}
	if kw := nearest(w, kws); kw != "" {
		return fmt.Sprintf("did you mean %s?", kw)
	}
	return ""
}

// isWord reports whether s is spelt as a name: a letter or underscore,
// then letters, digits and underscores.
func isWord(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// nameHint is the hint for an unknown name among names: the nearest, or
// when none is near all of them (a diff filter's or a statement's few
// names, which a person may not know), or "".
func nameHint(name string, names []string) string {
	if h := didYouMean(name, names); h != "" || len(names) == 0 || len(names) > 24 {
		return h
	}
	return "names are " + strings.Join(names, ", ")
}

// didYouMean is the hint for an unknown name, or "" when nothing is close.
func didYouMean(name string, known []string) string {
	if n := nearest(name, known); n != "" {
		return fmt.Sprintf("did you mean %q?", n)
	}
	return ""
}

// nearest returns the known name closest to name by edit distance
// (transpositions count one), or "" when none is close enough to be a typo.
func nearest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	limit := max(1, min(3, len(name)/3+1))
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and adjacent transpositions cost one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		// Long names are never typos of known ones; bound the work.
		return max(len(ra), len(rb))
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
