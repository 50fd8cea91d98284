package pebblestate

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// DefaultCacheSize is the block cache of a backend whose Options leave it 0.
const DefaultCacheSize = 64 << 20

// commitThreshold is the size of the pending writes (writes.go) at which
// they are committed to the DB: it bounds their memory. (A variable so that
// tests commit all the time.)
var commitThreshold = 1 << 20

// Options configure a Backend.
type Options struct {
	// Dir is the pebble directory. Empty means a fresh temporary directory
	// (on vfs.Default) that Close removes.
	Dir string
	// FS is the file system; nil means vfs.Default. Tests use vfs.NewMem().
	FS vfs.FS
	// CacheSize is the block cache size in bytes; 0 means DefaultCacheSize.
	CacheSize int64
	// MaxParallelism is the number of key groups of the job; 0 means
	// state.DefaultMaxParallelism.
	MaxParallelism int
	// KeyGroups is the range of key groups this backend holds.
	KeyGroups state.KeyGroupRange
}

// Backend is a state.KeyedBackend on pebble. It is not safe for concurrent
// use; the runtime is single-threaded.
type Backend struct {
	db *pebble.DB
	// The pending writes and the values read back (writes.go): every read
	// and write goes through them; batch carries the dirty ones to the DB.
	pend      map[string]*pending
	last      *pending // the entry the last get found
	dirty     []*pending
	pendBytes int
	noteGen   uint64
	batch     *pebble.Batch
	iters     int // open iterators
	groups    state.KeyGroupRange
	maxPar    int
	tempDir   string // removed by Close when Open created it
	dir       string
	bg        *backgroundError
	log       *fatalLogger

	key      []byte // current key as given
	keyEsc   []byte // current key escaped and terminated
	keyGroup int
	hasKey   bool

	byName map[string]*stateInfo
	sorted []*stateInfo // by name: Entries and States order
	nextID uint16
	closed bool

	// Incremental checkpoints (checkpoints.go).
	marks       []pmark
	nextMark    uint64
	rollingBack bool
}

var _ state.IncrementalBackend = (*Backend)(nil)

// stateInfo is one state known to the backend: declared, restored or a
// timer queue.
type stateInfo struct {
	meta  state.StateMeta
	id    uint16
	table *table      // nil until registered (and for timers)
	queue *timerQueue // timer states only
	// declared is set once Timers asked for a restored queue.
	declared bool
}

// Open creates an empty backend. It refuses a Dir that already holds a
// pebble store: state is only ever rebuilt from a snapshot, never reopened.
func Open(opts Options) (*Backend, error) {
	if opts.MaxParallelism == 0 {
		opts.MaxParallelism = state.DefaultMaxParallelism
	}
	if opts.MaxParallelism < 0 || opts.MaxParallelism > 1<<15 {
		return nil, fmt.Errorf("pebblestate: max parallelism %d out of [1, 32768]", opts.MaxParallelism)
	}
	if g := opts.KeyGroups; g.Start < 0 || g.End >= opts.MaxParallelism {
		return nil, fmt.Errorf("pebblestate: key groups %s outside [0, %d)", g, opts.MaxParallelism)
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultCacheSize
	}
	fs, dir, tempDir := opts.FS, opts.Dir, ""
	if fs == nil {
		fs = vfs.Default
	}
	if dir == "" {
		if fs == vfs.Default {
			d, err := os.MkdirTemp("", "streamdbg-pebble-")
			if err != nil {
				return nil, fmt.Errorf("pebblestate: %w", err)
			}
			dir, tempDir = d, d
		} else {
			dir = "pebblestate"
		}
	}
	cache := pebble.NewCache(opts.CacheSize)
	defer cache.Unref() // the DB holds its own reference
	po := pebbleOptions(fs, cache)
	bg := &backgroundError{}
	po.EventListener = &pebble.EventListener{BackgroundError: bg.record}
	po.MemTableStopWritesThreshold = stopWritesThreshold
	po.MemTableSize = memTableSize
	logger := &fatalLogger{dir: dir, exit: fatalExit}
	po.Logger = logger
	var db *pebble.DB
	err := logger.guard(func() (err error) { db, err = pebble.Open(dir, po); return err })
	if err != nil {
		if tempDir != "" {
			os.RemoveAll(tempDir)
		}
		return nil, fmt.Errorf("pebblestate: open %s: %w", dir, err)
	}
	return &Backend{
		db:      db,
		batch:   db.NewBatch(),
		pend:    map[string]*pending{},
		groups:  opts.KeyGroups,
		maxPar:  opts.MaxParallelism,
		tempDir: tempDir,
		byName:  map[string]*stateInfo{},
		nextID:  1,
		dir:     dir,
		bg:      bg,
		log:     logger,
	}, nil
}

