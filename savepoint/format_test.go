package savepoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
	"streamdbg/state"
)

// testdata/format1 is a format 1 savepoint written by the code before
// format 2 (newFixture(300, 16, 21).snapshot(2)): it must keep reading, and
// the format 1 writer the tests keep must still write exactly its bytes.
const format1Dir = "testdata/format1"

func format1Fixture() *fixture { return newFixture(300, 16, 21) }

func TestReadsFormat1(t *testing.T) {
	sp, err := Open(vfs.Default, format1Dir)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Meta().Version != 1 {
		t.Fatalf("version %d", sp.Meta().Version)
	}
	f := format1Fixture()
	sameEntries(t, readAll(t, sp, sumID, state.KeyGroupRange{Start: 0, End: 15}), f.all)
	if err := sp.Verify(); err != nil {
		t.Fatal(err)
	}
	// The same snapshot in format 2 gives the same rows, whole and by key.
	mem := vfs.NewMem()
	sp2 := mustWrite(t, mem, "/sp", f.snapshot(2))
	if sp2.Meta().Version != FormatVersion || FormatVersion != 2 {
		t.Fatalf("format 2 savepoint has version %d", sp2.Meta().Version)
	}
	for _, scan := range []state.KeyedScan{
		{},
		{OperatorID: sumID, StateName: "by_product"},
		{Keys: []any{"key_42", "key_7"}},
		{OperatorID: sumID, StateName: "total", Keys: []any{"key_299"}},
	} {
		a, b := keyedRows(t, sp, scan), keyedRows(t, sp2, scan)
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Fatalf("scan %+v: format 1 rows %v, format 2 rows %v", scan, a, b)
		}
	}
}

