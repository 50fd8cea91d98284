package querytest_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/savepoint"
)

// TestQueryMemory measures the resident memory of streaming queries over
// the benchmark savepoint (STREAMDBG_BENCH_ENTRIES entries): the peak RSS
// (VmHWM) while each query runs, its high-water mark reset before it. Only
// with STREAMDBG_MEMTEST=1: it builds the savepoint, which default test
// runs must not. Compare runs at 1M and 10M entries: a streaming query's
// peak must not grow with the savepoint.
//
//	STREAMDBG_MEMTEST=1 STREAMDBG_BENCH_ENTRIES=10000000 go test ./query/querytest -run TestQueryMemory -v
func TestQueryMemory(t *testing.T) {
	if os.Getenv("STREAMDBG_MEMTEST") == "" {
		t.Skip("set STREAMDBG_MEMTEST=1 to measure resident memory over the benchmark savepoint")
	}
	c, err := benchSavepoint()
	if err != nil {
		t.Fatal(err)
	}
	var fileBytes int64
	sp, err := savepoint.Open(vfs.Default, c.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range sp.Meta().Operators {
		for _, sub := range op.Subtasks {
			if sub.Keyed != nil {
				fileBytes += sub.Keyed.Size
			}
		}
	}
	// The limit bounds how far a query may raise the peak above the
	// baseline whatever the savepoint's size: section buffers and the
	// garbage between collections, not the state.
	const limit = 32 << 20
	t.Logf("%d entries in %d key groups, %.1f MiB of state files; GOGC=%s", c.entries, c.maxPar, mib(fileBytes), os.Getenv("GOGC"))
	for _, q := range []struct{ name, text string }{
		{"limit 10", "SELECT key, value FROM keyed_state LIMIT 10"},
		{"filter scan", scanQuery},
		{"count", "SELECT COUNT(*) FROM keyed_state WHERE value > 100"},
		{"point", "SELECT value FROM keyed_state WHERE key = 'key_662'"},
	} {
		goruntime.GC()
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			t.Skipf("cannot reset the RSS high-water mark: %v", err)
		}
		before := procStatus(t, "VmRSS")
		n := countRows(t, sp, q.text)
		peak := procStatus(t, "VmHWM")
		t.Logf("%-12s %8d rows: RSS before %6.1f MiB, peak %6.1f MiB (+%.1f MiB)", q.name, n, mib(before), mib(peak), mib(peak-before))
		if peak-before > limit {
			t.Errorf("%s: the peak RSS grew by %.1f MiB over %.1f MiB of state: not streaming", q.name, mib(peak-before), mib(fileBytes))
		}
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// procStatus reads a field of /proc/self/status in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			break
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			break
		}
		return kb << 10
	}
	t.Fatal(fmt.Sprintf("no %s in /proc/self/status", field))
	return 0
}
