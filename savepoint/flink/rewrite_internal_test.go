package flink

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"streamdbg/state"
)

type synthEdit struct{}

func (synthEdit) Touches(op, st string) bool { return op == synthOperatorID && st == "count" }

func (synthEdit) Edit(row *state.KeyedRow) (EntryEdit, error) {
	k := row.Key.(int64)
	switch {
	case k%7 == 0:
		return EntryEdit{Drop: true}, nil
	case k%10 == 3:
		return EntryEdit{Set: true, Value: -k}, nil
	}
	return EntryEdit{}, nil
}

// TestRewriteSynthetic rewrites synthetic canonical savepoints that the
// samples do not cover: Snappy-compressed key groups, an absolute (moved)
// file handle, a two-byte key-group prefix. Every key reads back as the edit
// says, and key groups the edit did not change keep their bytes.
func TestRewriteSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    synthOptions
	}{
		{"snappy", synthOptions{keys: 3000, compressed: true}},
		{"absolute moved", synthOptions{keys: 500, handle: handleFile, absPrefix: "hdfs://namenode:8020/flink/savepoints/savepoint-123/"}},
		{"two-byte prefix", synthOptions{keys: 3000, maxParallel: 1024}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := writeSynthetic(t, tc.o)
			sp, err := Open(src)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "out")
			rep, err := sp.Rewrite(dst, synthEdit{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]any{}
			for r, err := range out.Keyed(state.KeyedScan{}) {
				if err != nil {
					t.Fatal(err)
				}
				got[r.Key.(int64)] = r.Value
			}
			for k := range int64(tc.o.keys) {
				v, ok := got[k]
				switch {
				case k%7 == 0:
					if ok {
						t.Fatalf("key %d not dropped", k)
					}
				case k%10 == 3:
					if v != -k {
						t.Fatalf("key %d: %v, want %d", k, v, -k)
					}
				default:
					if v != k*2 {
						t.Fatalf("key %d: %v, want %d", k, v, k*2)
					}
				}
			}
			if len(rep.Files) != 1 {
				t.Fatalf("%d files rewritten", len(rep.Files))
			}
			f := rep.Files[0]
			ob, _ := os.ReadFile(filepath.Join(src, f.Name))
			nb, _ := os.ReadFile(filepath.Join(dst, f.Name))
			same := 0
			for _, g := range f.KeyGroups {
				if g.OldSize > 0 && !g.Encoded {
					same++
					if !bytes.Equal(ob[g.OldOffset:g.OldOffset+g.OldSize], nb[g.NewOffset:g.NewOffset+g.NewSize]) {
						t.Fatalf("key group %d: untouched, bytes differ", g.KeyGroup)
					}
				}
			}
			if tc.o.keys >= 3000 && same == 0 {
				t.Log("every key group changed")
			}
			if !bytes.Equal(ob[:f.Header], nb[:f.Header]) {
				t.Fatal("header changed")
			}
		})
	}
}
