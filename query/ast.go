package query

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The grammar is the AST: every struct below is one rule, its tags are the
// rule's syntax and its fields what a parse captures. Precedence is layered
// from Expr (loosest, OR) down to Primary (tightest). Literal text is kept as
// written (quotes included) and interpreted by lower.go, so that every
// capture is a non-empty token.

// Query is a parsed statement: an optional EXPLAIN and one SELECT.
type Query struct {
	Pos     lexer.Position
	Explain bool    `parser:"@'EXPLAIN'?"`
	Select  *Select `parser:"@@ ';'?"`

	text string // the source, for column names; set by Parse
}

// Select is SELECT ... FROM ... [WHERE] [GROUP BY] [ORDER BY] [LIMIT].
type Select struct {
	Pos     lexer.Position
	Star    bool          `parser:"'SELECT' ( @'*'"`
	Items   []*SelectItem `parser:"        | @@ ( ',' @@ )* )"`
	From    *TableRef     `parser:"'FROM' @@"`
	Where   *Expr         `parser:"( 'WHERE' @@ )?"`
	GroupBy []*Expr       `parser:"( 'GROUP' 'BY' @@ ( ',' @@ )* )?"`
	OrderBy []*OrderItem  `parser:"( 'ORDER' 'BY' @@ ( ',' @@ )* )?"`
	Limit   *Limit        `parser:"@@?"`
}

// SelectItem is one output expression with an optional AS name.
type SelectItem struct {
	Pos    lexer.Position
	Expr   *Expr  `parser:"@@"`
	Alias  string `parser:"( 'AS' @( Ident | QIdent ) )?"`
	EndPos lexer.Position
}

// TableRef names a table, an operator ("op") or one state of it ("op"."state").
type TableRef struct {
	Pos   lexer.Position
	Name  string `parser:"@( Ident | QIdent )"`
	State string `parser:"( '.' @( Ident | QIdent ) )?"`
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Pos  lexer.Position
	Expr *Expr `parser:"@@"`
	Desc bool  `parser:"( 'ASC' | @'DESC' )?"`
}

// Limit is LIMIT n [OFFSET m]; the numbers are kept as written.
type Limit struct {
	Pos    lexer.Position
	Count  string `parser:"'LIMIT' @Int"`
	Offset string `parser:"( 'OFFSET' @Int )?"`
}

// Expr is the root of an expression: OR of ANDs.
type Expr struct {
	Pos    lexer.Position
	Left   *AndExpr   `parser:"@@"`
	Right  []*AndExpr `parser:"( 'OR' @@ )*"`
	EndPos lexer.Position
}

// AndExpr is an AND of NOTs.
type AndExpr struct {
	Pos   lexer.Position
	Left  *NotExpr   `parser:"@@"`
	Right []*NotExpr `parser:"( 'AND' @@ )*"`
}

// NotExpr is NOT applied any number of times to a comparison.
type NotExpr struct {
	Pos lexer.Position
	Not *NotExpr    `parser:"  'NOT' @@"`
	Cmp *Comparison `parser:"| @@"`
}

// Comparison is a sum optionally followed by one comparison.
type Comparison struct {
	Pos     lexer.Position
	Left    *Sum     `parser:"@@"`
	Op      string   `parser:"( @( '=' | '!=' | '<>' | '<=' | '>=' | '<' | '>' )"`
	Right   *Sum     `parser:"  @@"`
	Is      *IsNull  `parser:"| @@"`
	Not     bool     `parser:"| @'NOT'?"`
	Like    *Like    `parser:"  ( @@"`
	In      *In      `parser:"  | @@"`
	Between *Between `parser:"  | @@ ) )?"`
}

// IsNull is IS [NOT] NULL.
type IsNull struct {
	Pos lexer.Position
	Is  string `parser:"@'IS'"`
	Not bool   `parser:"@'NOT'? 'NULL'"`
}

// Like is LIKE or REGEXP and its pattern.
type Like struct {
	Pos     lexer.Position
	Op      string `parser:"@( 'LIKE' | 'REGEXP' )"`
	Pattern *Sum   `parser:"@@"`
}

// In is IN (expr, ...).
type In struct {
	Pos  lexer.Position
	List []*Expr `parser:"'IN' '(' @@ ( ',' @@ )* ')'"`
}

// Between is BETWEEN low AND high.
type Between struct {
	Pos  lexer.Position
	Low  *Sum `parser:"'BETWEEN' @@"`
	High *Sum `parser:"'AND' @@"`
}

// Sum is terms joined by + and -.
type Sum struct {
	Pos   lexer.Position
	Left  *Term    `parser:"@@"`
	Right []*SumOp `parser:"@@*"`
}

// SumOp is one + or - and its right operand.
type SumOp struct {
	Pos   lexer.Position
	Op    string `parser:"@( '+' | '-' )"`
	Right *Term  `parser:"@@"`
}

// Term is unary expressions joined by *, / and %.
type Term struct {
	Pos   lexer.Position
	Left  *Unary    `parser:"@@"`
	Right []*TermOp `parser:"@@*"`
}

// TermOp is one *, / or % and its right operand.
type TermOp struct {
	Pos   lexer.Position
	Op    string `parser:"@( '*' | '/' | '%' )"`
	Right *Unary `parser:"@@"`
}

