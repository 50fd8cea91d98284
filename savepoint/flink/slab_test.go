package flink

import (
	"fmt"
	"testing"

	"streamdbg/state"
)

// flinkStringBytes writes s as StringValue.writeString does: length+1 as a
// varint, then each UTF-16 code unit as a varint (written here from the
// format, not with the reader's code).
func flinkStringBytes(s string) []byte {
	var out []byte
	put := func(v uint32) {
		for v >= 0x80 {
			out = append(out, byte(v)|0x80)
			v >>= 7
		}
		out = append(out, byte(v))
	}
	var units []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			units = append(units, uint16(0xd800+(r>>10)), uint16(0xdc00+(r&0x3ff)))
		} else {
			units = append(units, uint16(r))
		}
	}
	put(uint32(len(units) + 1))
	for _, u := range units {
		put(uint32(u))
	}
	return out
}

// TestFlinkStrings: ASCII strings (the fast path, with and without a
// slab), strings with a NUL, Latin-1, BMP and supplementary characters,
// and strings followed by other bytes decode to what was written, and
// leave the decoder after their last byte.
func TestFlinkStrings(t *testing.T) {
	for _, s := range []string{"", "a", "hello world, 0123456789", "nul\x00byte", "\x7f", "é", "naïve café", "日本語", "emoji 😀 end", "x😀"} {
		for _, slab := range []*rowSlab{nil, {}} {
			b := append(flinkStringBytes(s), 0xAB, 0xCD)
			d := newDecoder("f", 0, b)
			d.slab = slab
			got, ok := d.flinkString()
			if !ok || got != s || d.err != nil {
				t.Errorf("%q (slab %v): got %q ok=%v err=%v", s, slab != nil, got, ok, d.err)
			}
			if d.remaining() != 2 {
				t.Errorf("%q: %d bytes left, want 2", s, d.remaining())
			}
		}
	}
	// A length longer than the bytes left is corrupt, not a short string.
	d := newDecoder("f", 0, []byte{10, 'a', 'b'})
	if _, ok := d.flinkString(); ok || d.err == nil {
		t.Errorf("cut string: ok=%v err=%v", ok, d.err)
	}
}

// TestSlabValuesOutliveTheScan: values boxed from a scan's slabs (Long
// keys and values, small and large, negative, RowData BIGINT and STRING
// fields) are kept by the consumer and still hold what was written after
// the scan has moved on through every block and key group.
func TestSlabValuesOutliveTheScan(t *testing.T) {
	sp, err := Open(writeSynthetic(t, synthOptions{keys: 20_000}))
	if err != nil {
		t.Fatal(err)
	}
	var keys, values []any
	for r, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		keys, values = append(keys, r.Key), append(values, r.Value)
	}
	if len(keys) != 20_000 {
		t.Fatalf("%d rows", len(keys))
	}
	seen := map[int64]bool{}
	for i, k := range keys {
		kk, ok := k.(int64)
		if !ok || values[i] != kk*2 || seen[kk] {
			t.Fatalf("row %d: key %v value %v", i, k, values[i])
		}
		seen[kk] = true
	}
	var s rowSlab
	var boxed []any
	for i := range 3 * slabInts {
		boxed = append(boxed, s.boxInt64(int64(i)*1_000_003-500_000))
	}
	texts := make([]string, 0, 2000)
	for i := range cap(texts) {
		texts = append(texts, s.text([]byte(fmt.Sprintf("text %d", i))))
	}
	var boxedTexts []any
	for i := range 3 * slabStrings {
		boxedTexts = append(boxedTexts, s.boxText([]byte(fmt.Sprintf("boxed %d", i))))
	}
	for i, v := range boxedTexts {
		if str, ok := v.(string); !ok || str != fmt.Sprintf("boxed %d", i) {
			t.Fatalf("boxed text %d: %#v", i, v)
		}
	}
	for i, v := range boxed {
		if v != int64(i)*1_000_003-500_000 {
			t.Fatalf("boxed %d: %v", i, v)
		}
	}
	for i, v := range texts {
		if v != fmt.Sprintf("text %d", i) {
			t.Fatalf("text %d: %q", i, v)
		}
	}

	rows := 0
	for r, err := range mustOpen(t, writeSyntheticAgg(t, 5000)).Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		defer func(k, v any) {
			// Checked when the test ends, long after the row was handed over.
			row := v.(*state.Row)
			kk := k.(*state.Row).Values[0].(int64)
			want := fmt.Sprintf("+I[%d, %d, %d, 'acc%d']", kk, 2*kk, 3*kk, kk%10)
			if got := canon(row); got != want {
				t.Errorf("key %d: %s, want %s", kk, got, want)
			}
		}(r.Key, r.Value)
		rows++
	}
	if rows != 5000 {
		t.Fatalf("%d RowData rows", rows)
	}
}

// TestScanAllocations: a scan of Long keys and values allocates per block
// of values, not per entry (a box per value would be 2 per row).
func TestScanAllocations(t *testing.T) {
	dir := writeSynthetic(t, synthOptions{keys: 200_000})
	allocs := testing.AllocsPerRun(2, func() {
		n := 0
		for _, err := range mustOpen(t, dir).Keyed(state.KeyedScan{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 200_000 {
			t.Fatalf("%d rows", n)
		}
	})
	if perRow := allocs / 200_000; perRow > 0.05 {
		t.Errorf("%.3f allocations per row (%.0f per scan), want at most 0.05", perRow, allocs)
	}
}

func mustOpen(t *testing.T, dir string) *Savepoint {
	t.Helper()
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}
