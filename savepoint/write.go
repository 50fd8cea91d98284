package savepoint

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// Snapshot is what the runtime hands over to write a savepoint.
type Snapshot struct {
	JobName        string
	JobFingerprint string
	CheckpointID   int64
	// Created is stored as given (UTC): inject it for byte-identical savepoints.
	Created time.Time
	// Position is the number of source events read; ProcessingTime the
	// virtual processing-time clock in epoch milliseconds.
	Position       int64
	ProcessingTime int64
	// Sources are written sorted by source and partition.
	Sources   []SourcePosition
	Operators []OperatorSnapshot
}

// OperatorSnapshot is the state of one operator. Operators are written
// ordered by ID.
type OperatorSnapshot struct {
	ID             string // 32 lower-case hex digits
	UID            string
	Name           string
	Parallelism    int
	MaxParallelism int
	// States describes every state of the operator (any subtask); entry
	// counts and bytes are recomputed from what is written. Timer states
	// (state.TimerDomain(name) != "") that are not described are added.
	States   []state.StateMeta
	Subtasks []SubtaskSnapshot // one per subtask, in index order
}

// SubtaskSnapshot is the state of one operator subtask.
type SubtaskSnapshot struct {
	Index     int
	KeyGroups state.KeyGroupRange
	// Keyed yields the entries of one key group in Entry order (the
	// runtime passes backend.Entries(kg, "")); nil when the operator has no
	// keyed state. It is called once per key group of KeyGroups and read
	// as a stream: a subtask's entries are never all in memory. The
	// subtasks of an operator are written in parallel: the Keyed of two
	// subtasks may run at the same time (never two calls of one).
	Keyed func(kg int) iter.Seq2[state.Entry, error]
	// KeyedBatches, when not nil, is read instead of Keyed: the same
	// entries in the same order, in batches (the runtime passes
	// backend.EntryBatches(kg, "") when the backend has it), each valid
	// until the next step. The file's bytes are the same.
	KeyedBatches func(kg int) iter.Seq2[[]state.Entry, error]
	// Operator is the subtask's operator state (OperatorStore.Entries()).
	Operator []state.OperatorEntry
}

// Write writes snap as a savepoint directory dir on fs, atomically: into a
// temporary directory of its own beside dir, every file and the directory
// synced, then renamed to dir and the parent synced. dir must not exist. On
// error nothing is left at dir, and nothing Write did not create is removed.
//
// Concurrent writers of one target: each holds the lock file .NAME.lock
// beside dir while it writes, so a second writer fails at once; each
// writes into its own uniquely named .NAME.inprogress-* directory; and the
// final rename never replaces an existing directory (RENAME_NOREPLACE on
// Linux; elsewhere, a check under the lock), so exactly one of them makes
// dir and the others fail with ErrExists.
func Write(fs vfs.FS, dir string, snap *Snapshot) error {
	return write(fs, dir, snap, FormatVersion)
}

// write is Write in the given format version (tests write version 1).
func write(fs vfs.FS, dir string, snap *Snapshot, version int) (err error) {
	dir = filepath.Clean(dir)
	if err := checkAbsent(fs, dir); err != nil {
		return err
	}
	parent := fs.PathDir(dir)
	if err := fs.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("savepoint: cannot create %s: %w", parent, err)
	}
	unlock, err := lockTarget(fs, dir)
	if err != nil {
		return err
	}
	defer unlock()
	// Checked again under the lock: another writer may have finished.
	if err := checkAbsent(fs, dir); err != nil {
		return err
	}
	// A crash leaves the temporary directory behind: it never opens (its
	// name is not the target's) and can be removed by hand. Write never
	// removes a directory it did not create this call.
	tmp, err := makeTempDir(fs, parent, fs.PathBase(dir))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = fs.RemoveAll(tmp)
		}
	}()
	meta, err := writeFiles(fs, tmp, snap, version)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := writeFile(fs, fs.PathJoin(tmp, MetadataFile), append(b, '\n')); err != nil {
		return err
	}
	if err := syncDir(fs, tmp); err != nil {
		return err
	}
	if err := renameNoReplace(fs, tmp, dir); err != nil {
		return err
	}
	// dir is complete from here on, but if the parent does not sync it may
	// not survive a crash: an error must mean no savepoint, so remove it.
	if err := syncDir(fs, parent); err != nil {
		_ = fs.RemoveAll(dir)
		return err
	}
	return nil
}