// Unary is a negation or a postfix expression.
type Unary struct {
	Pos     lexer.Position
	Neg     *Unary   `parser:"  '-' @@"`
	Postfix *Postfix `parser:"| @@"`
}

// Postfix is a primary followed by path steps: .field, [index], ['key'].
type Postfix struct {
	Pos     lexer.Position
	Primary *Primary    `parser:"@@"`
	Steps   []*PathStep `parser:"@@*"`
	EndPos  lexer.Position
}

// PathStep is one step into a structured value.
type PathStep struct {
	Pos   lexer.Position
	Field string `parser:"  '.' @( Ident | QIdent | Keyword )"` // a keyword is a field name after '.'
	Index *Expr  `parser:"| '[' @@ ']'"`
}

// Primary is a literal, a call, a name or a parenthesised expression.
type Primary struct {
	Pos    lexer.Position
	Null   bool   `parser:"  @'NULL'"`
	Bool   string `parser:"| @( 'TRUE' | 'FALSE' )"`
	Float  string `parser:"| @Float"`
	Int    string `parser:"| @Int"`
	String string `parser:"| @String"`
	Call   *Call  `parser:"| @@"`
	Name   string `parser:"| @( Ident | QIdent )"`
	Sub    *Expr  `parser:"| '(' @@ ')'"`
}

// Call is a function call: the aggregates COUNT(*), COUNT(x), SUM, MIN, MAX, AVG.
type Call struct {
	Pos  lexer.Position
	Func string  `parser:"@Ident '('"`
	Star bool    `parser:"( @'*'"`
	Args []*Expr `parser:"| @@ ( ',' @@ )* )? ')'"`
}

var keywords = []string{
	"SELECT", "FROM", "WHERE", "GROUP", "ORDER", "BY", "ASC", "DESC", "LIMIT",
	"OFFSET", "AS", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "REGEXP",
	"BETWEEN", "TRUE", "FALSE", "EXPLAIN",
}

var sqlLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `--[^\n]*`},
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Keyword", Pattern: `(?i)\b(?:` + strings.Join(keywords, "|") + `)\b`},
	{Name: "Ident", Pattern: `[a-zA-Z_][a-zA-Z0-9_]*`},
	{Name: "QIdent", Pattern: `"(?:[^"]|"")*"`},
	{Name: "String", Pattern: `'(?:[^']|'')*'`},
	{Name: "Float", Pattern: `[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+`},
	{Name: "Int", Pattern: `[0-9]+`},
	{Name: "Op", Pattern: `!=|<>|<=|>=|[-+*/%(),.;\[\]=<>]`},
})

var parserOptions = []participle.Option{
	participle.Lexer(sqlLexer),
	participle.Elide("Comment", "Whitespace"),
	participle.CaseInsensitive("Keyword"),
	participle.UseLookahead(3),
}

var (
	queryParser = participle.MustBuild[Query](parserOptions...)
	exprParser  = participle.MustBuild[Expr](parserOptions...)
)

// Bounds checked before parsing, so that untrusted input cannot make the
// recursive parser and compiler work without bound: participle takes some
// kilobytes per token and per level (32,700 nested parentheses took 676
// MB). Real queries are well within: a few hundred bytes, a few levels.
const (
	// maxText bounds a query or an expression.
	maxText = 8 << 10
	// maxScript bounds a script of statements (many INSERTs).
	maxScript = 64 << 10
	// maxNesting bounds how deep parentheses and brackets nest.
	maxNesting = 32
)

// checkText refuses text beyond the bounds, naming where it goes too deep.
func checkText(text, what string, limit int) error {
	if len(text) > limit {
		return &Error{Pos: Pos{Line: 1, Col: 1}, Msg: what + " too long", Hint: fmt.Sprintf("at most %d KiB", limit>>10)}
	}
	depth, line, col := 0, 1, 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		col++
		if c == '\n' {
			line, col = line+1, 0
		}
		switch {
		case quote != 0:
			if c == quote {
				quote = 0 // a doubled quote reopens at once: same result
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			i--
		case c == '(' || c == '[':
			if depth++; depth > maxNesting {
				return &Error{Pos: Pos{Line: line, Col: col}, Msg: fmt.Sprintf("parentheses and brackets nested more than %d deep", maxNesting),
					Hint: "no query needs that many; simplify the expression"}
			}
		case c == ')' || c == ']':
			depth--
		}
	}
	return nil
}

// Parse parses a query. Errors are *Error with the position of the problem.
func Parse(text string) (*Query, error) {
	if err := checkText(text, "query", maxText); err != nil {
		return nil, err
	}
	q, err := queryParser.ParseString("", text)
	if err != nil {
		return nil, parseError(err)
	}
	q.text = text
	return q, nil
}

// ParseExpr parses a bare expression, as breakpoint conditions and filters
// are written.
func ParseExpr(text string) (*Expr, error) {
	if err := checkText(text, "expression", maxText); err != nil {
		return nil, err
	}
	e, err := exprParser.ParseString("", text)
	if err != nil {
		return nil, parseError(err)
	}
	return e, nil
}

// Grammar is the EBNF of the query language, as participle prints it.
func Grammar() string { return queryParser.String() }
