package session_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdbg/runtime/session"
)

func TestOpenCatalogNamesTheDirectoriesHoldingMetadata(t *testing.T) {
	root := t.TempDir()
	// Flink's restore-test layout: the savepoint is in savepoint/, beside
	// plan.json; a file named _metadata in a directory that is not one
	// does not count, nor does a subdirectory without _metadata.
	must(t, os.MkdirAll(filepath.Join(root, "savepoint"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "savepoint", "_metadata"), []byte("x"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "plan.json"), []byte("{}"), 0o644))

	_, err := session.OpenCatalog(root)
	var mm *session.MissingMetadataError
	if !errors.As(err, &mm) {
		t.Fatalf("OpenCatalog(%s) = %v, want a MissingMetadataError", root, err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the error %v does not keep fs.ErrNotExist", err)
	}
	want := filepath.Join(root, "savepoint")
	if len(mm.Holders) != 1 || mm.Holders[0] != want || mm.More != 0 {
		t.Errorf("holders %v (+%d), want [%s]", mm.Holders, mm.More, want)
	}
	if msg := err.Error(); !strings.Contains(msg, want+" in it holds one") || !strings.HasPrefix(msg, root+" is not a savepoint") {
		t.Errorf("message %q does not name the directory and the one holding _metadata", msg)
	}
}

func TestOpenCatalogListsAtMostFiveHolders(t *testing.T) {
	root := t.TempDir()
	for i := 12; i >= 1; i-- {
		d := filepath.Join(root, fmt.Sprintf("chk-%d", i))
		must(t, os.MkdirAll(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "_metadata"), []byte("x"), 0o644))
	}
	_, err := session.OpenCatalog(root)
	var mm *session.MissingMetadataError
	if !errors.As(err, &mm) {
		t.Fatalf("OpenCatalog = %v, want a MissingMetadataError", err)
	}
	// Newest first, by number: chk-12 to chk-8 (not chk-1, chk-10, chk-11,
	// chk-12, chk-2 by name).
	var want []string
	for i := 12; i >= 8; i-- {
		want = append(want, filepath.Join(root, fmt.Sprintf("chk-%d", i)))
	}
	if !slices.Equal(mm.Holders, want) || mm.More != 7 {
		t.Errorf("holders %v (+%d), want %v (+7)", mm.Holders, mm.More, want)
	}
	if !strings.Contains(err.Error(), "(and 7 more) in it hold one each") {
		t.Errorf("message %q does not say seven more", err)
	}
}

func TestOpenCatalogWithoutMetadataAnywhere(t *testing.T) {
	root := t.TempDir()
	_, err := session.OpenCatalog(root)
	var mm *session.MissingMetadataError
	if !errors.As(err, &mm) || len(mm.Holders) != 0 {
		t.Fatalf("OpenCatalog(empty) = %v, want a MissingMetadataError without holders", err)
	}
	if want := root + " is not a savepoint or checkpoint directory: it has no _metadata file"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// A directory that does not exist is not explained as one without
	// _metadata.
	_, err = session.OpenCatalog(filepath.Join(root, "gone"))
	if err == nil || errors.As(err, &mm) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenCatalog(missing dir) = %v, want the plain not-exist error", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