// checkAbsent fails with ErrExists when dir exists (as anything, a dangling
// symlink included).
func checkAbsent(fs vfs.FS, dir string) error {
	if _, err := lstat(fs, dir); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("savepoint: %s: %w", dir, err)
	}
	return nil
}

// lockTarget takes the lock file of a target; the returned func releases
// it and removes the file. Correctness does not rest on the lock (unique
// temporary directories and a rename that never replaces do that): it
// makes a second writer fail at once instead of after its whole write.
func lockTarget(fs vfs.FS, dir string) (func(), error) {
	name := fs.PathJoin(fs.PathDir(dir), "."+fs.PathBase(dir)+".lock")
	// The lock file is empty and ours; a file of that name with content, or
	// anything but a regular file, is someone else's and stays untouched.
	if fi, err := lstat(fs, name); err == nil && (!fi.Mode().IsRegular() || fi.Size() != 0) {
		return nil, fmt.Errorf("savepoint: %s exists and is not streamdbg's lock file: remove or rename it to write %s", name, dir)
	}
	l, err := fs.Lock(name)
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) || strings.Contains(err.Error(), "lock held") {
			return nil, fmt.Errorf("savepoint: another savepoint write to %s is in progress (%s is locked)", dir, name)
		}
		return nil, fmt.Errorf("savepoint: cannot write in %s: %w", fs.PathDir(dir), err)
	}
	return func() {
		_ = fs.Remove(name)
		_ = l.Close()
	}, nil
}

// makeTempDir creates a new, uniquely named directory .BASE.inprogress-*
// in parent.
func makeTempDir(fs vfs.FS, parent, base string) (string, error) {
	for range 8 {
		var r [8]byte
		_, _ = rand.Read(r[:])
		tmp := fs.PathJoin(parent, fmt.Sprintf(".%s.inprogress-%d-%x", base, os.Getpid(), r))
		if _, err := lstat(fs, tmp); err == nil {
			continue
		}
		if err := fs.MkdirAll(tmp, 0o755); err != nil {
			return "", fmt.Errorf("savepoint: cannot write in %s: %w", parent, err)
		}
		return tmp, nil
	}
	return "", fmt.Errorf("savepoint: no unused temporary name in %s", parent)
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("savepoint: sync %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return fmt.Errorf("savepoint: sync %s: %w", dir, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("savepoint: sync %s: %w", dir, err)
	}
	return nil
}

func writeFile(fs vfs.FS, path string, b []byte) error {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("savepoint: write %s: %w", path, err)
	}
	return syncClose(f, path)
}

func syncClose(f vfs.File, path string) error {
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("savepoint: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("savepoint: close %s: %w", path, err)
	}
	return nil
}

// bytesPerSync is how often a keyed file's written bytes are handed to
// writeback before the final sync. Each hand-over waits for the one before
// (pebble's sync_file_range), in the writer's time: every 512 KiB cost a
// tenth more CPU than the plain write and no wall time (BenchmarkSavepoint
// write-ratio, A/B: 0.62-0.65 against 0.69-0.75 in CPU at 4 MiB).
const bytesPerSync = 4 << 20

// stateStats accumulates entry counts and bytes per state name.
type stateStats struct {
	metas map[string]*state.StateMeta
	op    *OperatorSnapshot
}

// empty returns stats of the same states with nothing counted, for one
// subtask's keyed file.
func (s *stateStats) empty() *stateStats {
	e := &stateStats{metas: make(map[string]*state.StateMeta, len(s.metas)), op: s.op}
	for n, m := range s.metas {
		c := *m
		c.Entries, c.Bytes = 0, 0
		e.metas[n] = &c
	}
	return e
}

