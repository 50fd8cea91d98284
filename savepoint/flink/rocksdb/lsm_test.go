package rocksdb

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// op is one write of the synthetic workload.
type op struct {
	seq      uint64
	typ      byte // typeValue, typeMerge, typeDeletion, typeRangeDeletion
	key, end string
	value    string
}

// model applies ops in order: the expected contents of the store.
func model(ops []op) map[string]string {
	m := map[string]string{}
	for _, o := range ops {
		switch o.typ {
		case typeValue:
			m[o.key] = o.value
		case typeMerge:
			if v, ok := m[o.key]; ok {
				m[o.key] = v + "," + o.value
			} else {
				m[o.key] = o.value
			}
		case typeDeletion:
			delete(m, o.key)
		case typeRangeDeletion:
			for k := range m {
				if k >= o.key && k < o.end {
					delete(m, k)
				}
			}
		}
	}
	return m
}

// memtable turns ops into the sorted entries and tombstones of one flushed
// file (every version kept).
func memtable(ops []op) ([]kv, []Tombstone) {
	var es []kv
	var ts []Tombstone
	for _, o := range ops {
		if o.typ == typeRangeDeletion {
			ts = append(ts, Tombstone{Start: []byte(o.key), End: []byte(o.end), Seq: o.seq})
			continue
		}
		es = append(es, kv{ikey(o.key, o.seq, o.typ), []byte(o.value)})
	}
	slices.SortFunc(es, func(a, b kv) int { return compareInternal(a.key, b.key) })
	return es, ts
}

type store struct {
	files map[string][]byte
	edits []*editBuilder
	next  uint64
}

func (s *store) add(level int, cf uint32, o tableOpts, es []kv, ts []Tombstone) {
	if len(es) == 0 && len(ts) == 0 {
		return
	}
	b := buildTable(o, es, ts)
	s.next++
	f := &FileMeta{Number: s.next, Size: uint64(len(b))}
	var lo, hi []byte
	f.SmallestSeq = ^uint64(0)
	for _, e := range es {
		if lo == nil || compareInternal(e.key, lo) < 0 {
			lo = e.key
		}
		if hi == nil || compareInternal(e.key, hi) > 0 {
			hi = e.key
		}
		seq := trailer(e.key) >> 8
		f.SmallestSeq, f.LargestSeq = min(f.SmallestSeq, seq), max(f.LargestSeq, seq)
	}
	for _, t := range ts {
		s0, e0 := ikey(string(t.Start), t.Seq, typeRangeDeletion), ikey(string(t.End), 1<<56-1, typeRangeDeletion)
		if lo == nil || compareInternal(s0, lo) < 0 {
			lo = s0
		}
		if hi == nil || compareInternal(e0, hi) > 0 {
			hi = e0
		}
		f.SmallestSeq, f.LargestSeq = min(f.SmallestSeq, t.Seq), max(f.LargestSeq, t.Seq)
	}
	if o.globalSeq != 0 {
		f.SmallestSeq, f.LargestSeq = o.globalSeq, o.globalSeq
	}
	f.Smallest, f.Largest = lo, hi
	s.files[TableName(f.Number)] = b
	e := &editBuilder{}
	if cf != 0 {
		e.tag(tagColumnFamily).u(uint64(cf))
	}
	s.edits = append(s.edits, e.newFile(level, f))
}

func (s *store) finish(cfs map[uint32]string) MapSource {
	m := &manifestWriter{}
	m.record((&editBuilder{}).tag(tagComparator).s([]byte(bytewiseComparator)).tag(tagLogNumber).u(0).b)
	ids := make([]int, 0, len(cfs))
	for id := range cfs {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		if id != 0 {
			m.record((&editBuilder{}).tag(tagColumnFamily).u(uint64(id)).tag(tagColumnFamilyAdd).s([]byte(cfs[uint32(id)])).b)
		}
	}
	for _, e := range s.edits {
		m.record(e.b)
	}
	src := MapSource{}
	for k, v := range s.files {
		src[k] = v
	}
	src["MANIFEST-000007"] = m.out
	src["CURRENT"] = []byte("MANIFEST-000007\n")
	return src
}

