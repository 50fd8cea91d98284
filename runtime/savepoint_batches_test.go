package runtime_test

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/fixtures"
	"streamdbg/internal/vfstest"
	"streamdbg/runtime"
	"streamdbg/savepoint"
)

// TestSavepointFromBatchesByteIdentical: the example jobs' savepoints
// written from the heap backend's batches (what SavepointSnapshot hands
// over) and from the same backend's entries one at a time are the same
// bytes, _metadata included; pebble's are written from its entries.
func TestSavepointFromBatchesByteIdentical(t *testing.T) {
	batched := 0
	for _, name := range []string{"wordcount", "orders", "sessions", "payments", "order-windows", "enrich"} {
		for _, backend := range []string{"heap", "pebble"} {
			job, err := fixtures.Build(name, fixtures.Config{})
			if err != nil {
				t.Fatal(err)
			}
			e, err := runtime.NewExecutor(job, runtime.Options{Backend: backend, StateDir: t.TempDir()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 40 {
				if err := e.Next(); err != nil {
					break
				}
			}
			snap, err := e.SavepointSnapshot(1)
			if err != nil {
				t.Fatal(err)
			}
			fs := vfs.NewMem()
			if err := savepoint.Write(fs, "/batches", snap); err != nil {
				t.Fatal(err)
			}
			for i := range snap.Operators {
				for j := range snap.Operators[i].Subtasks {
					sub := &snap.Operators[i].Subtasks[j]
					if sub.KeyedBatches != nil {
						batched++
					}
					// Heap hands batches over; pebble does not
					// (BenchmarkSavepointFromBackend: copying each
					// entry out of pebble's iterator costs what the
					// batches save).
					if want := sub.Keyed != nil && backend == "heap"; (sub.KeyedBatches != nil) != want {
						t.Fatalf("%s %s: operator %s subtask %d: Keyed set %v, KeyedBatches set %v", name, backend, snap.Operators[i].Name, j, sub.Keyed != nil, sub.KeyedBatches != nil)
					}
					sub.KeyedBatches = nil
				}
			}
			if err := savepoint.Write(fs, "/each", snap); err != nil {
				t.Fatal(err)
			}
			_ = e.Close()
			a, b := vfstest.Files(t, fs, "/batches"), vfstest.Files(t, fs, "/each")
			if len(a) != len(b) || len(a) < 2 {
				t.Fatalf("%s %s: %d and %d files", name, backend, len(a), len(b))
			}
			for n, x := range a {
				if !bytes.Equal(x, b[n]) {
					t.Fatalf("%s %s: %s differs between the writes from batches and from entries", name, backend, n)
				}
			}
		}
	}
	if batched < 6 {
		t.Fatalf("only %d subtasks handed batches over", batched)
	}
}
