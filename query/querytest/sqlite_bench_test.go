package querytest_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/cputime"
	"streamdbg/savepoint"
)

// sqliteDB builds (once per directory) a sqlite3 database of the same rows
// as the savepoint of benchSavepoint: table kv(key TEXT, value INTEGER),
// key_i → i, imported from CSV by the sqlite3 shell.
func sqliteDB(b *testing.B, c *benchConfig) string {
	db := filepath.Join(filepath.Dir(c.dir), fmt.Sprintf("kv-%d.db", c.entries))
	if _, err := os.Stat(db); err == nil {
		return db
	}
	csv := db + ".csv"
	f, err := os.Create(csv)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range c.entries {
		fmt.Fprintf(w, "key_%d,%d\n", i, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	defer os.Remove(csv)
	tmp := db + ".tmp"
	os.Remove(tmp)
	script := "CREATE TABLE kv (key TEXT NOT NULL, value INTEGER NOT NULL);\n.import --csv " + csv + " kv\n"
	cmd := exec.Command("sqlite3", tmp)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("sqlite3 import: %v: %s", err, out)
	}
	if err := os.Rename(tmp, db); err != nil {
		b.Fatal(err)
	}
	return db
}

var sqliteTime = regexp.MustCompile(`Run Time: real ([0-9.]+) user ([0-9.]+) sys ([0-9.]+)`)

// sqliteRun runs one statement in the sqlite3 shell with its timer on and
// returns the statement's own time (real, as the shell measures it: not
// the process start or the opening of the database) and the rows it
// printed.
func sqliteRun(b *testing.B, db, stmt string) (time.Duration, int) {
	d, _, n := sqliteRunCPU(b, db, stmt)
	return d, n
}

// sqliteRunCPU is sqliteRun that also returns the statement's CPU time
// (user and system, as the shell's timer reports them).
func sqliteRunCPU(b *testing.B, db, stmt string) (time.Duration, time.Duration, int) {
	cmd := exec.Command("sqlite3", db)
	cmd.Stdin = strings.NewReader(".timer on\n" + stmt + "\n")
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("sqlite3: %v", err)
	}
	m := sqliteTime.FindSubmatch(out)
	if m == nil {
		b.Fatalf("sqlite3 printed no timer: %.200s", out)
	}
	sec, _ := strconv.ParseFloat(string(m[1]), 64)
	user, _ := strconv.ParseFloat(string(m[2]), 64)
	sys, _ := strconv.ParseFloat(string(m[3]), 64)
	rows := strings.Count(string(out), "\n") - 1
	return time.Duration(sec * float64(time.Second)), time.Duration((user + sys) * float64(time.Second)), rows
}

// BenchmarkVsSQLite runs the same filtered full scan and point lookup on
// the same rows in streamdbg (the savepoint of benchSavepoint, opened once,
// as the CLI and the TUI browser do) and in sqlite3 (a table of the same
// key/value rows, no index; the sqlite3 shell's own timer, so neither side
// counts process start or opening). The iterations alternate the two sides,
// so load on the machine hits both; each side runs once untimed first
// (warm caches). Reported: rows/s of both sides, and streamdbg/sqlite3 (>1:
// streamdbg is faster) in wall time and in CPU time (streamdbg's process,
// all its goroutines, against the user and system time sqlite3's timer
// reports). It skips without the sqlite3 shell.
//
//	STREAMDBG_BENCH_ENTRIES=10000000 STREAMDBG_BENCH_DIR=/tmp/sdbg go test ./query/querytest -run '^$' -bench VsSQLite -benchtime 5x
func BenchmarkVsSQLite(b *testing.B) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		b.Skip("no sqlite3 shell")
	}
	c, err := benchSavepoint()
	if err != nil {
		b.Fatal(err)
	}
	sp, err := savepoint.Open(vfs.Default, c.dir)
	if err != nil {
		b.Fatal(err)
	}
	db := sqliteDB(b, c)
	want := c.entries / 1000
	if c.entries%1000 > 7 {
		want++
	}
	b.Run("scan", func(b *testing.B) {
		const sql = "SELECT key, value FROM kv WHERE value % 1000 = 7;"
		var o, t, oc, tc time.Duration
		ours := func() {
			start, c0 := time.Now(), cputime.Process()
			if n := countRows(b, sp, scanQuery); n != want {
				b.Fatalf("streamdbg: %d rows, want %d", n, want)
			}
			o += time.Since(start)
			oc += cputime.Process() - c0
		}
		theirs := func() {
			d, cpu, n := sqliteRunCPU(b, db, sql)
			if n != want {
				b.Fatalf("sqlite3: %d rows, want %d", n, want)
			}
			t += d
			tc += cpu
		}
		ours()
		theirs()
		o, t, oc, tc = 0, 0, 0, 0
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				ours()
				theirs()
			} else {
				theirs()
				ours()
			}
		}
		rows := float64(c.entries) * float64(b.N)
		b.ReportMetric(rows/o.Seconds(), "streamdbg-rows/s")
		b.ReportMetric(rows/t.Seconds(), "sqlite3-rows/s")
		b.ReportMetric(float64(t)/float64(o), "streamdbg/sqlite3")
		if oc > 0 {
			b.ReportMetric(float64(tc)/float64(oc), "streamdbg/sqlite3-cpu")
		}
	})
	b.Run("point", func(b *testing.B) {
		var o, t time.Duration
		for i := 0; b.Loop(); i++ {
			k := (i * 7919) % c.entries
			start := time.Now()
			q := fmt.Sprintf("SELECT value FROM keyed_state WHERE operator_name = 'sum' AND state_name = 'total' AND key = 'key_%d'", k)
			if n := countRows(b, sp, q); n != 1 {
				b.Fatalf("key_%d: %d rows", k, n)
			}
			o += time.Since(start)
			d, n := sqliteRun(b, db, fmt.Sprintf("SELECT value FROM kv WHERE key = 'key_%d';", k))
			if n != 1 {
				b.Fatalf("sqlite3 key_%d: %d rows", k, n)
			}
			t += d
		}
		b.ReportMetric(float64(o.Microseconds())/1000/float64(b.N), "streamdbg-ms/op")
		b.ReportMetric(float64(t.Microseconds())/1000/float64(b.N), "sqlite3-noindex-ms/op")
	})
}
