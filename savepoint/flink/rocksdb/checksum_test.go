package rocksdb

import "testing"

// Published XXH32 (seed 0) test vectors; xxh32Last hashes data plus one
// byte, so each input is split before its last byte.
func TestXXH32Vectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
		{"Nobody inspects the spammish repetition", 0xe2293b2f},
		{"0123456789abcdef", 0xc2c45b69},
	} {
		in := []byte(tc.in)
		if got := xxh32Last(in[:len(in)-1], in[len(in)-1]); got != tc.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

func TestMaskCRC(t *testing.T) {
	// crc32c::Mask is invertible: Unmask(Mask(c)) == c.
	for _, c := range []uint32{0, 1, 0xdeadbeef, 0xffffffff} {
		m := maskCRC(c)
		r := m - 0xa282ead8
		if got := r>>17 | r<<15; got != c {
			t.Errorf("unmask(mask(%#x)) = %#x", c, got)
		}
	}
}
