package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"streamdbg/query"
	"streamdbg/runtime/session"
)

// vocabulary is what Tab completes from: the command table, the job's
// operators and states, the query language's tables and columns.
type vocabulary struct {
	operators []string
	states    map[string][]string // operator name → its state names
}

// vocabularyOf the tasks of a session view (nil: a savepoint, see
// savepointVocabulary).
func vocabularyOf(tasks []session.TaskView) vocabulary {
	v := vocabulary{states: map[string][]string{}}
	for _, t := range tasks {
		for _, op := range t.Operators {
			v.operators = append(v.operators, op.Name)
			for _, s := range op.States {
				v.states[op.Name] = append(v.states[op.Name], s.Name)
			}
		}
	}
	return v
}

var queryKeywords = []string{"SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "LIKE", "REGEXP", "IN", "BETWEEN", "IS", "NULL",
	"GROUP BY", "ORDER BY", "ASC", "DESC", "LIMIT", "OFFSET", "AS", "COUNT(*)", "SUM(", "MIN(", "MAX(", "AVG(", "EXPLAIN", "true", "false"}

// complete returns the candidates for the word being typed at the end of
// line, and the byte offset where that word starts. mode is the prompt's:
// "command" (a command or a query), "filter" (an expression over state
// rows) or "search" (nothing to complete).
func (v vocabulary) complete(line, mode string) (start int, cands []string) {
	if mode == "search" {
		return len(line), nil
	}
	start = wordStart(line)
	word := line[start:]
	before := strings.Fields(line[:start])
	var pool []string
	switch {
	case mode == "filter":
		pool = append(v.stateNames(), filterNames...)
		pool = append(pool, queryKeywords...)
	case len(before) == 0:
		for _, c := range session.Commands() {
			pool = append(pool, c.Name)
		}
		pool = append(pool, "SELECT")
	default:
		cmd, _, _ := session.ParseLine(before[0])
		switch cmd.Name {
		case "help":
			for _, c := range session.Commands() {
				pool = append(pool, c.Name)
			}
		case "savepoint", "restore", "open":
			return start, pathCandidates(word)
		case "break":
			last := strings.ToLower(before[len(before)-1])
			inCond := slices.ContainsFunc(before, func(w string) bool { return strings.EqualFold(w, "when") })
			switch {
			case !inCond && (last == "at" || last == "before"):
				pool = quoteAll(v.operators)
			case !inCond && len(before) == 1:
				pool = []string{"at", "before", "when"}
			case !inCond:
				pool = []string{"when", "hits"}
			default:
				pool = v.expressionWords(word, session.BreakpointNames)
			}
		default:
			pool = v.queryWords(before, word)
		}
	}
	for _, c := range dedupe(pool) {
		if hasPrefixFold(c, word) || !strings.HasPrefix(word, `"`) && strings.HasPrefix(c, `"`) && hasPrefixFold(c[1:], word) {
			cands = append(cands, c)
		}
	}
	return start, cands
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// queryWords are the candidates inside a query: tables after FROM, states
// after "operator"., columns and keywords elsewhere.
func (v vocabulary) queryWords(before []string, word string) []string {
	if op, ok := strings.CutSuffix(word, "."); ok && strings.HasPrefix(op, `"`) {
		name := strings.Trim(op, `"`)
		var out []string
		for _, s := range v.states[name] {
			out = append(out, op+"."+`"`+s+`"`)
		}
		return out
	}
	if i := strings.Index(word, `".`); i > 0 && strings.HasPrefix(word, `"`) {
		op := word[:i+1]
		var out []string
		for _, s := range v.states[strings.Trim(op, `"`)] {
			out = append(out, op+"."+`"`+s+`"`)
		}
		return out
	}
	if len(before) > 0 && strings.EqualFold(before[len(before)-1], "FROM") {
		out := query.Tables()
		for _, op := range v.operators {
			out = append(out, `"`+op+`"`)
		}
		return out
	}
	var pool []string
	for _, t := range query.Tables() {
		cols, _ := query.TableColumns(t)
		pool = append(pool, cols...)
	}
	return append(pool, queryKeywords...)
}

// expressionWords are the candidates of a condition: its names, state.NAME
// paths, keywords.
func (v vocabulary) expressionWords(word string, names []string) []string {
	if strings.HasPrefix(strings.ToLower(word), "state.") {
		var out []string
		for _, s := range v.stateNames() {
			out = append(out, "state."+s)
		}
		return out
	}
	return append(append([]string(nil), names...), queryKeywords...)
}

func (v vocabulary) stateNames() []string {
	var out []string
	for _, op := range v.operators {
		out = append(out, v.states[op]...)
	}
	return out
}

// wordStart is where the word at the end of line starts: after the last
// blank or opening parenthesis, or at an unclosed double quote (an
// operator name with spaces).
func wordStart(line string) int {
	if strings.Count(line, `"`)%2 == 1 {
		i := strings.LastIndexByte(line, '"')
		// "op"."st: the word is the whole qualified name.
		if strings.HasSuffix(line[:i], `".`) {
			if j := strings.LastIndexByte(line[:i-2], '"'); j >= 0 {
				return j
			}
		}
		return i
	}
	return strings.LastIndexAny(line, " (,=<>") + 1
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = `"` + n + `"`
		if !strings.ContainsAny(n, " .:-") {
			out[i] = n
		}
	}
	return out
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// pathCandidates completes a file path (~ expanded for the lookup, kept in
// the candidates); directories end in /.
func pathCandidates(word string) []string {
	look := word
	if strings.HasPrefix(word, "~") {
		if home, err := os.UserHomeDir(); err == nil {
			look = home + strings.TrimPrefix(word, "~")
		}
	}
	matches, _ := filepath.Glob(look + "*")
	var out []string
	for _, m := range matches[:min(len(matches), 50)] {
		c := word + strings.TrimPrefix(m, look)
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			c += "/"
		}
		out = append(out, c)
	}
	return out
}

// commonPrefix is the longest prefix all candidates share (case-insensitive,
// the first candidate's spelling).
func commonPrefix(cands []string) string {
	if len(cands) == 0 {
		return ""
	}
	p := cands[0]
	for _, c := range cands[1:] {
		n := 0
		for n < len(p) && n < len(c) && strings.EqualFold(p[n:n+1], c[n:n+1]) {
			n++
		}
		p = p[:n]
	}
	return p
}
