package flink

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdbg/internal/cputime"
	"streamdbg/state"
)

// This file builds synthetic savepoints of a Flink SQL group aggregate's
// shape: keyed ValueState "accState" with RowData keys ROW<BIGINT> and
// RowData accumulators ROW<BIGINT, BIGINT, BIGINT, STRING>, canonical
// layout. The LogicalTypes are written as Java serialization streams and
// the rows as BinaryRowData by the small writers below, which follow the
// formats' definitions (not the reader's code).

// javaType writes one Java serialization stream of a LogicalType without
// children: the class, then LogicalType's isNullable and typeRoot, then
// the class's own int fields (e.g. VarCharType's length).
func javaType(class, root string, nullable bool, intFields []string, intValues []int32) []byte {
	var e enc
	e.u16(jMagic)
	e.u16(jVersion)
	e.u8(jTCObject)
	e.u8(jTCClassDesc)
	e.utf("org.apache.flink.table.types.logical." + class)
	e.i64(1)
	e.u8(jSCSerializable)
	e.u16(uint16(len(intFields)))
	for _, f := range intFields {
		e.u8('I')
		e.utf(f)
	}
	e.u8(jTCEndBlockData)
	// superclass LogicalType
	e.u8(jTCClassDesc)
	e.utf("org.apache.flink.table.types.logical.LogicalType")
	e.i64(1)
	e.u8(jSCSerializable)
	e.u16(2)
	e.u8('Z')
	e.utf("isNullable")
	e.u8('L')
	e.utf("typeRoot")
	e.u8(jTCString)
	e.utf("Lorg/apache/flink/table/types/logical/LogicalTypeRoot;")
	e.u8(jTCEndBlockData)
	e.u8(jTCNull)
	// LogicalType's values, then the class's.
	e.u8(b2u(nullable))
	e.u8(jTCEnum)
	e.u8(jTCClassDesc)
	e.utf("org.apache.flink.table.types.logical.LogicalTypeRoot")
	e.i64(0)
	e.u8(jSCSerializable | jSCEnum)
	e.u16(0)
	e.u8(jTCEndBlockData)
	e.u8(jTCClassDesc)
	e.utf("java.lang.Enum")
	e.i64(0)
	e.u8(jSCSerializable | jSCEnum)
	e.u16(0)
	e.u8(jTCEndBlockData)
	e.u8(jTCNull)
	e.u8(jTCString)
	e.utf(root)
	for _, v := range intValues {
		e.i32(v)
	}
	return e.Bytes()
}

var (
	javaBigInt  = javaType("BigIntType", "BIGINT", true, nil, nil)
	javaVarchar = javaType("VarCharType", "VARCHAR", true, []string{"length"}, []int32{maxVarLen})
)

// rowDataSnapshot writes a RowDataSerializerSnapshot of BIGINT and STRING
// fields ("B" and "S").
func rowDataSnapshot(e *enc, fields string) {
	e.i32(2)
	e.utf("org.apache.flink.table.runtime.typeutils.RowDataSerializer$RowDataSerializerSnapshot")
	e.i32(3)
	e.i32(int32(len(fields)))
	for _, f := range fields {
		if f == 'B' {
			e.Write(javaBigInt)
		} else {
			e.Write(javaVarchar)
		}
	}
	e.i32(nestedMagic)
	e.i32(1)
	e.i32(int32(len(fields)))
	for _, f := range fields {
		if f == 'B' {
			e.utf(longSnapshot)
		} else {
			e.utf("org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot")
		}
		e.i32(3)
	}
}

// binaryRow writes a BinaryRowData (RowKind +I) of int64 and string
// fields: null bits after the header byte, 8-byte little-endian slots,
// strings of up to 7 bytes inline, longer ones in the variable part padded
// to 8 bytes.
func binaryRow(fields ...any) []byte {
	nullBits := ((len(fields) + 63 + 8) / 64) * 8
	b := make([]byte, nullBits+8*len(fields))
	for i, f := range fields {
		slot := nullBits + 8*i
		switch x := f.(type) {
		case nil:
			b[(i+8)/8] |= 1 << ((i + 8) % 8)
		case int64:
			binary.LittleEndian.PutUint64(b[slot:], uint64(x))
		case string:
			if len(x) <= 7 {
				copy(b[slot:], x)
				b[slot+7] = 0x80 | byte(len(x))
				continue
			}
			binary.LittleEndian.PutUint64(b[slot:], uint64(len(b))<<32|uint64(len(x)))
			b = append(b, x...)
			for len(b)%8 != 0 {
				b = append(b, 0)
			}
		}
	}
	return b
}

