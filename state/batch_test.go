package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// batchEntries mixes randomEntries (namespaces, user keys, large values)
// with runs of the common shape ReadBatch decodes without Read: keys of one
// state growing one after another, short values; some keys longer than 16
// bytes and some values longer than 127.
func batchEntries(rng *rand.Rand, n int) []Entry {
	es := randomEntries(rng, n/4, rng.IntN(2) == 0)
	for i := range n {
		kg := rng.IntN(5) * 7
		key := fmt.Appendf(nil, "customer_%07d", rng.IntN(n*4))
		if rng.IntN(20) == 0 {
			key = fmt.Appendf(key, "/with-a-longer-tail-%d", i)
		}
		v := Int64.Append(nil, int64(i))
		switch rng.IntN(30) {
		case 0:
			v = bytes.Repeat([]byte{'x'}, 130+rng.IntN(300))
		case 1:
			v = nil
		}
		es = append(es, Entry{State: []string{"last", "total"}[rng.IntN(2)], KeyGroup: kg, Key: key, Value: v})
		// A key with and without user keys: the entry after a run of
		// the common shape is ordered against no user key.
		if rng.IntN(10) == 0 {
			es = append(es, Entry{State: "mixed", KeyGroup: kg, Key: key, Value: v},
				Entry{State: "mixed", KeyGroup: kg, Key: key, UserKey: []byte{byte(rng.IntN(3))}, Value: v})
			if rng.IntN(2) == 0 {
				es = append(es, Entry{State: "mixed", KeyGroup: kg, Key: key[:len(key)-1], UserKey: []byte{0xff}, Value: v})
			}
		}
	}
	slices.SortFunc(es, CompareEntries)
	return slices.CompactFunc(es, func(a, b Entry) bool { return CompareEntries(a, b) == 0 })
}

// sameEntry reports whether a and b are equal, nil slices included.
func sameEntry(a, b Entry) bool {
	nils := func(x, y []byte) bool { return (x == nil) == (y == nil) }
	return entriesEqual(a, b) && nils(a.Key, b.Key) && nils(a.Namespace, b.Namespace) && nils(a.UserKey, b.UserKey) && nils(a.Value, b.Value)
}

// cloneAll copies entries out of a reader's memory.
func cloneAll(es []Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace), UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)}
	}
	return out
}

// readOneByOne decodes b with Read: the entries, cloned, then the error.
func readOneByOne(b []byte) ([]Entry, error) {
	var out []Entry
	r := NewStreamReaderBytes(b, 100)
	for {
		_, ok, err := r.NextKeyGroup()
		if err != nil || !ok {
			return out, err
		}
		var e Entry
		for {
			ok, err := r.Read(&e)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			out = append(out, cloneAll([]Entry{e})...)
		}
	}
}

// readBatches decodes b with ReadBatch into batches of at most size
// entries, a new Batch each call, every fourth entry by Read when mix is
// set. It checks the entries of every batch against want as they come and
// keeps every batch until the end, so a batch that a later call overwrote
// shows as a mismatch there.
func readBatches(t *testing.T, b []byte, size int, mix bool) ([]Entry, error) {
	t.Helper()
	type keptBatch struct {
		at int // index in got of its first entry
		es []Entry
	}
	var kept []keptBatch
	var got []Entry
	r := NewStreamReaderBytes(b, 100)
	calls := 0
	for {
		_, ok, err := r.NextKeyGroup()
		if err != nil || !ok {
			for i, k := range kept {
				for j, e := range k.es {
					if !sameEntry(e, got[k.at+j]) {
						t.Fatalf("batch %d entry %d changed after later batches: %+v, was %+v", i, j, e, got[k.at+j])
					}
				}
			}
			return got, err
		}
		for {
			calls++
			if mix && calls%4 == 0 {
				var e Entry
				ok, err := r.Read(&e)
				if err != nil {
					return got, err
				}
				if !ok {
					break
				}
				got = append(got, cloneAll([]Entry{e})...)
				continue
			}
			bt := &Batch{Entries: make([]Entry, 0, size)}
			more, err := r.ReadBatch(bt)
			if len(bt.Entries) > size {
				t.Fatalf("batch of %d entries, capacity %d", len(bt.Entries), size)
			}
			kept = append(kept, keptBatch{at: len(got), es: bt.Entries})
			got = append(got, cloneAll(bt.Entries)...)
			if err != nil {
				return got, err
			}
			if !more {
				break
			}
		}
	}
}

