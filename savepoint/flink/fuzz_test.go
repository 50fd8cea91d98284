package flink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"streamdbg/state"
)

// drained is what reading every table of a savepoint gave: rows per
// table and the first error of each.
type drained struct {
	keyed, operator, timers int
	errs                    []error
}

// drain reads everything a savepoint offers, as a query of every table
// would, and counts what it got.
func drain(sp *Savepoint) drained {
	var d drained
	sp.Operators()
	for _, m := range sp.States() {
		if m.Status != "" {
			// A query needing the state fails with this cause.
			cause := m.Cause
			if cause == nil {
				cause = fmt.Errorf("state %q: status %q without a cause", m.StateName, m.Status)
			}
			d.errs = append(d.errs, cause)
		}
		sp.KeyGroupOf(m, int64(1))
		sp.KeyGroupOf(m, []any{int64(1)})
		sp.KeyGroupOf(m, "a")
	}
	for _, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			d.errs = append(d.errs, err)
			break
		}
		d.keyed++
	}
	for _, err := range sp.OperatorState(state.OperatorScan{}) {
		if err != nil {
			d.errs = append(d.errs, err)
			break
		}
		d.operator++
	}
	for _, err := range sp.Timers(state.TimerScan{}) {
		if err != nil {
			d.errs = append(d.errs, err)
			break
		}
		d.timers++
	}
	return d
}

// checkDrained fails unless every error of d is marked.
func checkDrained(t *testing.T, d drained) {
	t.Helper()
	for _, err := range d.errs {
		checkMarked(t, err)
	}
}

// requireSample skips when a sample is absent, and fails under CI=true:
// CI must run what the samples test.
func requireSample(tb testing.TB, dir string) bool {
	tb.Helper()
	if _, err := os.Stat(dir); err == nil {
		return true
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("sample %s absent under CI=true", dir)
	}
	return false
}

// FuzzMetadata opens arbitrary `_metadata` bytes. File handles resolve
// inside one sample directory, so state files are read too. Every error
// is marked ErrCorrupt or ErrUnsupported, allocation is bounded by the
// bytes given and the sample's files, and the sample's own _metadata (the
// no-op mutation) reads back its 16 keyed rows, 8 operator state rows and
// 16 timers (../shared/flink-savepoints/README.md).
func FuzzMetadata(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join(samplesDir, "*"))
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, "_metadata")); err == nil {
			f.Add(b)
		}
	}
	// The changelog checkpoint: its keyed state is inline change logs.
	if b, err := os.ReadFile(filepath.Join(samplesDir, changelogSample, "_metadata")); err == nil {
		f.Add(b)
	}
	f.Add(synthMetadata(synthOptions{keys: 20, handle: handleByteStream, maxParallel: 128}, nil, nil))
	file, offs := synthKeyedFile(synthOptions{keys: 50, compressed: true, maxParallel: 128})
	f.Add(synthMetadata(synthOptions{keys: 50, handle: handleByteStream, maxParallel: 128}, file, offs))
	dir := filepath.Join(samplesDir, "udf-flink1.20-hashmap-savepoint")
	var valid []byte
	files := 0
	if requireSample(f, dir) {
		valid, _ = os.ReadFile(filepath.Join(dir, "_metadata"))
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, n := range names {
			if fi, err := os.Stat(n); err == nil {
				files += int(fi.Size())
			}
		}
	} else {
		dir = f.TempDir()
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d drained
		var err error
		checkAlloc(t, len(b)+files, func() {
			var sp *Savepoint
			if sp, err = openBytes(dir, b); err == nil {
				d = drain(sp)
			}
		})
		checkMarked(t, err)
		checkDrained(t, d)
		if valid != nil && bytes.Equal(b, valid) {
			if err != nil || len(d.errs) > 0 || d.keyed != 16 || d.operator != 8 || d.timers != 16 {
				t.Fatalf("the sample's own _metadata: %v, %+v; want 16 keyed rows, 8 operator rows, 16 timers", err, d)
			}
		}
	})
}

// fuzzOffsets reads key-group or element offsets from the fuzz input's
// first bytes: a count byte, then u16 offsets.
func fuzzOffsets(b []byte) ([]int64, []byte) {
	if len(b) == 0 {
		return nil, b
	}
	n := int(b[0] % 8)
	b = b[1:]
	var offs []int64
	for i := 0; i < n && len(b) >= 2; i++ {
		offs = append(offs, int64(binary.BigEndian.Uint16(b)))
		b = b[2:]
	}
	return offs, b
}

func encodeOffsets(offs []int64) []byte {
	out := []byte{byte(len(offs))}
	for _, o := range offs {
		out = binary.BigEndian.AppendUint16(out, uint16(o))
	}
	return out
}

// keyedSavepoint wraps one inline keyed state file in a savepoint.
func keyedSavepoint(file []byte, offsets []int64, kind byte, maxParallel int) *Savepoint {
	op := &operatorMeta{id: synthOperatorID, parallelism: 1, maxParallelism: maxParallel}
	op.subtasks = []subtaskMeta{{keyed: &keyGroupsHandle{kind: kind, offsets: offsets,
		stream: &streamHandle{kind: handleByteStream, name: "fuzz", inline: file}}}}
	sp := &Savepoint{md: &metadata{version: 5, operators: []*operatorMeta{op}},
		keyed: map[*keyGroupsHandle]*keyedHeader{}, operator: map[*operatorStateHandle]*operatorHeader{},
		operators: []state.OperatorInfo{{ID: op.id, Name: op.id}}}
	return sp
}

// keyedSeed is a real keyed state file as FuzzKeyedState takes it, with
// the rows its savepoint gives for that subtask.
type keyedSeed struct {
	in          []byte
	kind        byte
	maxParallel uint16
	rows        int
}

