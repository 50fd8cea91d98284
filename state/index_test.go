package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// groupOf returns the bytes of one group of a stream.
func groupOf(b []byte, g GroupInfo) []byte { return b[g.Offset : g.Offset+g.Size] }

func TestIndexedStreamRoundTrip(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		es := randomEntries(rng, 1+rng.IntN(3000), true)
		b, infos := writeStreamOf(t, es, true)
		if b2, _ := writeStreamOf(t, es, true); !bytes.Equal(b, b2) {
			t.Fatal("two writes of the same entries differ")
		}
		for name, r := range map[string]*StreamReader{
			"bytes":   NewStreamReaderBytes(b, 0),
			"reader":  NewStreamReader(bytes.NewReader(b)),
			"onebyte": NewStreamReader(iotest.OneByteReader(bytes.NewReader(b))),
		} {
			got := collect(t, r)
			if len(got) != len(es) {
				t.Fatalf("seed %d %s: %d entries, want %d", seed, name, len(got), len(es))
			}
			for i := range es {
				if !entriesEqual(got[i], es[i]) {
					t.Fatalf("seed %d %s: entry %d = %+v, want %+v", seed, name, i, got[i], es[i])
				}
			}
		}
		n := 0
		for _, g := range infos {
			sec := groupOf(b, g)
			group := es[n : n+int(g.Entries)]
			n += int(g.Entries)
			if CRC32C(sec) != g.CRC32C {
				t.Fatalf("key group %d: checksum differs", g.KeyGroup)
			}
			r := NewStreamReaderBytes(sec, g.Offset)
			if kg, ok, err := r.NextKeyGroup(); err != nil || !ok || kg != g.KeyGroup || !r.Indexed() {
				t.Fatalf("section of key group %d: %d %v %v indexed=%v", g.KeyGroup, kg, ok, err, r.Indexed())
			}
			if got := collectGroup(t, r); len(got) != len(group) || !r.Done() {
				t.Fatalf("section of key group %d: %d entries, want %d (done %v)", g.KeyGroup, len(got), len(group), r.Done())
			}
			if err := CheckIndexedGroup(sec, g.Offset, g.KeyGroup, g.Entries, g.IndexSize); err != nil {
				t.Fatal(err)
			}
			idx := sec[len(sec)-int(g.IndexSize):]
			if CRC32C(idx) != g.IndexCRC32C {
				t.Fatalf("key group %d: index checksum differs", g.KeyGroup)
			}
			refs, err := DecodeGroupIndex(idx, g.Offset+g.Size-g.IndexSize, g.KeyGroup, g.Size, g.Entries)
			if err != nil {
				t.Fatal(err)
			}
			if len(refs) != g.Blocks {
				t.Fatalf("key group %d: %d refs, %d blocks", g.KeyGroup, len(refs), g.Blocks)
			}
			// Each block decodes alone to its share of the entries, and
			// blockOf[i] is the block of the group's entry i.
			var blockOf []int
			at := 0
			for i, ref := range refs {
				if int(binary.LittleEndian.Uint32(sec[ref.Offset:])) != ref.Size {
					t.Fatalf("block %d: length field differs from the index", i)
				}
				payload := sec[ref.Offset+4 : ref.Offset+4+int64(ref.Size)]
				if CRC32C(payload) != ref.CRC32C {
					t.Fatalf("block %d: checksum differs from the index", i)
				}
				br := NewBlockReader(payload, g.Offset+ref.Offset+4, g.KeyGroup)
				got := collectGroup(t, br)
				if int64(len(got)) != ref.Entries || !br.Done() {
					t.Fatalf("block %d: %d entries, index says %d", i, len(got), ref.Entries)
				}
				if got[0].State != ref.State || !bytes.Equal(got[0].Key, ref.Key) {
					t.Fatalf("block %d starts at %q/%q, index says %q/%q", i, got[0].State, got[0].Key, ref.State, ref.Key)
				}
				for j := range got {
					if !entriesEqual(got[j], group[at+j]) {
						t.Fatalf("block %d entry %d = %+v, want %+v", i, j, got[j], group[at+j])
					}
					blockOf = append(blockOf, i)
				}
				at += len(got)
			}
			// BlocksFor covers every block holding a (state, key), and
			// BlocksOfState every block holding a state.
			for i, e := range group {
				lo, hi := BlocksFor(refs, e.State, e.Key)
				if blockOf[i] < lo || blockOf[i] >= hi {
					t.Fatalf("entry %d (%q/%q) is in block %d, BlocksFor says [%d, %d)", i, e.State, e.Key, blockOf[i], lo, hi)
				}
				if lo, hi := BlocksOfState(refs, e.State); blockOf[i] < lo || blockOf[i] >= hi {
					t.Fatalf("entry %d (%q) is in block %d, BlocksOfState says [%d, %d)", i, e.State, blockOf[i], lo, hi)
				}
			}
			// A key no block starts with is looked for in one block at most.
			if lo, hi := BlocksFor(refs, "count", []byte("key_10x")); hi-lo > 1 {
				t.Fatalf("absent key: blocks [%d, %d)", lo, hi)
			}
		}
	}
}

