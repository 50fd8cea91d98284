package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// failAfter is a writer that takes n bytes, then fails every write.
type failAfter struct {
	buf bytes.Buffer
	n   int
}

var errSink = errors.New("sink full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.n {
		return 0, errSink
	}
	return f.buf.Write(p)
}

// writeOutcome is what a stream writer made of a list of entries: the
// bytes written, every group's description with the writer's counts at
// its end, how many entries were written, and the first error.
type writeOutcome struct {
	bytes   []byte
	groups  []GroupInfo
	counts  [][2]int64
	written int
	err     string
}

// groupsOf splits entries into the runs of one key group, in order
// (emptyAt adds groups without entries before the group of that index).
func groupsOf(es []Entry) [][]Entry {
	var out [][]Entry
	for i, e := range es {
		if i == 0 || e.KeyGroup != es[i-1].KeyGroup {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], e)
	}
	return out
}

// writeAll writes groups through a writer to a sink that fails after
// limit bytes: each group begun with its first entry's key group (kgs[i]
// when the group is empty), its entries written one at a time by
// WriteEntry (batches nil) or in the batches cut at the given lengths by
// WriteRun, called until each batch is written as groupWriter does.
func writeAll(groups [][]Entry, kgs []int, indexed bool, limit int, cuts func(n int) []int) writeOutcome {
	sink := &failAfter{n: limit}
	w := NewStreamWriter(sink)
	if indexed {
		w = NewIndexedStreamWriter(sink)
	}
	var out writeOutcome
	fail := func(err error) writeOutcome {
		out.err = err.Error()
		out.bytes = sink.buf.Bytes()
		return out
	}
	for gi, es := range groups {
		if err := w.BeginKeyGroup(kgs[gi]); err != nil {
			return fail(err)
		}
		if cuts == nil {
			for i := range es {
				if err := w.WriteEntry(&es[i]); err != nil {
					return fail(err)
				}
				out.written++
			}
		} else {
			rest := es
			for _, c := range cuts(len(es)) {
				batch := rest[:c]
				rest = rest[c:]
				for len(batch) > 0 {
					n, err := w.WriteRun(batch)
					out.written += n
					if err != nil {
						return fail(err)
					}
					if n == 0 {
						return fail(fmt.Errorf("WriteRun wrote nothing of %d entries", len(batch)))
					}
					// A run ends where the state changes, or at the end.
					if n < len(batch) && batch[n].State == batch[0].State {
						return fail(fmt.Errorf("WriteRun stopped at entry %d of state %q, the run's", n, batch[n].State))
					}
					batch = batch[n:]
				}
				// Empty batches are handed over too.
				if _, err := w.WriteRun(nil); err != nil {
					return fail(err)
				}
			}
		}
		g, err := w.EndKeyGroup()
		if err != nil {
			return fail(err)
		}
		n, p := w.Written()
		out.groups = append(out.groups, g)
		out.counts = append(out.counts, [2]int64{n, p})
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	out.bytes = sink.buf.Bytes()
	return out
}

// randomCuts returns batch lengths summing to n: mostly a few hundred,
// some of one, some empty.
func randomCuts(rng *rand.Rand) func(n int) []int {
	return func(n int) []int {
		var cs []int
		for n > 0 {
			c := 0
			switch rng.IntN(4) {
			case 0:
				c = 1
			case 1:
				c = rng.IntN(8)
			default:
				c = 1 + rng.IntN(BatchEntries)
			}
			c = min(c, n)
			cs = append(cs, c)
			n -= c
		}
		return cs
	}
}

// spoil makes one of a few mistakes a backend could hand over (an entry
// repeated, two swapped, one of another key group, one out of state
// order), or none; it says which.
func spoil(rng *rand.Rand, es []Entry) ([]Entry, string) {
	es = slices.Clone(es)
	if len(es) < 2 {
		return es, "none"
	}
	i := 1 + rng.IntN(len(es)-1)
	switch rng.IntN(5) {
	case 0:
		es = slices.Insert(es, i, es[i-1])
		return es, "repeated"
	case 1:
		es[i-1], es[i] = es[i], es[i-1]
		return es, "swapped"
	case 2:
		es[i].KeyGroup++
		return es, "key group"
	case 3:
		e := es[i]
		e.State = "a" + e.State
		es[i] = e
		return es, "state"
	}
	return es, "none"
}

// TestWriteRunEqualsWriteEntry: batches written by WriteRun give the bytes,
// group descriptions, counts and errors of the same entries written one at
// a time, over random entries (namespaces, user keys, timers, long keys and
// values, runs of the common shape), empty groups and batches, plain and
// indexed groups, and writes that fail part way.
func TestWriteRunEqualsWriteEntry(t *testing.T) {
	spoiled := map[string]int{}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 35))
		es := batchEntries(rng, 50+rng.IntN(3000))
		groups := groupsOf(es)
		kgs := make([]int, len(groups))
		for i, g := range groups {
			kgs[i] = g[0].KeyGroup
		}
		kind := "none"
		if seed%3 == 0 {
			g := rng.IntN(len(groups))
			groups[g], kind = spoil(rng, groups[g])
		}
		// Empty groups between them (key groups stay increasing).
		if rng.IntN(2) == 0 {
			var g2 [][]Entry
			var k2 []int
			last := -1
			for i, g := range groups {
				if kgs[i]-last > 1 && rng.IntN(2) == 0 {
					g2, k2 = append(g2, nil), append(k2, last+1)
				}
				g2, k2, last = append(g2, g), append(k2, kgs[i]), kgs[i]
			}
			groups, kgs = g2, k2
		}
		limit := 1 << 30
		if seed%5 == 1 {
			limit = rng.IntN(len(es) * 20)
		}
		for _, indexed := range []bool{false, true} {
			want := writeAll(groups, kgs, indexed, limit, nil)
			got := writeAll(groups, kgs, indexed, limit, randomCuts(rng))
			name := fmt.Sprintf("seed %d, indexed %v, spoiled %s, limit %d", seed, indexed, kind, limit)
			if got.err != want.err {
				t.Fatalf("%s: error %q, want %q", name, got.err, want.err)
			}
			if got.written != want.written {
				t.Fatalf("%s: %d entries written, want %d", name, got.written, want.written)
			}
			if !bytes.Equal(got.bytes, want.bytes) {
				t.Fatalf("%s: %d bytes written differ from the %d of WriteEntry", name, len(got.bytes), len(want.bytes))
			}
			if !slices.Equal(got.groups, want.groups) || !slices.Equal(got.counts, want.counts) {
				t.Fatalf("%s: groups %+v counts %v, want %+v %v", name, got.groups, got.counts, want.groups, want.counts)
			}
			if want.err != "" {
				spoiled[kind]++
			}
		}
	}
	// The mistakes and the failing sink were made and refused.
	for _, k := range []string{"repeated", "swapped", "key group", "state"} {
		if spoiled[k] < 4 {
			t.Errorf("only %d writes failed on a %s entry", spoiled[k], k)
		}
	}
	if spoiled["none"] < 10 {
		t.Errorf("only %d writes failed on the sink", spoiled["none"])
	}
}

