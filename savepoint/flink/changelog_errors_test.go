package flink

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/state"
)

// Hand-made change logs of one subtask (key groups 0-7): what cannot be
// applied is listed with its reason, what is malformed is an error naming
// the file and the offset, and what can be read still is.

// clKV is the body of a key-value change: key, namespace, then payload.
func clKV(s int, k, ns int64, payload ...[]byte) []byte {
	e := clScope(s, k, ns)
	for _, p := range payload {
		e.Write(p)
	}
	return e.Bytes()
}

func memPart(changes ...memChange) clPartW { return clPartW{mem: changes} }

func meta(s int, id uint16) memChange {
	return memChange{kg: metaKeyGroup, b: metaChange(s, id, false, false)}
}

func data(s int, k int64, op byte, id uint16, body []byte) memChange {
	return memChange{kg: int32(longKG(k, clMaxPar)), b: dataChange(clChange{state: s, op: op, body: body}, id)}
}

func writeOne(t *testing.T, parts []clPartW, files ...*dstlFileW) (string, []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chk-9")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeChangelogCheckpoint(t, dir, newCLTestModel(), []clSubtaskW{{first: 0, end: clMaxPar, parts: parts}}, files)
	md, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, md
}

func scanErr(t *testing.T, dir string, scan state.KeyedScan) error {
	t.Helper()
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range sp.Keyed(scan) {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestChangelogMergeNeedsFunction: two values merged into one namespace of
// a reducing state need the job's reduce function: the state is listed
// with the reason, its scans fail, the other states read.
func TestChangelogMergeNeedsFunction(t *testing.T) {
	const r, v = 3, 0
	dir, _ := writeOne(t, []clPartW{memPart(
		meta(v, 10), meta(r, 11), meta(clTimerState, 12),
		data(v, 1, opSet, 10, clKV(v, 1, 0, be64(77))),
		data(r, 1, opSet, 11, clKV(r, 1, 0, be64(5))),
		data(r, 1, opSetInternal, 11, clKV(r, 1, 1, be64(6))),
		// sources 1 (a value) into 0 (a value): needs the function
		data(r, 1, opMergeNS, 11, clKV(r, 1, 0, be64(0), []byte{0, 0, 0, 1}, be64(1))),
	)})
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := findMeta(t, sp, clOpID, "r")
	if !strings.Contains(m.Status, `MERGE_NS of reducing state "r" merges two values of key 1 in key group`) {
		t.Errorf("status %q", m.Status)
	}
	if m := findMeta(t, sp, clOpID, "v"); m.Status != "" || m.Entries != 1 {
		t.Errorf("value state %+v", m)
	}
	rows := keyedRows(t, sp, state.KeyedScan{StateName: "v"})
	if len(rows) != 1 || rows[0].Key != int64(1) || rows[0].Value != int64(77) {
		t.Errorf("value state rows %+v", rows)
	}
	if err := scanErr(t, dir, state.KeyedScan{OperatorID: clOpID, StateName: "r"}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "reduce or aggregate function") {
		t.Errorf("scan of r: %v", err)
	}

	// One value merged into an empty namespace moves: no function needed.
	dir, _ = writeOne(t, []clPartW{memPart(
		meta(r, 11), meta(clTimerState, 12),
		data(r, 1, opSet, 11, clKV(r, 1, 2, be64(6))),
		data(r, 1, opMergeNS, 11, clKV(r, 1, 0, be64(0), []byte{0, 0, 0, 2}, be64(1), be64(2))),
	)})
	sp, _ = Open(dir)
	rows = keyedRows(t, sp, state.KeyedScan{StateName: "r"})
	if len(rows) != 1 || rows[0].Namespace != int64(0) || rows[0].Value != int64(6) {
		t.Errorf("moved value: %+v", rows)
	}
}

// TestChangelogUnknownSerializer: a state whose metadata names a
// serializer this reader does not know is listed with it; the change's
// id and type, its last bytes, still bind it, so the other states read.
func TestChangelogUnknownSerializer(t *testing.T) {
	var e enc
	e.u8(opMetadata)
	e.i32(6)
	e.utf("custom")
	e.i32(backendKeyValue)
	e.i32(1)
	e.utf("KEYED_STATE_TYPE")
	e.utf("VALUE")
	e.i32(2)
	e.utf("VALUE_SERIALIZER")
	e.i32(2)
	e.utf("com.example.CustomSerializerSnapshot")
	e.i32(1)
	e.Write([]byte("opaque payload"))
	e.utf("NAMESPACE_SERIALIZER")
	e.snapshot(voidNSSnapshot)
	e.u8(0)
	e.u8(0)
	e.u16(20)
	e.u8(backendKeyValue)
	custom := memChange{kg: metaKeyGroup, b: e.Bytes()}
	dir, _ := writeOne(t, []clPartW{memPart(
		custom, meta(0, 10), meta(clTimerState, 12),
		memChange{kg: int32(longKG(4, clMaxPar)), b: append([]byte{opSet, 0, 20}, clKV(0, 4, 0, []byte("??"))...)},
		data(0, 4, opSet, 10, clKV(0, 4, 0, be64(8))),
	)})
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := findMeta(t, sp, clOpID, "custom"); m.Status != "unknown serializer com.example.CustomSerializerSnapshot" {
		t.Errorf("custom state %+v", m)
	}
	rows := keyedRows(t, sp, state.KeyedScan{StateName: "v"})
	if len(rows) != 1 || rows[0].Value != int64(8) {
		t.Errorf("value state rows %+v", rows)
	}
}

// TestChangelogMalformed: each malformed change log is an error of the
// right kind naming the file and the offset.
func TestChangelogMalformed(t *testing.T) {
	bad := data(0, 2, opSet, 99, clKV(0, 2, 0, be64(1)))
	for _, tc := range []struct {
		name  string
		parts []clPartW
		files func() []*dstlFileW
		kind  error
		file  string
		msg   string
		at    []byte // the offset is where these bytes start in _metadata, +1
	}{
		{name: "undeclared state id", parts: []clPartW{memPart(meta(clTimerState, 12), bad)}, kind: ErrCorrupt, file: "_metadata", msg: "state id 99", at: bad.b},
		{name: "operation the state refuses", parts: []clPartW{memPart(meta(clTimerState, 12), meta(0, 1),
			data(0, 2, opAddOrUpdateElement, 1, clKV(0, 2, 0, be64(1))))}, kind: ErrCorrupt, file: "_metadata", msg: "ADD_OR_UPDATE_ELEMENT change of value state"},
		{name: "Flink 1.14 format", parts: []clPartW{memPart(memChange{kg: metaKeyGroup, b: []byte{opLegacyMetadata, 0, 0, 0, 6}})}, kind: ErrUnsupported, file: "_metadata", msg: "Flink 1.14"},
		{name: "bytes after a value", parts: []clPartW{memPart(meta(clTimerState, 12), meta(0, 1),
			data(0, 2, opSet, 1, clKV(0, 2, 0, be64(1), []byte{9})))}, kind: ErrCorrupt, file: "_metadata", msg: "1 bytes after the SET change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, md := writeOne(t, tc.parts)
			err := scanErr(t, dir, state.KeyedScan{OperatorID: clOpID})
			checkFormatError(t, err, tc.kind, tc.file, tc.msg)
			if tc.at != nil {
				var fe *FormatError
				errors.As(err, &fe)
				if want := int64(bytes.Index(md, tc.at) + 1); fe.Offset != want {
					t.Errorf("offset %d, want %d", fe.Offset, want)
				}
			}
		})
	}

	// DSTL files.
	set := data(0, 2, opSet, 1, clKV(0, 2, 0, be64(1)))
	fileCase := func(t *testing.T, compressed bool, mangle func([]byte) []byte) error {
		f := &dstlFileW{name: "f00d", compressed: compressed}
		for range 2000 { // several chunks
			f.changeSet([]memChange{meta(clTimerState, 12), meta(0, 1), set})
		}
		off := f.changeSet([]memChange{meta(clTimerState, 12), meta(0, 1), set})
		p := clPartW{streams: []struct {
			off  int64
			file *dstlFileW
		}{{0, f}, {off, f}}}
		dir, _ := writeOne(t, []clPartW{p}, f)
		if mangle != nil {
			path := filepath.Join(dir, "f00d")
			b, _ := os.ReadFile(path)
			os.WriteFile(path, mangle(b), 0o644)
		}
		return scanErr(t, dir, state.KeyedScan{OperatorID: clOpID})
	}
	for _, compressed := range []bool{false, true} {
		if err := fileCase(t, compressed, nil); err != nil {
			t.Fatalf("unmangled file (compressed %v): %v", compressed, err)
		}
	}
	t.Run("compression flag", func(t *testing.T) {
		err := fileCase(t, false, func(b []byte) []byte { b[0] = 7; return b })
		checkFormatError(t, err, ErrCorrupt, "f00d", "compression flag 7")
	})
	t.Run("compressed chunk bit flip", func(t *testing.T) {
		// in the last chunk, which holds the last change set read (the
		// chunks no change set of the handle is in are not read)
		err := fileCase(t, true, func(b []byte) []byte { b[len(b)-20] ^= 0x10; return b })
		checkFormatError(t, err, ErrCorrupt, "f00d", "snappy")
	})
	t.Run("cut short", func(t *testing.T) {
		err := fileCase(t, false, func(b []byte) []byte { return b[:len(b)-5] })
		checkFormatError(t, err, ErrCorrupt, "f00d", "left in the change-log file")
	})
	t.Run("compressed, cut short", func(t *testing.T) {
		err := fileCase(t, true, func(b []byte) []byte { return b[:len(b)-5] })
		checkFormatError(t, err, ErrCorrupt, "f00d", "snappy")
	})
	t.Run("missing", func(t *testing.T) {
		f := &dstlFileW{name: "gone"}
		off := f.changeSet([]memChange{meta(clTimerState, 12)})
		dir, _ := writeOne(t, []clPartW{{streams: []struct {
			off  int64
			file *dstlFileW
		}{{off, f}}}})
		err := scanErr(t, dir, state.KeyedScan{OperatorID: clOpID})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "dstl/gone") {
			t.Errorf("missing file: %v", err)
		}
	})
}

func checkFormatError(t *testing.T, err error, kind error, file, msg string) {
	t.Helper()
	var fe *FormatError
	switch {
	case err == nil:
		t.Fatal("no error")
	case !errors.Is(err, kind):
		t.Errorf("error %v: not %v", err, kind)
	case !errors.As(err, &fe):
		t.Errorf("error %v: no file and offset", err)
	case !strings.Contains(fe.File, file) || !strings.Contains(err.Error(), msg):
		t.Errorf("error %v: want file %s and %q", err, file, msg)
	}
}