// add counts what o counted (states o added included).
func (s *stateStats) add(o *stateStats) {
	for n, m := range o.metas {
		if t, ok := s.metas[n]; ok {
			t.Entries += m.Entries
			t.Bytes += m.Bytes
			continue
		}
		c := *m
		s.metas[n] = &c
	}
}

func (s *stateStats) meta(name string, scope state.Scope) (*state.StateMeta, error) {
	m, ok := s.metas[name]
	if !ok {
		if scope != state.ScopeKeyed || state.TimerDomain(name) == "" {
			return nil, fmt.Errorf("savepoint: operator %q: entries of undescribed %s state %q", s.op.Name, scope, name)
		}
		m = &state.StateMeta{OperatorID: s.op.ID, OperatorName: s.op.Name, StateName: name, Scope: state.ScopeKeyed,
			Kind: state.KindTimers, UserKeyType: state.Int64.TypeName()}
		s.metas[name] = m
	}
	if m.Scope != scope {
		return nil, fmt.Errorf("savepoint: operator %q: state %q is %s state, found in %s state", s.op.Name, name, m.Scope, scope)
	}
	return m, nil
}

func writeFiles(fs vfs.FS, tmp string, snap *Snapshot, version int) (*Metadata, error) {
	meta := &Metadata{Format: FormatName, Version: version, JobName: snap.JobName, JobFingerprint: snap.JobFingerprint,
		CheckpointID: snap.CheckpointID, Created: representable(snap.Created), Position: snap.Position, ProcessingTime: snap.ProcessingTime,
		Sources: slices.Clone(snap.Sources), Operators: []OperatorMeta{}, States: []StateRecord{}}
	if meta.Sources == nil {
		meta.Sources = []SourcePosition{}
	}
	slices.SortFunc(meta.Sources, func(a, b SourcePosition) int {
		if c := strings.Compare(a.Source, b.Source); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	ops := make([]*OperatorSnapshot, len(snap.Operators))
	for i := range snap.Operators {
		ops[i] = &snap.Operators[i]
	}
	slices.SortFunc(ops, func(a, b *OperatorSnapshot) int { return strings.Compare(a.ID, b.ID) })
	for _, op := range ops {
		if !validOperatorID(op.ID) {
			return nil, fmt.Errorf("savepoint: operator %q: id %q is not 32 lower-case hex digits", op.Name, op.ID)
		}
		if len(op.Subtasks) != op.Parallelism {
			return nil, fmt.Errorf("savepoint: operator %q: %d subtasks, parallelism %d", op.Name, len(op.Subtasks), op.Parallelism)
		}
		stats := &stateStats{metas: map[string]*state.StateMeta{}, op: op}
		for _, m := range op.States {
			m.OperatorID, m.OperatorName, m.Entries, m.Bytes = op.ID, op.Name, 0, 0
			if m.Scope == 0 {
				m.Scope = m.Kind.Scope()
			}
			stats.metas[m.StateName] = &m
		}
		om := OperatorMeta{ID: op.ID, UID: op.UID, Name: op.Name, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}
		for i, sub := range op.Subtasks {
			want := state.KeyGroupRangeFor(op.MaxParallelism, op.Parallelism, i)
			if sub.Index != i || sub.KeyGroups != want {
				return nil, fmt.Errorf("savepoint: operator %q: subtask %d has index %d and key groups %v, want %d and %v", op.Name, i, sub.Index, sub.KeyGroups, i, want)
			}
		}
		keyed, err := writeKeyedFiles(fs, tmp, op, stats, version)
		if err != nil {
			return nil, err
		}
		for i, sub := range op.Subtasks {
			want := state.KeyGroupRangeFor(op.MaxParallelism, op.Parallelism, i)
			sm := SubtaskMeta{Index: i, KeyGroups: KeyGroups{want.Start, want.End}, Keyed: keyed[i]}
			if len(sub.Operator) > 0 || hasOperatorState(op.States) {
				name := operatorFileName(op.ID, i)
				of, err := writeOperator(fs, fs.PathJoin(tmp, name), sub.Operator, stats)
				if err != nil {
					return nil, fmt.Errorf("savepoint: operator %q subtask %d: %w", op.Name, i, err)
				}
				of.Name = name
				sm.Operator = of
			}
			om.Subtasks = append(om.Subtasks, sm)
		}
		meta.Operators = append(meta.Operators, om)
		names := make([]string, 0, len(stats.metas))
		for n := range stats.metas {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			meta.States = append(meta.States, recordOf(*stats.metas[n]))
		}
	}
	// The reader's checks hold for what we wrote, or we wrote a bug.
	if err := meta.validate(); err != nil {
		return nil, fmt.Errorf("savepoint: refusing to write: %w", err)
	}
	return meta, nil
}

// representable clamps t to the years 0 to 9999 that JSON's RFC 3339 time
// can hold: "created" is for people, processing_time keeps the exact clock
// (a virtual clock advanced past year 9999 broke the write).
func representable(t time.Time) time.Time {
	t = t.UTC()
	if lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC); t.Before(lo) {
		return lo
	}
	if hi := time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC); t.After(hi) {
		return hi
	}
	return t
}

