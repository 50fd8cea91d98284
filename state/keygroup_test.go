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

func TestKeyGroupForIsStable(t *testing.T) {
	// Savepoints store key groups: these values must never change.
	cases := map[string]int{"flink": KeyGroupFor([]byte("flink"), 128), "": KeyGroupFor(nil, 128)}
	for k, kg := range cases {
		if kg < 0 || kg >= 128 {
			t.Fatalf("%q: key group %d out of range", k, kg)
		}
		if again := KeyGroupFor([]byte(k), 128); again != kg {
			t.Fatalf("%q: %d then %d", k, kg, again)
		}
	}
}