func collectGroup(t *testing.T, r *StreamReader) []Entry {
	t.Helper()
	var out []Entry
	for {
		e, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace),
			UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)})
	}
}

// One key whose entries fill many blocks: BlocksFor returns all of them
// and no other.
func TestBlocksForKeyOverManyBlocks(t *testing.T) {
	var es []Entry
	for _, k := range []string{"a", "m", "z"} {
		n := 1
		if k == "m" {
			n = 3000
		}
		for i := range n {
			es = append(es, Entry{State: "map", KeyGroup: 3, Key: []byte(k), UserKey: fmt.Appendf(nil, "uk%06d", i), Value: []byte("vvvvvvvv")})
		}
	}
	b, infos := writeStreamOf(t, es, true)
	g := infos[0]
	sec := groupOf(b, g)
	refs, err := DecodeGroupIndex(sec[len(sec)-int(g.IndexSize):], 0, 3, g.Size, g.Entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) < 10 {
		t.Fatalf("%d blocks, want many", len(refs))
	}
	if lo, hi := BlocksFor(refs, "map", []byte("m")); lo != 0 || hi != len(refs) {
		t.Fatalf("key m: blocks [%d, %d) of %d", lo, hi, len(refs))
	}
	if lo, hi := BlocksFor(refs, "map", []byte("z")); lo != len(refs)-1 || hi != len(refs) {
		t.Fatalf("key z: blocks [%d, %d) of %d", lo, hi, len(refs))
	}
	if lo, hi := BlocksFor(refs, "map", []byte("0")); lo != hi {
		t.Fatalf("key 0 sorts before every block: [%d, %d)", lo, hi)
	}
	if lo, hi := BlocksFor(refs, "other", []byte("a")); lo != len(refs)-1 || hi != len(refs) {
		t.Fatalf("a later state: [%d, %d)", lo, hi)
	}
}

// Every single-byte change of an indexed group is refused by a full check
// (decode, index against blocks, every block's checksum), so Verify and
// point lookups never rely on a changed index.
func TestIndexedGroupEveryByteChecked(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	es := randomEntries(rng, 400, false)
	for i := range es {
		es[i].KeyGroup = 7
	}
	slices.SortFunc(es, CompareEntries)
	es = compactEntries(es)
	b, infos := writeStreamOf(t, es, true)
	g := infos[0]
	if g.Blocks < 2 {
		t.Fatalf("%d blocks, want several", g.Blocks)
	}
	sec := bytes.Clone(groupOf(b, g))
	for off := range sec {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			sec[off] ^= x
			if err := fullCheck(sec, g); err == nil {
				t.Fatalf("byte %d ^ %02x: no error", off, x)
			}
			sec[off] ^= x
		}
	}
	if err := fullCheck(sec, g); err != nil {
		t.Fatal(err)
	}
}

func compactEntries(es []Entry) []Entry {
	out := es[:0]
	for i, e := range es {
		if i > 0 && CompareEntries(out[len(out)-1], e) == 0 {
			continue
		}
		out = append(out, e)
	}
	return out
}

// fullCheck is what a savepoint check does with an indexed section.
func fullCheck(sec []byte, g GroupInfo) error {
	r := NewStreamReaderBytes(sec, 0)
	kg, ok, err := r.NextKeyGroup()
	if err != nil {
		return err
	}
	if !ok || kg != g.KeyGroup || !r.Indexed() {
		return errors.New("wrong group")
	}
	var n int64
	for {
		_, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		n++
	}
	if !r.Done() || n != g.Entries {
		return errors.New("wrong count")
	}
	return CheckIndexedGroup(sec, 0, g.KeyGroup, g.Entries, g.IndexSize)
}

// rawIndexedGroup frames blocks (payloads) as an indexed group of key
// group 1 with a matching index.
func rawIndexedGroup(blocks [][]byte, refs []BlockRef) []byte {
	b := []byte{tagIndexedGroup, 1}
	for i, p := range blocks {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
		refs[i].Size, refs[i].CRC32C = len(p), CRC32C(p)
	}
	b = append(b, 0, 0, 0, 0)
	return appendGroupIndex(b, refs)
}