func hasOperatorState(ms []state.StateMeta) bool {
	for _, m := range ms {
		if m.Kind.Scope() == state.ScopeOperator {
			return true
		}
	}
	return false
}

// writeKeyedFiles writes the keyed files of an operator's subtasks, at most
// GOMAXPROCS at a time (each file is written and synced on its own, so the
// bytes do not depend on the order), and adds their entries to stats. The
// result has a file per subtask that has keyed state, nil for the others.
func writeKeyedFiles(fs vfs.FS, tmp string, op *OperatorSnapshot, stats *stateStats, version int) ([]*KeyedFile, error) {
	files := make([]*KeyedFile, len(op.Subtasks))
	errs := make([]error, len(op.Subtasks))
	subStats := make([]*stateStats, len(op.Subtasks))
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, sub := range op.Subtasks {
		if sub.Keyed == nil && sub.KeyedBatches == nil {
			continue
		}
		subStats[i] = stats.empty()
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() {
				<-sem
				wg.Done()
			}()
			name := keyedFileName(op.ID, i)
			kf, err := writeKeyed(fs, fs.PathJoin(tmp, name), sub, subStats[i], version)
			if err != nil {
				errs[i] = fmt.Errorf("savepoint: operator %q subtask %d: %w", op.Name, i, err)
				return
			}
			kf.Name = name
			files[i] = kf
		}()
	}
	wg.Wait()
	for i := range op.Subtasks {
		if errs[i] != nil {
			return nil, errs[i]
		}
	}
	for _, s := range subStats {
		if s != nil {
			stats.add(s)
		}
	}
	return files, nil
}

func writeKeyed(fs vfs.FS, path string, sub SubtaskSnapshot, stats *stateStats, version int) (*KeyedFile, error) {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	// Start writing back what was written every bytesPerSync bytes
	// (sync_file_range on Linux), while the rest is encoded: the final
	// sync then waits for the last part only.
	f = vfs.NewSyncingFile(f, vfs.SyncingFileOptions{BytesPerSync: bytesPerSync})
	kf, err := writeKeyedTo(f, sub, stats, version)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return kf, syncClose(f, path)
}

func writeKeyedTo(f vfs.File, sub SubtaskSnapshot, stats *stateStats, version int) (*KeyedFile, error) {
	sw := state.NewIndexedStreamWriter(f)
	if version < 2 {
		sw = state.NewStreamWriter(f)
	}
	kf := &KeyedFile{Sections: []Section{}}
	g := groupWriter{sw: sw, stats: stats}
	for kg := sub.KeyGroups.Start; kg <= sub.KeyGroups.End; kg++ {
		g.kg, g.begun = kg, false
		if sub.KeyedBatches != nil {
			for es, err := range sub.KeyedBatches(kg) {
				if err != nil {
					return nil, fmt.Errorf("key group %d: %w", kg, err)
				}
				if err := g.writeBatch(es); err != nil {
					return nil, err
				}
			}
		} else {
			for e, err := range sub.Keyed(kg) {
				if err != nil {
					return nil, fmt.Errorf("key group %d: %w", kg, err)
				}
				if err := g.write(&e); err != nil {
					return nil, err
				}
			}
		}
		if !g.begun {
			continue
		}
		g.count()
		gi, err := sw.EndKeyGroup()
		if err != nil {
			return nil, err
		}
		if gi.Size > maxSection {
			return nil, fmt.Errorf("key group %d is %d bytes, more than the %d MiB a savepoint section may hold: raise --max-parallelism to spread the state over more key groups", kg, gi.Size, maxSection>>20)
		}
		kf.Sections = append(kf.Sections, Section{KeyGroup: kg, Offset: gi.Offset, Size: gi.Size, CRC32C: gi.CRC32C, Entries: gi.Entries,
			IndexSize: gi.IndexSize, IndexCRC32C: gi.IndexCRC32C})
	}
	if err := sw.Flush(); err != nil {
		return nil, err
	}
	kf.Size = sw.Offset()
	return kf, nil
}

