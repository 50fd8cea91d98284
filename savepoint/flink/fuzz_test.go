package flink

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"streamdbg/state"
)

// drain reads everything a savepoint offers, as a query of every table
// would.
func drain(sp *Savepoint) {
	sp.Operators()
	for _, m := range sp.States() {
		sp.KeyGroupOf(m, int64(1))
		sp.KeyGroupOf(m, []any{int64(1)})
		sp.KeyGroupOf(m, "a")
	}
	for range sp.Keyed(state.KeyedScan{}) {
	}
	for range sp.OperatorState(state.OperatorScan{}) {
	}
	for range sp.Timers(state.TimerScan{}) {
	}
}

// FuzzMetadata opens arbitrary `_metadata` bytes. File handles resolve
// inside one sample directory, so state files are read too.
func FuzzMetadata(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join(samplesDir, "*"))
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, "_metadata")); err == nil {
			f.Add(b)
		}
	}
	f.Add(synthMetadata(synthOptions{keys: 20, handle: handleByteStream, maxParallel: 128}, nil, nil))
	file, offs := synthKeyedFile(synthOptions{keys: 50, compressed: true, maxParallel: 128})
	f.Add(synthMetadata(synthOptions{keys: 50, handle: handleByteStream, maxParallel: 128}, file, offs))
	dir := filepath.Join(samplesDir, "udf-flink1.20-hashmap-savepoint")
	if _, err := os.Stat(dir); err != nil {
		dir = f.TempDir()
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sp, err := openBytes(dir, b)
		if err != nil {
			return
		}
		drain(sp)
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

// FuzzKeyedState reads arbitrary keyed state files in both layouts.
func FuzzKeyedState(f *testing.F) {
	for _, c := range []synthOptions{{keys: 30, maxParallel: 4}, {keys: 30, compressed: true, maxParallel: 4}, {keys: 30, maxParallel: 300}} {
		file, offs := synthKeyedFile(c)
		f.Add(append(encodeOffsets(offs), file...), byte(handleSavepointKeyGroups), uint16(c.maxParallel))
	}
	// Real files with the offsets `_metadata` gives them.
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "spapi-table-state", "broadcast-flink1.20-hashmap-savepoint"} {
		dir := filepath.Join(samplesDir, name)
		sp, err := Open(dir)
		if err != nil {
			continue
		}
		for _, op := range sp.md.operators {
			for _, st := range op.subtasks {
				h := st.keyed
				if h == nil {
					continue
				}
				sec, c, err := h.stream.open()
				if err != nil {
					continue
				}
				b, _ := sec.read(0, sec.size())
				c.Close()
				offs := make([]int64, h.first+len(h.offsets))
				copy(offs[h.first:], h.offsets)
				if len(offs) <= 7 {
					f.Add(append(encodeOffsets(offs), b...), h.kind, uint16(op.maxParallelism))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, kind byte, maxParallel uint16) {
		offs, file := fuzzOffsets(in)
		mp := int(maxParallel%1024) + 1
		kinds := []byte{handleKeyGroups, handleSavepointKeyGroups, handleKeyGroupsV2}
		drain(keyedSavepoint(file, offs, kinds[int(kind)%len(kinds)], mp))
	})
}

// FuzzOperatorState reads arbitrary operator state files.
func FuzzOperatorState(f *testing.F) {
	for _, name := range []string{"udf-flink1.20-hashmap-savepoint", "broadcast-flink1.20-hashmap-savepoint", "operatorstate-nonKeyed-flink2.2", "spapi-table-state"} {
		sp, err := Open(filepath.Join(samplesDir, name))
		if err != nil {
			continue
		}
		for _, op := range sp.md.operators {
			for _, st := range op.subtasks {
				h := st.operatorState
				if h == nil || len(h.states) == 0 {
					continue
				}
				sec, c, err := h.stream.open()
				if err != nil {
					continue
				}
				b, _ := sec.read(0, sec.size())
				c.Close()
				s := h.states[0]
				f.Add(append(encodeOffsets(s.offsets), b...), s.name, s.mode)
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
		drain(sp)
	})
}