// synthAggFile writes the keyed state file of n keys: key k → (k, 2k, 3k,
// "acc" k%100), in the key groups their BinaryRowData hash picks.
func synthAggFile(n, maxParallel int) ([]byte, []int64) {
	var f enc
	f.i32(6)
	f.u8(0)
	rowDataSnapshot(&f, "B")
	f.u16(1)
	f.utf("accState")
	f.i32(backendKeyValue)
	f.i32(1)
	f.utf("KEYED_STATE_TYPE")
	f.utf("VALUE")
	f.i32(2)
	f.utf("VALUE_SERIALIZER")
	rowDataSnapshot(&f, "BBBS")
	f.utf("NAMESPACE_SERIALIZER")
	f.snapshot(voidNSSnapshot)

	groups := make([][]int64, maxParallel)
	for k := range int64(n) {
		kg := state.KeyGroupForHash(rowHashCode(binaryRow(k)), maxParallel)
		groups[kg] = append(groups[kg], k)
	}
	offsets := make([]int64, maxParallel)
	for kg, keys := range groups {
		if len(keys) == 0 {
			continue
		}
		offsets[kg] = int64(f.Len())
		f.u16(0)
		for i, k := range keys {
			row := binaryRow(k)
			var key enc
			key.u8(byte(kg))
			key.i32(int32(len(row)))
			key.Write(row)
			key.u8(0) // VoidNamespace
			kb := key.Bytes()
			if i == len(keys)-1 {
				kb[0] |= 0x80
			}
			f.i32(int32(len(kb)))
			f.Write(kb)
			val := binaryRow(k, 2*k, 3*k, "acc"+string(rune('0'+k%10)))
			f.i32(int32(4 + len(val)))
			f.i32(int32(len(val)))
			f.Write(val)
		}
		f.u16(endOfKeyGroup)
	}
	return f.Bytes(), offsets
}

func writeSyntheticAgg(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	file, offsets := synthAggFile(n, 128)
	if err := os.WriteFile(filepath.Join(dir, "keyed-0"), file, 0o644); err != nil {
		tb.Fatal(err)
	}
	o := synthOptions{fileName: "keyed-0", maxParallel: 128}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), synthMetadata(o, file, offsets), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// TestSyntheticRowData reads the synthetic group aggregate back: every key
// with its accumulator, the SQL types in StateMeta.
func TestSyntheticRowData(t *testing.T) {
	const n = 5000
	sp, err := Open(writeSyntheticAgg(t, n))
	if err != nil {
		t.Fatal(err)
	}
	m := sp.States()[0]
	if m.KeyType != "ROW<BIGINT>" || m.ValueType != "ROW<BIGINT, BIGINT, BIGINT, STRING>" || m.Entries != n || m.Status != "" {
		t.Fatalf("meta %+v", m)
	}
	seen := 0
	for r, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		k := r.Key.(*state.Row).Values[0].(int64)
		want := "+I[" + itoa(k) + ", " + itoa(2*k) + ", " + itoa(3*k) + ", 'acc" + string(rune('0'+k%10)) + "']"
		if got := canon(r.Value); got != want {
			t.Fatalf("key %d: %s, want %s", k, got, want)
		}
		seen++
	}
	if seen != n {
		t.Fatalf("%d rows, want %d", seen, n)
	}
}

func itoa(v int64) string { return canon(v) }