// groupWriter writes the entries of one key group at a time (kg, begun
// when its group is open) and counts them per state.
type groupWriter struct {
	sw    *state.StreamWriter
	stats *stateStats
	kg    int
	begun bool
	// m is the state of the entries since (n0, b0) of sw.Written: its
	// counts are added where the state changes, not per entry.
	m      *state.StateMeta
	cur    string
	n0, b0 int64
}

// count adds the entries since the state began to its counts.
func (g *groupWriter) count() {
	if g.m != nil {
		n, b := g.sw.Written()
		g.m.Entries += n - g.n0
		g.m.Bytes += b - g.b0
		g.m = nil
	}
}

// begin opens the group (at its first entry) and starts counting e's
// state when it is not the current one.
func (g *groupWriter) begin(e *state.Entry) error {
	if !g.begun {
		if err := g.sw.BeginKeyGroup(g.kg); err != nil {
			return err
		}
		g.begun = true
	}
	if g.m == nil || e.State != g.cur {
		g.count()
		m, err := g.stats.meta(e.State, state.ScopeKeyed)
		if err != nil {
			return err
		}
		g.m, g.cur = m, e.State
		g.n0, g.b0 = g.sw.Written()
	}
	return nil
}

func (g *groupWriter) write(e *state.Entry) error {
	if err := g.begin(e); err != nil {
		return err
	}
	return g.sw.WriteEntry(e)
}

// writeBatch writes es one run of a state at a time (WriteRun): the same
// bytes and counts as write of each entry.
func (g *groupWriter) writeBatch(es []state.Entry) error {
	for len(es) > 0 {
		if err := g.begin(&es[0]); err != nil {
			return err
		}
		n, err := g.sw.WriteRun(es)
		if err != nil {
			return err
		}
		es = es[n:]
	}
	return nil
}

func writeOperator(fs vfs.FS, path string, entries []state.OperatorEntry, stats *stateStats) (*OperatorFile, error) {
	es := slices.Clone(entries)
	slices.SortStableFunc(es, func(a, b state.OperatorEntry) int {
		if c := strings.Compare(a.State, b.State); c != 0 {
			return c
		}
		if a.Kind == state.KindBroadcast {
			return bytes.Compare(a.Key, b.Key)
		}
		return a.Position - b.Position
	})
	for _, e := range es {
		m, err := stats.meta(e.State, state.ScopeOperator)
		if err != nil {
			return nil, err
		}
		if e.Kind != m.Kind {
			return nil, fmt.Errorf("operator state %q: entry of kind %s, state of kind %s", e.State, e.Kind, m.Kind)
		}
		m.Entries++
		m.Bytes += int64(len(e.Key) + len(e.Value))
	}
	b := state.AppendOperatorEntries(nil, es)
	if len(b) > maxSection {
		return nil, fmt.Errorf("operator state is %d bytes, more than the %d MiB a savepoint's operator state file may hold", len(b), maxSection>>20)
	}
	// vfs.File.Write may modify what it is given: checksum first.
	of := &OperatorFile{Size: int64(len(b)), CRC32C: state.CRC32C(b), Entries: int64(len(es))}
	if err := writeFile(fs, path, b); err != nil {
		return nil, err
	}
	return of, nil
}