// optsVariants cycles through what RocksDB can write: every format version,
// checksum type and compression, partitioned and plain indexes.
func optsVariants(i int, cf string) tableOpts {
	fvs := []uint32{2, 3, 4, 5, 6}
	sums := []byte{checksumCRC32C, checksumXXHash, checksumXXHash64, checksumXXH3, checksumNone}
	comps := []byte{compressionNone, compressionSnappy, compressionLZ4, compressionZSTD, compressionZlib}
	o := tableOpts{
		formatVersion: fvs[i%len(fvs)],
		checksum:      sums[(i/2)%len(sums)],
		compression:   comps[(i/3)%len(comps)],
		blockSize:     128 + 64*(i%4),
		restart:       1 + i%5,
		indexRestart:  1 + i%3,
		partitioned:   i%3 == 1,
		partitionSize: 2 + i%3,
		userKeyIndex:  i%2 == 0 && fvs[i%len(fvs)] >= 3,
		hashIndex:     i%4 == 3,
		firstKey:      i%7 == 5 && i%3 != 1, // index type 3 is not partitioned
		cfName:        cf,
	}
	return o
}

func genOps(r *rand.Rand, n int, seq *uint64, keys int) []op {
	var ops []op
	for range n {
		*seq++
		k := fmt.Sprintf("key%05d", r.IntN(keys))
		o := op{seq: *seq, key: k}
		switch x := r.IntN(20); {
		case x < 9:
			o.typ, o.value = typeValue, fmt.Sprintf("v%d", *seq)
		case x < 15:
			o.typ, o.value = typeMerge, fmt.Sprintf("m%d", *seq)
		case x < 19:
			o.typ = typeDeletion
		default:
			o.typ = typeRangeDeletion
			o.end = fmt.Sprintf("key%05d", r.IntN(keys))
			if o.end <= o.key {
				o.key, o.end = o.end, o.key+"~"
			}
		}
		ops = append(ops, o)
	}
	return ops
}

// splitRange cuts sorted entries into n files of disjoint user-key ranges.
func splitRange(es []kv, n int) [][]kv {
	var out [][]kv
	per := (len(es) + n - 1) / max(n, 1)
	for len(es) > 0 {
		end := min(per, len(es))
		for end < len(es) && bytes.Equal(userKey(es[end-1].key), userKey(es[end].key)) {
			end++
		}
		out = append(out, es[:end])
		es = es[end:]
	}
	return out
}

// compacted is what a compaction to the bottom level leaves of ops: one
// value per live key, sequence number zeroed.
func compacted(ops []op) []kv {
	m := model(ops)
	var es []kv
	for k, v := range m {
		es = append(es, kv{ikey(k, 0, typeValue), []byte(v)})
	}
	slices.SortFunc(es, func(a, b kv) int { return compareInternal(a.key, b.key) })
	return es
}

func scanAll(t *testing.T, db *DB, cf *ColumnFamily, o IterOptions) map[string]string {
	t.Helper()
	it, err := db.NewIter(cf, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var prev []byte
	for ok := it.First(); ok; ok = it.Next() {
		if prev != nil && bytes.Compare(prev, it.Key()) >= 0 {
			t.Fatalf("keys out of order: %q then %q", prev, it.Key())
		}
		prev = bytes.Clone(it.Key())
		got[string(it.Key())] = string(it.Value())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func diff(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: key %s = %q (present %v), want %q", what, k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: key %s = %q, deleted or never written", what, k, v)
		}
	}
}

