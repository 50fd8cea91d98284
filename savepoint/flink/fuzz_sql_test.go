package flink

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/metrics"
	"testing"
)

// Fuzz targets for the Flink SQL decoders: the Java serialization reader
// (and the LogicalTypes read from it), serializer snapshots with the values
// of the serializers they build, BinaryRowData of several field types, and
// compiled plans. Each asserts that bad input is an error marked ErrCorrupt
// or ErrUnsupported, that nothing panics, and that allocation stays within
// a bound of the input's size.

// allocBound is what one decode may allocate: a constant plus a multiple
// of the input (decoded values are larger than their bytes, never more
// than this).
func allocBound(n int) uint64 { return 1<<20 + 256*uint64(n) }

// checkAlloc runs f and fails when it allocated more than the bound. The
// count is the runtime's cumulative heap allocation (runtime/metrics, no
// stop of the world), so other goroutines' allocations count too: the
// bound is generous enough for that.
func checkAlloc(t *testing.T, n int, f func()) {
	t.Helper()
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	f()
	metrics.Read(sample)
	if got := sample[0].Value.Uint64() - before; got > allocBound(n) {
		t.Fatalf("%d bytes of input allocated %d bytes (bound %d)", n, got, allocBound(n))
	}
}

// checkMarked fails unless err is nil or marked with the package's kinds.
func checkMarked(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("error not marked ErrCorrupt or ErrUnsupported: %v", err)
	}
}

// sqlSeeds returns byte strings of the SQL samples' _metadata that start
// where a pattern occurs (a Java stream, a snapshot of a table serializer).
func sqlSeeds(f *testing.F, pattern []byte, max int) [][]byte {
	var out [][]byte
	dirs, _ := filepath.Glob(filepath.Join(sqlDir, "*", "savepoint", "_metadata"))
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for i := 0; i < len(b) && len(out) < max; {
			j := bytes.Index(b[i:], pattern)
			if j < 0 {
				break
			}
			start := i + j
			out = append(out, b[start:min(len(b), start+4096)])
			i = start + len(pattern)
		}
	}
	return out
}

// FuzzJavaSerialization reads arbitrary bytes as a Java serialization
// stream and, when that works, as a LogicalType.
func FuzzJavaSerialization(f *testing.F) {
	for _, s := range sqlSeeds(f, []byte{0xac, 0xed, 0x00, 0x05}, 64) {
		f.Add(s)
	}
	f.Add([]byte{0xac, 0xed, 0x00, 0x05, jTCString, 0, 1, 'a'})
	f.Add([]byte{0xac, 0xed, 0x00, 0x05, jTCReference, 0, 0x7e, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAlloc(t, len(b), func() {
			d := newDecoder("fuzz", 0, b)
			v := readJavaObject(d)
			checkMarked(t, d.err)
			if d.err == nil {
				_, err := logicalTypeOf(v, 0)
				checkMarked(t, err)
				javaList(v)
				describeJava(v)
			}
		})
	})
}

// FuzzSerializerSnapshot reads arbitrary bytes as a serializer snapshot
// and decodes the rest of the input with the serializer it builds.
func FuzzSerializerSnapshot(f *testing.F) {
	for _, class := range []string{"org.apache.flink.table.runtime.typeutils.", "org.apache.flink.cep.", "org.apache.flink.streaming.runtime.streamrecord."} {
		pat := append([]byte{0, 0, 0, 2}, class...)
		for _, s := range sqlSeeds(f, pat[4:], 48) {
			// Put the framing back: the pattern matched the class name,
			// which follows the int 2 and the name's u16 length.
			f.Add(s)
		}
	}
	// The Scala API's and flink-core's serializers, written by hand (no
	// sample savepoint holds them), each followed by a value.
	var click enc
	scalaClickSnapshot(&click)
	click.i64(42)
	click.Write([]byte{1, 3, 'h', 'i', 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 2, 'x', 0, 0, 0, 7})
	f.Add(click.Bytes())
	var row enc
	row.utf("org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot")
	row.i32(3)
	row.compositeWith(3, nil, func() { row.utf(longSnapshot); row.i32(3) }, func() { row.utf(stringSnapshot); row.i32(3) })
	row.Write([]byte{0x40, 0, 0, 0, 0, 0, 0, 0, 9, 3, 'a', 'b'})
	f.Add(row.Bytes())
	for class := range javaBaseSnapshots {
		var e enc
		e.utf(class)
		e.i32(3)
		e.Write([]byte{0, 0, 0, 6, 1, 44, 0, 0, 0, 2, 0, 0})
		f.Add(e.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAlloc(t, len(b), func() {
			// The input is a class name (as seeded: a snapshot's payload
			// follows) or a whole framed snapshot.
			for _, in := range [][]byte{b, framedSnapshot(b)} {
				d := newDecoder("fuzz", 0, in)
				s := readVersionedSnapshot(d, 0)
				checkMarked(t, d.err)
				if d.err != nil || s == nil {
					continue
				}
				s.typeName()
				serializerProblem(s)
				rest := in[d.off:]
				_, err := decodeWhole(s, "fuzz", 0, rest)
				checkMarked(t, err)
				vd := newDecoder("fuzz", 0, rest)
				for vd.err == nil && vd.remaining() > 0 {
					s.decode(vd)
				}
				checkMarked(t, vd.err)
			}
		})
	})
}

