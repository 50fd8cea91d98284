package querytest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/query"
	"streamdbg/runtime/session"
	"streamdbg/savepoint"
	"streamdbg/state"
)

// ordersInput is the orders job's input: key_662 orders 10+25+7 = 42 in
// total (p1: 3, p3: 39), the other customers less.
const ordersInput = `{"customer": "key_662", "product": "p3", "amount": 10}
{"customer": "key_7", "product": "p1", "amount": 6}
{"customer": "u1", "product": "p2", "amount": 40}
{"customer": "key_662", "product": "p3", "amount": 25}
{"customer": "key_42", "product": "p2", "amount": 5}
{"customer": "u2", "product": "p1", "amount": 70}
{"customer": "key_42", "product": "p0", "amount": 3}
{"customer": "key_662", "product": "p1", "amount": 3}
{"customer": "key_662", "product": "p3", "amount": 4}
{"customer": "u2", "product": "p1", "amount": 30}
{"customer": "it's", "product": "p9", "amount": 2}
`

// orders is the orders job run to the end over ordersInput in a session,
// and a savepoint of it on fs at dir.
type orders struct {
	sess *session.Session
	fs   *countingFS
	dir  string
	sp   *savepoint.Savepoint
}

func newOrders(t testing.TB) *orders {
	t.Helper()
	in, err := fixtures.Parse("orders.jsonl", []byte(ordersInput))
	if err != nil {
		t.Fatal(err)
	}
	job, err := fixtures.Build("orders", fixtures.Config{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(job, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	res, err := s.Run(context.Background(), session.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished || res.Position != int64(strings.Count(ordersInput, "\n")) {
		t.Fatalf("run ended at %+v, want finished after every order", res)
	}
	o := &orders{sess: s, fs: &countingFS{FS: vfs.NewMem()}, dir: "/savepoints/orders"}
	if err := s.Savepoint(o.fs, o.dir); err != nil {
		t.Fatal(err)
	}
	if o.sp, err = savepoint.Open(o.fs, o.dir); err != nil {
		t.Fatal(err)
	}
	return o
}

// run runs a query on a catalog and formats its rows, or its error with a
// caret under the error's column.
func run(cat query.Catalog, text, format string) string {
	rows, err := query.RunText(context.Background(), cat, text)
	if err != nil {
		return errorText(text, err)
	}
	defer rows.Close()
	var b strings.Builder
	if err := query.Format(&b, rows, format); err != nil {
		return b.String() + "error: " + err.Error() + "\n"
	}
	return b.String()
}

func errorText(text string, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %v\n", err)
	if qe, ok := err.(*query.Error); ok && qe.Pos.Line > 0 {
		lines := strings.Split(text, "\n")
		if qe.Pos.Line <= len(lines) {
			fmt.Fprintf(&b, "%s\n%s^\n", lines[qe.Pos.Line-1], strings.Repeat(" ", max(0, qe.Pos.Col-1)))
		}
	}
	return b.String()
}

// TestOrders runs the transcripts of testdata/orders against the savepoint
// and the live session: both must print the expected output. `go test
// ./query/querytest -rewrite` regenerates it (from the savepoint; the live
// state must still agree).
//
//	query [format=table|json|csv] [reads] [any-order]
//
// reads adds what the savepoint query read: file sections (ReadAt calls)
// and bytes. any-order compares the live rows with the savepoint's in any
// order (the output is the savepoint's).
func TestOrders(t *testing.T) {
	o := newOrders(t)
	live := o.sess.Catalog()
	datadriven.RunTest(t, "testdata/orders", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "query" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		format := "table"
		d.MaybeScanArgs(t, "format", &format)
		o.fs.reset()
		fromSavepoint := run(o.sp, d.Input, format)
		out := fromSavepoint
		reads := o.fs.summary()
		fromLive := run(live, d.Input, format)
		if d.HasArg("any-order") {
			// Without ORDER BY, rows come in catalog order: live state lists
			// operators in plan order, a savepoint by operator id.
			fromLive, fromSavepoint = sortLines(fromLive), sortLines(fromSavepoint)
		}
		if fromLive != fromSavepoint {
			t.Errorf("%s:\nlive state and savepoint differ\nlive:\n%s\nsavepoint:\n%s", d.Pos, fromLive, fromSavepoint)
		}
		if d.HasArg("reads") {
			out += "savepoint reads: " + reads + "\n"
		}
		return out
	})
}

// sortLines sorts the lines of a result, for comparing rows in any order.
func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestKey662IsPlainSum checks the acceptance query against a sum
// computed here over the input, on both catalogs.
func TestKey662IsPlainSum(t *testing.T) {
	var want int64
	for _, line := range strings.Split(strings.TrimSpace(ordersInput), "\n") {
		o, err := fixtures.ParseOrder([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if o.Customer == "key_662" {
			want += o.Amount
		}
	}
	o := newOrders(t)
	const q = "SELECT value FROM keyed_state WHERE operator_name = 'sum' AND state_name = 'total' AND key = 'key_662'"
	for name, cat := range map[string]query.Catalog{"savepoint": o.sp, "live": o.sess.Catalog()} {
		rows, err := query.RunText(context.Background(), cat, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		for row, err := range rows.All() {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, row[0])
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: key_662's total is %v, want [%d] (the sum of its orders)", name, got, want)
		}
	}
}

// TestPointQueryReadsOneSection checks at the file system that a key
// equality query on a savepoint reads one key group's section: one ReadAt
// of exactly that section's size, from the one keyed file that holds it.
func TestPointQueryReadsOneSection(t *testing.T) {
	o := newOrders(t)
	var meta state.StateMeta
	for _, m := range o.sp.States() {
		if m.OperatorName == "sum" && m.StateName == "total" {
			meta = m
		}
	}
	kg, ok := o.sp.KeyGroupOf(meta, "key_662")
	if !ok {
		t.Fatal("no key group for key_662")
	}
	var want savepoint.Section
	var file string
	for _, op := range o.sp.Meta().Operators {
		for _, sub := range op.Subtasks {
			if sub.Keyed == nil {
				continue
			}
			for _, sec := range sub.Keyed.Sections {
				if sec.KeyGroup == kg {
					want, file = sec, sub.Keyed.Name
				}
			}
		}
	}
	if file == "" {
		t.Fatalf("no section for key group %d", kg)
	}
	sec := read{file, want.Offset, want.Size}
	for _, tc := range []struct {
		q     string
		reads int // one per state scanned
	}{
		{"SELECT value FROM keyed_state WHERE operator_name = 'sum' AND state_name = 'total' AND key = 'key_662'", 1},
		{`SELECT user_key, value FROM "sum"."by_product" WHERE key = 'key_662'`, 1},
		// Each keyed state is its own scan of the key group: the planner
		// does not merge scans of one operator, so the section is read
		// once per state (still only that section).
		{"SELECT * FROM keyed_state WHERE key = 'key_662'", 2},
	} {
		o.fs.reset()
		if out := run(o.sp, tc.q, "csv"); strings.HasPrefix(out, "error") {
			t.Fatalf("%s: %s", tc.q, out)
		}
		got := o.fs.log()
		if len(got) != tc.reads || slices.ContainsFunc(got, func(r read) bool { return r != sec }) {
			t.Errorf("%s: read %v, want %d read(s) of key group %d's section %v only", tc.q, got, tc.reads, kg, sec)
		}
	}
}

// read is one ReadAt (or Read, off -1) on a file.
type read struct {
	file      string
	off, size int64
}

// countingFS records the reads of the files it opens.
type countingFS struct {
	vfs.FS
	mu    sync.Mutex
	reads []read
}

func (c *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c, name: c.PathBase(name)}, nil
}

func (c *countingFS) add(r read) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, r)
}

func (c *countingFS) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = nil
}

func (c *countingFS) log() []read {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]read(nil), c.reads...)
}

// summary is the reads in one line: how many, of how many bytes, from
// which files (sorted: a scan reads the subtasks' files in parallel, so
// the order of their first reads is not fixed).
func (c *countingFS) summary() string {
	reads := c.log()
	var bytes int64
	files := map[string]bool{}
	var names []string
	for _, r := range reads {
		bytes += r.size
		if !files[r.file] {
			files[r.file] = true
			names = append(names, r.file)
		}
	}
	slices.Sort(names)
	return fmt.Sprintf("%d sections, %d bytes, files %v", len(reads), bytes, names)
}

type countingFile struct {
	vfs.File
	fs   *countingFS
	name string
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.add(read{f.name, off, int64(n)})
	return n, err
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.fs.add(read{f.name, -1, int64(n)})
	return n, err
}