// TestWriteRunCommonShape: long runs of the common entry (the savepoint
// benchmark's shape), one state after another, in one batch and in many,
// decode back to the entries.
func TestWriteRunCommonShape(t *testing.T) {
	var es []Entry
	for _, st := range []string{"last", "total"} {
		for i := range 20_000 {
			k := fmt.Appendf(nil, "customer_%07d", i)
			es = append(es, Entry{State: st, KeyGroup: 3, Key: k, Value: fmt.Appendf(nil, "v%d", i%1000)})
		}
	}
	for _, indexed := range []bool{false, true} {
		want := writeAll([][]Entry{es}, []int{3}, indexed, 1<<30, nil)
		got := writeAll([][]Entry{es}, []int{3}, indexed, 1<<30, func(n int) []int { return []int{n} })
		if want.err != "" || got.err != "" || !bytes.Equal(got.bytes, want.bytes) {
			t.Fatalf("indexed %v: one batch: error %q / %q, bytes equal %v", indexed, got.err, want.err, bytes.Equal(got.bytes, want.bytes))
		}
		r := NewStreamReaderBytes(got.bytes, 0)
		back := collect(t, r)
		if len(back) != len(es) {
			t.Fatalf("indexed %v: %d entries back, want %d", indexed, len(back), len(es))
		}
		for i := range es {
			if !entriesEqual(back[i], es[i]) {
				t.Fatalf("indexed %v: entry %d = %+v, want %+v", indexed, i, back[i], es[i])
			}
		}
	}
}

// TestBatcher: batches of at most BatchEntries entries and, past that,
// of at most batchArena bytes plus one entry; Arena does not grow with
// what was handed over; copies stay intact while later entries are added;
// Fail hands over the entries before the error; a consumer that stops
// gets nothing more.
func TestBatcher(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var want []Entry
	for i := range 20_000 {
		v := Int64.Append(nil, int64(i))
		if rng.IntN(100) == 0 {
			v = bytes.Repeat([]byte{byte(i)}, rng.IntN(100_000))
		}
		e := Entry{State: "s", KeyGroup: 1, Key: fmt.Appendf(nil, "k%06d", i), Value: v}
		if i%3 == 0 {
			e.Namespace = []byte{}
		}
		want = append(want, e)
	}
	maxCap := 0
	var got []Entry
	batches := 0
	stopAt := -1
	yield := func(es []Entry, err error) bool {
		if err != nil {
			got = append(got, Entry{State: "error " + err.Error()})
			return false
		}
		if stopAt >= 0 && batches >= stopAt {
			t.Fatalf("batch %d after the consumer stopped", batches)
		}
		batches++
		size, largest := 0, 0
		for _, e := range es {
			size += e.Size()
			largest = max(largest, e.Size())
			got = append(got, Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace), Value: bytes.Clone(e.Value)})
		}
		if len(es) == 0 || len(es) > BatchEntries || size-largest > batchArena {
			t.Fatalf("batch of %d entries, %d bytes", len(es), size)
		}
		return stopAt < 0 || batches < stopAt
	}
	b := NewBatcher(yield)
	for _, e := range want {
		if !b.AddCopy(e) {
			t.Fatal("AddCopy stopped")
		}
		maxCap = max(maxCap, cap(b.Arena))
	}
	b.Fail(errSink)
	b.Release()
	if len(got) != len(want)+1 || got[len(want)].State != "error "+errSink.Error() {
		t.Fatalf("%d entries and an error, want %d", len(got)-1, len(want))
	}
	for i, e := range want {
		if !sameEntry(got[i], e) {
			t.Fatalf("entry %d: %+v, want %+v", i, got[i], e)
		}
	}
	if maxCap > 4*batchArena {
		t.Errorf("Arena grew to %d bytes", maxCap)
	}
	// A consumer that stops after three batches.
	got, batches, stopAt = nil, 0, 3
	b = NewBatcher(yield)
	added := 0
	for _, e := range want {
		if !b.Add(e) {
			break
		}
		added++
	}
	b.Fail(errSink)
	b.Release()
	if batches != 3 || len(got) != 3*BatchEntries || added != 3*BatchEntries-1 {
		t.Fatalf("%d batches, %d entries, %d added, after stopping at the third", batches, len(got), added)
	}
}
