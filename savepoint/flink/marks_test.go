package flink

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/savepoint/flink/rocksdb"
	"streamdbg/state"
)

// copySample copies a sample into a directory the test may change.
func copySample(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(samplesDir, name)
	if !requireSample(t, src) {
		t.Skipf("sample %s absent", name)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// firstKeyedErr is the first error of a keyed scan of one operator.
func firstKeyedErr(sp *Savepoint, op string) error {
	for _, err := range sp.Keyed(state.KeyedScan{OperatorID: op}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkStatusCauses fails unless op has keyed states that cannot be read
// (a placeholder for what a file that does not open would list counts),
// each with a Status naming the file and a Cause marked ErrCorrupt that is
// (or wraps) each of also.
func checkStatusCauses(t *testing.T, sp *Savepoint, op, file string, also ...error) {
	t.Helper()
	n := 0
	for _, m := range sp.States() {
		if m.OperatorID != op || m.Scope != state.ScopeKeyed || m.Status == "" {
			continue
		}
		n++
		if !strings.Contains(m.Status, file) {
			t.Errorf("state %q: status %q does not name %s", m.StateName, m.Status, file)
		}
		if !errors.Is(m.Cause, ErrCorrupt) {
			t.Errorf("state %q: cause %v is not ErrCorrupt", m.StateName, m.Cause)
		}
		for _, k := range also {
			if !errors.Is(m.Cause, k) {
				t.Errorf("state %q: cause %v is not %v", m.StateName, m.Cause, k)
			}
		}
	}
	if n == 0 {
		t.Errorf("no keyed state of operator %s is listed unreadable", op)
	}
}

// TestMissingStateFileIsCorrupt: a state file _metadata names that is not
// there makes the states it holds unreadable, with a Status naming it and
// a Cause marked ErrCorrupt (the file system's not-exist too), and a scan
// of the operator fails with an ErrCorrupt; in a canonical savepoint and in
// a RocksDB native one (an SST). Before: the statuses were text only and
// the errors were not marked.
func TestMissingStateFileIsCorrupt(t *testing.T) {
	t.Run("canonical", func(t *testing.T) {
		dir := copySample(t, "udf-flink1.20-hashmap-savepoint")
		sp0, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var op, victim string
		for _, o := range sp0.md.operators {
			for _, st := range o.subtasks {
				if st.keyed != nil && st.keyed.stream != nil && st.keyed.stream.path != "" {
					op, victim = o.id, st.keyed.stream.path
				}
			}
		}
		if victim == "" {
			t.Fatal("no keyed state file")
		}
		if err := os.Remove(victim); err != nil {
			t.Fatal(err)
		}
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		checkStatusCauses(t, sp, op, filepath.Base(victim), fs.ErrNotExist)
		if err := firstKeyedErr(sp, op); !errors.Is(err, ErrCorrupt) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Base(victim)) {
			t.Errorf("scan of operator %s: %v", op, err)
		}
	})
	t.Run("native", func(t *testing.T) {
		dir := copySample(t, "udf-flink1.20-rocksdb-savepoint-native")
		op, sst, path := nativeSST(t, dir)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		checkStatusCauses(t, sp, op, sst, fs.ErrNotExist, rocksdb.ErrCorrupt)
		if err := firstKeyedErr(sp, op); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), sst) {
			t.Errorf("scan of operator %s: %v", op, err)
		}
	})
}

// nativeSST is an SST of a native sample: its operator, local name and
// path.
func nativeSST(t *testing.T, dir string) (op, local, path string) {
	t.Helper()
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range sp.md.operators {
		for _, st := range o.subtasks {
			if st.keyed == nil || st.keyed.native == nil {
				continue
			}
			for _, ns := range append(st.keyed.native.shared, st.keyed.native.private...) {
				if strings.HasSuffix(ns.local, ".sst") && ns.h != nil && ns.h.kind == handleRelativeFile {
					return o.id, ns.local, filepath.Join(dir, ns.h.name)
				}
			}
		}
	}
	t.Fatal("no SST")
	return
}

// TestCorruptSSTIsCorrupt: a flipped byte in an SST's data fails the scan
// with an error marked this package's ErrCorrupt (and rocksdb's). Before:
// rocksdb's only, so errors.Is(err, flink.ErrCorrupt) was false.
func TestCorruptSSTIsCorrupt(t *testing.T) {
	dir := copySample(t, "udf-flink1.20-rocksdb-savepoint-native")
	op, sst, path := nativeSST(t, dir)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[5] ^= 0x40 // inside the first data block
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = firstKeyedErr(sp, op)
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, rocksdb.ErrCorrupt) || !strings.Contains(err.Error(), sst) {
		t.Errorf("scan of operator %s with %s corrupt: %v", op, sst, err)
	}
}