// TestRowDataPointLookupReadsOneKeyGroup: a lookup of one RowData key reads
// the one section of its key group, and finds the key there.
func TestRowDataPointLookupReadsOneKeyGroup(t *testing.T) {
	sp, err := Open(writeSyntheticAgg(t, 20000))
	if err != nil {
		t.Fatal(err)
	}
	m := sp.States()[0]
	for _, key := range []any{int64(12345), map[string]any{"f0": int64(12345)}, []any{int64(12345)}} {
		kg, ok := sp.KeyGroupOf(m, key)
		if !ok {
			t.Fatalf("no key group for %v", key)
		}
		before := sp.sections.Load()
		var got []string
		for r, err := range sp.Keyed(state.KeyedScan{OperatorID: m.OperatorID, StateName: m.StateName, KeyGroups: []int{kg}, Keys: []any{key}}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, canon(r.Key)+" "+canon(r.Value))
		}
		if n := sp.sections.Load() - before; n != 1 {
			t.Errorf("%v: %d sections read, want 1", key, n)
		}
		if len(got) != 1 || got[0] != "+I[12345] +I[12345, 24690, 37035, 'acc5']" {
			t.Errorf("%v: %q", key, got)
		}
	}
}

// BenchmarkRowDataScan decodes a synthetic ~100 MB canonical savepoint of
// a group aggregate's RowData keys and accumulators. Each iteration does
// both sides on the same file, one after the other: decode = open the
// savepoint and decode every key and value (Keyed scan of everything);
// baseline = read the keyed file's bytes through a 64 KiB bufio.Reader,
// touching each byte. Reported: the decode's and the baseline's MB/s and
// their ratio (decode time / baseline time), and, because the machine is
// shared, the decode's MB per second of this process's CPU time
// (getrusage: user+system, all threads, GC included), which does not count
// time spent waiting for a CPU.
func BenchmarkRowDataScan(b *testing.B) {
	dir := writeSyntheticAgg(b, 1_400_000)
	file := filepath.Join(dir, "keyed-0")
	size := dirSize(b, dir)
	// No SetBytes: an iteration does both sides, so Go's MB/s would be
	// neither's; each side's MB/s is reported below.
	b.ReportAllocs()
	var decode, base, cpu time.Duration
	rows := 0
	buf := make([]byte, 64<<10)
	for b.Loop() {
		c0 := cputime.Process()
		t0 := time.Now()
		rows = scanAll(b, dir)
		t1 := time.Now()
		cpu += cputime.Process() - c0
		// Baseline: every file of the savepoint (the files the scan
		// opens: _metadata and keyed-0) read through a 64 KiB bufio.Reader
		// into buf, the bytes counted and not looked at, so that it does
		// no per-byte work the scan's own reads do not do either.
		var n int64
		for _, name := range []string{"_metadata", filepath.Base(file)} {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReaderSize(f, 64<<10)
			for {
				m, err := r.Read(buf)
				n += int64(m)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
		}
		if n != size {
			b.Fatalf("baseline read %d bytes, the savepoint has %d", n, size)
		}
		decode += t1.Sub(t0)
		base += time.Since(t1)
	}
	mb := float64(size) / 1e6 * float64(b.N)
	b.ReportMetric(mb/decode.Seconds(), "decode-MB/s")
	b.ReportMetric(mb/base.Seconds(), "bufio-MB/s")
	b.ReportMetric(decode.Seconds()/base.Seconds(), "decode/bufio")
	b.ReportMetric(mb/cpu.Seconds(), "decode-MB/cpu-s")
	b.ReportMetric(float64(rows), "rows/op")
}

// BenchmarkRowDataPointLookup: one key of the 100 MB synthetic savepoint,
// by its key group and key (what the planner pushes down for key = 12345).
func BenchmarkRowDataPointLookup(b *testing.B) {
	sp, err := Open(writeSyntheticAgg(b, 1_400_000))
	if err != nil {
		b.Fatal(err)
	}
	m := sp.States()[0]
	b.ReportAllocs()
	for b.Loop() {
		kg, _ := sp.KeyGroupOf(m, int64(12345))
		n := 0
		for _, err := range sp.Keyed(state.KeyedScan{OperatorID: m.OperatorID, StateName: m.StateName, KeyGroups: []int{kg}, Keys: []any{int64(12345)}}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1 {
			b.Fatalf("%d rows", n)
		}
	}
}

// TestUnreadableStateKeepsTheOthers: a state whose values this reader
// cannot decode (a RAW field of Kryo-serialized values) is listed with its
// status; the state after it in the same header is read; a scan of
// everything leaves the unreadable one out, a scan naming it fails.
func TestUnreadableStateKeepsTheOthers(t *testing.T) {
	var f enc
	f.i32(6)
	f.u8(0)
	rowDataSnapshot(&f, "B")
	f.u16(2)
	// state 0: ROW<BIGINT, RAW('…')> whose RAW serializer is Kryo's.
	f.utf("kryoState")
	f.i32(backendKeyValue)
	f.i32(1)
	f.utf("KEYED_STATE_TYPE")
	f.utf("VALUE")
	f.i32(2)
	f.utf("VALUE_SERIALIZER")
	f.i32(2)
	f.utf("org.apache.flink.table.runtime.typeutils.RowDataSerializer$RowDataSerializerSnapshot")
	f.i32(3)
	f.i32(2)
	f.Write(javaBigInt)
	f.Write(javaType("RawType", "RAW", true, nil, nil))
	f.i32(nestedMagic)
	f.i32(1)
	f.i32(2)
	f.utf(longSnapshot)
	f.i32(3)
	f.utf("org.apache.flink.table.runtime.typeutils.RawValueDataSerializer$RawValueDataSerializerSnapshot")
	f.i32(3)
	f.i32(compositeMagic)
	f.i32(0)
	f.i32(nestedMagic)
	f.i32(1)
	f.i32(1)
	f.utf("org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot")
	f.i32(2)
	f.utf("com.example.Accumulator")
	for range 3 {
		f.i64(linkedMapMagic)
		f.i32(0)
	}
	f.utf("NAMESPACE_SERIALIZER")
	f.snapshot(voidNSSnapshot)
	// state 1: the group aggregate's accumulator.
	f.utf("accState")
	f.i32(backendKeyValue)
	f.i32(1)
	f.utf("KEYED_STATE_TYPE")
	f.utf("VALUE")
	f.i32(2)
	f.utf("VALUE_SERIALIZER")
	rowDataSnapshot(&f, "BBBS")
	f.utf("NAMESPACE_SERIALIZER")
	f.snapshot(voidNSSnapshot)

	offsets := make([]int64, 128)
	key := binaryRow(int64(7))
	kg := state.KeyGroupForHash(rowHashCode(key), 128)
	offsets[kg] = int64(f.Len())
	f.u16(0)
	pair := func(last bool, value []byte) {
		var k enc
		k.u8(byte(kg))
		k.i32(int32(len(key)))
		k.Write(key)
		k.u8(0)
		kb := k.Bytes()
		if last {
			kb[0] |= 0x80
		}
		f.i32(int32(len(kb)))
		f.Write(kb)
		f.i32(int32(4 + len(value)))
		f.i32(int32(len(value)))
		f.Write(value)
	}
	pair(true, append(binaryRow(int64(1), nil), 0)) // unread: its bytes are skipped
	f.u16(1)
	pair(true, binaryRow(int64(7), int64(14), int64(21), "acc7"))
	f.u16(endOfKeyGroup)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keyed-0"), f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	o := synthOptions{fileName: "keyed-0", maxParallel: 128}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), synthMetadata(o, f.Bytes(), offsets), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	metas := sp.States()
	if len(metas) != 2 || metas[0].StateName != "kryoState" || metas[1].StateName != "accState" {
		t.Fatalf("states %+v", metas)
	}
	if st := metas[0].Status; !strings.Contains(st, "Kryo") || !strings.Contains(st, "com.example.Accumulator") {
		t.Errorf("kryoState status %q", st)
	}
	if metas[1].Status != "" || metas[1].Entries != 1 {
		t.Errorf("accState %+v", metas[1])
	}
	var got []string
	for r, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.StateName+" "+canon(r.Key)+" "+canon(r.Value))
	}
	if want := []string{"accState +I[7] +I[7, 14, 21, 'acc7']"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	var scanErr error
	for _, err := range sp.Keyed(state.KeyedScan{StateName: "kryoState"}) {
		if err != nil {
			scanErr = err
		}
	}
	if scanErr == nil || !errors.Is(scanErr, ErrUnsupported) || !strings.Contains(scanErr.Error(), "kryoState") {
		t.Errorf("scan of kryoState: %v", scanErr)
	}
}
