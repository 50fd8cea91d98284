package flink

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"streamdbg/state"
)

// FuzzChangelog reads arbitrary change logs of one subtask (key groups
// 0-7, Long keys): mode 0 takes the input as the changes of an in-memory
// change log (each a signed key-group byte, a u16 length and the bytes),
// mode 1 as a DSTL file (compression flag, plain or Snappy stream) after a
// few u16 change-set offsets. Every error must be marked ErrCorrupt or
// ErrUnsupported, nothing may panic, allocation is bounded by the input
// (for a DSTL file: by 32 times it, the most Snappy decompresses to), and
// the seeds written from a model, unmutated, read back the model's rows.
func FuzzChangelog(f *testing.F) {
	type seed struct {
		in   []byte
		mode byte
		rows int
	}
	var seeds []seed
	for i := range uint64(4) {
		r := rand.New(rand.NewPCG(i, 7))
		h := &clHistory{r: r, m: newCLTestModel()}
		for range 12 + 10*int(i) {
			h.step()
		}
		keyed, timers := h.m.lines(0, func(int) bool { return true })
		rows := len(keyed) + len(timers)
		if rows < 5 {
			f.Fatalf("seed %d: the model holds %d rows", i, rows)
		}
		var log []memChange
		for s := range clTestStates {
			log = append(log, memChange{kg: metaKeyGroup, b: metaChange(s, uint16(s+3), i%2 == 0, i%2 == 1)})
		}
		for _, c := range h.changes {
			log = append(log, memChange{kg: int32(c.kg), b: dataChange(c, uint16(c.state+3))})
		}
		var mem []byte
		for _, c := range log {
			mem = append(mem, byte(int8(c.kg)))
			mem = binary.BigEndian.AppendUint16(mem, uint16(len(c.b)))
			mem = append(mem, c.b...)
		}
		seeds = append(seeds, seed{mem, 0, rows})
		for _, compressed := range []bool{false, true} {
			w := &dstlFileW{compressed: compressed}
			split := len(clTestStates) + len(h.changes)/2
			offs := []int64{w.changeSet(log[:split]), w.changeSet(log[split:])}
			seeds = append(seeds, seed{append(encodeOffsets(offs), w.bytes()...), 1, rows})
		}
	}
	for _, s := range seeds {
		f.Add(s.in, s.mode)
	}
	f.Fuzz(func(t *testing.T, in []byte, mode byte) {
		mode %= 2
		var d drained
		bound := len(in)
		if mode == 1 {
			bound *= maxSnappyRatio
		}
		checkAlloc(t, bound, func() { d = drain(changelogSavepoint(in, mode)) })
		checkDrained(t, d)
		for _, s := range seeds {
			if s.mode == mode && bytes.Equal(s.in, in) && (len(d.errs) > 0 || d.keyed+d.timers != s.rows) {
				t.Fatalf("seed unmutated: %d rows and %d timers, errors %v; the model has %d rows", d.keyed, d.timers, d.errs, s.rows)
			}
		}
	})
}

// changelogSavepoint wraps a fuzzed change log in a savepoint of one
// operator whose keys are Longs (SetKeyType's hint: the log may hold no
// timers to name it).
func changelogSavepoint(in []byte, mode byte) *Savepoint {
	c := &changelogHandle{first: 0, count: clMaxPar}
	if mode == 0 {
		p := changelogPart{kind: handleChangelogBytes}
		for at := 0; len(in) >= 3; {
			n := int(binary.BigEndian.Uint16(in[1:]))
			if n > len(in)-3 {
				break
			}
			p.changes = append(p.changes, memChange{kg: int32(int8(in[0])), b: in[3 : 3+n], at: int64(at + 3)})
			at += 3 + n
			in = in[3+n:]
		}
		c.parts = []changelogPart{p}
	} else {
		offs, file := fuzzOffsets(in)
		h := &streamHandle{kind: handleByteStream, name: "fuzz-dstl", inline: file}
		p := changelogPart{kind: handleChangelogFileV2}
		for _, o := range offs {
			p.streams = append(p.streams, streamAt{off: o, h: h})
		}
		c.parts = []changelogPart{p}
	}
	op := &operatorMeta{id: clOpID, parallelism: 1, maxParallelism: clMaxPar}
	op.subtasks = []subtaskMeta{{keyed: &keyGroupsHandle{kind: handleChangelogV2, changelog: c}}}
	return &Savepoint{md: &metadata{version: 4, operators: []*operatorMeta{op}},
		keyed: map[*keyGroupsHandle]*keyedHeader{}, operator: map[*operatorStateHandle]*operatorHeader{},
		operators: []state.OperatorInfo{{ID: op.id, Name: op.id}}, keyHints: map[string]serializer{op.id: longSer}}
}