// The format 1 writer the tests keep writes what the old code wrote.
func TestFormat1WriterUnchanged(t *testing.T) {
	mem := vfs.NewMem()
	if err := write(mem, "/sp", format1Fixture().snapshot(2), 1); err != nil {
		t.Fatal(err)
	}
	got := vfstest.Files(t, mem, "/sp")
	names, err := os.ReadDir(format1Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(got) {
		t.Fatalf("%d files, testdata has %d", len(got), len(names))
	}
	for _, n := range names {
		want, err := os.ReadFile(filepath.Join(format1Dir, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[n.Name()], want) {
			t.Fatalf("%s differs from the format 1 bytes", n.Name())
		}
	}
}

// keyedRows renders the rows of a scan, for comparisons.
func keyedRows(t *testing.T, sp *Savepoint, scan state.KeyedScan) []string {
	t.Helper()
	var out []string
	for r, err := range sp.Keyed(scan) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d/%d/%s/%v/%v/%v/%v", r.Subtask, r.KeyGroup, r.StateName, r.Key, r.Namespace, r.UserKey, r.Value))
	}
	return out
}

// bigFixture has sections of many blocks: about 1500 keys per key group.
func bigFixture() *fixture { return newFixture(6000, 4, 12) }

// A scan for some keys, or one state, of a format 2 savepoint reads the
// section's index and the blocks that can hold them, not the section, and
// gives the rows a full scan gives.
func TestPointLookupReadsItsBlocks(t *testing.T) {
	f := bigFixture()
	mem := vfs.NewMem()
	if err := Write(mem, "/sp", f.snapshot(2)); err != nil {
		t.Fatal(err)
	}
	fs := &countingFS{FS: mem}
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	all := keyedRows(t, sp, state.KeyedScan{})
	sections := map[int]Section{}
	for _, sub := range sp.Meta().Operators[0].Subtasks {
		for _, s := range sub.Keyed.Sections {
			if s.Size < 8*state.IndexedBlockTarget {
				t.Fatalf("key group %d: a section of %d bytes, want many blocks", s.KeyGroup, s.Size)
			}
			sections[s.KeyGroup] = s
		}
	}
	for i := 0; i < 6000; i += 97 {
		key := fmt.Sprintf("key_%d", i)
		kg := state.KeyGroupFor([]byte(key), 4)
		for _, name := range []string{"total", "by_product", "win", ""} {
			fs.opens, fs.read = nil, 0
			scan := state.KeyedScan{OperatorID: sumID, StateName: name, KeyGroups: []int{kg}, Keys: []any{key}}
			got := keyedRows(t, sp, scan)
			var want []string
			for _, r := range all {
				if strings.HasPrefix(r, fmt.Sprintf("%d/%d/", kg/2, kg)) && strings.Contains(r, "/"+key+"/") && (name == "" || strings.Contains(r, "/"+name+"/")) {
					want = append(want, r)
				}
			}
			if name == "total" && len(want) != 1 || !slices.Equal(got, want) {
				t.Fatalf("%s of %s: rows %v, want %v", name, key, got, want)
			}
			sec := sections[kg]
			// The index, and a block or two per state.
			states := int64(1)
			if name == "" {
				states = 3
			}
			if limit := sec.IndexSize + states*2*(4+2*state.IndexedBlockTarget); fs.read > limit || fs.read >= sec.Size/2 {
				t.Fatalf("%s of %s read %d bytes of a section of %d (index %d)", name, key, fs.read, sec.Size, sec.IndexSize)
			}
		}
	}
	// One state of an operator: its blocks only.
	fs.read = 0
	got := keyedRows(t, sp, state.KeyedScan{OperatorID: sumID, StateName: "total"})
	var want []string
	for _, r := range all {
		if strings.Contains(r, "/total/") {
			want = append(want, r)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("state total: %d rows, want %d", len(got), len(want))
	}
	var total int64
	for _, s := range sections {
		total += s.Size
	}
	if fs.read >= total*3/4 {
		t.Fatalf("state total read %d of %d bytes", fs.read, total)
	}
}

// Whatever byte of a section is changed, a point lookup returns the rows
// of the unchanged savepoint or refuses with an error naming the file and
// marked as a checksum mismatch or corruption; never other rows.
func TestPointLookupNeverWrong(t *testing.T) {
	f := bigFixture()
	fs := vfs.NewMem()
	sp := mustWrite(t, fs, "/sp", f.snapshot(2))
	var sec Section
	var name string
	for _, s := range sp.Meta().Operators[0].Subtasks[1].Keyed.Sections {
		sec, name = s, sp.Meta().Operators[0].Subtasks[1].Keyed.Name
		break
	}
	var scans []state.KeyedScan
	for i := range 6000 {
		key := fmt.Sprintf("key_%d", i)
		if state.KeyGroupFor([]byte(key), 4) != sec.KeyGroup || i%53 != 0 {
			continue
		}
		scans = append(scans, state.KeyedScan{OperatorID: sumID, KeyGroups: []int{sec.KeyGroup}, Keys: []any{key}})
	}
	want := make([][]string, len(scans))
	for i, scan := range scans {
		want[i] = keyedRows(t, sp, scan)
	}
	path := "/sp/" + name
	refused := 0
	check := func(off int64) {
		flipByte(t, fs, path, off)
		defer flipByte(t, fs, path, off)
		for i, scan := range scans {
			var got []string
			var err error
			for r, e := range sp.Keyed(scan) {
				if e != nil {
					err = e
					break
				}
				got = append(got, fmt.Sprintf("%d/%d/%s/%v/%v/%v/%v", r.Subtask, r.KeyGroup, r.StateName, r.Key, r.Namespace, r.UserKey, r.Value))
			}
			if err != nil {
				if !errors.Is(err, ErrChecksum) && !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "offset") {
					t.Fatalf("byte %d flipped: %s: error %v", off, scan.Keys[0], err)
				}
				refused++
				continue
			}
			if !slices.Equal(got, want[i]) {
				t.Fatalf("byte %d flipped: %s: rows %v, want %v", off, scan.Keys[0], got, want[i])
			}
		}
	}
	// Every byte of the index and of the blocks' length fields, and a
	// sample of the rest.
	idx := vfstest.Files(t, fs, "/sp")[name][sec.Offset+sec.Size-sec.IndexSize : sec.Offset+sec.Size]
	refs, err := state.DecodeGroupIndex(idx, 0, sec.KeyGroup, sec.Size, sec.Entries)
	if err != nil {
		t.Fatal(err)
	}
	for off := sec.Offset + sec.Size - sec.IndexSize; off < sec.Offset+sec.Size; off++ {
		check(off)
	}
	for _, r := range refs {
		for i := range int64(4) {
			check(sec.Offset + r.Offset + i)
		}
	}
	for off := sec.Offset; off < sec.Offset+sec.Size-sec.IndexSize; off += 127 {
		check(off)
	}
	if refused == 0 {
		t.Fatal("no lookup refused a flipped byte")
	}
}