// FuzzKeyedState reads arbitrary keyed state files in both layouts: every
// error is marked, allocation is bounded by the input, and a real file
// unmutated gives the rows the savepoint it comes from gives.
func FuzzKeyedState(f *testing.F) {
	for _, c := range []synthOptions{{keys: 30, maxParallel: 4}, {keys: 30, compressed: true, maxParallel: 4}, {keys: 30, maxParallel: 300}} {
		file, offs := synthKeyedFile(c)
		f.Add(append(encodeOffsets(offs), file...), byte(handleSavepointKeyGroups), uint16(c.maxParallel))
	}
	// Real files with the offsets `_metadata` gives them.
	var seeds []keyedSeed
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "spapi-table-state", "broadcast-flink1.20-hashmap-savepoint"} {
		dir := filepath.Join(samplesDir, name)
		if !requireSample(f, dir) {
			continue
		}
		sp, err := Open(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, op := range sp.md.operators {
			for _, st := range op.subtasks {
				h := st.keyed
				if h == nil {
					continue
				}
				sec, c, err := h.stream.open()
				if err != nil {
					f.Fatal(err)
				}
				b, _ := sec.read(0, sec.size())
				c.Close()
				offs := make([]int64, h.first+len(h.offsets))
				copy(offs[h.first:], h.offsets)
				if len(offs) > 7 {
					continue
				}
				// The rows of the savepoint in this file's key groups.
				rows := 0
				in := func(kg int) bool { return kg >= h.first && kg < h.first+len(h.offsets) }
				for r, err := range sp.Keyed(state.KeyedScan{OperatorID: op.id}) {
					if err != nil {
						f.Fatal(err)
					}
					if in(r.KeyGroup) {
						rows++
					}
				}
				for r, err := range sp.Timers(state.TimerScan{OperatorID: op.id}) {
					if err != nil {
						f.Fatal(err)
					}
					if in(r.KeyGroup) {
						rows++
					}
				}
				enc := append(encodeOffsets(offs), b...)
				f.Add(enc, h.kind, uint16(op.maxParallelism))
				seeds = append(seeds, keyedSeed{in: enc, kind: h.kind, maxParallel: uint16(op.maxParallelism), rows: rows})
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, kind byte, maxParallel uint16) {
		offs, file := fuzzOffsets(in)
		mp := int(maxParallel%1024) + 1
		kinds := []byte{handleKeyGroups, handleSavepointKeyGroups, handleKeyGroupsV2}
		var d drained
		checkAlloc(t, len(in), func() { d = drain(keyedSavepoint(file, offs, kinds[int(kind)%len(kinds)], mp)) })
		checkDrained(t, d)
		for _, s := range seeds {
			if bytes.Equal(in, s.in) && kinds[int(kind)%len(kinds)] == s.kind && maxParallel == s.maxParallel {
				// The wrapper has no serializer snapshots: the same rows,
				// their values maybe shown as hex.
				if len(d.errs) > 0 || d.keyed+d.timers != s.rows {
					t.Fatalf("real keyed file unmutated: %d keyed rows and %d timers, %v; want %d rows", d.keyed, d.timers, d.errs, s.rows)
				}
			}
		}
	})
}

// FuzzOperatorState reads arbitrary operator state files: every error is
// marked, allocation is bounded, and a real file unmutated gives as many
// rows as its state has elements.
func FuzzOperatorState(f *testing.F) {
	type seed struct {
		in   []byte
		name string
		mode byte
		rows int
	}
	var seeds []seed
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "broadcast-flink1.20-hashmap-savepoint", "operatorstate-nonKeyed-flink2.2", "spapi-table-state"} {
		dir := filepath.Join(samplesDir, name)
		if !requireSample(f, dir) {
			continue
		}
		sp, err := Open(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, op := range sp.md.operators {
			for _, st := range op.subtasks {
				h := st.operatorState
				if h == nil || len(h.states) == 0 {
					continue
				}
				sec, c, err := h.stream.open()
				if err != nil {
					f.Fatal(err)
				}
				b, _ := sec.read(0, sec.size())
				c.Close()
				s := h.states[0]
				in := append(encodeOffsets(s.offsets), b...)
				f.Add(in, s.name, s.mode)
				if len(s.offsets) <= 7 && s.mode != 2 {
					seeds = append(seeds, seed{in: in, name: s.name, mode: s.mode, rows: len(s.offsets)})
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, name string, mode byte) {
		offs, file := fuzzOffsets(in)
		op := &operatorMeta{id: synthOperatorID, parallelism: 1, maxParallelism: 128}
		op.subtasks = []subtaskMeta{{operatorState: &operatorStateHandle{
			states: []opStateInfo{{name: name, mode: mode % 3, offsets: offs}},
			stream: &streamHandle{kind: handleByteStream, name: "fuzz", inline: file}}}}
		sp := &Savepoint{md: &metadata{version: 5, operators: []*operatorMeta{op}},
			keyed: map[*keyGroupsHandle]*keyedHeader{}, operator: map[*operatorStateHandle]*operatorHeader{},
			operators: []state.OperatorInfo{{ID: op.id, Name: op.id}}}
		var d drained
		checkAlloc(t, len(in)+len(name), func() { d = drain(sp) })
		checkDrained(t, d)
		for _, s := range seeds {
			if bytes.Equal(in, s.in) && name == s.name && mode == s.mode {
				if len(d.errs) > 0 || d.operator != s.rows {
					t.Fatalf("real operator state file unmutated: %d rows, %v; want %d", d.operator, d.errs, s.rows)
				}
			}
		}
	})
}
