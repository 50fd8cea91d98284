package flink

import (
	"strings"
	"testing"
)

// changelogSample is the changelog state backend's checkpoint of the job
// whose state udf-flink1.20-hashmap-savepoint holds.
const changelogSample = "datastream/new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint"

// The flat maps keep a ValueState only and the checkpoint has no
// materialized part: their key serializer (the job keys by field 0 of a
// Tuple2, so Tuple1<Long>) is not in it and is named here, as a user would
// with --key-type. The timely operators' comes from their timers.
var changelogSampleKeys = map[string]string{
	"d5c8b168c6cbfe8c507a10f88b325243": "Tuple1<Long>",
	"dab25811652d3d4983a30c6e4afacb1c": "Tuple1<Long>",
}

// TestChangelogSampleMatchesHeap replays the change logs of the Flink 1.17
// changelog checkpoint and compares keyed_state, timers, state_meta and
// operator_state row for row with the heap savepoint of the same job (as
// TestRocksDBSamplesMatchHeap does; processing-time timers are wall-clock
// values, compared as such).
func TestChangelogSampleMatchesHeap(t *testing.T) {
	heap := openSample(t, "udf-flink1.20-hashmap-savepoint")
	sp := openSample(t, changelogSample)
	for op, typ := range changelogSampleKeys {
		if err := sp.SetKeyType(op, typ); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range sp.Operators() {
		for _, u := range op.Unsupported {
			t.Errorf("%s: %s", op.ID, u)
		}
		if len(op.Notes) > 0 {
			t.Errorf("%s: notes %v", op.ID, op.Notes)
		}
	}
	keyed := keyedLines(t, sp)
	sameLines(t, "keyed_state", keyed, keyedLines(t, heap))
	sameLines(t, "timers", timerLines(t, sp), timerLines(t, heap))
	sameLines(t, "state_meta", metaLines(sp), metaLines(heap))
	sameLines(t, "operator_state", operatorLines(t, sp), operatorLines(t, heap))
	if len(keyed) != 16 || len(timerLines(t, sp)) != 16 {
		t.Fatalf("%d keyed rows and %d timers, want 16 and 16 (4 keys of 4 operators; 2 timers per key of 2)", len(keyed), len(timerLines(t, sp)))
	}
}

// TestChangelogKeyTypeHint: a named key type that differs from the stored
// key serializer is not used, and said so; an unknown type or operator is
// an error.
func TestChangelogKeyTypeHint(t *testing.T) {
	sp := openSample(t, changelogSample)
	if err := sp.SetKeyType("4b818c7923a927796d24b727201ba34d", "Long"); err != nil {
		t.Fatal(err)
	}
	if m := findMeta(t, sp, "4b818c7923a927796d24b727201ba34d", "state-name"); m.KeyType != "Tuple1<java.lang.Long>" {
		t.Errorf("key type %q: the stored serializer must win", m.KeyType)
	}
	var note string
	for _, op := range sp.Operators() {
		if op.ID == "4b818c7923a927796d24b727201ba34d" && len(op.Notes) == 1 {
			note = op.Notes[0]
		}
	}
	if !strings.Contains(note, "--key-type java.lang.Long not used") || !strings.Contains(note, "Tuple1<java.lang.Long>") {
		t.Errorf("note %q", note)
	}
	if err := sp.SetKeyType("4b818c7923a927796d24b727201ba34d", "Long"); err == nil {
		t.Error("SetKeyType after reading: no error")
	}
	sp = openSample(t, changelogSample)
	for _, tc := range []struct{ op, typ, want string }{
		{"4b818c7923a927796d24b727201ba34d", "Tuple2<Long>", "2"},
		{"4b818c7923a927796d24b727201ba34d", "Date", "want one of"},
		{"no-such-operator", "Long", "no operator"},
	} {
		if err := sp.SetKeyType(tc.op, tc.typ); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetKeyType(%q, %q) = %v, want an error with %q", tc.op, tc.typ, err, tc.want)
		}
	}
	for typ, want := range map[string]serializer{"long": longSer, "java.lang.Long": longSer, "int": intSer, "char": charSer, "boolean": boolSer} {
		if ks, err := parseKeyType(typ); err != nil || ks != want {
			t.Errorf("parseKeyType(%q) = %v, %v; want %v", typ, ks, err, want)
		}
	}
	if _, err := parseKeyType("LONG"); err == nil {
		t.Errorf("parseKeyType(LONG): no error")
	}
	ks, err := parseKeyType("Tuple3<java.lang.String, Tuple2<Integer, byte[]>, Boolean>")
	if err != nil || ks.typeName() != "Tuple3<java.lang.String, Tuple2<java.lang.Integer, byte[]>, java.lang.Boolean>" {
		t.Errorf("nested tuple: %v, %v", ks, err)
	}
}
