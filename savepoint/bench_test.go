package savepoint

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/cputime"
	"streamdbg/state"
)

// benchState is 1M keyed entries of one operator at parallelism 2, max
// parallelism 128: a reducing state with an int64 per key (500k entries)
// and a JSON value state per key (500k entries of ~40 bytes).
//
// The entries are spans of one arena, in the order a backend iterating its
// blocks would hand them over, and hold no pointers: a million little
// slices would make every garbage collection during the benchmark scan
// them, which is the fixture's cost, not the savepoint's.
type benchState struct {
	byGroup [][]benchEntry
	arena   []byte
	n       int
}

type benchEntry struct {
	total      bool // state "total", else "last"
	key, value [2]int32
}

func newBenchState(entries int) *benchState {
	es := map[int][]state.Entry{}
	for i := range entries / 2 {
		key := fmt.Appendf(nil, "customer_%07d", i)
		kg := state.KeyGroupFor(key, 128)
		es[kg] = append(es[kg],
			state.Entry{State: "last", KeyGroup: kg, Key: key, Value: fmt.Appendf(nil, `{"product":"p%d","amount":%d,"n":%d}`, i%97, i%1000, i)},
			state.Entry{State: "total", KeyGroup: kg, Key: key, Value: state.Int64.Append(nil, int64(i))})
	}
	s := &benchState{byGroup: make([][]benchEntry, 128), arena: make([]byte, 0, 64*entries)}
	span := func(b []byte) [2]int32 {
		at := len(s.arena)
		s.arena = append(s.arena, b...)
		return [2]int32{int32(at), int32(len(s.arena))}
	}
	for kg := range 128 {
		slices.SortFunc(es[kg], state.CompareEntries)
		for _, e := range es[kg] {
			s.byGroup[kg] = append(s.byGroup[kg], benchEntry{total: e.State == "total", key: span(e.Key), value: span(e.Value)})
		}
		s.n += len(es[kg])
	}
	return s
}

