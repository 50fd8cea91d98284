package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"
)

// randomEntries makes sorted, distinct entries over a few key groups, with
// repeated states, keys and namespaces and some large values.
func randomEntries(rng *rand.Rand, n int, big bool) []Entry {
	states := []string{"count", "list", "map", TimerStateName("event")}
	var es []Entry
	for range n {
		e := Entry{
			State:    states[rng.IntN(len(states))],
			KeyGroup: rng.IntN(5) * 7,
			Key:      fmt.Appendf(nil, "key_%d", rng.IntN(50)),
		}
		if rng.IntN(3) == 0 {
			e.Namespace = WindowCodec.Append(nil, Window{Start: int64(rng.IntN(3)) * 1000, End: 5000})
		}
		switch e.State {
		case "list":
			e.UserKey = Position.Append(nil, int64(rng.IntN(4)))
		case "map":
			e.UserKey = fmt.Appendf(nil, "p%d", rng.IntN(6))
		case TimerStateName("event"):
			e.UserKey = Int64.Append(nil, int64(rng.IntN(100)))
		}
		if e.State != TimerStateName("event") {
			e.Value = Int64.Append(nil, rng.Int64())
			if big && rng.IntN(50) == 0 {
				e.Value = bytes.Repeat([]byte{byte(rng.IntN(256))}, 70<<10)
			}
		}
		es = append(es, e)
	}
	slices.SortFunc(es, CompareEntries)
	return slices.CompactFunc(es, func(a, b Entry) bool { return CompareEntries(a, b) == 0 })
}

func writeStream(t testing.TB, es []Entry) ([]byte, []GroupInfo) {
	t.Helper()
	return writeStreamOf(t, es, false)
}

// writeStreamOf writes es as a stream of plain or indexed groups.
func writeStreamOf(t testing.TB, es []Entry, indexed bool) ([]byte, []GroupInfo) {
	t.Helper()
	var buf bytes.Buffer
	w := NewStreamWriter(&buf)
	if indexed {
		w = NewIndexedStreamWriter(&buf)
	}
	var infos []GroupInfo
	for i, e := range es {
		if i == 0 || e.KeyGroup != es[i-1].KeyGroup {
			if i > 0 {
				g, err := w.EndKeyGroup()
				if err != nil {
					t.Fatal(err)
				}
				infos = append(infos, g)
			}
			if err := w.BeginKeyGroup(e.KeyGroup); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if len(es) > 0 {
		g, err := w.EndKeyGroup()
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, g)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), infos
}

func entriesEqual(a, b Entry) bool {
	return a.State == b.State && a.KeyGroup == b.KeyGroup && bytes.Equal(a.Key, b.Key) &&
		bytes.Equal(a.Namespace, b.Namespace) && bytes.Equal(a.UserKey, b.UserKey) && bytes.Equal(a.Value, b.Value)
}

func collect(t testing.TB, r *StreamReader) []Entry {
	t.Helper()
	var out []Entry
	for e, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key),
			Namespace: bytes.Clone(e.Namespace), UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)})
	}
	return out
}

func TestStreamRoundTrip(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		es := randomEntries(rng, 1+rng.IntN(3000), true)
		b, infos := writeStream(t, es)
		b2, _ := writeStream(t, es)
		if !bytes.Equal(b, b2) {
			t.Fatal("two writes of the same entries differ")
		}
		readers := map[string]*StreamReader{
			"bytes":   NewStreamReaderBytes(b, 0),
			"reader":  NewStreamReader(bytes.NewReader(b)),
			"onebyte": NewStreamReader(iotest.OneByteReader(bytes.NewReader(b))),
		}
		for name, r := range readers {
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
		// Every group decodes alone from its section, with its checksum.
		n := 0
		for _, g := range infos {
			sec := b[g.Offset : g.Offset+g.Size]
			if CRC32C(sec) != g.CRC32C {
				t.Fatalf("seed %d: key group %d: checksum differs", seed, g.KeyGroup)
			}
			r := NewStreamReaderBytes(sec, g.Offset)
			kg, ok, err := r.NextKeyGroup()
			if err != nil || !ok || kg != g.KeyGroup {
				t.Fatalf("section of key group %d: %d %v %v", g.KeyGroup, kg, ok, err)
			}
			for {
				e, ok, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if !entriesEqual(e, es[n]) {
					t.Fatalf("section of key group %d: entry %+v, want %+v", kg, e, es[n])
				}
				n++
			}
			if !r.Done() {
				t.Fatalf("section of key group %d: bytes left", kg)
			}
		}
		if n != len(es) {
			t.Fatalf("sections hold %d entries, want %d", n, len(es))
		}
	}
}

