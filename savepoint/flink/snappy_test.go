package flink

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
)

// framed is data in Snappy's framing format, written by golang/snappy's own
// writer (an encoder independent of the reader under test).
func framed(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := snappy.NewBufferedWriter(&out)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// rawChunk is one framing-format chunk of type typ holding payload as is
// (for uncompressed chunks: the masked checksum of data, then data).
func rawChunk(typ byte, data []byte, withSum bool) []byte {
	payload := data
	if withSum {
		sum := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
		payload = binary.LittleEndian.AppendUint32(nil, (sum>>15|sum<<17)+0xa282ead8)
		payload = append(payload, data...)
	}
	n := len(payload)
	return append([]byte{typ, byte(n), byte(n >> 8), byte(n >> 16)}, payload...)
}

// TestUnsnappyInto: what the framed reader returns is the data the writer
// was given, reusing the buffer it is handed (and equal whether it grows
// it or not), with uncompressed, padding and skippable chunks and without
// a stream identifier; damaged streams are ErrCorrupt naming the file,
// the section's offset and what is wrong.
func TestUnsnappyInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 300_000) // several 64 KiB chunks, compressible
	for i := range data {
		data[i] = "abcdefgh"[rng.IntN(3)] + byte(i%7)
	}
	z := framed(t, data)
	var buf []byte
	for round := range 3 {
		got, err := unsnappyInto(buf, z, "f", 10, "key group 3")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("round %d: %d bytes differ from the %d written", round, len(got), len(data))
		}
		if round > 0 && &got[0] != &buf[0] {
			t.Errorf("round %d: buffer of %d bytes not reused", round, cap(buf))
		}
		buf = got
	}
	// Without its identifier (operator state read after a seek), with an
	// uncompressed chunk, padding and a reserved skippable chunk.
	mixed := append([]byte(nil), z[10:]...)
	mixed = append(mixed, rawChunk(0xfe, []byte{0, 0, 0}, false)...)
	mixed = append(mixed, rawChunk(0x01, []byte("tail"), true)...)
	mixed = append(mixed, rawChunk(0x90, []byte("skip me"), false)...)
	got, err := unsnappy(mixed, "f", 10, "key group 3")
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte(nil), data...), "tail"...); !bytes.Equal(got, want) {
		t.Fatalf("mixed stream: %d bytes, want %d", len(got), len(want))
	}
	empty, err := unsnappy(z[:10], "f", 10, "key group 3")
	if err != nil || len(empty) != 0 {
		t.Fatalf("identifier only: %d bytes, %v", len(empty), err)
	}

	flip := func(i int) []byte { b := bytes.Clone(z); b[i] ^= 0x04; return b }
	for _, tc := range []struct {
		name string
		in   []byte
		msg  string
	}{
		{"checksum bit flip", flip(14), "checksum mismatch"},
		{"data bit flip", flip(len(z) - 3), "key group 3: snappy: chunk at"},
		{"cut in a chunk", z[:len(z)-5], "left"},
		{"cut in a header", append(bytes.Clone(z), 0x00, 0x01), "header cut short"},
		{"bad identifier", append([]byte{0xff, 6, 0, 0}, "sNaPpX"...), "bad stream identifier"},
		{"unskippable", append(bytes.Clone(z), rawChunk(0x02, []byte("x"), false)...), "reserved unskippable chunk type 0x2"},
		{"no checksum", append(bytes.Clone(z), rawChunk(0x01, []byte("abc"), false)...), "no checksum"},
		{"uncompressed checksum", append(bytes.Clone(z), 0x01, 8, 0, 0, 1, 2, 3, 4, 'a', 'b', 'c', 'd'), "checksum mismatch"},
		{"too large", append(bytes.Clone(z), rawChunk(0x01, make([]byte, maxSnappyChunk+1), true)...), "at most 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := unsnappyInto(buf, tc.in, "keyed-0", 1234, "key group 3")
			if out != nil {
				t.Errorf("%d bytes returned with the error", len(out))
			}
			checkFormatError(t, err, ErrCorrupt, "keyed-0", tc.msg)
			if fe, ok := err.(*FormatError); ok && fe.Offset != 1234 {
				t.Errorf("offset %d, want the section's 1234", fe.Offset)
			}
		})
	}
}