// framedSnapshot turns bytes that start with a class name into a versioned
// snapshot (u16 length, the name up to the first byte below ' ', the
// rest).
func framedSnapshot(b []byte) []byte {
	n := bytes.IndexFunc(b, func(r rune) bool { return r < ' ' || r > '~' })
	if n < 0 {
		n = len(b)
	}
	out := []byte{byte(n >> 8), byte(n)}
	return append(out, b...)
}

// FuzzBinaryRow decodes arbitrary bytes as BinaryRowData of a few row
// types covering every slot kind: fixed-length, inline and variable-length
// strings, non-compact decimals and timestamps, nested rows, arrays and
// maps.
func FuzzBinaryRow(f *testing.F) {
	str := &ltype{root: rootVarchar, rootName: "VARCHAR", length: maxVarLen, nullable: true}
	long := &ltype{root: rootBigint, rootName: "BIGINT", nullable: true}
	layouts := [][]*ltype{
		{long, str, {root: rootInteger, rootName: "INTEGER"}, {root: rootBoolean, rootName: "BOOLEAN"}},
		{{root: rootDecimal, rootName: "DECIMAL", precision: 38, scale: 2}, {root: rootTimestamp, rootName: "TIMESTAMP_WITHOUT_TIME_ZONE", precision: 9}},
		{{root: rootRow, rootName: "ROW", fields: []ltField{{"a", long}, {"b", str}}}},
		{{root: rootArray, rootName: "ARRAY", elem: str}, {root: rootMap, rootName: "MAP", key: str, val: long}},
		{{root: rootMultiset, rootName: "MULTISET", elem: long}, {root: rootDate, rootName: "DATE"}, {root: rootTime, rootName: "TIME"}},
	}
	var ls []*rowLayout
	for _, types := range layouts {
		l, err := newRowLayout(types, nil, nil)
		if err != nil {
			f.Fatal(err)
		}
		ls = append(ls, l)
	}
	f.Add(byte(0), make([]byte, 48))
	f.Add(byte(2), append(make([]byte, 16), 0x80|3, 'a', 'b', 'c', 0, 0, 0, 0x83))
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		checkAlloc(t, len(b), func() {
			l := ls[int(which)%len(ls)]
			_, err := l.decodeRow(b, 0, len(b), nil)
			checkMarked(t, err)
			ser := &rowDataSer{layout: l}
			_, err = decodeWhole(ser, "fuzz", 0, b)
			checkMarked(t, err)
			encodeKeyRow(l, int64(len(b)))
		})
	})
}

// FuzzPlan applies arbitrary JSON as a compiled plan to a savepoint.
func FuzzPlan(f *testing.F) {
	plans, _ := filepath.Glob(filepath.Join(sqlDir, "*", "plan.json"))
	for _, p := range plans[:min(len(plans), 8)] {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"nodes":[{"id":1,"type":"stream-exec-group-aggregate_1","grouping":[0],"outputType":"ROW<` + "`a`" + ` INT>"}],"edges":[{"source":1,"target":1}]}`))
	dir := filepath.Join(sqlDir, "stream-exec-group-aggregate_1__group-aggregate-udf-with-merge", "savepoint")
	if !requireSample(f, dir) {
		f.Skip("sample absent")
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var d drained
		checkAlloc(t, len(b), func() {
			if err = sp.ApplyPlan(b); err == nil {
				d = drain(sp)
			}
		})
		checkMarked(t, err)
		checkDrained(t, d)
	})
}
