package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// chunkWriter keeps what it is given; it fails (err) once it has taken
// limit bytes, or takes only part of a write (short).
type chunkWriter struct {
	b      bytes.Buffer
	writes int
	limit  int
	short  bool
}

var errFull = errors.New("disk full")

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.limit > 0 && w.b.Len()+len(p) > w.limit {
		return 0, errFull
	}
	if w.short {
		w.b.Write(p[:len(p)/2])
		return len(p) / 2, nil
	}
	return w.b.Write(p)
}

// TestJSONWriter: random records of a type that encodes itself and of
// one that goes through encoding/json, written past several buffers,
// come out as their JSON lines in order, buffered (few writes, nothing
// before the buffer fills or Flush); a failing or short write is the
// error of that write and of every one after it.
func TestJSONWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var want strings.Builder
	var recs []any
	for want.Len() < 5*outBuffer {
		var v any = pairRec{S: strings.Repeat("é\"x", r.IntN(200)), N: r.Int64()}
		if r.IntN(3) == 0 {
			v = plainRec{S: strings.Repeat("<y>", r.IntN(300)), L: r.IntN(1000)}
		}
		recs = append(recs, v)
		b, err := json.Marshal(v)
		if a, ok := v.(JSONAppender); ok {
			b = a.AppendJSON(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		want.Write(b)
		want.WriteByte('\n')
	}
	w := &chunkWriter{}
	e := &Executor{out: newJSONWriter(w)}
	for i, v := range recs {
		if err := e.writeJSON(v); err != nil {
			t.Fatal(err)
		}
		if i == 0 && w.writes != 0 {
			t.Fatal("the first record was written unbuffered")
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.b.String() != want.String() {
		t.Fatalf("wrote %d bytes, want %d (they differ)", w.b.Len(), want.Len())
	}
	if w.writes < 5 || w.writes > 6 {
		t.Fatalf("%d writes for %d bytes", w.writes, w.b.Len())
	}
	for _, bad := range []*chunkWriter{{limit: outBuffer * 2}, {short: true}} {
		e := &Executor{out: newJSONWriter(bad)}
		var first error
		n := 0
		for _, v := range recs {
			if err := e.writeJSON(v); err != nil && first == nil {
				first = err
			} else if first != nil && !errors.Is(err, first) {
				t.Fatalf("after %v, a write gave %v", first, err)
			}
			n++
		}
		if err := e.Flush(); first == nil || !errors.Is(err, first) {
			t.Fatalf("failing writer: first error %v, Flush %v", first, err)
		}
		if bad.short && !errors.Is(first, io.ErrShortWrite) || !bad.short && !errors.Is(first, errFull) {
			t.Fatalf("error %v", first)
		}
		if !strings.HasPrefix(want.String(), bad.b.String()) {
			t.Fatal("what was written is not the start of the output")
		}
	}
}