// TestLSMNewestWins writes a multi-level, multi-file store (a compacted
// bottom level with sequence numbers zeroed, an L1 of disjoint files, L0
// files on top, an ingested file) of puts, deletions, range deletions and
// list merges with every table format variant, and checks the reader
// returns exactly the newest values. Rounds 12 to 23 write no range
// deletions: Iter.Next's short path (taken only without range tombstones)
// then serves most steps, next to older versions, deletions and merges
// inside its blocks.
func TestLSMNewestWins(t *testing.T) {
	for round := range 24 {
		r := rand.New(rand.NewPCG(uint64(round%12), 7+uint64(round/12)))
		var seq uint64
		keys := 40 + 30*(round%12)
		gen := genOps
		if round >= 12 {
			gen = func(r *rand.Rand, n int, seq *uint64, keys int) []op {
				var out []op
				for _, o := range genOps(r, n, seq, keys) {
					if o.typ != typeRangeDeletion {
						out = append(out, o)
					}
				}
				return out
			}
		}
		bottom := gen(r, 400, &seq, keys)
		mid := gen(r, 300, &seq, keys)
		top1 := gen(r, 150, &seq, keys)
		var top2 []op
		for _, o := range genOps(r, 150, &seq, keys) {
			if o.typ != typeRangeDeletion {
				top2 = append(top2, o)
			}
		}
		all := slices.Concat(bottom, mid, top1, top2)
		want := model(all)

		s := &store{files: map[string][]byte{}}
		v := (round % 12) * 10
		for i, part := range splitRange(compacted(bottom), 3) {
			s.add(3, 1, optsVariants(v+i, "state"), part, nil)
		}
		// Stores of fewer levels, for bounded scans with one merge input
		// (no limit), two, and all of them.
		partial := []struct {
			src  MapSource
			want map[string]string
		}{{s.finish(map[uint32]string{0: "default", 1: "state"}), model(bottom)}}
		// L1: the middle ops in two disjoint halves, every version kept;
		// range deletions go with the half holding their start.
		es, ts := memtable(mid)
		halves := splitRange(es, 2)
		for i, h := range halves {
			var mine []Tombstone
			lo := userKey(h[0].key)
			var hi []byte
			if i+1 < len(halves) {
				hi = userKey(halves[i+1][0].key)
			}
			for _, tb := range ts {
				if bytes.Compare(tb.Start, lo) >= 0 && (hi == nil || bytes.Compare(tb.Start, hi) < 0) || i == 0 && bytes.Compare(tb.Start, lo) < 0 {
					end := tb.End
					if hi != nil && bytes.Compare(end, hi) > 0 {
						// Split the tombstone at the file boundary, as
						// compaction does.
						mine = append(mine, Tombstone{Start: tb.Start, End: hi, Seq: tb.Seq})
						ts = append(ts, Tombstone{Start: hi, End: end, Seq: tb.Seq})
						continue
					}
					mine = append(mine, tb)
				}
			}
			s.add(1, 1, optsVariants(v+3+i, "state"), h, mine)
		}
		partial = append(partial, struct {
			src  MapSource
			want map[string]string
		}{s.finish(map[uint32]string{0: "default", 1: "state"}), model(slices.Concat(bottom, mid))})
		es1, ts1 := memtable(top1)
		s.add(0, 1, optsVariants(v+5, "state"), es1, ts1)
		// The newest file is ingested: sequence number 0 in the file, its
		// global sequence number in the MANIFEST.
		es2, ts2 := memtable(netEffect(top2))
		o := optsVariants(v+6, "state")
		o.globalSeq = seq + 1
		s.add(0, 1, o, es2, ts2)
		src := s.finish(map[uint32]string{0: "default", 1: "state"})

		db, err := Open(src, Options{Merge: StringAppend{','}})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		cf := db.ColumnFamily("state")
		if cf == nil {
			t.Fatal("no column family state")
		}
		got := scanAll(t, db, cf, IterOptions{})
		diff(t, fmt.Sprintf("round %d full scan", round), got, want)
		if len(want) == 0 {
			t.Fatalf("round %d: empty model", round)
		}

		// Bounded scans and seeks read the same values.
		lo, hi := fmt.Sprintf("key%05d", keys/4), fmt.Sprintf("key%05d", keys/2)
		sub := map[string]string{}
		for k, v := range want {
			if k >= lo && k < hi {
				sub[k] = v
			}
		}
		diff(t, fmt.Sprintf("round %d [%s,%s)", round, lo, hi), scanAll(t, db, cf, IterOptions{Lower: []byte(lo), Upper: []byte(hi)}), sub)
		// Upper bounds at every tenth key: inside blocks, at their ends.
		partial = append(partial, struct {
			src  MapSource
			want map[string]string
		}{src, want})
		for n, p := range partial {
			pdb, err := Open(p.src, Options{Merge: StringAppend{','}})
			if err != nil {
				t.Fatalf("round %d, %d levels: %v", round, n+1, err)
			}
			for u := 1; u <= 10; u++ {
				hi := fmt.Sprintf("key%05d", u*keys/10)
				sub := map[string]string{}
				for k, v := range p.want {
					if k < hi {
						sub[k] = v
					}
				}
				diff(t, fmt.Sprintf("round %d, store %d, [,%s)", round, n, hi), scanAll(t, pdb, pdb.ColumnFamily("state"), IterOptions{Upper: []byte(hi)}), sub)
			}
		}
		sorted := slices.Sorted(maps.Keys(want))
		it, _ := db.NewIter(cf, IterOptions{})
		// Seeks forward, then backward and scattered over the same
		// iterator, each followed by steps.
		var seeks []int
		for k := range 20 {
			seeks = append(seeks, k*keys/20)
		}
		for k := range 20 {
			seeks = append(seeks, (19-k)*keys/20+k%3, (k*7919)%keys)
		}
		for _, at := range seeks {
			key := fmt.Sprintf("key%05d", at)
			ok := it.SeekGE([]byte(key))
			var wantKey string
			for mk := range want {
				if mk >= key && (wantKey == "" || mk < wantKey) {
					wantKey = mk
				}
			}
			switch {
			case wantKey == "" && ok:
				t.Errorf("SeekGE(%s) found %s, want nothing", key, it.Key())
			case wantKey != "" && (!ok || string(it.Key()) != wantKey || string(it.Value()) != want[wantKey]):
				t.Errorf("SeekGE(%s) = %q %q (%v), want %s %q", key, it.Key(), it.Value(), ok, wantKey, want[wantKey])
			}
			// Steps after a seek, up to 30 keys, as the model has them.
			i, _ := slices.BinarySearch(sorted, key)
			for j := i + 1; ok && j < min(i+30, len(sorted)); j++ {
				if ok = it.Next(); !ok || string(it.Key()) != sorted[j] || string(it.Value()) != want[sorted[j]] {
					t.Errorf("SeekGE(%s) then %d steps = %q %q (%v), want %s %q", key, j-i, it.Key(), it.Value(), ok, sorted[j], want[sorted[j]])
					break
				}
			}
		}
	}
}

