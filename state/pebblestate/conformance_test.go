package pebblestate

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
	"streamdbg/state/statetest"
)

// TestConformance runs the backend conformance suite, the same transcripts
// heapstate passes, against pebble on an in-memory file system.
func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend {
		b, err := Open(Options{FS: vfs.NewMem(), MaxParallelism: maxParallelism, KeyGroups: groups, CacheSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestIncrementalCheckpoints(t *testing.T) {
	statetest.RunIncremental(t, 30, func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend {
		b, err := Open(Options{FS: vfs.NewMem(), MaxParallelism: maxParallelism, KeyGroups: groups, CacheSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

// TestPendingWrites runs the conformance suite and the checkpoint property
// test with pending writes committed after every few bytes and the cache
// of clean entries dropped at almost every commit, so that reads meet keys
// pending, clean, merged onto the DB's values and only in the DB, in every
// mix.
func TestPendingWrites(t *testing.T) {
	defer func(c, m int) { commitThreshold, maxCached = c, m }(commitThreshold, maxCached)
	commitThreshold, maxCached = 64, 4
	open := func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend {
		b, err := Open(Options{FS: vfs.NewMem(), MaxParallelism: maxParallelism, KeyGroups: groups, CacheSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	statetest.Run(t, open)
	statetest.RunIncremental(t, 30, open)
}
