package state

import (
	"fmt"
	"slices"
)

// DefaultMaxParallelism is the number of key groups of a job that does not
// set one (Flink's default for small jobs).
const DefaultMaxParallelism = 128

// KeyGroupRange is the inclusive range [Start, End] of key groups one subtask
// owns. An empty range has End < Start.
type KeyGroupRange struct {
	Start, End int
}

// Contains reports whether kg is in the range.
func (r KeyGroupRange) Contains(kg int) bool { return kg >= r.Start && kg <= r.End }

// Len is the number of key groups in the range.
func (r KeyGroupRange) Len() int {
	if r.End < r.Start {
		return 0
	}
	return r.End - r.Start + 1
}

func (r KeyGroupRange) String() string {
	if r.Len() == 0 {
		return "∅"
	}
	return fmt.Sprintf("%d–%d", r.Start, r.End)
}

// KeyGroupFor maps an encoded key to its key group in [0, maxParallelism).
// It hashes the bytes (FNV-1a) and spreads the hash with Flink's murmur
// finaliser (MathUtils.murmurHash), as Flink does with a key's hashCode.
//
// INVARIANT: never change this function; savepoints store key groups.
func KeyGroupFor(key []byte, maxParallelism int) int {
	h := uint32(2166136261)
	for _, b := range key {
		h ^= uint32(b)
		h *= 16777619
	}
	return KeyGroupForHash(int32(h), maxParallelism)
}

// KeyGroupForHash is Flink's KeyGroupRangeAssignment.computeKeyGroupForKeyHash:
// the murmur-spread hash modulo the max parallelism. Readers of Flink
// savepoints pass a key's Java hashCode.
func KeyGroupForHash(hash int32, maxParallelism int) int {
	r, m := MurmurHashInt(hash), int32(maxParallelism)
	if m > 0 && m&(m-1) == 0 {
		// A power of two (Flink's default 128 is one): r is never
		// negative, so the remainder is r's low bits, without a division
		// (a tenth of a keyed record's cost in run mode).
		return int(r & (m - 1))
	}
	return int(r % m)
}

// MurmurHashInt is Flink's MathUtils.murmurHash(int): one murmur3 round and
// the final mix, made non-negative.
func MurmurHashInt(code int32) int32 {
	k := uint32(code)
	k *= 0xcc9e2d51
	k = k<<15 | k>>17
	k *= 0x1b873593
	h := k
	h = h<<13 | h>>19
	h = h*5 + 0xe6546b64
	h ^= 4
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	r := int32(h)
	if r == -1<<31 {
		return 0
	}
	// |r| without a branch: the sign of a hash is a coin toss, which a
	// branch predictor loses half the time.
	m := r >> 31
	return (r ^ m) - m
}

// KeyGroupRangeFor is the range of key groups that subtask index of an
// operator with the given parallelism owns (Flink's
// computeKeyGroupRangeForOperatorIndex).
func KeyGroupRangeFor(maxParallelism, parallelism, index int) KeyGroupRange {
	start := (index*maxParallelism + parallelism - 1) / parallelism
	end := ((index+1)*maxParallelism - 1) / parallelism
	return KeyGroupRange{Start: start, End: end}
}

// SubtaskFor is the subtask that owns key group kg (Flink's
// computeOperatorIndexForKeyGroup).
func SubtaskFor(maxParallelism, parallelism, kg int) int {
	return kg * parallelism / maxParallelism
}

// PinnedKeyGroups is the key groups a filter's pinned values allow (pins as
// query.Pinned gives them: "key_group" and "key" each pinned to a list of
// values), sorted and without repeats; nil when nothing pins them, empty
// when the pins leave none. keyGroupOf maps a key literal to its group;
// when one of the keys cannot be mapped the keys pin nothing, and
// keysPinned is false (the scan must read every key group of the others
// and leave the keys to the filter).
func PinnedKeyGroups(pins map[string][]any, maxParallelism int, keyGroupOf func(key any) (int, bool)) (groups []int, keysPinned bool) {
	restricted := false
	if vals, ok := pins["key_group"]; ok {
		restricted = true
		for _, v := range vals {
			if n, ok := v.(int64); ok && n >= 0 && n < int64(maxParallelism) {
				groups = append(groups, int(n))
			}
		}
	}
	if keys, ok := pins["key"]; ok && len(keys) > 0 {
		byKey := make([]int, 0, len(keys))
		for _, k := range keys {
			kg, ok := keyGroupOf(k)
			if !ok {
				byKey = nil
				break
			}
			byKey = append(byKey, kg)
		}
		if byKey != nil {
			keysPinned = true
			if restricted {
				groups = slices.DeleteFunc(groups, func(g int) bool { return !slices.Contains(byKey, g) })
			} else {
				groups, restricted = byKey, true
			}
		}
	}
	if !restricted {
		return nil, keysPinned
	}
	slices.Sort(groups)
	return slices.Compact(append([]int{}, groups...)), keysPinned
}
