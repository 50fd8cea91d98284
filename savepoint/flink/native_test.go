package flink

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdbg/state"
)

const incrementalSample = "datastream/new-stateful-udf-migration-itcase-flink1.20-rocksdb-checkpoint"

// streamFile writes a FILE_STREAM_STATE_HANDLE (absolute path).
func (e *enc) streamFile(size int64, p string) {
	e.u8(handleFile)
	e.i64(size)
	e.utf(p)
}

// retainedCheckpoint lays a sample's keyed operator out as a retained
// incremental checkpoint is on a cluster's file system: job/chk-12/ with
// `_metadata` and the private files (meta data, MANIFEST, CURRENT,
// OPTIONS), job/shared/ with the SST files, every handle an absolute path
// under orig (where the job wrote them, gone now). sharedPath rewrites the
// path of each shared file.
func retainedCheckpoint(t *testing.T, opID, orig string, sharedPath func(string) string) (chk string, want []string) {
	t.Helper()
	src := openSample(t, incrementalSample)
	var op *operatorMeta
	for _, o := range src.md.operators {
		if o.id == opID {
			op = o
		}
	}
	if op == nil {
		t.Fatalf("no operator %s", opID)
	}
	want = keyedLines(t, src)
	want = slices.DeleteFunc(want, func(l string) bool { return !strings.HasPrefix(l, opID) })
	if len(want) == 0 {
		t.Fatal("no rows to compare")
	}

	root := t.TempDir()
	chk = filepath.Join(root, "job", "chk-12")
	shared := filepath.Join(root, "job", "shared")
	for _, d := range []string{chk, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyTo := func(h *streamHandle, dir string) int64 {
		b, err := os.ReadFile(filepath.Join(src.dir, h.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path.Base(h.name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return int64(len(b))
	}
	var m enc
	m.i32(Magic)
	m.i32(4)
	m.i64(12)
	m.i32(0)
	m.i32(1)
	for range 2 {
		m.i64(0)
	}
	copy(m.Bytes()[m.Len()-16:], mustHex(t, opID))
	m.i32(int32(op.parallelism))
	m.i32(int32(op.maxParallelism))
	m.u8(handleNull)
	m.i32(int32(len(op.subtasks)))
	for _, st := range op.subtasks {
		nh := st.keyed.native
		if nh == nil || st.keyed.stream.kind != handleRelativeFile {
			t.Fatalf("subtask %d: not an incremental handle of relative files", st.index)
		}
		m.i32(int32(st.index))
		m.i32(0)
		m.i32(0)
		m.u8(handleIncrementalV2)
		m.i64(nh.checkpointID)
		m.utf(nh.backendID)
		m.i32(int32(nh.first))
		m.i32(int32(nh.count))
		m.i64(0)
		meta := st.keyed.stream
		m.streamFile(copyTo(meta, chk), orig+"/chk-12/"+meta.name)
		var sst, priv []namedStream
		for _, ns := range slices.Concat(nh.shared, nh.private) {
			if strings.HasSuffix(ns.local, ".sst") {
				sst = append(sst, ns)
			} else {
				priv = append(priv, ns)
			}
		}
		m.i32(int32(len(sst)))
		for _, ns := range sst {
			m.utf(ns.local)
			m.streamFile(copyTo(ns.h, shared), sharedPath(orig+"/shared/"+ns.h.name))
		}
		m.i32(int32(len(priv)))
		for _, ns := range priv {
			m.utf(ns.local)
			m.streamFile(copyTo(ns.h, chk), orig+"/chk-12/"+ns.h.name)
		}
		m.utf("handle-id")
		m.u8(handleNull)
		m.i32(0)
		m.i32(0)
	}
	m.u8(0x70)
	if err := os.WriteFile(filepath.Join(chk, "_metadata"), m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return chk, want
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	var b []byte
	for i := 0; i+1 < len(s); i += 2 {
		var x byte
		for _, c := range s[i : i+2] {
			x <<= 4
			switch {
			case c >= '0' && c <= '9':
				x |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				x |= byte(c-'a') + 10
			}
		}
		b = append(b, x)
	}
	return b
}

// TestRetainedIncrementalCheckpoint opens chk-12 of a retained incremental
// checkpoint whose absolute paths are gone: shared files are found in
// ../shared, the rows equal the sample's.
func TestRetainedIncrementalCheckpoint(t *testing.T) {
	const op = "4b818c7923a927796d24b727201ba34d" // value state and timers
	chk, want := retainedCheckpoint(t, op, "hdfs://namenode:8020/flink/checkpoints/4f3a", func(p string) string { return p })
	sp, err := Open(chk)
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "keyed_state", keyedLines(t, sp), want)
	if n := len(timerLines(t, sp)); n != 8 {
		t.Errorf("%d timers, want 8", n)
	}
	for _, o := range sp.Operators() {
		if len(o.Unsupported) > 0 {
			t.Errorf("%s: %v", o.ID, o.Unsupported)
		}
	}
}

// TestRetainedCheckpointMissingSharedFile: a shared file that is nowhere is
// an error naming the RocksDB file and where it was looked for.
func TestRetainedCheckpointMissingSharedFile(t *testing.T) {
	const op = "4b818c7923a927796d24b727201ba34d"
	chk, _ := retainedCheckpoint(t, op, "file:/data/flink/cp", func(p string) string { return p })
	ents, _ := os.ReadDir(filepath.Join(filepath.Dir(chk), "shared"))
	victim := ents[0].Name()
	os.Remove(filepath.Join(filepath.Dir(chk), "shared", victim))
	sp, err := Open(chk)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range sp.Keyed(state.KeyedScan{OperatorID: op}) {
		if err != nil {
			got = err
			break
		}
	}
	if got == nil {
		t.Fatal("read a checkpoint with a shared file missing")
	}
	if !strings.Contains(got.Error(), ".sst") || !strings.Contains(got.Error(), victim) {
		t.Errorf("error %q does not name the missing file", got)
	}
	// Each place looked in is named once (shared/<file> was listed twice:
	// as the path under the checkpoint's parent and as its last two
	// components).
	if _, rest, ok := strings.Cut(got.Error(), "(looked for "); !ok {
		t.Errorf("error %q does not say where it looked", got)
	} else {
		tried := strings.Split(rest[:strings.IndexByte(rest, ')')], ", ")
		if len(tried) < 2 || len(slices.Compact(slices.Sorted(slices.Values(tried)))) != len(tried) {
			t.Errorf("looked for %q: want two places or more, each once", tried)
		}
	}
	// StateMeta lists the gap; the operator's notes too.
	for _, m := range sp.States() {
		if m.OperatorID == op && m.Scope == state.ScopeKeyed && !strings.Contains(m.Status, victim) {
			t.Errorf("state %s: status %q does not name the missing file", m.StateName, m.Status)
		}
	}
}

// TestRetainedCheckpointPathEscapes: a shared path with ".." is refused,
// whatever exists where it points.
func TestRetainedCheckpointPathEscapes(t *testing.T) {
	const op = "4b818c7923a927796d24b727201ba34d"
	chk, _ := retainedCheckpoint(t, op, "file:/data/flink/cp", func(p string) string {
		return "file:/data/flink/cp/shared/../../../../" + path.Base(p)
	})
	sp, err := Open(chk)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range sp.Keyed(state.KeyedScan{OperatorID: op}) {
		if err != nil {
			got = err
			break
		}
	}
	if got == nil || !strings.Contains(got.Error(), errEscapes.Error()) {
		t.Errorf("error %v, want one saying the path leaves the checkpoint's directory", got)
	}
}

func TestResolveSharedRelativeEscapes(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"../x", "/etc/passwd", "a/../../b"} {
		if _, _, _, err := resolveShared(newCheckpointRoots(dir), nil, &streamHandle{kind: handleRelativeFile, name: name}); !errors.Is(err, errEscapes) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", name, err)
		}
	}
}

// TestExplainNativeKeyGroup: a scan of one key group reads, and EXPLAIN
// names, only the blocks of the subtask that owns it; the rows are that key
// group's.
func TestExplainNativeKeyGroup(t *testing.T) {
	sp := openSample(t, "udf-flink1.20-rocksdb-savepoint-native")
	scan := state.KeyedScan{OperatorID: "d5c8b168c6cbfe8c507a10f88b325243", StateName: "state-name", KeyGroups: []int{2}}
	lines := sp.ExplainKeyed(scan)
	if len(lines) != 1 || !strings.Contains(lines[0], "subtask 2: state-name (RocksDB, 1 key groups): 000010.sst (") || !strings.Contains(lines[0], " data@0+") {
		t.Errorf("explain %q", lines)
	}
	rows := keyedRows(t, sp, scan)
	if len(rows) != 2 {
		t.Fatalf("%d rows in key group 2, want 2 (keys 0 and 1)", len(rows))
	}
	for _, r := range rows {
		if r.KeyGroup != 2 || r.Subtask != 2 {
			t.Errorf("row %+v", r)
		}
	}
	if got := sp.ExplainKeyed(state.KeyedScan{OperatorID: scan.OperatorID, KeyGroups: []int{}}); len(got) != 0 {
		t.Errorf("no key groups: explain %q", got)
	}
}
