package session

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxHinted bounds how many directories a missing-_metadata error lists.
const maxHinted = 5

// MissingMetadataError is the error of opening a directory that holds no
// _metadata file. Holders are its subdirectories that do (Flink's restore
// tests keep the savepoint in savepoint/, a job's checkpoints are chk-N/):
// the user most likely meant one of them.
type MissingMetadataError struct {
	Dir     string
	Holders []string
	More    int // holders not listed
	Err     error
}

func (e *MissingMetadataError) Error() string {
	if len(e.Holders) == 0 {
		return fmt.Sprintf("%s is not a savepoint or checkpoint directory: it has no _metadata file", e.Dir)
	}
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" (and %d more)", e.More)
	}
	return fmt.Sprintf("%s is not a savepoint or checkpoint directory: it has no _metadata file, but %s%s in it %s: name that directory", e.Dir, strings.Join(e.Holders, ", "), more, plural(len(e.Holders)+e.More, "holds one", "hold one each"))
}

func (e *MissingMetadataError) Unwrap() error { return e.Err }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// withMetadataHint turns err, the error of opening dir as a savepoint,
// into a MissingMetadataError when dir exists but has no _metadata.
// Other errors pass unchanged.
func withMetadataHint(dir string, err error) error {
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
		return err
	}
	if _, serr := os.Lstat(filepath.Join(dir, "_metadata")); !errors.Is(serr, fs.ErrNotExist) {
		return err
	}
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		return err
	}
	var holders []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if st, serr := os.Lstat(filepath.Join(sub, "_metadata")); serr == nil && st.Mode().IsRegular() {
			holders = append(holders, sub)
		}
	}
	// A job's checkpoints (chk-N) newest first, by number (chk-10 after
	// chk-9, not before chk-2): most likely the one wanted.
	slices.SortFunc(holders, func(a, b string) int {
		na, okA := checkpointNumber(filepath.Base(a))
		nb, okB := checkpointNumber(filepath.Base(b))
		switch {
		case okA && okB:
			return cmp.Compare(nb, na)
		case okA != okB: // checkpoints after the other directories
			if okA {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	out := &MissingMetadataError{Dir: dir, Err: err}
	if len(holders) > maxHinted {
		out.More = len(holders) - maxHinted
		holders = holders[:maxHinted]
	}
	out.Holders = holders
	return out
}

// checkpointNumber is N of a directory named chk-N (Flink's name of a
// job's checkpoint N).
func checkpointNumber(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, "chk-")
	if !ok || digits == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil && n >= 0
}

// SavepointDir is the savepoint directory a path names: the path itself,
// or the directory of a _metadata file named directly (as Flink's `flink
// run -s` takes either).
func SavepointDir(p string) string {
	if filepath.Base(p) != "_metadata" {
		return p
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return p
	}
	return filepath.Dir(p)
}
