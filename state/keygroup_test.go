package state

import "testing"

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