// Pebble's write stall: a commit waits while the memtables (the mutable one
// and those waiting for their flush) hold stopWritesThreshold x
// memTableSize bytes, and nothing interrupts that wait.
const (
	stopWritesThreshold = 4
	memTableSize        = 4 << 20 // pebble's default
)

// waitForRoom returns once a commit cannot stall, or with the background
// error that would make it stall forever. (On a full disk every flush
// fails and is retried without end.) It waits from one memtable below the
// stall: the queued memtables then hold at least 8 MiB, more than pebble's
// flush threshold (half a memtable), so a flush is running, and either
// frees room or fails with the error waited for.
func (b *Backend) waitForRoom() error {
	for {
		if err := b.bg.check(b.dir); err != nil {
			return err
		}
		if b.db.Metrics().MemTable.Size < (stopWritesThreshold-1)*memTableSize {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

// backgroundError keeps the first error of pebble's background work
// (flushes, compactions): on a full disk a flush fails and is retried
// forever, and writes would then wait in the write stall without end.
type backgroundError struct{ err atomic.Pointer[error] }

func (b *backgroundError) record(err error) { b.err.CompareAndSwap(nil, &err) }

// check fails once background work has failed, naming the directory.
func (b *backgroundError) check(dir string) error {
	p := b.err.Load()
	if p == nil {
		return nil
	}
	if vfs.IsNoSpaceError(*p) {
		return fmt.Errorf("pebblestate: %s: disk full, the state backend cannot write its files (free space, or set --state-dir to a larger disk): %w", dir, *p)
	}
	return fmt.Errorf("pebblestate: %s: the state backend cannot write its files: %w", dir, *p)
}

// pebbleOptions are the options of every store (the benchmark's raw store
// too, so that its baseline differs only by the backend's own work).
func pebbleOptions(fs vfs.FS, cache *pebble.Cache) *pebble.Options {
	return &pebble.Options{
		FS:            fs,
		Cache:         cache,
		DisableWAL:    true,
		ErrorIfExists: true,
		Logger:        quietLogger{},
		// INVARIANT: list values are concatenations of length-prefixed
		// elements, so concatenating operands is appending elements.
		Merger: listMerger,
	}
}

// quietLogger drops pebble's log lines: they would land on the terminal the
// TUI draws on. Its Fatalf panics; Open sets a fatalLogger instead.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebblestate: fatal: "+format, args...))
}

// fatalLogger is quietLogger with a Fatalf that never shows a Go panic to
// a user. Pebble calls Fatalf on errors it cannot unwind, such as a
// MANIFEST write on a full disk, and Fatalf must not return. Called within
// guard (Open, commits, Close: the calls this package makes), it panics
// with a value guard turns back into an error; called from pebble's own
// background work, which no caller waits for, it prints the error naming
// the directory and ends the process with status 1.
type fatalLogger struct {
	quietLogger
	dir     string
	exit    func(error) // fatalExit when the backend was opened
	guarded atomic.Int32
}

type fatalPanic struct{ err error }

func (l *fatalLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	err := fmt.Errorf("pebblestate: %s: %s", l.dir, msg)
	for _, a := range args {
		if e, ok := a.(error); ok && vfs.IsNoSpaceError(e) {
			err = fmt.Errorf("pebblestate: %s: disk full, the state backend cannot write its files (free space, or set --state-dir to a larger disk): %s", l.dir, msg)
		}
	}
	if l.guarded.Load() > 0 {
		panic(fatalPanic{err})
	}
	l.exit(err)
	select {} // Fatalf must not return; exit only returns in tests
}

// fatalExit ends the process for an error of pebble's background work.
// Tests replace it to see the error without the test binary ending; a
// backend keeps the one it was opened with.
var fatalExit = func(err error) {
	fmt.Fprintf(os.Stderr, "streamdbg: %v\n", err)
	os.Exit(1)
}

// guard runs f, turning a Fatalf during it into its error.
func (l *fatalLogger) guard(f func() error) (err error) {
	l.guarded.Add(1)
	defer func() {
		l.guarded.Add(-1)
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = fp.err
		}
	}()
	return f()
}

// KeyGroups is the range of key groups this backend holds.
func (b *Backend) KeyGroups() state.KeyGroupRange { return b.groups }

// MaxParallelism is the number of key groups of the job.
func (b *Backend) MaxParallelism() int { return b.maxPar }

// SetCurrentKey sets the key (encoded) and its key group for all tables.
func (b *Backend) SetCurrentKey(key []byte, keyGroup int) {
	if b.key == nil {
		// Set, the key is never nil, as the heap backend's: an empty key
		// (the empty string's) was nil until a longer one had been set,
		// and a timer of key "" fired with no current key.
		b.key = make([]byte, 0, 32)
	}
	b.key = append(b.key[:0], key...)
	b.keyEsc = appendEscaped(b.keyEsc[:0], key)
	b.keyGroup = keyGroup
	b.hasKey = true
}

// CurrentKey returns what SetCurrentKey set.
func (b *Backend) CurrentKey() ([]byte, int) { return b.key, b.keyGroup }

// States lists every declared, restored and timer state, ordered by name,
// with entry and byte counts. It reads every entry: O(state size).
// Describe implements state.KeyedBackend: States without counting.
func (b *Backend) Describe() []state.StateMeta {
	out := make([]state.StateMeta, len(b.sorted))
	for i, si := range b.sorted {
		out[i] = si.meta
		out[i].Entries, out[i].Bytes = 0, 0
	}
	return out
}

func (b *Backend) States() []state.StateMeta {
	out := make([]state.StateMeta, len(b.sorted))
	for i, si := range b.sorted {
		m := si.meta
		m.Entries, m.Bytes = 0, 0
		for e, err := range b.stateEntries(si, b.groups.Start, b.groups.End) {
			if err != nil {
				break // States has no error; Entries reports it
			}
			m.Entries++
			m.Bytes += int64(e.Size())
		}
		out[i] = m
	}
	return out
}

// Register declares a state, or returns the table already declared under
// that name; a restored state becomes readable through d's codecs here.
func (b *Backend) Register(d state.StateDesc) (state.Table, error) {
	if b.closed {
		return nil, errClosed
	}
	name := d.Meta.StateName
	if err := checkDesc(d); err != nil {
		return nil, err
	}
	d.Meta.Scope = state.ScopeKeyed
	d.Meta.Entries, d.Meta.Bytes = 0, 0
	if d.Meta.NamespaceType == "" && d.Namespace != nil {
		d.Meta.NamespaceType = d.Namespace.TypeName()
	}
	si := b.byName[name]
	if si == nil {
		var err error
		if si, err = b.addState(d.Meta); err != nil {
			return nil, err
		}
	} else if why := si.meta.Compatible(d.Meta); why != "" {
		if si.table != nil {
			return nil, fmt.Errorf("pebblestate: state %q declared twice: %s", name, why)
		}
		return nil, fmt.Errorf("pebblestate: restored state %q cannot be read as declared: %s", name, why)
	}
	if si.table == nil {
		si.meta = d.Meta
		si.table = &table{b: b, id: si.id, desc: d, kind: d.Meta.Kind}
	}
	return si.table, nil
}

func checkDesc(d state.StateDesc) error {
	name := d.Meta.StateName
	switch {
	case name == "":
		return errors.New("pebblestate: state without a name")
	case state.TimerDomain(name) != "":
		return fmt.Errorf("pebblestate: state name %q is reserved for timers", name)
	case d.Value == nil:
		return fmt.Errorf("pebblestate: state %q has no value codec", name)
	}
	switch d.Meta.Kind {
	case state.KindValue, state.KindList, state.KindReducing, state.KindAggregating:
	case state.KindMap:
		if d.UserKey == nil {
			return fmt.Errorf("pebblestate: map state %q has no user key codec", name)
		}
	default:
		return fmt.Errorf("pebblestate: state %q: kind %s is not keyed state", name, d.Meta.Kind)
	}
	return nil
}

// Timers returns the timer queue called name.
func (b *Backend) Timers(name string, meta state.StateMeta) (state.TimerQueue, error) {
	if b.closed {
		return nil, errClosed
	}
	if name == "" {
		return nil, errors.New("pebblestate: timer queue without a name")
	}
	meta.StateName, meta.Scope, meta.Kind = state.TimerStateName(name), state.ScopeKeyed, state.KindTimers
	meta.Entries, meta.Bytes = 0, 0
	if meta.UserKeyType == "" {
		meta.UserKeyType = state.Int64.TypeName()
	}
	if si := b.byName[meta.StateName]; si != nil {
		if si.queue == nil {
			return nil, fmt.Errorf("pebblestate: restored state %q is %s, not timers", meta.StateName, si.meta.Kind)
		}
		if !si.declared {
			si.meta, si.declared = meta, true
		}
		return si.queue, nil
	}
	si, err := b.addState(meta)
	if err != nil {
		return nil, err
	}
	si.declared = true
	return si.queue, nil
}

// addState assigns ids to a new state (two for a timer queue: its entries
// and its firing order).
func (b *Backend) addState(meta state.StateMeta) (*stateInfo, error) {
	timers := meta.Kind == state.KindTimers
	need := uint16(1)
	if timers {
		need = 2
	}
	if int(b.nextID)+int(need) > maxState {
		return nil, fmt.Errorf("pebblestate: too many states (%d)", len(b.sorted))
	}
	si := &stateInfo{meta: meta, id: b.nextID}
	b.nextID++
	if timers {
		si.queue = &timerQueue{b: b, name: meta.StateName, id: si.id, orderID: b.nextID}
		b.nextID++
	}
	b.byName[meta.StateName] = si
	i, _ := slices.BinarySearchFunc(b.sorted, meta.StateName, func(s *stateInfo, n string) int {
		return cmp.Compare(s.meta.StateName, n)
	})
	b.sorted = slices.Insert(b.sorted, i, si)
	return si, nil
}

// Close releases the store; it does not commit pending writes, since state
// is only ever rebuilt from a snapshot.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.closeMarks()
	err := b.batch.Close()
	if cerr := b.log.guard(b.db.Close); err == nil {
		err = cerr
	}
	if b.tempDir != "" {
		if rerr := os.RemoveAll(b.tempDir); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("pebblestate: close: %w", err)
	}
	return nil
}

