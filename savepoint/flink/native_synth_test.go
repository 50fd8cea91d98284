package flink

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdbg/savepoint/flink/rocksdb/rocksdbtest"
	"streamdbg/state"
)

// A synthetic RocksDB native savepoint in Flink's layout, built from the
// formats: max parallelism 256 (two-byte key-group prefix), a subtask owning
// key groups 0-127 whose instance also holds keys of other key groups (left
// after rescaling: not shown), list state with merge operands over puts and
// deletions, map state with null values and a range deletion, TTL values,
// timers in their own column family.

const (
	listSnapshot   = "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot"
	mapSnapshot    = "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot"
	ttlSnapshot    = "org.apache.flink.runtime.state.ttl.TtlStateFactory$TtlSerializerSnapshot"
	timerSnapshot  = "org.apache.flink.streaming.api.operators.TimerSerializerSnapshot"
	stringSnapshot = "org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot"
)

// nested writes a versioned snapshot (class and version, empty payload).
func (e *enc) nested(class string) { e.utf(class); e.i32(3) }

func (e *enc) composite(class string, nested ...string) {
	e.i32(2)
	e.utf(class)
	e.i32(1)
	e.i32(compositeMagic)
	e.i32(1)
	e.i32(nestedMagic)
	e.i32(1)
	e.i32(int32(len(nested)))
	for _, n := range nested {
		e.nested(n)
	}
}

func (e *enc) stateMeta(name string, typ int32, kind string, value func()) {
	e.utf(name)
	e.i32(typ)
	if kind == "" {
		e.i32(0)
	} else {
		e.i32(1)
		e.utf("KEYED_STATE_TYPE")
		e.utf(kind)
	}
	if typ == backendPriorityQueue {
		e.i32(1)
		e.utf("VALUE_SERIALIZER")
		value()
		return
	}
	e.i32(2)
	e.utf("VALUE_SERIALIZER")
	value()
	e.utf("NAMESPACE_SERIALIZER")
	e.snapshot(voidNSSnapshot)
}

func longKG(k int64, maxPar int) int {
	return state.KeyGroupForHash(int32(k^int64(uint64(k)>>32)), maxPar)
}

