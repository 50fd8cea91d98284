package flink

import "testing"

// TestCountBeyondTheBytesLeft: a count that cannot fit in what is left of
// a section names the file, the offset and the bytes left. (Before: "input
// channel state handle count 1681143609 does not fit in 8 bytes" read as
// if the count itself did not fit in 8 bytes.)
func TestCountBeyondTheBytesLeft(t *testing.T) {
	d := newDecoder("_metadata", 1296, []byte{0, 0, 0, 5, 1, 2, 3})
	if n := d.count("timer", 8); n != 0 || d.err == nil {
		t.Fatalf("count %d, err %v", n, d.err)
	}
	if want := "flink: _metadata at offset 1296: timer count 5 does not fit in the 3 bytes left"; d.err.Error() != want {
		t.Errorf("%v, want %s", d.err, want)
	}
	d = newDecoder("f", 0, []byte{9, 'a'})
	if _, ok := d.flinkString(); ok || d.err == nil || d.err.Error() != "flink: f at offset 1: string of 8 chars does not fit in the 1 bytes left" {
		t.Errorf("%v", d.err)
	}
}
