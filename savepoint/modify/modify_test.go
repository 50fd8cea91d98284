package modify_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/query"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
	"streamdbg/savepoint/modify"
)

type order struct {
	customer, product string
	amount            int64
}

// orderLines makes n orders over 40 customers and 5 products.
func orderLines(n int) ([]order, []byte) {
	r := rand.New(rand.NewPCG(3, 5))
	var b strings.Builder
	out := make([]order, n)
	for i := range out {
		o := order{fmt.Sprintf("key_%d", r.IntN(40)), fmt.Sprintf("p%d", r.IntN(5)), int64(1 + r.IntN(50))}
		out[i] = o
		fmt.Fprintf(&b, `{"customer": %q, "product": %q, "amount": %d}`+"\n", o.customer, o.product, o.amount)
	}
	return out, []byte(b.String())
}

func ordersJob(t testing.TB, input []byte) *runtime.Job {
	t.Helper()
	in, err := fixtures.Parse("orders.jsonl", input)
	if err != nil {
		t.Fatal(err)
	}
	job, err := fixtures.Build("orders", fixtures.Config{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func newSession(t testing.TB, job *runtime.Job, from string) *session.Session {
	t.Helper()
	opts := session.Options{}
	if from != "" {
		sp, err := savepoint.Open(vfs.Default, from)
		if err != nil {
			t.Fatal(err)
		}
		opts.Restore = runtime.FromSavepoint(sp)
	}
	s, err := session.New(job, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// liveTotals reads sum.total of every customer from a session's live state.
func liveTotals(t testing.TB, s *session.Session) map[string]int64 {
	t.Helper()
	rows, err := s.Query(context.Background(), `SELECT key, value FROM "sum"."total"`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for row, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		out[row[0].(string)] = row[1].(int64)
	}
	return out
}

func compile(t testing.TB, src, text string) *modify.Plan {
	t.Helper()
	sp, err := savepoint.Open(vfs.Default, src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := modify.Compile(sp, text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUpdateOrdersTotalThenFinish: UPDATE one customer's total in a
// savepoint taken half-way, restore it, finish the run: that customer's final
// total is the reference minus the change, every other total the reference.
func TestUpdateOrdersTotalThenFinish(t *testing.T) {
	orders, input := orderLines(3000)
	const half = 1500
	dir := t.TempDir()
	sp, sp2 := filepath.Join(dir, "half"), filepath.Join(dir, "modified")
	s := newSession(t, ordersJob(t, input), "")
	if _, err := s.Run(context.Background(), session.RunOptions{Steps: half}); err != nil {
		t.Fatal(err)
	}
	if err := s.Savepoint(vfs.Default, sp); err != nil {
		t.Fatal(err)
	}
	// The reference, from the input alone.
	ref := map[string]int64{}
	for _, o := range orders {
		ref[o.customer] += o.amount
	}
	target := orders[7].customer
	p := compile(t, sp, fmt.Sprintf(`UPDATE "sum"."total" SET value = value - 17 WHERE key = '%s'`, target))
	if err := p.Write(vfs.Default, sp2); err != nil {
		t.Fatal(err)
	}
	if got := p.Statements(); len(got) != 1 || !strings.HasSuffix(got[0], ": 1 entry updated") {
		t.Fatalf("report %q", got)
	}
	// savepoint check passes on the result.
	mod, err := savepoint.Open(vfs.Default, sp2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := runtime.CheckJob(ordersJob(t, input), runtime.Options{}, runtime.FromSavepoint(mod))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Restorable(false) {
		t.Fatalf("modified savepoint does not restore: %s", rep.String())
	}
	// Counts in StateMeta are those of what was written.
	orig, _ := savepoint.Open(vfs.Default, sp)
	for i, m := range mod.States() {
		if o := orig.States()[i]; m.Entries != o.Entries || m.StateName != o.StateName {
			t.Errorf("StateMeta %s: %d entries, source %d", m.QualifiedName(), m.Entries, o.Entries)
		}
	}

	r := newSession(t, ordersJob(t, input), sp2)
	if _, err := r.Run(context.Background(), session.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	got := liveTotals(t, r)
	if len(got) != len(ref) {
		t.Fatalf("%d customers, want %d", len(got), len(ref))
	}
	for c, want := range ref {
		if c == target {
			want -= 17
		}
		if got[c] != want {
			t.Errorf("%s: final total %d, want %d", c, got[c], want)
		}
	}
}

func ordersSavepoint(t testing.TB, steps int64) string {
	t.Helper()
	_, input := orderLines(600)
	dir := filepath.Join(t.TempDir(), "sp")
	s := newSession(t, ordersJob(t, input), "")
	if _, err := s.Run(context.Background(), session.RunOptions{Steps: steps}); err != nil {
		t.Fatal(err)
	}
	if err := s.Savepoint(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckErrors(t *testing.T) {
	sp, err := savepoint.Open(vfs.Default, ordersSavepoint(t, 200))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, want string }{
		{`UPDATE "sum"."totl" SET value = 1`, `1:8: operator sum has no state "totl"; did you mean "total"?`},
		{`UPDATE "summ"."total" SET value = 1`, `1:8: unknown operator "summ"; did you mean "sum"?`},
		{`UPDATE "sum" SET value = 1`, `1:8: "sum" names an operator, not a state`},
		{`UPDATE "sum"."total" SET value = 'x'`, `1:34: value of sum.total is int64, the expression is string; write an integer`},
		{`UPDATE "sum"."total" SET value = 1.5`, `1:34: value of sum.total is int64, the expression is float64; write an integer`},
		{`UPDATE "sum"."total" SET key = 'x'`, `1:26: column "key" cannot be set`},
		{`UPDATE "sum"."total" SET value = vlaue + 1`, `1:34: unknown name "vlaue"; did you mean "value"?`},
		{`UPDATE "sum"."total" SET value = 1 WHERE 1 + 1`, `1:42: WHERE is int64, want a condition`},
		{"DELETE FROM \"sum\".\"total\" WHERE key = 'a';\nINSERT INTO \"sum\".\"total\" (key) VALUES ('a')", `2:1: INSERT into sum.total (reducing) needs column value`},
		{`INSERT INTO "sum"."by_product" (key, value) VALUES ('a', 1)`, `needs column user_key`},
		{`INSERT INTO "sum"."total" (key, value) VALUES (1, 1)`, `1:48: key of sum.total is string, the expression is int64; write a string`},
		{`INSERT INTO "sum"."total" (key, value) VALUES ('a', 1), ('a', 2)`, `the same entry is inserted twice`},
		{`INSERT INTO "Source: orders"."offsets" (key, value) VALUES ('a', 1)`, `operator state: INSERT writes keyed state only`},
		{`DROP STATE "sum"."total"; UPDATE "sum"."total" SET value = 1`, `1:27: state sum.total was dropped by an earlier statement`},
		{`UPDATE "sum"."total" SET value = 1 WHERE`, `unexpected end of input`},
	} {
		_, err := modify.Compile(sp, c.text)
		var qe *query.Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

func readTotals(t testing.TB, dir string, table string) map[string]any {
	t.Helper()
	sp, err := savepoint.Open(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := query.RunText(context.Background(), sp, fmt.Sprintf(`SELECT key, user_key, value FROM %s`, table))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for row, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprint(row[0])
		if row[1] != nil {
			k += "/" + fmt.Sprint(row[1])
		}
		out[k] = row[2]
	}
	return out
}

// TestTransaction: several statements run in order, as one transaction.
func TestTransaction(t *testing.T) {
	src := ordersSavepoint(t, 300)
	before := readTotals(t, src, `"sum"."total"`)
	var victim, other string
	for k := range before {
		switch {
		case victim == "":
			victim = k
		case other == "" && k != victim:
			other = k
		}
	}
	dst := filepath.Join(t.TempDir(), "out")
	p := compile(t, src, fmt.Sprintf(`
INSERT INTO "sum"."total" (key, value) VALUES ('new_customer', 40);
UPDATE "sum"."total" SET value = value * 2 WHERE key IN ('new_customer', '%s');
DELETE FROM "sum"."total" WHERE key = '%s';
INSERT INTO "sum"."by_product" (key, user_key, value) VALUES ('new_customer', 'p9', 40);
DROP STATE "Source: orders"."offsets";
`, other, victim))
	if err := p.Write(vfs.Default, dst); err != nil {
		t.Fatal(err)
	}
	after := readTotals(t, dst, `"sum"."total"`)
	if after["new_customer"] != int64(80) {
		t.Errorf("inserted then doubled: %v", after["new_customer"])
	}
	if after[other] != before[other].(int64)*2 {
		t.Errorf("%s: %v, want %v", other, after[other], before[other].(int64)*2)
	}
	if _, ok := after[victim]; ok {
		t.Errorf("%s not deleted", victim)
	}
	if len(after) != len(before) {
		t.Errorf("%d totals, want %d", len(after), len(before))
	}
	bp := readTotals(t, dst, `"sum"."by_product"`)
	if bp["new_customer/p9"] != int64(40) {
		t.Errorf("by_product insert: %v", bp["new_customer/p9"])
	}
	sp, _ := savepoint.Open(vfs.Default, dst)
	for _, m := range sp.States() {
		if m.StateName == "offsets" {
			t.Errorf("dropped state still listed: %+v", m)
		}
		if m.StateName == "total" && m.Entries != int64(len(after)) {
			t.Errorf("total: StateMeta says %d entries, %d written", m.Entries, len(after))
		}
	}
	want := []string{"1 entry inserted", "2 entries updated", "1 entry deleted", "1 entry inserted", "4 entries dropped"}
	for i, s := range p.Statements() {
		if !strings.HasSuffix(s, want[i]) {
			t.Errorf("statement %d: %q, want %q", i, s, want[i])
		}
	}
}

// TestFailingRowWritesNothing: a row the statement cannot write stops the
// transaction; the target does not exist afterwards.
func TestFailingRowWritesNothing(t *testing.T) {
	src := ordersSavepoint(t, 300)
	for _, text := range []string{
		`UPDATE "sum"."total" SET value = key`, // a string into int64, found row by row
		`INSERT INTO "sum"."total" (key, value) VALUES ('key_1', 1)`,
	} {
		dst := filepath.Join(t.TempDir(), "out")
		err := compile(t, src, text).Write(vfs.Default, dst)
		if err == nil || !strings.Contains(err.Error(), "key \"key_") {
			t.Fatalf("%s: %v", text, err)
		}
		if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
			t.Fatalf("%s: target left behind (%v)", text, serr)
		}
	}
}

func TestNeverInPlace(t *testing.T) {
	src := ordersSavepoint(t, 100)
	err := compile(t, src, `DELETE FROM "sum"."total"`).Write(vfs.Default, src+"/")
	if !errors.Is(err, modify.ErrInPlace) {
		t.Fatalf("in place: %v", err)
	}
}

// TestJSONValues: a state with a JSON codec (json:T, T a Go struct of the
// job) takes a string literal as JSON text, as a JSON column does in SQL,
// and an UPDATE that would change a row's JSON kind (an object into a
// number) fails naming the row. Before: the literal was stored as a JSON
// string, `query` showed the same text, and the job failed to restore the
// savepoint (json: cannot unmarshal string into fixtures.PartitionOffset).
func TestJSONValues(t *testing.T) {
	src := ordersSavepoint(t, 100)
	dst := filepath.Join(t.TempDir(), "out")
	p := compile(t, src, `UPDATE "Source: orders"."offsets" SET value = '{"partition": 0,  "offset": 5}' WHERE position = 0`)
	if err := p.Write(vfs.Default, dst); err != nil {
		t.Fatal(err)
	}
	sp, err := savepoint.Open(vfs.Default, dst)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := query.RunText(context.Background(), sp, `SELECT value.partition, value.offset, value FROM operator_state WHERE position = 0`)
	if err != nil {
		t.Fatal(err)
	}
	for row, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		if row[0] != int64(0) || row[1] != int64(5) {
			t.Errorf("offsets[0] after the update: partition %v, offset %v (value %#v), want 0 and 5", row[0], row[1], row[2])
		}
	}
	// The job restores it: the source resumes partition 0 at offset 5.
	_, input := orderLines(600)
	s := newSession(t, ordersJob(t, input), dst)
	st, err := s.Next()
	if err == nil && st.Failure != nil {
		err = st.Failure
	}
	if err != nil {
		t.Fatalf("restore of the modified savepoint: %v", err)
	}

	for _, c := range []struct{ text, want string }{
		{`UPDATE "Source: orders"."offsets" SET value = 5`, `subtask 0 position 0: the value is a JSON object, the new value a JSON number`},
		{`UPDATE "Source: orders"."offsets" SET value = '[1, 2]'`, `the value is a JSON object, the new value a JSON array`},
	} {
		err := compile(t, src, c.text).Write(vfs.Default, filepath.Join(t.TempDir(), "out"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.text, err, c.want)
		}
	}

	// A literal that is not JSON text is refused before anything is read.
	sp0, err := savepoint.Open(vfs.Default, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, want string }{
		{`UPDATE "Source: orders"."offsets" SET value = 'hello'`, `1:47: value of Source: orders.offsets: "hello" is not JSON text`},
		{`UPDATE "Source: orders"."offsets" SET value = '{"offset": 5'`, `1:47: value of Source: orders.offsets: "{\"offset\": 5" is not JSON text`},
	} {
		_, err := modify.Compile(sp0, c.text)
		var qe *query.Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.text, err, c.want)
		}
	}

	// A JSON value written back as read keeps it.
	same := filepath.Join(t.TempDir(), "same")
	if err := compile(t, src, `UPDATE "Source: orders"."offsets" SET value = value`).Write(vfs.Default, same); err != nil {
		t.Fatal(err)
	}
	if a, b := offsetsOf(t, src), offsetsOf(t, same); a != b {
		t.Errorf("SET value = value changed the offsets:\n%s\n%s", a, b)
	}
}

// offsetsOf lists the source's offsets in a savepoint, as JSON lines.
func offsetsOf(t *testing.T, dir string) string {
	t.Helper()
	sp, err := savepoint.Open(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := query.RunText(context.Background(), sp, `SELECT subtask, position, value FROM operator_state`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := query.Format(&b, rows, "json"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestListPositions: keyed list elements are numbered 0, 1, … in the new
// savepoint after INSERT and DELETE, as the job numbers them when it
// restores the list (before: an element inserted at position 5 of a
// one-element list, or left after its predecessor was deleted, kept that
// position in the savepoint, so query and a later modify saw another list
// than the restored job had).
func TestListPositions(t *testing.T) {
	job := func() *runtime.Job {
		j, err := fixtures.Build("payments", fixtures.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	src := filepath.Join(t.TempDir(), "sp")
	s := newSession(t, job(), "")
	if _, err := s.Run(context.Background(), session.RunOptions{Steps: 40}); err != nil {
		t.Fatal(err)
	}
	if err := s.Savepoint(vfs.Default, src); err != nil {
		t.Fatal(err)
	}
	const list = `"unpaid"."payments"`
	keys := readTotals(t, src, list)
	var key string
	for k := range keys {
		if strings.HasSuffix(k, "/0") {
			key = strings.TrimSuffix(k, "/0")
			break
		}
	}
	if key == "" {
		t.Fatalf("no list in %v", keys)
	}
	dst := filepath.Join(t.TempDir(), "out")
	p := compile(t, src, fmt.Sprintf(`
INSERT INTO %[1]s (key, user_key, value) VALUES ('%[2]s', 5, 1005), ('%[2]s', 7, 1007);
DELETE FROM %[1]s WHERE key = '%[2]s' AND user_key = 0`, list, key))
	if err := p.Write(vfs.Default, dst); err != nil {
		t.Fatal(err)
	}
	got := readTotals(t, dst, list)
	if got[key+"/0"] != int64(1005) || got[key+"/1"] != int64(1007) || len(got) != len(keys)+1 {
		t.Errorf("list of %s after the statements: %v", key, got)
	}
	// The restored job has the same list at the same positions.
	r := newSession(t, job(), dst)
	rows, err := r.Query(context.Background(), `SELECT key, user_key, value FROM "unpaid"."payments"`)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]any{}
	for row, err := range rows.All() {
		if err != nil {
			t.Fatal(err)
		}
		live[fmt.Sprintf("%v/%v", row[0], row[1])] = row[2]
	}
	if fmt.Sprint(live) != fmt.Sprint(got) {
		t.Errorf("restored lists differ from the savepoint's:\n%v\n%v", live, got)
	}
}

// TestBroadcastCopiesStayEqual: every subtask keeps a copy of broadcast
// state, and Flink takes them to be equal. A statement that changes one
// subtask's copy only (a condition on subtask) is refused and writes
// nothing; the same statement over every copy is written. (It was
// accepted, and the restored job saw other categories in each subtask.)
func TestBroadcastCopiesStayEqual(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "data", "enrich", "rules.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := fixtures.Parse("rules.jsonl", in)
	if err != nil {
		t.Fatal(err)
	}
	job, err := fixtures.Build("enrich", fixtures.Config{Inputs: map[string]*fixtures.Input{"rules": rules}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(job, session.Options{Options: runtime.Options{Parallelism: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Run(context.Background(), session.RunOptions{Steps: 40}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "sp")
	if err := s.Savepoint(vfs.Default, src); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	p := compile(t, src, `DELETE FROM "enrich"."categories" WHERE subtask = 0 AND key = '/a'`)
	if err := p.Write(vfs.Default, dst); err == nil || !strings.Contains(err.Error(), "broadcast state different") {
		t.Fatalf("one subtask's copy changed: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a refused statement left its target")
	}
	p = compile(t, src, `DELETE FROM "enrich"."categories" WHERE key = '/a'`)
	if err := p.Write(vfs.Default, dst); err != nil {
		t.Fatal(err)
	}
	if got := p.Statements(); len(got) != 1 || !strings.HasSuffix(got[0], ": 2 entries deleted") {
		t.Errorf("every copy: %q, want 2 entries deleted (one per subtask)", got)
	}
}