// netEffect collapses ops (no range deletions) to one op per key, as an
// ingested file (built by SstFileWriter) holds: the last put or deletion
// with the merges after it folded in, or the merges alone joined.
func netEffect(ops []op) []op {
	type acc struct {
		typ   byte
		value string
		seq   uint64
		set   bool
	}
	m := map[string]*acc{}
	var order []string
	for _, o := range ops {
		a, ok := m[o.key]
		if !ok {
			a = &acc{}
			m[o.key] = a
			order = append(order, o.key)
		}
		a.seq = o.seq
		switch o.typ {
		case typeValue:
			a.typ, a.value = typeValue, o.value
		case typeDeletion:
			a.typ, a.value = typeDeletion, ""
		case typeMerge:
			switch {
			case !a.set:
				a.typ, a.value = typeMerge, o.value
			case a.typ == typeDeletion:
				a.typ, a.value = typeValue, o.value
			default:
				a.value += "," + o.value
			}
		}
		a.set = true
	}
	var out []op
	for _, k := range order {
		a := m[k]
		out = append(out, op{seq: a.seq, typ: a.typ, key: k, value: a.value})
	}
	return out
}

// TestTombstoneOnlyTable: a table holding only a range deletion has no
// data block and an empty index block (one restart point at 0, no
// entries), as RocksDB writes it when a flush or compaction keeps just the
// tombstone (Flink's range deletes after rescaling can leave one). It is
// valid: the keys under it are deleted, the others read, in every table
// variant, by full and bounded scans and seeks.
func TestTombstoneOnlyTable(t *testing.T) {
	for v := range 24 {
		var seq uint64
		var puts []op
		for k := range 60 {
			seq++
			puts = append(puts, op{typ: typeValue, key: fmt.Sprintf("key%05d", k), value: fmt.Sprint(k * 7), seq: seq})
		}
		seq++
		tomb := Tombstone{Start: []byte("key00010"), End: []byte("key00040"), Seq: seq}
		want := map[string]string{}
		for k := range 60 {
			if k < 10 || k >= 40 {
				want[fmt.Sprintf("key%05d", k)] = fmt.Sprint(k * 7)
			}
		}
		s := &store{files: map[string][]byte{}}
		s.add(2, 1, optsVariants(v, "state"), compacted(puts), nil)
		s.add(0, 1, optsVariants(v+1, "state"), nil, []Tombstone{tomb})
		db, err := Open(s.finish(map[uint32]string{0: "default", 1: "state"}), Options{})
		if err != nil {
			t.Fatalf("variant %d: %v", v, err)
		}
		cf := db.ColumnFamily("state")
		diff(t, fmt.Sprintf("variant %d full scan", v), scanAll(t, db, cf, IterOptions{}), want)
		sub := map[string]string{}
		for k, val := range want {
			if k >= "key00005" && k < "key00045" {
				sub[k] = val
			}
		}
		diff(t, fmt.Sprintf("variant %d bounded", v), scanAll(t, db, cf, IterOptions{Lower: []byte("key00005"), Upper: []byte("key00045")}), sub)
		it, err := db.NewIter(cf, IterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !it.SeekGE([]byte("key00020")) || string(it.Key()) != "key00040" {
			t.Errorf("variant %d: SeekGE into the deleted range: valid %v key %q err %v, want key00040", v, it.Valid(), it.Key(), it.Err())
		}
	}
}
