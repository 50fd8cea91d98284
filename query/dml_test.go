package query

import (
	"os"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	s, err := ParseScript(`UPDATE "sum"."total" SET value = value - 17 WHERE key = 'key_662';
DELETE FROM "count"."count" WHERE value < 2;
insert into "sum"."by_product" (key, user_key, value) values ('k1', 'p1', 5), ('k2', 'p2', 6);
DROP STATE "sum"."by_product";`)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Statements) != 4 {
		t.Fatalf("%d statements", len(s.Statements))
	}
	u := s.Statements[0].Update
	if u == nil || u.Table.Operator() != "sum" || u.Table.StateName() != "total" || u.Sets[0].ColumnName() != "value" || u.Where == nil {
		t.Fatalf("update: %+v", u)
	}
	d := s.Statements[1].Delete
	if d == nil || d.Table.Operator() != "count" {
		t.Fatalf("delete: %+v", d)
	}
	in := s.Statements[2].Insert
	if in == nil || len(in.Columns) != 3 || in.Columns[1].ColumnName() != "user_key" || len(in.Rows) != 2 || len(in.Rows[1].Values) != 3 {
		t.Fatalf("insert: %+v", in)
	}
	if dr := s.Statements[3].Drop; dr == nil || dr.Table.StateName() != "by_product" {
		t.Fatalf("drop: %+v", dr)
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`UPDATE "sum"."total" value = 1`, `1:22: unexpected "value"`},
		{`UPDTE "sum"."total" SET value = 1`, `1:1: unexpected "UPDTE"`},
		{`DELETE "sum"."total"`, `1:8: unexpected "\"sum\""`},
		{`DROP "sum"."total"`, `1:6: unexpected`},
		{`UPDATE "sum"."total" SET value = 'x`, `unterminated string`},
	} {
		_, err := ParseScript(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.text, err, c.want)
		}
	}
	for _, c := range []struct{ text, hint string }{
		{`UPDTE "sum"."total" SET value = 1`, "did you mean UPDATE?"},
		// Statement keywords first: before, DELET was "did you mean SELECT?".
		{`DELET FROM "sum"."total"`, "did you mean DELETE?"},
		{`UPDATE "sum"."total" SET value = 1 WHER key = 'a'`, "did you mean WHERE?"},
		// A misplaced keyword is no typo: before, "did you mean FALSE?"
		// and "did you mean SET?".
		{`INSERT INTO "sum"."total" VALUES ('a', 1)`, `INSERT names its columns: INSERT INTO "op"."state" (key, value) VALUES (…)`},
		{`SELECT * FROM keyed_state`, "statements are UPDATE, DELETE, INSERT and DROP STATE; streamdbg query runs a SELECT"},
		{`UPDATE "sum"."total" SET value = 1 'a'`, ""},
	} {
		_, err := ParseScript(c.text)
		if e, ok := err.(*Error); !ok || e.Hint != c.hint {
			t.Errorf("%s: hint of %v, want %q", c.text, err, c.hint)
		}
	}
}

// The statements' EBNF is golden: a grammar change shows up in review.
func TestStatementGrammarGolden(t *testing.T) {
	const path = "testdata/statements.ebnf"
	got := StatementGrammar() + "\n"
	if os.Getenv("REWRITE") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("grammar changed; REWRITE=1 go test -run TestStatementGrammarGolden ./query\n%s", got)
	}
}

func TestSelectGrammarUnchanged(t *testing.T) {
	// `state` and `set` stay usable as names in queries.
	if _, err := Parse(`SELECT value.state, value.set FROM keyed_state`); err != nil {
		t.Fatal(err)
	}
}

func TestCompileTypedAndPinned(t *testing.T) {
	e, _ := ParseExpr(`value - 17`)
	_, typ, err := CompileTyped(e, []string{"value"})
	if err != nil || typ != "any" {
		t.Fatalf("%v %q", err, typ)
	}
	e, _ = ParseExpr(`'x' || 1`)
	if e != nil {
		t.Fatal("parsed ||")
	}
	e, _ = ParseExpr(`'abc'`)
	if _, typ, _ := CompileTyped(e, nil); typ != "string" {
		t.Fatalf("literal type %q", typ)
	}
	e, _ = ParseExpr(`key IN ('a', 'b') AND operator_name = 'count' AND value > 3`)
	p, err := Pinned(e)
	if err != nil || len(p["key"]) != 2 || p["operator_name"][0] != "count" || p["value"] != nil {
		t.Fatalf("%v %v", p, err)
	}
	e, _ = ParseExpr(`key = 'a' OR key = 'b'`)
	if p, _ := Pinned(e); len(p) != 0 {
		t.Fatalf("OR pinned %v", p)
	}
}
