package query

import (
	"errors"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file adds the statements that change state (savepoint modify): the
// grammar of SELECT is untouched, these rules reuse its TableRef and Expr.
// UPDATE, SET, DELETE, INSERT, INTO, VALUES, DROP and STATE are keywords of
// statements only, so a query may still name a JSON field `state` or `set`.

// Script is one or more statements separated by semicolons, run as one
// transaction by savepoint modify.
type Script struct {
	Pos        lexer.Position
	Statements []*Statement `parser:"@@ ( ';' @@ )* ';'?"`
}

// Statement is one UPDATE, DELETE, INSERT or DROP STATE.
type Statement struct {
	Pos    lexer.Position
	Update *Update    `parser:"  @@"`
	Delete *Delete    `parser:"| @@"`
	Insert *Insert    `parser:"| @@"`
	Drop   *DropState `parser:"| @@"`
	EndPos lexer.Position
}

// Update is UPDATE "op"."state" SET col = expr, ... [WHERE expr].
type Update struct {
	Pos   lexer.Position
	Table *TableRef     `parser:"'UPDATE' @@"`
	Sets  []*Assignment `parser:"'SET' @@ ( ',' @@ )*"`
	Where *Expr         `parser:"( 'WHERE' @@ )?"`
}

// Assignment is one col = expr of an UPDATE.
type Assignment struct {
	Pos    lexer.Position
	Column string `parser:"@( Ident | QIdent ) '='"`
	Value  *Expr  `parser:"@@"`
}

// Delete is DELETE FROM "op"."state" [WHERE expr].
type Delete struct {
	Pos   lexer.Position
	Table *TableRef `parser:"'DELETE' 'FROM' @@"`
	Where *Expr     `parser:"( 'WHERE' @@ )?"`
}

// Insert is INSERT INTO "op"."state" (col, ...) VALUES (expr, ...), ....
type Insert struct {
	Pos     lexer.Position
	Table   *TableRef    `parser:"'INSERT' 'INTO' @@"`
	Columns []*ColumnRef `parser:"'(' @@ ( ',' @@ )* ')'"`
	Rows    []*ValuesRow `parser:"'VALUES' @@ ( ',' @@ )*"`
}

// ColumnRef is a column named in an INSERT.
type ColumnRef struct {
	Pos  lexer.Position
	Name string `parser:"@( Ident | QIdent )"`
}

// ValuesRow is one parenthesised row of VALUES.
type ValuesRow struct {
	Pos    lexer.Position
	Values []*Expr `parser:"'(' @@ ( ',' @@ )* ')'"`
}

// DropState is DROP STATE "op"."state".
type DropState struct {
	Pos   lexer.Position
	Table *TableRef `parser:"'DROP' 'STATE' @@"`
}

var statementKeywords = []string{"UPDATE", "SET", "DELETE", "INSERT", "INTO", "VALUES", "DROP", "STATE"}

var statementParser = participle.MustBuild[Script](
	participle.Lexer(lexer.MustSimple([]lexer.SimpleRule{
		{Name: "Comment", Pattern: `--[^\n]*`},
		{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "Keyword", Pattern: `(?i)\b(?:` + strings.Join(append(append([]string{}, keywords...), statementKeywords...), "|") + `)\b`},
		{Name: "Ident", Pattern: `[a-zA-Z_][a-zA-Z0-9_]*`},
		{Name: "QIdent", Pattern: `"(?:[^"]|"")*"`},
		{Name: "String", Pattern: `'(?:[^']|'')*'`},
		{Name: "Float", Pattern: `[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+`},
		{Name: "Int", Pattern: `[0-9]+`},
		{Name: "Op", Pattern: `!=|<>|<=|>=|[-+*/%(),.;\[\]=<>]`},
	})),
	participle.Elide("Comment", "Whitespace"),
	participle.CaseInsensitive("Keyword"),
	participle.UseLookahead(3),
)

// ParseScript parses statements that change state: UPDATE, DELETE, INSERT
// and DROP STATE, separated by semicolons. Errors are *Error with the
// position of the problem.
func ParseScript(text string) (*Script, error) {
	if err := checkText(text, "script", maxScript); err != nil {
		return nil, err
	}
	s, err := statementParser.ParseString("", text)
	if err != nil {
		e := parseError(err)
		var ute *participle.UnexpectedTokenError
		if qe, ok := e.(*Error); ok && errors.As(err, &ute) {
			qe.Hint = scriptHint(ute.Unexpected)
		}
		return nil, e
	}
	return s, nil
}

// scriptHint is the hint for an unexpected token of a script: a misspelt
// keyword of statements or expressions (statements' first), or what a
// misplaced SELECT or VALUES says about the statements.
func scriptHint(tok lexer.Token) string {
	switch strings.ToUpper(tok.Value) {
	case "SELECT", "EXPLAIN":
		return "statements are UPDATE, DELETE, INSERT and DROP STATE; streamdbg query runs a SELECT"
	case "VALUES":
		return `INSERT names its columns: INSERT INTO "op"."state" (key, value) VALUES (…)`
	}
	return keywordHint(tok, append(append([]string{}, statementKeywords...), keywords...))
}

// StatementGrammar is the EBNF of the statements, as participle prints it.
func StatementGrammar() string { return statementParser.String() }

// Operator is the operator a table reference names, unquoted.
func (t *TableRef) Operator() string { return unquoteIdent(t.Name) }

// StateName is the state a table reference names, unquoted ("" when it
// names only an operator).
func (t *TableRef) StateName() string { return unquoteIdent(t.State) }

// Column is the assigned column, unquoted and lower-case.
func (a *Assignment) ColumnName() string { return strings.ToLower(unquoteIdent(a.Column)) }

// ColumnName is the column, unquoted and lower-case.
func (c *ColumnRef) ColumnName() string { return strings.ToLower(unquoteIdent(c.Name)) }

// ErrorAt makes a positioned *Error, for checks made outside this package
// on statements it parsed (an unknown state, a value of the wrong type).
func ErrorAt(p lexer.Position, msg, hint string) *Error {
	return &Error{Pos: posOf(p), Msg: msg, Hint: hint}
}

// DidYouMean is the "did you mean" hint for an unknown name among known
// ones, or "".
func DidYouMean(name string, known []string) string { return didYouMean(name, known) }

// CompileTyped is CompileExpr that also returns the expression's static
// type: int64, float64, string, bool, time, bytes, null, or any when it is
// only known row by row (it reads a dynamic column such as value).
func CompileTyped(e *Expr, names []string) (*Compiled, string, error) {
	x, err := lowerExpr(e)
	if err != nil {
		return nil, "", err
	}
	if names != nil {
		if err := checkNames(x, names); err != nil {
			return nil, "", err
		}
	}
	n, t, err := (&compiler{clause: "an expression"}).compile(x)
	if err != nil {
		return nil, "", err
	}
	return &Compiled{n: n}, t.String(), nil
}

// Pinned lists the names that the top-level AND of an expression pins to
// constants (`name = const`, `const = name`, `name IN (consts)`), lower-case,
// with the allowed values (intersected when pinned twice). A caller may read
// only what these values allow and still evaluate the whole expression on
// every row: Pinned never widens what the expression keeps.
func Pinned(e *Expr) (map[string][]any, error) {
	x, err := lowerExpr(e)
	if err != nil {
		return nil, err
	}
	p := &program{whereX: x}
	return p.pushdown().values, nil
}

// NewRows makes streaming Rows of the given columns from a producer, so
// results computed outside this package (a savepoint diff) format like query
// results. run calls yield once per row and stops when it returns false.
func NewRows(cols []string, run func(yield func([]any) bool) error) *Rows {
	return &Rows{cols: cols, run: run}
}

// AppendJSON appends a dynamic value as JSON, as the json format writes it.
func AppendJSON(b []byte, v any) []byte { return appendJSON(b, v) }

// FormatText is a dynamic value as the table format shows it.
func FormatText(v any) string { return formatText(v) }