func TestStreamWriterRefusesDisorder(t *testing.T) {
	e := func(state, key string, kg int) Entry { return Entry{State: state, KeyGroup: kg, Key: []byte(key)} }
	for _, tc := range []struct {
		name string
		es   []Entry
		want string
	}{
		{"repeated", []Entry{e("a", "k", 1), e("a", "k", 1)}, `state: snapshot stream: key group 1: entry of state "a" out of order or repeated`},
		{"key order", []Entry{e("a", "k2", 1), e("a", "k1", 1)}, `state: snapshot stream: key group 1: entry of state "a" out of order or repeated`},
		{"state order", []Entry{e("b", "k", 1), e("a", "k", 1)}, `state: snapshot stream: key group 1: entry of state "a" out of order or repeated`},
		{"key group", []Entry{e("a", "k", 1), e("a", "l", 2)}, "state: snapshot stream: entry of key group 2 in key group 1"},
	} {
		w := NewStreamWriter(io.Discard)
		if err := w.BeginKeyGroup(1); err != nil {
			t.Fatal(err)
		}
		var err error
		for _, x := range tc.es {
			if err = w.Write(x); err != nil {
				break
			}
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestStreamReaderBoundsLengths(t *testing.T) {
	// A block claiming 1 GiB with 3 bytes behind it.
	b := []byte{tagGroup, 3, 0, 0, 0, 0x40, 1, 2, 3}
	for _, r := range []*StreamReader{NewStreamReaderBytes(b, 100), NewStreamReader(bytes.NewReader(b))} {
		_, err := io.Discard.Write(nil)
		for _, err = range r.All() {
			if err != nil {
				break
			}
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v, want ErrCorrupt", err)
		}
	}
	// A block within bounds that lies about a value length.
	var buf bytes.Buffer
	w := NewStreamWriter(&buf)
	_ = w.BeginKeyGroup(0)
	_ = w.Write(Entry{State: "s", Key: []byte("k"), Value: []byte("vvvv")})
	_, _ = w.EndKeyGroup()
	_ = w.Close()
	raw := buf.Bytes()
	raw[len(raw)-10] = 0x7f // the value length
	_, err := collectErr(NewStreamReaderBytes(raw, 0))
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v, want ErrCorrupt", err)
	}
}

func collectErr(r *StreamReader) (int, error) {
	n := 0
	for _, err := range r.All() {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func TestOperatorEntriesRoundTrip(t *testing.T) {
	es := []OperatorEntry{
		{State: "bc", Kind: KindBroadcast, Position: 0, Key: []byte("a"), Value: []byte("1")},
		{State: "bc", Kind: KindBroadcast, Position: 1, Key: []byte("b"), Value: []byte("2")},
		{State: "offsets", Kind: KindSplitList, Position: 0, Value: Int64.Append(nil, 7)},
		{State: "offsets", Kind: KindSplitList, Position: 1, Value: nil},
		{State: "u", Kind: KindUnionList, Position: 0, Value: []byte("x")},
	}
	b := AppendOperatorEntries(nil, es)
	got, err := ReadOperatorEntries(bytes.NewReader(b), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(es) {
		t.Fatalf("%d entries, want %d", len(got), len(es))
	}
	for i := range es {
		g, w := got[i], es[i]
		if g.State != w.State || g.Kind != w.Kind || g.Position != w.Position || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
	for n := range len(b) {
		if _, err := DecodeOperatorEntries(b[:n], 0); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: error %v", n, err)
		}
	}
}

func FuzzStreamReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	b, _ := writeStream(f, randomEntries(rng, 12, false))
	f.Add(b)
	f.Add([]byte{tagGroup, 0, 1, 0, 0, 0, flagState})
	ib, _ := writeStreamOf(f, randomEntries(rng, 300, false), true)
	f.Add(ib)
	f.Add(AppendOperatorEntries(nil, []OperatorEntry{{State: "s", Kind: KindSplitList, Value: []byte("v")}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var prev Entry
		var have bool
		var fromBytes []Entry
		for e, err := range NewStreamReaderBytes(b, 0).All() {
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error not marked corrupt: %v", err)
				}
				break
			}
			if have && e.KeyGroup == prev.KeyGroup && CompareEntries(prev, e) >= 0 {
				t.Fatalf("entries out of order: %+v then %+v", prev, e)
			}
			prev = Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace), UserKey: bytes.Clone(e.UserKey)}
			have = true
			fromBytes = append(fromBytes, Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace), UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)})
		}
		i := 0
		for e, err := range NewStreamReader(bytes.NewReader(b)).All() {
			if err != nil {
				break
			}
			if i >= len(fromBytes) || !entriesEqual(e, fromBytes[i]) {
				t.Fatalf("reader and bytes decoders disagree at entry %d", i)
			}
			i++
		}
		_, _ = DecodeOperatorEntries(b, 0)
	})
}