func ckey(kg int, k int64, rest ...byte) []byte {
	b := []byte{byte(kg >> 8), byte(kg)}
	b = binary.BigEndian.AppendUint64(b, uint64(k))
	b = append(b, 0) // VoidNamespace
	return append(b, rest...)
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func flinkStr(s string) []byte {
	b := []byte{byte(len(s) + 1)}
	return append(b, s...)
}

func TestSyntheticNativeSavepoint(t *testing.T) {
	const maxPar = 256
	var mine, foreign []int64 // keys in key groups 0-127, and beyond
	for k := int64(0); len(mine) < 12 || len(foreign) < 3; k++ {
		if longKG(k, maxPar) < 128 {
			if len(mine) < 12 {
				mine = append(mine, k)
			}
		} else if len(foreign) < 3 {
			foreign = append(foreign, k)
		}
	}
	db := rocksdbtest.New()
	want := map[string]bool{}
	var l1, l0 []rocksdbtest.Entry
	seq := uint64(1)
	put := func(es *[]rocksdbtest.Entry, typ byte, key, val []byte) {
		*es = append(*es, rocksdbtest.Entry{Key: key, Seq: seq, Type: typ, Value: val})
		seq++
	}
	list := func(vs ...int64) []byte {
		var b []byte
		for i, v := range vs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, be64(v)...)
		}
		return b
	}
	// List state: a put at L1, merges (and a delete) at L0.
	for i, k := range append(slices.Clone(mine), foreign...) {
		kg := longKG(k, maxPar)
		put(&l1, rocksdbtest.Put, ckey(kg, k), list(k, k+1))
		elems := []int64{k, k + 1}
		switch i % 4 {
		case 1:
			put(&l0, rocksdbtest.Merge, ckey(kg, k), list(100+k))
			elems = append(elems, 100+k)
		case 2:
			put(&l0, rocksdbtest.Delete, ckey(kg, k), nil)
			put(&l0, rocksdbtest.Merge, ckey(kg, k), list(200+k))
			elems = []int64{200 + k}
		case 3:
			put(&l0, rocksdbtest.Delete, ckey(kg, k), nil)
			elems = nil
		}
		if kg < 128 {
			for pos, v := range elems {
				want[fmt.Sprintf("list|%d|%d|%d|%d", kg, k, pos, v)] = true
			}
		}
	}
	db.Table("list", 1, l1, nil)
	db.Table("list", 0, l0, nil)

	// Map state: "a" → k, "b" → null; a range deletion removes one key's map.
	var m1 []rocksdbtest.Entry
	for i, k := range mine {
		kg := longKG(k, maxPar)
		put(&m1, rocksdbtest.Put, ckey(kg, k, flinkStr("a")...), append([]byte{0}, be64(k)...))
		put(&m1, rocksdbtest.Put, ckey(kg, k, flinkStr("b")...), []byte{1})
		if i != 4 {
			want[fmt.Sprintf("map|%d|%d|a|%d", kg, k, k)] = true
			want[fmt.Sprintf("map|%d|%d|b|<nil>", kg, k)] = true
		}
	}
	gone := ckey(longKG(mine[4], maxPar), mine[4])
	db.Table("map", 1, m1, []rocksdbtest.RangeDelete{{Start: gone, End: append(slices.Clone(gone), 0xff), Seq: seq}})
	seq++

	// TTL value state and timers.
	var v1, t1 []rocksdbtest.Entry
	for _, k := range mine[:5] {
		kg := longKG(k, maxPar)
		put(&v1, rocksdbtest.Put, ckey(kg, k), append(be64(1000+k), be64(k*k)...))
		want[fmt.Sprintf("ttl|%d|%d|%d|%d", kg, k, 1000+k, k*k)] = true
		for _, ts := range []int64{-5, 42} {
			tk := []byte{byte(kg >> 8), byte(kg)}
			tk = binary.BigEndian.AppendUint64(tk, uint64(ts)^1<<63)
			tk = binary.BigEndian.AppendUint64(tk, uint64(k))
			tk = append(tk, 0)
			put(&t1, rocksdbtest.Put, tk, nil)
			want[fmt.Sprintf("timer|%d|%d|%d", kg, k, ts)] = true
		}
	}
	db.Table("ttl", 1, v1, nil)
	db.Table("_timer_state/event_t", 1, t1, nil)

	// The serialization proxy (meta-data handle).
	var meta enc
	meta.i32(6)
	meta.u8(0)
	meta.snapshot(longSnapshot)
	meta.u16(4)
	meta.stateMeta("list", backendKeyValue, "LIST", func() { meta.composite(listSnapshot, longSnapshot) })
	meta.stateMeta("map", backendKeyValue, "MAP", func() { meta.composite(mapSnapshot, stringSnapshot, longSnapshot) })
	meta.stateMeta("ttl", backendKeyValue, "VALUE", func() { meta.composite(ttlSnapshot, longSnapshot, longSnapshot) })
	meta.stateMeta("_timer_state/event_t", backendPriorityQueue, "", func() { meta.composite(timerSnapshot, longSnapshot, voidNSSnapshot) })

	dir := writeNative(t, db, meta.Bytes(), maxPar, 128)

	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for r, err := range sp.Keyed(state.KeyedScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		k := r.Key.(int64)
		var line string
		switch r.StateName {
		case "list":
			line = fmt.Sprintf("list|%d|%d|%d|%d", r.KeyGroup, k, r.UserKey, r.Value)
		case "map":
			line = fmt.Sprintf("map|%d|%d|%s|%v", r.KeyGroup, k, r.UserKey, r.Value)
		case "ttl":
			row := r.Value.(*state.Row)
			line = fmt.Sprintf("ttl|%d|%d|%d|%d", r.KeyGroup, k, row.Values[0], row.Values[1])
		}
		if got[line] {
			t.Errorf("row twice: %s", line)
		}
		got[line] = true
	}
	for tm, err := range sp.Timers(state.TimerScan{}) {
		if err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("timer|%d|%d|%d", tm.KeyGroup, tm.Key, tm.Timestamp)] = true
	}
	if len(want) < 40 {
		t.Fatalf("only %d expected rows", len(want))
	}
	for l := range want {
		if !got[l] {
			t.Errorf("missing row %s", l)
		}
	}
	for l := range got {
		if !want[l] {
			t.Errorf("unexpected row %s", l)
		}
	}

	// A point lookup seeks the key's serialized prefix in its key group.
	k := mine[1]
	kg := longKG(k, maxPar)
	var rows []state.KeyedRow
	for r, err := range sp.Keyed(state.KeyedScan{StateName: "list", KeyGroups: []int{kg}, Keys: []any{k}}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 3 || rows[2].Value != 100+k {
		t.Errorf("lookup of %d: %+v", k, rows)
	}
	ex := sp.ExplainKeyed(state.KeyedScan{StateName: "list", KeyGroups: []int{kg}, Keys: []any{k}})
	if len(ex) != 1 || !containsAll(ex[0], "list (RocksDB, 1 key prefixes)", "000011.sst", "000012.sst") {
		t.Errorf("explain %q", ex)
	}
}

// writeNative writes a RocksDB native savepoint of one operator with one
// subtask owning key groups [0, groups), its tables db's, its meta-data
// handle meta, into a new directory.
func writeNative(tb testing.TB, db *rocksdbtest.DB, meta []byte, maxPar, groups int) string {
	tb.Helper()
	dir := tb.TempDir()
	files := db.Files()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("meta-0", meta)
	var m enc
	m.i32(Magic)
	m.i32(4)
	m.i64(3)
	m.i32(0)
	m.i32(1)
	m.Write(mustHex(tb, synthOperatorID))
	m.i32(2)
	m.i32(int32(maxPar))
	m.u8(handleNull)
	m.i32(1)
	m.i32(0)
	m.i32(0)
	m.i32(0)
	m.u8(handleIncrementalV2)
	m.i64(3)
	m.utf("backend-0")
	m.i32(0)
	m.i32(int32(groups))
	m.i64(0)
	m.u8(handleRelativeFile)
	m.utf("meta-0")
	m.i64(int64(len(meta)))
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var ssts, priv []string
	for _, n := range names {
		if filepath.Ext(n) == ".sst" {
			ssts = append(ssts, n)
		} else {
			priv = append(priv, n)
		}
	}
	for _, list := range [][]string{ssts, priv} {
		m.i32(int32(len(list)))
		for _, n := range list {
			m.utf(n)
			if n == "CURRENT" { // small files may be inline in _metadata
				m.u8(handleByteStream)
				m.utf("current-inline")
				m.i32(int32(len(files[n])))
				m.Write(files[n])
				continue
			}
			write("f-"+n, files[n])
			m.u8(handleRelativeFile)
			m.utf("f-" + n)
			m.i64(int64(len(files[n])))
		}
	}
	m.utf("handle-0")
	m.u8(handleNull)
	m.i32(0)
	m.i32(0)
	m.u8(0x70)
	write("_metadata", m.Bytes())
	return dir
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