func TestIndexedGroupRefusesBadBlocks(t *testing.T) {
	full := func(state, key string, value byte) []byte {
		b := []byte{flagState | flagKey | flagNS, byte(len(state))}
		b = append(b, state...)
		b = append(b, 0, byte(len(key)))
		b = append(b, key...)
		return append(b, 0, 1, value)
	}
	for _, tc := range []struct {
		name   string
		blocks [][]byte
		refs   []BlockRef
		want   string
	}{
		{"block without a restart",
			[][]byte{full("s", "a", 1), {flagKey | flagNS, 0, 1, 'b', 0, 1, 2}},
			[]BlockRef{{State: "s", Key: []byte("a"), Entries: 1}, {State: "s", Key: []byte("b"), Entries: 1}},
			"does not restart its fields"},
		{"order across blocks",
			[][]byte{full("s", "b", 1), full("s", "a", 2)},
			[]BlockRef{{State: "s", Key: []byte("b"), Entries: 1}, {State: "s", Key: []byte("a"), Entries: 1}},
			"out of order"},
		{"index names another first key",
			[][]byte{full("s", "a", 1), full("s", "b", 2)},
			[]BlockRef{{State: "s", Key: []byte("a"), Entries: 1}, {State: "s", Key: []byte("c"), Entries: 1}},
			"block 1 is listed as"},
		{"index counts other entries",
			[][]byte{full("s", "a", 1), full("s", "b", 2)},
			[]BlockRef{{State: "s", Key: []byte("a"), Entries: 1}, {State: "s", Key: []byte("b"), Entries: 2}},
			"entries"},
	} {
		b := rawIndexedGroup(tc.blocks, tc.refs)
		_, err := collectErr(NewStreamReaderBytes(b, 0))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		_, err = collectErr(NewStreamReader(bytes.NewReader(b)))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (reader): error %v, want %q", tc.name, err, tc.want)
		}
	}
	// The same blocks framed right read back.
	b := rawIndexedGroup([][]byte{full("s", "a", 1), full("s", "b", 2)}, []BlockRef{{State: "s", Key: []byte("a"), Entries: 1}, {State: "s", Key: []byte("b"), Entries: 1}})
	if n, err := collectErr(NewStreamReaderBytes(b, 0)); err != nil || n != 2 {
		t.Fatalf("%d entries, %v", n, err)
	}
}

func TestDecodeGroupIndexRefusesLies(t *testing.T) {
	es := []Entry{{State: "s", KeyGroup: 1, Key: []byte("a")}, {State: "s", KeyGroup: 1, Key: []byte("b")}}
	b, infos := writeStreamOf(t, es, true)
	g := infos[0]
	sec := groupOf(b, g)
	idx := sec[len(sec)-int(g.IndexSize):]
	if _, err := DecodeGroupIndex(idx, 0, 1, g.Size, g.Entries); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		size, entries int64
		kg            int
		want          string
	}{
		{"group size", g.Size + 1, g.Entries, 1, "terminator"},
		{"entries", g.Size, g.Entries + 1, 1, "entries"},
		{"key group of a longer header", g.Size, g.Entries, 300, "terminator"},
	} {
		if _, err := DecodeGroupIndex(idx, 0, tc.kg, tc.size, tc.entries); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for n := range len(idx) {
		if _, err := DecodeGroupIndex(idx[:n], 0, 1, g.Size, g.Entries); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("index cut to %d bytes: %v", n, err)
		}
	}
}

// denseEntries are the entries most scans read: one state, a new key per
// entry, short keys and values, no namespace or user key (the reader's
// fast path), over a few key groups.
func denseEntries(rng *rand.Rand, n int) []Entry {
	var es []Entry
	for i := range n {
		es = append(es, Entry{State: "total", KeyGroup: rng.IntN(5) * 7, Key: fmt.Appendf(nil, "k%d", i), Value: Int64.Append(nil, rng.Int64N(100))})
	}
	slices.SortFunc(es, CompareEntries)
	return es
}