var errClosed = errors.New("pebblestate: backend closed")

// maybeCommit flushes the pending writes once they are large.
func (b *Backend) maybeCommit() error {
	if b.pendBytes < commitThreshold {
		return nil
	}
	return b.commit()
}

// commit writes the pending writes (writes.go) to the DB in one batch.
func (b *Backend) commit() error {
	if len(b.dirty) == 0 {
		return nil
	}
	// INVARIANT: no commit after a failed flush. Commits are the only
	// writes that can stall, and a failed flush never frees a memtable.
	if err := b.waitForRoom(); err != nil {
		return err
	}
	if err := b.fillBatch(); err != nil {
		return err
	}
	err := b.log.guard(func() error { return b.batch.Commit(pebble.NoSync) })
	b.batch.Reset()
	if err != nil {
		if vfs.IsNoSpaceError(err) {
			return fmt.Errorf("pebblestate: %s: disk full: %w", b.dir, err)
		}
		return fmt.Errorf("pebblestate: commit: %w", err)
	}
	b.committed()
	return nil
}

// newIter opens an iterator over [lo, hi) of the DB once the pending
// writes are in it; closeIter must follow. The iterator sees the state as
// it was when it opened: writes made while it is open go to later reads.
func (b *Backend) newIter(lo, hi []byte) (*pebble.Iterator, error) {
	if err := b.commit(); err != nil {
		return nil, err
	}
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("pebblestate: %w", err)
	}
	b.iters++
	return it, nil
}

func (b *Backend) closeIter(it *pebble.Iterator) error {
	b.iters--
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestate: %w", err)
	}
	return nil
}

// scan calls fn for every key with the given prefix, in order, until fn
// returns false. fn may write: the iterator does not see those writes.
func (b *Backend) scan(prefix []byte, fn func(k, v []byte) bool) error {
	it, err := b.newIter(prefix, successor(nil, prefix))
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			b.closeIter(it)
			return fmt.Errorf("pebblestate: %w", err)
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	if err := b.closeIter(it); err != nil {
		return err
	}
	return b.maybeCommit()
}

// deletePrefix deletes every key with the given prefix, one point deletion
// each: range tombstones would pile up in the memtable and slow every read.
func (b *Backend) deletePrefix(prefix []byte) error {
	var derr error
	err := b.scan(prefix, func(k, _ []byte) bool {
		derr = b.del(k)
		return derr == nil
	})
	if err != nil {
		return err
	}
	return derr
}
