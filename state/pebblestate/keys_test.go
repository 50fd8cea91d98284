package pebblestate

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"streamdbg/state"
)

// TestCompositeOrder checks the property Entries relies on: composite keys
// sort as their (key, namespace, user key) tuples, and decode back.
func TestCompositeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	parts := randomKeys(r, 40)
	type tuple struct{ k, ns, uk []byte }
	enc := func(x tuple) []byte {
		b := appendPrefix(nil, 7, 3)
		b = appendEscaped(b, x.k)
		b = appendEscaped(b, x.ns)
		return append(b, x.uk...)
	}
	cmpTuple := func(a, b tuple) int {
		return cmp.Or(bytes.Compare(a.k, b.k), bytes.Compare(a.ns, b.ns), bytes.Compare(a.uk, b.uk))
	}
	for range 20000 {
		a := tuple{parts[r.IntN(len(parts))], parts[r.IntN(len(parts))], parts[r.IntN(len(parts))]}
		b := tuple{parts[r.IntN(len(parts))], parts[r.IntN(len(parts))], parts[r.IntN(len(parts))]}
		ea, eb := enc(a), enc(b)
		if got, want := bytes.Compare(ea, eb), cmpTuple(a, b); got != want {
			t.Fatalf("%q vs %q: encoded compare %d, tuple compare %d", a, b, got, want)
		}
		p, _, err := splitKey(ea, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.kg != 3 || !bytes.Equal(p.key, a.k) || !bytes.Equal(p.ns, a.ns) || !bytes.Equal(p.rest, a.uk) {
			t.Fatalf("%q decoded as %q %q %q", a, p.key, p.ns, p.rest)
		}
	}
}

func TestSuccessor(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{0xff}, nil},
	} {
		if got := successor(nil, c.in); !bytes.Equal(got, c.want) {
			t.Errorf("successor(%x) = %x, want %x", c.in, got, c.want)
		}
	}
}

func FuzzSplitKey(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 'a', 0, 1, 0, 0xff, 0, 1, 'u'})
	f.Add([]byte{0, 1, 0, 2, 0, 7})
	f.Fuzz(func(t *testing.T, k []byte) {
		p, _, err := splitKey(k, nil)
		if err != nil {
			return
		}
		// A key that decodes re-encodes to itself.
		b := appendPrefix(nil, uint16(k[0])<<8|uint16(k[1]), p.kg)
		b = appendEscaped(b, p.key)
		b = appendEscaped(b, p.ns)
		b = append(b, p.rest...)
		if !bytes.Equal(b, k) {
			t.Fatalf("%x decodes and re-encodes as %x", k, b)
		}
	})
}

// FuzzListValue cuts arbitrary list values into elements: an error is
// marked corrupt; a value that cuts whole re-encodes to elements that cut
// back the same, and to the same bytes when its lengths were minimal
// varints (what appendElement writes).
func FuzzListValue(f *testing.F) {
	f.Add(appendElement(appendElement(nil, []byte("ab")), nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0x80, 0x00}) // 0 as a two-byte varint
	f.Fuzz(func(t *testing.T, v []byte) {
		orig := v
		var elems [][]byte
		canonical := true
		for len(v) > 0 {
			n, w := binary.Uvarint(v)
			elem, rest, err := nextElement(v)
			if err != nil {
				if !errors.Is(err, state.ErrCorrupt) {
					t.Fatalf("error not marked corrupt: %v", err)
				}
				return
			}
			if len(rest) >= len(v) || uint64(len(elem)) != n || len(elem)+w+len(rest) != len(v) {
				t.Fatalf("element of %d bytes (length %d, %d-byte varint) and %d left from %d bytes", len(elem), n, w, len(rest), len(v))
			}
			canonical = canonical && w == len(binary.AppendUvarint(nil, n))
			elems = append(elems, elem)
			v = rest
		}
		var out []byte
		for _, e := range elems {
			out = appendElement(out, e)
		}
		if canonical && !bytes.Equal(out, orig) {
			t.Fatalf("%x re-encodes as %x", orig, out)
		}
		for i := 0; len(out) > 0; i++ {
			elem, rest, err := nextElement(out)
			if err != nil || i >= len(elems) || !bytes.Equal(elem, elems[i]) {
				t.Fatalf("re-encoded element %d: %x, %v", i, elem, err)
			}
			out = rest
		}
	})
}
