package flink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdbg/state"
)

// TestTruncatedMetadata: a `_metadata` cut anywhere before the end of its
// operator states fails at or before the cut, and a cut inside a keyed
// handle's file name says so. (Before: the channel-state reader, which
// retries an older layout after an error of its own, cleared the keyed
// handle's error too and read the file name as a count: "input channel
// state handle count 1681143609 does not fit in 8 bytes".)
func TestTruncatedMetadata(t *testing.T) {
	dir := filepath.Join(samplesDir, "udf-flink1.20-hashmap-savepoint")
	if !requireSample(t, dir) {
		t.Skip("sample absent")
	}
	b, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	// The operator states end where the Java-serialized CheckpointProperties
	// (skipped, never read) start.
	end := strings.Index(string(b), "\xac\xed")
	if end < 1000 {
		t.Fatalf("no CheckpointProperties found: %d", end)
	}
	for n := 8; n < end; n++ {
		_, err := parseMetadata("_metadata", b[:n])
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d: %v, want a FormatError", n, err)
		}
		if fe.Offset > int64(n) || strings.Contains(fe.Msg, "channel") {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	// 0x50d: a relative file handle, UTF path of 36 bytes at 0x510.
	_, err = parseMetadata("_metadata", b[:0x51c])
	if want := "flink: _metadata at offset 1296: need 36 bytes, 12 left"; err == nil || err.Error() != want {
		t.Errorf("cut in a file name: %v, want %s", err, want)
	}
}

// TestTruncatedKeyedHeaderSaysItOnce: a keyed state file cut inside its
// list of states fails a scan of the operator with the cut named once.
// (Before: "… 2 of 3 states not listed: flink: F at offset 656: need 67
// bytes, 44 left: flink: F at offset 656: need 67 bytes, 44 left".)
func TestTruncatedKeyedHeaderSaysItOnce(t *testing.T) {
	src := filepath.Join(samplesDir, "udf-flink1.20-hashmap-savepoint")
	if !requireSample(t, src) {
		t.Skip("sample absent")
	}
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	const cut = "516d3b0e-796f-411d-96e5-9eed4e2a22c6" // a keyed file of 41e91aae…
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == cut {
			b = b[:700]
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range sp.Timers(state.TimerScan{OperatorID: "41e91aae0bee218c44306cf7d21940ad"}) {
		if err != nil {
			got = err
			break
		}
	}
	want := "flink: operator 41e91aae0bee218c44306cf7d21940ad: 2 of 3 states not listed: flink: " + cut + " at offset 656: need 67 bytes, 44 left"
	if got == nil || got.Error() != want {
		t.Errorf("%v\nwant %s", got, want)
	}
	var fe *FormatError
	if !errors.As(got, &fe) || fe.Offset != 656 {
		t.Errorf("%v does not wrap the header's FormatError", got)
	}
}