func (s *benchState) entries(kg int) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		for _, be := range s.byGroup[kg] {
			e := state.Entry{State: "last", KeyGroup: kg, Key: s.arena[be.key[0]:be.key[1]:be.key[1]], Value: s.arena[be.value[0]:be.value[1]:be.value[1]]}
			if be.total {
				e.State = "total"
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// snapshot is the fixture as Write's input: Keyed, and KeyedBatches too
// when batches is set (then Write reads the batches).
func (s *benchState) snapshot(batches bool) *Snapshot {
	op := OperatorSnapshot{ID: sumID, UID: "sum", Name: "sum", Parallelism: 2, MaxParallelism: 128,
		States: []state.StateMeta{
			{StateName: "last", Scope: state.ScopeKeyed, Kind: state.KindValue, KeyType: "string", ValueType: "json:main.Order"},
			{StateName: "total", Scope: state.ScopeKeyed, Kind: state.KindReducing, KeyType: "string", ValueType: "int64"},
		}}
	for i := range 2 {
		sub := SubtaskSnapshot{Index: i, KeyGroups: state.KeyGroupRangeFor(128, 2, i), Keyed: s.entries}
		if batches {
			sub.KeyedBatches = func(kg int) iter.Seq2[[]state.Entry, error] {
				return s.batches(state.KeyGroupRange{Start: kg, End: kg})
			}
		}
		op.Subtasks = append(op.Subtasks, sub)
	}
	return &Snapshot{JobName: "bench", Created: time.Unix(0, 0), Operators: []OperatorSnapshot{op}}
}

// batches yields the entries of groups in batches of state.BatchEntries,
// one key group's each, copied into one reused slice, as KeyedBatchesFor
// hands them over.
func (s *benchState) batches(groups state.KeyGroupRange) iter.Seq2[[]state.Entry, error] {
	return func(yield func([]state.Entry, error) bool) {
		es := make([]state.Entry, 0, state.BatchEntries)
		for kg := groups.Start; kg <= groups.End; kg++ {
			for _, be := range s.byGroup[kg] {
				// Field by field into place, as ReadBatch does.
				es = es[:len(es)+1]
				e := &es[len(es)-1]
				e.State, e.KeyGroup, e.Key, e.Namespace, e.UserKey, e.Value = "last", kg, s.arena[be.key[0]:be.key[1]:be.key[1]], nil, nil, s.arena[be.value[0]:be.value[1]:be.value[1]]
				if be.total {
					e.State = "total"
				}
				if len(es) == cap(es) {
					if !yield(es, nil) {
						return
					}
					es = es[:0]
				}
			}
			if len(es) > 0 {
				if !yield(es, nil) {
					return
				}
				es = es[:0]
			}
		}
	}
}

//go:noinline
func opaqueBatches(s iter.Seq2[[]state.Entry, error]) iter.Seq2[[]state.Entry, error] { return s }

// opaqueSeq returns s unchanged: a range over its result calls s through
// a function value, which the compiler cannot inline.
//
//go:noinline
func opaqueSeq(s iter.Seq2[state.Entry, error]) iter.Seq2[state.Entry, error] { return s }

// BenchmarkSavepoint writes and reads 1M keyed entries as a savepoint
// (31 bytes an entry), against the same keyed-file bytes through a plain
// buffered file. MB/s counts the keyed files' bytes. What each side does:
//
//   - write: Write of the snapshot: every entry encoded, from the
//     pointer-free fixture handing them over in batches of up to
//     state.BatchEntries per key group (SubtaskSnapshot.KeyedBatches, as
//     the runtime passes a backend's EntryBatches), the two subtasks'
//     keyed files written in parallel with their writeback started every
//     4 MiB, the operator-state files and _metadata written, every file
//     and both directories synced, the rename.
//   - write-each: the same, the fixture handing the entries over one at
//     a time (SubtaskSnapshot.Keyed only: a backend without batches).
//   - plainwrite: the keyed files' bytes in 4 KiB writes through a
//     bufio.Writer, each file synced (no _metadata, no directory sync).
//   - read: Open, then KeyedSections over every key group: each section
//     read (the next one read ahead while the current one is used) and
//     checked against its CRC32C; the consumer gets the checked bytes.
//     This is DESIGN 12's savepoint read: the bytes, checked, as the
//     tools that decode sections themselves (diff, export) get them.
//   - entries: Open, then KeyedBatchesFor over every key group: each
//     section read and checked (the next one read ahead while the current
//     one is decoded), every entry decoded (lengths, order, block index)
//     into a reused batch of up to state.BatchEntries, and the batches
//     handed to a consumer that counts the entries and sums their sizes:
//     what a restore reads before its backend stores anything (the runtime
//     restores from these batches). Its baseline does no per-entry work
//     at all.
//   - entries-each: the same through KeyedEntriesFor, one entry at a time
//     to the same consumer (for callers that want an iterator of entries).
//   - handover: no file at all: the same entries handed from the
//     fixture in memory to the same consumer in batches of the same size
//     (state.BatchEntries, a reused slice each), through an iterator of
//     the same type, called through a function value (not inlined, as
//     KeyedBatchesFor is not). The floor of entries: what handing over
//     1M entries costs, before anything is read or decoded.
//   - handover-each: the floor of entries-each, the same entries one at a
//     time through an iterator of entries.
//   - plainread: the keyed files' bytes in 4 KiB reads through a
//     bufio.Reader, not looked at.
//
// The -ratio sub-benchmarks interleave a side and its baseline in every
// iteration (alternating which goes first, each after a garbage
// collection): x-plain is plain time over savepoint time (above 1: the
// savepoint is faster), x-plain-cpu the same in process CPU time;
// cpu-ms/op and plain-cpu-ms/op are the two sides' process CPU times per
// iteration.
func BenchmarkSavepoint(b *testing.B) {
	fs := vfs.Default
	st := newBenchState(1_000_000)
	root := b.TempDir()
	ref := fs.PathJoin(root, "ref")
	if err := Write(fs, ref, st.snapshot(true)); err != nil {
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
	b.Logf("%d entries, %d bytes of keyed files (%.1f bytes/entry)", st.n, total, float64(total)/float64(st.n))
	all := state.KeyGroupRange{Start: 0, End: 127}

	write := func(b *testing.B, i int) {
		dir := fs.PathJoin(root, fmt.Sprintf("w%d", i))
		if err := Write(fs, dir, st.snapshot(true)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = fs.RemoveAll(dir)
		b.StartTimer()
	}
	writeEach := func(b *testing.B, i int) {
		dir := fs.PathJoin(root, fmt.Sprintf("e%d", i))
		if err := Write(fs, dir, st.snapshot(false)); err != nil {
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
		var n int64
		for sec, err := range sp.KeyedSections(sumID, all) {
			if err != nil {
				b.Fatal(err)
			}
			n += int64(len(sec.Bytes))
		}
		if n != total {
			b.Fatalf("%d bytes of sections, want %d", n, total)
		}
	}
	// consume is the consumer of entries and handover: it counts the
	// entries and sums their sizes.
	consume := func(b *testing.B, batches iter.Seq2[[]state.Entry, error]) {
		n, size := 0, 0
		for es, err := range batches {
			if err != nil {
				b.Fatal(err)
			}
			n += len(es)
			m := 0
			for i := range es {
				e := &es[i]
				m += len(e.Key) + len(e.Namespace) + len(e.UserKey) + len(e.Value)
			}
			size += m
		}
		if n != st.n {
			b.Fatalf("%d entries, want %d", n, st.n)
		}
	}
	consumeEach := func(b *testing.B, entries iter.Seq2[state.Entry, error]) {
		n, size := 0, 0
		for e, err := range entries {
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
	entries := func(b *testing.B) {
		sp, err := Open(fs, ref)
		if err != nil {
			b.Fatal(err)
		}
		consume(b, sp.KeyedBatchesFor(sumID, all))
	}
	entriesEach := func(b *testing.B) {
		sp, err := Open(fs, ref)
		if err != nil {
			b.Fatal(err)
		}
		consumeEach(b, sp.KeyedEntriesFor(sumID, all))
	}
	// handover is the floor of entries: the same 1M entries handed to
	// the same consumer in batches of the same size through an iterator
	// of the same type that the compiler cannot inline into the loop (as
	// it cannot KeyedBatchesFor), from memory (the fixture), nothing
	// read, checked or decoded.
	handover := func(b *testing.B) { consume(b, opaqueBatches(st.batches(all))) }
	handoverEach := func(b *testing.B) {
		consumeEach(b, opaqueSeq(func(yield func(state.Entry, error) bool) {
			for kg := range 128 {
				for e, err := range st.entries(kg) {
					if !yield(e, err) {
						return
					}
				}
			}
		}))
	}
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
	b.Run("write-each", func(b *testing.B) {
		b.SetBytes(total)
		for i := range b.N {
			writeEach(b, i)
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			read(b)
		}
	})
	b.Run("entries", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			entries(b)
		}
	})
	b.Run("entries-each", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			entriesEach(b)
		}
	})
	b.Run("handover", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			handover(b)
		}
	})
	b.Run("handover-each", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			handoverEach(b)
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
	ratio := func(b *testing.B, ours, plain func(i int)) {
		o, p, oc, pc := alternate(b, ours, plain)
		b.ReportMetric(float64(p)/float64(o), "x-plain")
		if oc > 0 {
			b.ReportMetric(float64(pc)/float64(oc), "x-plain-cpu")
		}
		// The CPU time of each side, per iteration.
		b.ReportMetric(float64(oc.Microseconds())/float64(b.N)/1e3, "cpu-ms/op")
		b.ReportMetric(float64(pc.Microseconds())/float64(b.N)/1e3, "plain-cpu-ms/op")
	}
	b.Run("read-ratio", func(b *testing.B) {
		ratio(b, func(int) { read(b) }, func(int) { plainRead(b) })
	})
	b.Run("entries-ratio", func(b *testing.B) {
		ratio(b, func(int) { entries(b) }, func(int) { plainRead(b) })
	})
	b.Run("entries-each-ratio", func(b *testing.B) {
		ratio(b, func(int) { entriesEach(b) }, func(int) { plainRead(b) })
	})
	b.Run("handover-ratio", func(b *testing.B) {
		ratio(b, func(int) { handover(b) }, func(int) { plainRead(b) })
	})
	b.Run("handover-each-ratio", func(b *testing.B) {
		ratio(b, func(int) { handoverEach(b) }, func(int) { plainRead(b) })
	})
	b.Run("write-ratio", func(b *testing.B) {
		ratio(b, func(i int) { write(b, i) }, func(i int) { plainWrite(b, i) })
	})
	b.Run("write-each-ratio", func(b *testing.B) {
		ratio(b, func(i int) { writeEach(b, i) }, func(i int) { plainWrite(b, i) })
	})
}

// alternate runs first and second in every iteration, taking turns at
// which goes first, each after a garbage collection outside the timer,
// and returns the wall and CPU (getrusage) time each took in all.
func alternate(b *testing.B, first, second func(i int)) (firstWall, secondWall, firstCPU, secondCPU time.Duration) {
	for i := range b.N {
		for k := range 2 {
			b.StopTimer()
			goruntime.GC()
			b.StartTimer()
			start, c0 := time.Now(), cputime.Process()
			if (i+k)%2 == 0 {
				first(i)
				firstWall += time.Since(start)
				firstCPU += cputime.Process() - c0
			} else {
				second(i)
				secondWall += time.Since(start)
				secondCPU += cputime.Process() - c0
			}
		}
	}
	return firstWall, secondWall, firstCPU, secondCPU
}
