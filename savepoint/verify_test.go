package savepoint

import (
	"encoding/json"
	"errors"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/internal/vfstest"
)

// editMetadata rewrites /sp/_metadata with edit applied.
func editMetadata(t *testing.T, fs vfs.FS, orig []byte, edit func(m *Metadata)) {
	t.Helper()
	var m Metadata
	if err := json.Unmarshal(orig, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	b, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, fs, "/sp/"+MetadataFile, b)
}

func opMeta(m *Metadata, id string) *OperatorMeta {
	for i := range m.Operators {
		if m.Operators[i].ID == id {
			return &m.Operators[i]
		}
	}
	return nil
}

// A _metadata from which a reference was dropped does not add up and is
// invalid, naming the operator and what does not match. (Before: each of
// these opened, `savepoint check` called it restorable, and a restore ran
// with state missing.)
func TestDroppedReferencesInvalid(t *testing.T) {
	fs := vfs.NewMem()
	mustWrite(t, fs, "/sp", newFixture(60, 8, 3).snapshot(2))
	orig := vfstest.Files(t, fs, "/sp")[MetadataFile]
	cases := []struct {
		name string
		edit func(m *Metadata)
		want string
	}{
		{"a subtask's keyed file", func(m *Metadata) { opMeta(m, sumID).Subtasks[1].Keyed = nil },
			"operator " + sumID + " (sum): 1 of its 2 subtasks have a keyed state file"},
		{"every keyed file", func(m *Metadata) {
			for i := range opMeta(m, sumID).Subtasks {
				opMeta(m, sumID).Subtasks[i].Keyed = nil
			}
		}, "0 of its 2 subtasks have a keyed state file, and the StateMeta table lists 5 keyed states"},
		{"the source's operator state file", func(m *Metadata) { opMeta(m, sourceID).Subtasks[0].Operator = nil },
			"(Source: orders): 1 of its 2 subtasks have an operator state file"},
		{"a StateMeta row", func(m *Metadata) {
			for i, r := range m.States {
				if r.StateName == "total" {
					m.States = append(m.States[:i], m.States[i+1:]...)
					break
				}
			}
		}, "(sum): the StateMeta table counts"},
		{"an operator-state row", func(m *Metadata) {
			for i, r := range m.States {
				if r.StateName == "offsets" {
					m.States = append(m.States[:i], m.States[i+1:]...)
					break
				}
			}
		}, "(Source: orders): the StateMeta table counts 4 operator state entries, its operator state files hold 9"},
		{"the whole StateMeta table", func(m *Metadata) { m.States = nil }, "(sum): the StateMeta table counts 0 keyed entries, its keyed files hold"},
		{"a key group's section", func(m *Metadata) {
			k := opMeta(m, sumID).Subtasks[0].Keyed
			k.Size -= k.Sections[len(k.Sections)-1].Size
			k.Sections = k.Sections[:len(k.Sections)-1]
		}, "(sum): the StateMeta table counts"},
		{"a negative position", func(m *Metadata) { m.Position = -1 }, "position -1 outside [0, 2^53]"},
		{"a position of 2^63-1", func(m *Metadata) { m.Position = 1<<63 - 1 }, "position 9223372036854775807 outside"},
		{"a negative source offset", func(m *Metadata) { m.Sources[0].Offset = -5 }, `source "orders" partition 0: offset -5`},
	}
	for _, c := range cases {
		editMetadata(t, fs, orig, c.edit)
		_, err := Open(fs, "/sp")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/sp/_metadata") {
			t.Errorf("dropped %s: Open: %v\nwant ErrInvalid with %q", c.name, err, c.want)
		}
	}
	rewrite(t, fs, "/sp/"+MetadataFile, orig)
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Verify(); err != nil {
		t.Fatal(err)
	}
}