func TestReadBatchEqualsRead(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 7))
		es := batchEntries(rng, 200+rng.IntN(4000))
		for _, indexed := range []bool{false, true} {
			b, _ := writeStreamOf(t, es, indexed)
			want, err := readOneByOne(b)
			if err != nil || len(want) != len(es) {
				t.Fatalf("seed %d: Read: %d entries, %v", seed, len(want), err)
			}
			for _, size := range []int{1, 3, 64, BatchEntries} {
				for _, mix := range []bool{false, true} {
					got, err := readBatches(t, b, size, mix)
					if err != nil {
						t.Fatalf("seed %d indexed %v size %d mix %v: %v", seed, indexed, size, mix, err)
					}
					if len(got) != len(want) {
						t.Fatalf("seed %d indexed %v size %d mix %v: %d entries, want %d", seed, indexed, size, mix, len(got), len(want))
					}
					for i := range want {
						if !sameEntry(got[i], want[i]) {
							t.Fatalf("seed %d indexed %v size %d mix %v: entry %d = %+v, want %+v", seed, indexed, size, mix, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestReadBatchErrorsMatchRead flips bytes of encoded streams: ReadBatch
// yields the entries Read yields before the same error (same offset, same
// words), or none where Read has none.
func TestReadBatchErrorsMatchRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	errs := 0
	for i := range 300 {
		es := batchEntries(rng, 50+rng.IntN(400))
		b, _ := writeStreamOf(t, es, i%2 == 0)
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		want, werr := readOneByOne(b)
		if werr != nil {
			errs++
		}
		for _, size := range []int{1, 5, BatchEntries} {
			got, err := readBatches(t, b, size, i%3 == 0)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("case %d size %d: error %v, Read's %v", i, size, err, werr)
			}
			if len(got) != len(want) {
				t.Fatalf("case %d size %d: %d entries before the end, Read %d", i, size, len(got), len(want))
			}
			for j := range want {
				if !sameEntry(got[j], want[j]) {
					t.Fatalf("case %d size %d: entry %d = %+v, want %+v", i, size, j, got[j], want[j])
				}
			}
		}
	}
	if errs < 75 {
		t.Fatalf("only %d of 300 flipped streams failed to decode: the test flips too little", errs)
	}
}

// TestReadBatchRefusesRepeatedKey: a key suffix that starts with the
// byte of the previous key it replaces may sort before it; ReadBatch
// decides that as Read does (out of order), not by the first byte alone.
func TestReadBatchRefusesRepeatedKey(t *testing.T) {
	es := []Entry{{State: "s", Key: []byte("key_a1"), Value: []byte{1}}, {State: "s", Key: []byte("key_b"), Value: []byte{2}}}
	b, _ := writeStreamOf(t, es, false)
	// The second entry: flagKey, shared 4, suffix length 1, "b".
	i := bytes.Index(b, []byte{flagKey, 4, 1, 'b'})
	if i < 0 {
		t.Fatalf("second entry not found in %x", b)
	}
	b[i+3] = 'a' // key "key_a", before "key_a1"
	want, werr := readOneByOne(b)
	if !errors.Is(werr, ErrCorrupt) || len(want) != 1 {
		t.Fatalf("Read: %d entries, %v; want 1 and out of order", len(want), werr)
	}
	got, err := readBatches(t, b, BatchEntries, false)
	if fmt.Sprint(err) != fmt.Sprint(werr) || len(got) != 1 {
		t.Fatalf("ReadBatch: %d entries, %v; want 1 and %v", len(got), err, werr)
	}
}

// TestReadBatchBoundsKeys: a section whose keys each repeat a long prefix
// decodes into more key bytes than it holds; a batch stops once its keys
// pass batchKeys, so memory does not follow the decoded size.
func TestReadBatchBoundsKeys(t *testing.T) {
	prefix := strings.Repeat("p", 4000)
	var es []Entry
	for i := range 300 {
		es = append(es, Entry{State: "s", Key: fmt.Appendf(nil, "%s%04d", prefix, i), Value: []byte{1}})
	}
	b, _ := writeStreamOf(t, es, false)
	r := NewStreamReaderBytes(b, 0)
	if _, ok, err := r.NextKeyGroup(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var bt Batch
	n := 0
	for {
		more, err := r.ReadBatch(&bt)
		if err != nil {
			t.Fatal(err)
		}
		keys := 0
		for _, e := range bt.Entries {
			if !bytes.Equal(e.Key, es[n].Key) {
				t.Fatalf("entry %d: key %q, want %q", n, e.Key[4000:], es[n].Key[4000:])
			}
			keys += len(e.Key)
			n++
		}
		if keys > batchKeys+4004 {
			t.Fatalf("a batch holds %d key bytes, more than %d and one key", keys, batchKeys)
		}
		if !more {
			break
		}
	}
	if n != len(es) {
		t.Fatalf("%d entries, want %d", n, len(es))
	}
	if _, err := NewStreamReader(bytes.NewReader(b)).ReadBatch(&bt); !errors.Is(err, errBatchReader) {
		t.Fatalf("ReadBatch on a reader of an io.Reader: %v", err)
	}
}

// FuzzReadBatch: on any bytes, ReadBatch and Read agree on the entries
// and the error.
func FuzzReadBatch(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 4 {
		b, _ := writeStreamOf(f, batchEntries(rng, 100), i%2 == 0)
		f.Add(b, uint8(i*3))
	}
	f.Fuzz(func(t *testing.T, b []byte, size uint8) {
		want, werr := readOneByOne(b)
		got, err := readBatches(t, b, 1+int(size), size%2 == 0)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("error %v, Read's %v", err, werr)
		}
		if werr != nil && !errors.Is(werr, ErrCorrupt) {
			t.Fatalf("error not marked corrupt: %v", werr)
		}
		if len(got) != len(want) {
			t.Fatalf("%d entries, Read %d", len(got), len(want))
		}
		for j := range want {
			if !sameEntry(got[j], want[j]) {
				t.Fatalf("entry %d = %+v, want %+v", j, got[j], want[j])
			}
		}
	})
}

// BenchmarkReadBatch decodes BenchmarkStream's 100k entries of one key
// group (plain and indexed groups) with Read one at a time and with
// ReadBatch, summing the entries' sizes.
func BenchmarkReadBatch(b *testing.B) {
	var es []Entry
	for _, st := range []string{"last", "total"} {
		for i := range 50_000 {
			v := Int64.Append(nil, int64(i))
			if st == "last" {
				v = fmt.Appendf(nil, `{"product":"p%d","amount":%d,"n":%d}`, i%97, i%1000, i)
			}
			es = append(es, Entry{State: st, Key: fmt.Appendf(nil, "customer_%07d", i), Value: v})
		}
	}
	for _, indexed := range []bool{false, true} {
		enc, _ := writeStreamOf(b, es, indexed)
		name := map[bool]string{false: "plain", true: "indexed"}[indexed]
		b.Run(name+"/read", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			var r StreamReader
			for range b.N {
				r.ResetBytes(enc, 0)
				_, _, _ = r.NextKeyGroup()
				n, size := 0, 0
				var e Entry
				for {
					ok, err := r.Read(&e)
					if err != nil {
						b.Fatal(err)
					}
					if !ok {
						break
					}
					n++
					size += len(e.Key) + len(e.Namespace) + len(e.UserKey) + len(e.Value)
				}
				if n != len(es) {
					b.Fatal(n)
				}
			}
		})
		b.Run(name+"/batch", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			var r StreamReader
			var bt Batch
			for range b.N {
				r.ResetBytes(enc, 0)
				_, _, _ = r.NextKeyGroup()
				n, size := 0, 0
				for {
					more, err := r.ReadBatch(&bt)
					if err != nil {
						b.Fatal(err)
					}
					n += len(bt.Entries)
					for i := range bt.Entries {
						e := &bt.Entries[i]
						size += len(e.Key) + len(e.Namespace) + len(e.UserKey) + len(e.Value)
					}
					if !more {
						break
					}
				}
				if n != len(es) {
					b.Fatal(n)
				}
			}
		})
	}
}
