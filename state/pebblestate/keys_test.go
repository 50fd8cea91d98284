package pebblestate

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"testing"
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

func FuzzListValue(f *testing.F) {
	f.Add(appendElement(appendElement(nil, []byte("ab")), nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, v []byte) {
		var out []byte
		for len(v) > 0 {
			elem, rest, err := nextElement(v)
			if err != nil {
				return
			}
			if len(rest) >= len(v) {
				t.Fatal("no progress")
			}
			out = appendElement(out, elem)
			v = rest
		}
		_ = out
	})
}