// Verify reads every byte: a flipped byte anywhere in a state file is a
// checksum error naming the file (Open alone cannot see it), and per-state
// counts moved between two rows (the sums still add up) are caught by
// decoding every entry.
func TestVerify(t *testing.T) {
	fs := vfs.NewMem()
	sp := mustWrite(t, fs, "/sp", newFixture(40, 4, 5).snapshot(2))
	if err := sp.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sumID + "-1.keyed", sourceID + "-1.opstate"} {
		path := "/sp/" + name
		fi, _ := fs.Stat(path)
		for _, off := range []int64{0, fi.Size() / 2, fi.Size() - 1} {
			flipByte(t, fs, path, off)
			sp, err := Open(fs, "/sp")
			if err != nil {
				t.Fatalf("%s byte %d flipped: Open refused already: %v", name, off, err)
			}
			err = sp.Verify()
			if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), path) {
				t.Fatalf("%s byte %d flipped: Verify: %v", name, off, err)
			}
			flipByte(t, fs, path, off)
		}
	}
	orig := vfstest.Files(t, fs, "/sp")[MetadataFile]
	editMetadata(t, fs, orig, func(m *Metadata) {
		for i := range m.States {
			switch m.States[i].StateName {
			case "total":
				m.States[i].Entries++
			case "by_product":
				m.States[i].Entries--
			}
		}
	})
	sp, err := Open(fs, "/sp")
	if err != nil {
		t.Fatalf("counts that add up refused by Open: %v", err)
	}
	err = sp.Verify()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `state "by_product" has`) {
		t.Fatalf("Verify with counts moved between states: %v", err)
	}
	editMetadata(t, fs, orig, func(m *Metadata) {
		for i := range m.States {
			if m.States[i].StateName == "total" {
				m.States[i].Bytes += 3
			}
		}
	})
	sp, _ = Open(fs, "/sp")
	if err := sp.Verify(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `state "total" has 40 entries`) {
		t.Fatalf("Verify with wrong bytes: %v", err)
	}
}

// A section larger than the cap is refused by Open, before any of it is
// read: a sparse file of a few KB on disk cannot make a reader allocate
// its apparent size. (Before: the cap was 1 GiB and a query allocated it.)
func TestSectionCap(t *testing.T) {
	dir := t.TempDir() + "/sp"
	mustWrite(t, vfs.Default, dir, newFixture(40, 4, 5).snapshot(1))
	name := sumID + "-0.keyed"
	path := dir + "/" + name
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	huge := fi.Size() + 65<<20
	if err := os.Truncate(path, huge); err != nil {
		t.Fatal(err)
	}
	mb, _ := os.ReadFile(dir + "/" + MetadataFile)
	var m Metadata
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	k := opMeta(&m, sumID).Subtasks[0].Keyed
	k.Sections[len(k.Sections)-1].Size += huge - k.Size
	k.Size = huge
	mb, _ = json.Marshal(&m)
	if err := os.WriteFile(dir+"/"+MetadataFile, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	_, err = Open(vfs.Default, dir)
	goruntime.ReadMemStats(&after)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), name+": key group") || !strings.Contains(err.Error(), "more than the 64 MiB a section may hold") {
		t.Fatalf("Open: %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Fatalf("Open allocated %d bytes", d)
	}
}

// Processing time past year 9999 (a virtual clock advanced that far) still
// writes: "created" is clamped to what RFC 3339 holds, processing_time is
// exact. (Before: json refused the time and the write failed.)
func TestCreatedPastYear9999(t *testing.T) {
	fs := vfs.NewMem()
	snap := newFixture(5, 4, 1).snapshot(1)
	snap.Created = time.UnixMilli(300_000_000_000_000).UTC() // year 11476
	snap.ProcessingTime = 300_000_000_000_000
	sp := mustWrite(t, fs, "/sp", snap)
	if got := sp.Meta().Created; !got.Equal(time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)) {
		t.Fatalf("created %v", got)
	}
	if sp.Meta().ProcessingTime != 300_000_000_000_000 {
		t.Fatalf("processing time %d", sp.Meta().ProcessingTime)
	}
}

// TestMissingFileIsInvalid: a state file _metadata lists that is not there
// makes the savepoint invalid (ErrInvalid, as every other inconsistency),
// naming the file; the file system's not-exist stays visible. (Before: only
// not-exist, no kind of this package.)
func TestMissingFileIsInvalid(t *testing.T) {
	fs := vfs.NewMem()
	mustWrite(t, fs, "/sp", newFixture(60, 8, 3).snapshot(2))
	var victim string
	for name := range vfstest.Files(t, fs, "/sp") {
		if name != MetadataFile {
			victim = name
			break
		}
	}
	if err := fs.Remove("/sp/" + victim); err != nil {
		t.Fatal(err)
	}
	_, err := Open(fs, "/sp")
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "/sp/"+victim+", listed in _metadata, is missing") {
		t.Errorf("without %s: %v", victim, err)
	}
}