// BenchmarkStream encodes and decodes 100k entries of one key group (two
// states, 16-byte keys, 8- and ~40-byte values) to and from memory:
// encode one entry at a time (WriteEntry), encode-runs in batches
// (WriteRun), decode one at a time (Read).
func BenchmarkStream(b *testing.B) {
	var es []Entry
	arena := make([]byte, 0, 8<<20)
	for _, st := range []string{"last", "total"} {
		for i := range 50_000 {
			k := len(arena)
			arena = fmt.Appendf(arena, "customer_%07d", i)
			v := len(arena)
			if st == "total" {
				arena = Int64.Append(arena, int64(i))
			} else {
				arena = fmt.Appendf(arena, `{"product":"p%d","amount":%d,"n":%d}`, i%97, i%1000, i)
			}
			es = append(es, Entry{State: st, Key: arena[k:v:v], Value: arena[v:len(arena):len(arena)]})
		}
	}
	var buf bytes.Buffer
	encode := func() {
		buf.Reset()
		w := NewStreamWriter(&buf)
		_ = w.BeginKeyGroup(0)
		for _, e := range es {
			if err := w.Write(e); err != nil {
				b.Fatal(err)
			}
		}
		_, _ = w.EndKeyGroup()
		_ = w.Close()
	}
	// encodeRuns writes the same entries in batches of BatchEntries
	// through WriteRun, as a savepoint from a backend's EntryBatches.
	encodeRuns := func() {
		buf.Reset()
		w := NewStreamWriter(&buf)
		_ = w.BeginKeyGroup(0)
		for i := 0; i < len(es); i += BatchEntries {
			batch := es[i:min(i+BatchEntries, len(es))]
			for len(batch) > 0 {
				n, err := w.WriteRun(batch)
				if err != nil {
					b.Fatal(err)
				}
				batch = batch[n:]
			}
		}
		_, _ = w.EndKeyGroup()
		_ = w.Close()
	}
	encode()
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(buf.Len()))
		for range b.N {
			encode()
		}
	})
	b.Run("encode-runs", func(b *testing.B) {
		b.SetBytes(int64(buf.Len()))
		for range b.N {
			encodeRuns()
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(buf.Len()))
		for range b.N {
			n := 0
			for _, err := range NewStreamReaderBytes(buf.Bytes(), 0).All() {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != len(es) {
				b.Fatal(n)
			}
		}
	})
}
