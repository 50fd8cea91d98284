package state

import (
	"slices"
	"testing"
)

func TestMurmurHashIntMatchesFlink(t *testing.T) {
	// Long keys 0..9 with maxParallelism 128 fall in these groups in Flink
	// (Long.hashCode(v) = (int)(v ^ v>>>32) = v for small v).
	want := []int{94, 86, 127, 113, 7, 126, 18, 113, 15, 51}
	for v, kg := range want {
		if got := KeyGroupForHash(int32(v), 128); got != kg {
			t.Errorf("key %d: key group %d, want %d", v, got, kg)
		}
	}
}

func TestKeyGroupRangesCoverAllGroups(t *testing.T) {
	for _, maxP := range []int{1, 4, 7, 128, 4096} {
		for p := 1; p <= maxP && p <= 17; p++ {
			next := 0
			for i := 0; i < p; i++ {
				r := KeyGroupRangeFor(maxP, p, i)
				if r.Start != next {
					t.Fatalf("maxP %d p %d subtask %d starts at %d, want %d", maxP, p, i, r.Start, next)
				}
				for kg := r.Start; kg <= r.End; kg++ {
					if s := SubtaskFor(maxP, p, kg); s != i {
						t.Fatalf("maxP %d p %d: kg %d owned by %d, range says %d", maxP, p, kg, s, i)
					}
				}
				next = r.End + 1
			}
			if next != maxP {
				t.Fatalf("maxP %d p %d: ranges end at %d", maxP, p, next)
			}
		}
	}
}

// TestKeyGroupForIsStable pins key groups: savepoints store them, so these
// values must never change. The expected values were computed outside Go
// (a Python script: FNV-1a of the key's bytes, then Flink's
// MathUtils.murmurHash, modulo the max parallelism), and so were Flink's
// own key groups for the same String keys (the murmur hash of Java's
// String.hashCode), which KeyGroupForHash must give from those hash codes.
func TestKeyGroupForIsStable(t *testing.T) {
	for _, tc := range []struct {
		key                  string
		ours128, ours32768   int
		javaHash             int32
		flink128, flink32768 int
	}{
		{"flink", 115, 30707, 97520992, 98, 16610},
		{"", 6, 8966, 0, 94, 31198},
		{"key_662", 13, 10893, -815179886, 41, 11561},
		{"a", 7, 21511, 97, 81, 19409},
		{"über", 20, 5908, 7604755, 73, 20169},
		{"straße", 94, 6878, -891990090, 66, 834},
	} {
		if got := KeyGroupFor([]byte(tc.key), 128); got != tc.ours128 {
			t.Errorf("%q: key group %d of 128, want %d", tc.key, got, tc.ours128)
		}
		if got := KeyGroupFor([]byte(tc.key), 32768); got != tc.ours32768 {
			t.Errorf("%q: key group %d of 32768, want %d", tc.key, got, tc.ours32768)
		}
		if got := KeyGroupForHash(tc.javaHash, 128); got != tc.flink128 {
			t.Errorf("%q: Flink key group %d of 128, want %d", tc.key, got, tc.flink128)
		}
		if got := KeyGroupForHash(tc.javaHash, 32768); got != tc.flink32768 {
			t.Errorf("%q: Flink key group %d of 32768, want %d", tc.key, got, tc.flink32768)
		}
	}
}

func TestPinnedKeyGroups(t *testing.T) {
	// Keys "a".."z" map to their letter's index; "?" cannot be mapped.
	kgOf := func(k any) (int, bool) {
		s, ok := k.(string)
		if !ok || len(s) != 1 || s[0] < 'a' || s[0] > 'z' {
			return 0, false
		}
		return int(s[0] - 'a'), true
	}
	for _, c := range []struct {
		name       string
		pins       map[string][]any
		want       []int // nil: every key group
		keysPinned bool
	}{
		{"nothing", map[string][]any{}, nil, false},
		{"keys", map[string][]any{"key": {"c", "a", "c"}}, []int{0, 2}, true},
		{"key groups", map[string][]any{"key_group": {int64(5), int64(3), int64(200), int64(-1)}}, []int{3, 5}, false},
		{"both", map[string][]any{"key": {"c", "d"}, "key_group": {int64(3), int64(7)}}, []int{3}, true},
		{"both, disjoint", map[string][]any{"key": {"c"}, "key_group": {int64(7)}}, []int{}, true},
		{"an unmapped key pins nothing", map[string][]any{"key": {"a", "?"}}, nil, false},
		{"an unmapped key leaves the key groups", map[string][]any{"key": {"?"}, "key_group": {int64(4)}}, []int{4}, false},
		{"key groups outside the range only", map[string][]any{"key_group": {int64(128)}}, []int{}, false},
	} {
		got, kp := PinnedKeyGroups(c.pins, 128, kgOf)
		if (got == nil) != (c.want == nil) || !slices.Equal(got, c.want) || kp != c.keysPinned {
			t.Errorf("%s: %v (nil %v), keys pinned %v; want %v (nil %v), %v", c.name, got, got == nil, kp, c.want, c.want == nil, c.keysPinned)
		}
	}
}

// TestKeyGroupForHashRemainder: the power-of-two shortcut gives what the
// plain remainder of the murmur hash gives, for every max parallelism
// (powers of two and others) over hashes that cover the sign and the
// extremes.
func TestKeyGroupForHashRemainder(t *testing.T) {
	hashes := []int32{0, 1, -1, 2, 97, -815179886, 1 << 30, -1 << 31, 1<<31 - 1}
	for h := int64(-1 << 31); h < 1<<31; h += 104729 * 7 {
		hashes = append(hashes, int32(h))
	}
	for _, maxP := range []int{1, 2, 3, 7, 64, 100, 128, 129, 4096, 32768} {
		for _, h := range hashes {
			want := int(MurmurHashInt(h) % int32(maxP))
			if got := KeyGroupForHash(h, maxP); got != want {
				t.Fatalf("hash %d, max parallelism %d: key group %d, want %d", h, maxP, got, want)
			}
		}
	}
}

// TestMurmurHashIntAbs: the branchless absolute value gives what Flink's
// MathUtils.murmurHash returns (code >= 0: code; code != MIN_VALUE: -code;
// else 0), here computed from the mixed hash with Flink's branches.
func TestMurmurHashIntAbs(t *testing.T) {
	flink := func(code int32) int32 {
		k := uint32(code)
		k *= 0xcc9e2d51
		k = k<<15 | k>>17
		k *= 0x1b873593
		h := k<<13 | k>>19
		h = h*5 + 0xe6546b64
		h ^= 4
		h ^= h >> 16
		h *= 0x85ebca6b
		h ^= h >> 13
		h *= 0xc2b2ae35
		h ^= h >> 16
		if r := int32(h); r >= 0 {
			return r
		} else if r != -1<<31 {
			return -r
		}
		return 0
	}
	n := 0
	for h := int64(-1 << 31); h < 1<<31; h += 7919 * 13 {
		want := flink(int32(h))
		if got := MurmurHashInt(int32(h)); got != want {
			t.Fatalf("MurmurHashInt(%d) = %d, want %d", h, got, want)
		}
		n++
	}
	if n < 40000 {
		t.Fatalf("only %d hashes checked", n)
	}
}
