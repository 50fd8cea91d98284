package savepoint

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// benchState is 1M keyed entries of one operator at parallelism 2, max
// parallelism 128: a reducing state with an int64 per key (500k entries)
// and a JSON value state per key (500k entries of ~40 bytes).
type benchState struct {
	byGroup map[int][]state.Entry
	n       int
}

func newBenchState(entries int) *benchState {
	s := &benchState{byGroup: map[int][]state.Entry{}}
	for i := range entries / 2 {
		key := fmt.Appendf(nil, "customer_%07d", i)
		kg := state.KeyGroupFor(key, 128)
		s.byGroup[kg] = append(s.byGroup[kg],
			state.Entry{State: "last", KeyGroup: kg, Key: key, Value: fmt.Appendf(nil, `{"product":"p%d","amount":%d,"n":%d}`, i%97, i%1000, i)},
			state.Entry{State: "total", KeyGroup: kg, Key: key, Value: state.Int64.Append(nil, int64(i))})
	}
	// Pack keys and values into one arena in iteration order, as a backend
	// iterating its blocks would hand them over: otherwise the benchmark
	// measures cache misses on a million scattered little allocations.
	arena := make([]byte, 0, 64*entries)
	for kg := range 128 {
		es := s.byGroup[kg]
		slices.SortFunc(es, state.CompareEntries)
		for i := range es {
			k := len(arena)
			arena = append(arena, es[i].Key...)
			es[i].Key = arena[k:len(arena):len(arena)]
			v := len(arena)
			arena = append(arena, es[i].Value...)
			es[i].Value = arena[v:len(arena):len(arena)]
		}
		s.n += len(es)
	}
	return s
}

func (s *benchState) entries(kg int) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		for _, e := range s.byGroup[kg] {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (s *benchState) snapshot() *Snapshot {
	op := OperatorSnapshot{ID: sumID, UID: "sum", Name: "sum", Parallelism: 2, MaxParallelism: 128,
		States: []state.StateMeta{
			{StateName: "last", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", ValueType: "json:main.Order"},
			{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", ValueType: "int64"},
		}}
	for i := range 2 {
		op.Subtasks = append(op.Subtasks, SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(128, 2, i), Keyed: s.entries})
	}
	return &Snapshot{JobName: "bench", Created: time.Unix(0, 0), Operators: []OperatorSnapshot{op}}
}

// BenchmarkSavepoint writes and reads 1M keyed entries as a savepoint, and
// the same file bytes through a plain buffered file (written and synced,
// then read back whole) as the baseline. MB/s counts the state file bytes.
func BenchmarkSavepoint(b *testing.B) {
	fs := vfs.Default
	st := newBenchState(1_000_000)
	root := b.TempDir()
	ref := fs.PathJoin(root, "ref")
	if err := Write(fs, ref, st.snapshot()); err != nil {
		b.Fatal(err)
	}
	sp, err := Open(fs, ref)
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	var total int64
	for _, sub := range sp.Meta().Operators[0].Subtasks {
		f, err := fs.Open(fs.PathJoin(ref, sub.Keyed.Name))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
		total += int64(len(data))
	}
	b.Logf("%d entries, %d bytes of state files (%.1f bytes/entry)", st.n, total, float64(total)/float64(st.n))

	// Each side is a function so that the ratio sub-benchmarks can
	// interleave them: on a loaded machine both then see the same load.
	write := func(b *testing.B, i int) {
		dir := fs.PathJoin(root, fmt.Sprintf("w%d", i))
		if err := Write(fs, dir, st.snapshot()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = fs.RemoveAll(dir)
		b.StartTimer()
	}
	read := func(b *testing.B) {
		sp, err := Open(fs, ref)
		if err != nil {
			b.Fatal(err)
		}
		n, size := 0, 0
		for e, err := range sp.KeyedEntriesFor(sumID, state.KeyGroupRange{Start: 0, End: 127}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
			size += e.Size()
		}
		if n != st.n {
			b.Fatalf("%d entries, want %d", n, st.n)
		}
	}
	// plainWrite writes the same file bytes in 4 KiB writes through a
	// bufio.Writer and syncs them, as a plain buffered file does.
	plainWrite := func(b *testing.B, i int) {
		dir := fs.PathJoin(root, fmt.Sprintf("p%d", i))
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j, data := range files {
			path := fs.PathJoin(dir, fmt.Sprint(j))
			f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriter(f)
			for off := 0; off < len(data); off += 4096 {
				_, _ = w.Write(data[off:min(off+4096, len(data))])
			}
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := syncClose(f, path); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		_ = fs.RemoveAll(dir)
		b.StartTimer()
	}
	// plainRead reads the same files whole in 4 KiB reads through a
	// bufio.Reader, without looking at the bytes.
	buf := make([]byte, 4096)
	plainRead := func(b *testing.B) {
		var n int64
		for _, sub := range sp.Meta().Operators[0].Subtasks {
			f, err := fs.Open(fs.PathJoin(ref, sub.Keyed.Name))
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReader(f)
			for {
				m, err := io.ReadFull(r, buf)
				n += int64(m)
				if err != nil {
					break
				}
			}
			_ = f.Close()
		}
		if n != total {
			b.Fatalf("read %d bytes, want %d", n, total)
		}
	}
	b.Run("write", func(b *testing.B) {
		b.SetBytes(total)
		for i := range b.N {
			write(b, i)
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			read(b)
		}
	})
	b.Run("plainwrite", func(b *testing.B) {
		b.SetBytes(total)
		for i := range b.N {
			plainWrite(b, i)
		}
	})
	b.Run("plainread", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			plainRead(b)
		}
	})
	// The ratios: each iteration does one of each side, alternating which
	// goes first; x-plain is the savepoint's throughput over the plain
	// file's (plain time / savepoint time), the figure DESIGN 12 bounds.
	ratio := func(b *testing.B, ours, plain func(i int)) {
		var o, p time.Duration
		for i := range b.N {
			for k := range 2 {
				start := time.Now()
				if (i+k)%2 == 0 {
					ours(i)
					o += time.Since(start)
				} else {
					plain(i)
					p += time.Since(start)
				}
			}
		}
		b.ReportMetric(float64(p)/float64(o), "x-plain")
	}
	b.Run("read-ratio", func(b *testing.B) {
		ratio(b, func(int) { read(b) }, func(int) { plainRead(b) })
	})
	b.Run("write-ratio", func(b *testing.B) {
		ratio(b, func(i int) { write(b, i) }, func(i int) { plainWrite(b, i) })
	})
}