// One reader reset for every section and block (in shuffled order, after
// a corrupt one) reads what fresh readers read; ReadFiltered returns every
// entry its filter keeps, in order, is handed each entry's own bytes, and
// counts the entries it skipped; DecodeGroupIndexInto over stale refs
// decodes what DecodeGroupIndex does.
func TestReaderResetAndReadFiltered(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 9))
		es := append(randomEntries(rng, 1+rng.IntN(2000), seed%2 == 0), denseEntries(rng, 3000)...)
		slices.SortFunc(es, CompareEntries)
		es = slices.CompactFunc(es, func(a, b Entry) bool { return CompareEntries(a, b) == 0 })
		b, infos := writeStreamOf(t, es, true)
		type group struct {
			info GroupInfo
			es   []Entry
		}
		var groups []group
		n := 0
		for _, g := range infos {
			groups = append(groups, group{g, es[n : n+int(g.Entries)]})
			n += int(g.Entries)
		}
		rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })

		var sr StreamReader
		// A corrupt section first: what it leaves behind must not matter.
		bad := bytes.Clone(groupOf(b, groups[0].info))
		bad[len(bad)/2] ^= 0x55
		sr.ResetBytes(bad, 0)
		if _, ok, err := sr.NextKeyGroup(); err == nil && ok {
			var e Entry
			for {
				if ok, err := sr.Read(&e); err != nil || !ok {
					break
				}
			}
		}
		var stale []BlockRef
		skipped := 0
		for _, gr := range groups {
			g, sec := gr.info, groupOf(b, gr.info)
			// The filter keeps values with an even last byte; it must see
			// the bytes of an entry of this group.
			byKey := map[string]bool{}
			for _, e := range gr.es {
				byKey[string(e.Key)+"\x00"+string(e.Value)] = true
			}
			keep := func(key, value []byte, kg int) bool {
				if kg != g.KeyGroup || !byKey[string(key)+"\x00"+string(value)] {
					t.Fatalf("seed %d: filter got key group %d key %q value %x, not an entry of key group %d", seed, kg, key, value, g.KeyGroup)
				}
				return len(value) > 0 && value[len(value)-1]%2 == 0
			}
			sr.ResetBytes(sec, g.Offset)
			if kg, ok, err := sr.NextKeyGroup(); err != nil || !ok || kg != g.KeyGroup {
				t.Fatalf("seed %d: reset reader: key group %d %v %v, want %d", seed, kg, ok, err, g.KeyGroup)
			}
			var e Entry
			at := 0
			for {
				ok, err := sr.ReadFiltered(&e, keep)
				if err != nil {
					t.Fatalf("seed %d key group %d: %v", seed, g.KeyGroup, err)
				}
				if !ok {
					break
				}
				// e is the next entry of the group that the filter did
				// not reject (or one it may not have been asked about).
				for at < len(gr.es) && !entriesEqual(gr.es[at], e) {
					if keep(gr.es[at].Key, gr.es[at].Value, g.KeyGroup) {
						t.Fatalf("seed %d key group %d: entry %d (%q) kept by the filter was not returned", seed, g.KeyGroup, at, gr.es[at].Key)
					}
					at++
					skipped++
				}
				if at == len(gr.es) {
					t.Fatalf("seed %d key group %d: returned %+v, not an entry of the group in order", seed, g.KeyGroup, e)
				}
				at++
			}
			for ; at < len(gr.es); at++ {
				if keep(gr.es[at].Key, gr.es[at].Value, g.KeyGroup) {
					t.Fatalf("seed %d key group %d: entry %d kept by the filter was not returned", seed, g.KeyGroup, at)
				}
				skipped++
			}
			if !sr.Done() || sr.GroupEntries() != g.Entries {
				t.Fatalf("seed %d key group %d: done %v, %d entries counted, want %d", seed, g.KeyGroup, sr.Done(), sr.GroupEntries(), g.Entries)
			}

			// The index, decoded over the refs of another group.
			idx := sec[len(sec)-int(g.IndexSize):]
			base := g.Offset + g.Size - g.IndexSize
			want, err := DecodeGroupIndex(idx, base, g.KeyGroup, g.Size, g.Entries)
			if err != nil {
				t.Fatal(err)
			}
			refs, err := DecodeGroupIndexInto(stale, idx, base, g.KeyGroup, g.Size, g.Entries)
			if err != nil || len(refs) != len(want) {
				t.Fatalf("seed %d key group %d: DecodeGroupIndexInto: %d refs, %v; want %d", seed, g.KeyGroup, len(refs), err, len(want))
			}
			for i := range want {
				if w, r := want[i], refs[i]; w.State != r.State || !bytes.Equal(w.Key, r.Key) || w.Offset != r.Offset || w.Size != r.Size || w.Entries != r.Entries || w.CRC32C != r.CRC32C {
					t.Fatalf("seed %d key group %d: ref %d = %+v, want %+v", seed, g.KeyGroup, i, r, w)
				}
			}
			stale = refs
			// Every block through the same reader, reset.
			at = 0
			for i, ref := range refs {
				payload := sec[ref.Offset+4 : ref.Offset+4+int64(ref.Size)]
				sr.ResetBlock(payload, g.Offset+ref.Offset+4, g.KeyGroup)
				got := collectGroup(t, &sr)
				if int64(len(got)) != ref.Entries || !sr.Done() {
					t.Fatalf("seed %d key group %d block %d: %d entries, index says %d", seed, g.KeyGroup, i, len(got), ref.Entries)
				}
				for j := range got {
					if !entriesEqual(got[j], gr.es[at+j]) {
						t.Fatalf("seed %d key group %d block %d entry %d = %+v, want %+v", seed, g.KeyGroup, i, j, got[j], gr.es[at+j])
					}
				}
				at += len(got)
			}
		}
		if skipped == 0 {
			t.Fatalf("seed %d: the filter skipped nothing", seed)
		}
	}
}
