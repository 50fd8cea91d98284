package savepoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdbg/state"
)

// Savepoint is an open savepoint directory. Opening reads _metadata only;
// state files are read section by section when asked, every section checked
// against its CRC32C. It implements state.Catalog. It is safe for
// concurrent use: it holds no open files between calls.
type Savepoint struct {
	fs   vfs.FS
	dir  string
	meta *Metadata
	// indexed: the keyed files' sections are indexed groups (format 2).
	indexed bool

	ops    []*operator
	byID   map[string]*operator
	states []state.StateMeta
}

type operator struct {
	meta   *OperatorMeta
	info   state.OperatorInfo
	states []state.StateMeta
	byName map[string]state.StateMeta
	// keyType is the key type of the operator's keyed states, for states
	// (timers) that do not name one.
	keyType string
}

var _ state.Catalog = (*Savepoint)(nil)

// Open opens the savepoint in dir: it reads and checks _metadata and checks
// that every state file it lists has the recorded size.
func Open(fs vfs.FS, dir string) (*Savepoint, error) {
	path := fs.PathJoin(dir, MetadataFile)
	f, _, err := openRegular(fs, path)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMetadata+1))
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("savepoint: read %s: %w", path, err)
	}
	if len(b) > maxMetadata {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, path, maxMetadata)
	}
	meta := &Metadata{}
	if err := json.Unmarshal(b, meta); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	if err := meta.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Savepoint{fs: fs, dir: dir, meta: meta, indexed: meta.Version >= 2, byID: map[string]*operator{}}
	for i := range meta.Operators {
		om := &meta.Operators[i]
		name := om.Name
		if name == "" {
			name = om.UID
		}
		if name == "" {
			name = om.ID
		}
		op := &operator{meta: om, byName: map[string]state.StateMeta{},
			info: state.OperatorInfo{ID: om.ID, UID: om.UID, Name: name, Parallelism: om.Parallelism, MaxParallelism: om.MaxParallelism}}
		s.ops = append(s.ops, op)
		s.byID[om.ID] = op
		for _, sub := range om.Subtasks {
			if sub.Keyed != nil {
				if err := s.checkSize(sub.Keyed.Name, sub.Keyed.Size); err != nil {
					return nil, err
				}
			}
			if sub.Operator != nil {
				if err := s.checkSize(sub.Operator.Name, sub.Operator.Size); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, r := range meta.States {
		m, _ := r.Meta() // validated
		op := s.byID[m.OperatorID]
		op.states = append(op.states, m)
		op.byName[m.StateName] = m
		if m.Scope == state.ScopeKeyed && op.keyType == "" {
			op.keyType = m.KeyType
		}
		s.states = append(s.states, m)
	}
	return s, nil
}

func (s *Savepoint) checkSize(name string, size int64) error {
	path := s.fs.PathJoin(s.dir, name)
	fi, err := lstat(s.fs, path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			// _metadata lists it: the savepoint is not complete.
			return fmt.Errorf("%w: %s, listed in _metadata, is missing: %w", ErrInvalid, path, err)
		}
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return err
	}
	if fi.Size() != size {
		return fmt.Errorf("savepoint: %s: %d bytes, _metadata says %d (truncated or overwritten): %w", path, fi.Size(), size, ErrChecksum)
	}
	return nil
}

// Meta is the parsed _metadata.
func (s *Savepoint) Meta() *Metadata { return s.meta }

// Dir is the savepoint's directory.
func (s *Savepoint) Dir() string { return s.dir }

// Operators implements state.Catalog, ordered by operator id.
func (s *Savepoint) Operators() []state.OperatorInfo {
	out := make([]state.OperatorInfo, len(s.ops))
	for i, op := range s.ops {
		out[i] = op.info
	}
	return out
}

// Operator describes one operator, including its max parallelism (a
// restore must keep it for keyed state).
func (s *Savepoint) Operator(id string) (state.OperatorInfo, bool) {
	op, ok := s.byID[id]
	if !ok {
		return state.OperatorInfo{}, false
	}
	return op.info, true
}

// MaxParallelism is the max parallelism the keyed state was written with,
// which a restore keeps: that of every operator with keyed state, or 0
// when there is none or they differ.
func (s *Savepoint) MaxParallelism() int {
	n := 0
	for _, m := range s.states {
		if m.Scope != state.ScopeKeyed {
			continue
		}
		switch mp := s.byID[m.OperatorID].info.MaxParallelism; {
		case n == 0:
			n = mp
		case n != mp:
			return 0
		}
	}
	return n
}

// States implements state.Catalog: every state of every operator, with
// entry counts and bytes, ordered by operator id and state name.
func (s *Savepoint) States() []state.StateMeta { return slices.Clone(s.states) }

// StateMetasFor lists the states of one operator, ordered by name.
func (s *Savepoint) StateMetasFor(operatorID string) []state.StateMeta {
	if op, ok := s.byID[operatorID]; ok {
		return slices.Clone(op.states)
	}
	return nil
}

// sectionReader reads sections of one file, opening it on the first read.
type sectionReader struct {
	s    *Savepoint
	name string
	f    vfs.File
	buf  []byte
	// reuse lets consecutive sections share one buffer; only when what
	// the consumer gets never outlives an iteration step.
	reuse bool
}

func (r *sectionReader) close() {
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}

// open opens the file once.
func (r *sectionReader) open() error {
	if r.f != nil {
		return nil
	}
	f, _, err := openRegular(r.s.fs, r.s.fs.PathJoin(r.s.dir, r.name))
	if err != nil {
		return err
	}
	r.f = f
	return nil
}

// section names a section in errors: "key group 5" and what follows, or
// what alone for kg < 0. It is formatted only for an error.
type section struct {
	kg   int
	what string
}

func (s section) String() string {
	if s.kg < 0 {
		return s.what
	}
	return fmt.Sprintf("key group %d%s", s.kg, s.what)
}

// read returns the checked bytes of [off, off+size); what names the section
// in errors.
func (r *sectionReader) read(off, size int64, crc uint32, what section) ([]byte, error) {
	if err := r.open(); err != nil {
		return nil, err
	}
	b, err := r.readInto(r.buf, off, size, crc, what)
	if r.reuse && err == nil {
		r.buf = b
	}
	return b, err
}

// readInto reads and checks [off, off+size) into dst when it is large
// enough, else into a new buffer. The file must be open; ReadAt is safe to
// call while another section is decoded.
func (r *sectionReader) readInto(dst []byte, off, size int64, crc uint32, what section) ([]byte, error) {
	// INVARIANT: size ≤ maxSection and off+size ≤ the file size recorded
	// in _metadata (validate), so this allocation is bounded.
	b, err := r.readAt(dst, off, size, what)
	if err != nil {
		return nil, err
	}
	if got := state.CRC32C(b); got != crc {
		path := r.s.fs.PathJoin(r.s.dir, r.name)
		return nil, fmt.Errorf("savepoint: %s: %s at offset %d (%d bytes): %w (crc32c %08x, _metadata says %08x)", path, what, off, size, ErrChecksum, got, crc)
	}
	return b, nil
}

// readAt reads [off, off+size) of the open file into dst when it is large
// enough, else into a new buffer; what names the bytes in errors (a file
// that ends early is a checksum error: its bytes are not all there).
func (r *sectionReader) readAt(dst []byte, off, size int64, what any) ([]byte, error) {
	var b []byte
	if int64(cap(dst)) >= size {
		b = dst[:size]
	} else {
		b = make([]byte, size)
	}
	n, err := r.f.ReadAt(b, off)
	if int64(n) < size {
		path := r.s.fs.PathJoin(r.s.dir, r.name)
		if err == nil || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("savepoint: %s: %s at offset %d: file ends after %d of its %d bytes: %w", path, what, off, n, size, ErrChecksum)
		}
		return nil, fmt.Errorf("savepoint: %s: %s at offset %d: %w", path, what, off, err)
	}
	return b, nil
}

// sectionsIn returns the sections of f whose key groups are in kgs (sorted,
// deduplicated; nil means all), or in groups when kgs is nil and groups is
// not empty.
func sectionsIn(f *KeyedFile, kgs []int) []Section {
	if kgs == nil {
		return f.Sections
	}
	var out []Section
	for _, kg := range kgs {
		i, ok := slices.BinarySearchFunc(f.Sections, kg, func(s Section, kg int) int { return s.KeyGroup - kg })
		if ok {
			out = append(out, f.Sections[i])
		}
	}
	return out
}

// scanKeyed calls fn with every entry (and a nil error) of the given
// sections of a keyed file, until fn returns false. It reports whether it ran to the end.
func (s *Savepoint) scanKeyed(f *KeyedFile, secs []Section, reuse bool, fn func(state.Entry, error) bool) (bool, error) {
	var sr state.StreamReader
	return s.scanSections(f, secs, reuse, func(sec Section, b []byte) (bool, error) {
		return s.decodeSection(&sr, f, sec, b, fn)
	})
}

// scanSections calls fn with the checked bytes of every given section of a
// keyed file, in order, until fn returns false or an error. With reuse, the
// bytes are only valid during the call.
func (s *Savepoint) scanSections(f *KeyedFile, secs []Section, reuse bool, fn func(Section, []byte) (bool, error)) (bool, error) {
	if len(secs) == 0 {
		return true, nil
	}
	r := &sectionReader{s: s, name: f.Name, reuse: reuse}
	defer r.close()
	if err := r.open(); err != nil {
		return false, err
	}
	// Read the next section while this one is decoded: the file and the
	// decoder each get a core. Two buffers alternate when reuse is allowed:
	// a section's bytes are consumed before its buffer is read into again.
	var bufs [2][]byte
	type read struct {
		b   []byte
		err error
	}
	fetch := func(i int) chan read {
		ch := make(chan read, 1)
		sec := secs[i]
		var dst []byte
		if reuse {
			dst = bufs[i%2]
		}
		go func() {
			b, err := r.readInto(dst, sec.Offset, sec.Size, sec.CRC32C, section{kg: sec.KeyGroup})
			ch <- read{b, err}
		}()
		return ch
	}
	next := fetch(0)
	// INVARIANT: no read is in flight when this function returns, so the
	// file is never closed under a reader.
	defer func() {
		if next != nil {
			<-next
		}
	}()
	for i, sec := range secs {
		got := <-next
		next = nil
		if got.err != nil {
			return false, got.err
		}
		if reuse {
			bufs[i%2] = got.b
		}
		if i+1 < len(secs) {
			next = fetch(i + 1)
		}
		more, err := fn(sec, got.b)
		if err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// decodeSection yields the entries of one checked section, reading with sr.
func (s *Savepoint) decodeSection(sr *state.StreamReader, f *KeyedFile, sec Section, b []byte, fn func(state.Entry, error) bool) (bool, error) {
	bad := func(err error) error { return s.sectionErr(f, sec, err) }
	if err := s.openSection(sr, f, sec, b); err != nil {
		return false, err
	}
	var n int64
	var e state.Entry
	for {
		ok, err := sr.Read(&e)
		if err != nil {
			return false, bad(err)
		}
		if !ok {
			break
		}
		n++
		if !fn(e, nil) {
			return false, nil
		}
	}
	if err := s.closeSection(sr, f, sec, n); err != nil {
		return false, err
	}
	return true, nil
}

// sectionErr names the file and key group of a section's error.
func (s *Savepoint) sectionErr(f *KeyedFile, sec Section, err error) error {
	return fmt.Errorf("savepoint: %s: key group %d: %w", s.fs.PathJoin(s.dir, f.Name), sec.KeyGroup, err)
}

// openSection points sr at the checked section b and reads its group
// header: the key group _metadata names, in the savepoint's format.
func (s *Savepoint) openSection(sr *state.StreamReader, f *KeyedFile, sec Section, b []byte) error {
	sr.ResetBytes(b, sec.Offset)
	kg, ok, err := sr.NextKeyGroup()
	if err != nil {
		return s.sectionErr(f, sec, err)
	}
	if !ok || kg != sec.KeyGroup {
		return s.sectionErr(f, sec, fmt.Errorf("section holds key group %d: %w", kg, state.ErrCorrupt))
	}
	if err := s.checkGroupKind(sr, sec); err != nil {
		return s.sectionErr(f, sec, err)
	}
	return nil
}

// closeSection checks that a section read to its end held the n entries
// _metadata says and nothing after them.
func (s *Savepoint) closeSection(sr *state.StreamReader, f *KeyedFile, sec Section, n int64) error {
	if !sr.Done() || n != sec.Entries {
		return s.sectionErr(f, sec, fmt.Errorf("offset %d: %d entries, _metadata says %d, or bytes after them: %w", sr.Offset(), n, sec.Entries, state.ErrCorrupt))
	}
	return nil
}

// checkGroupKind refuses a section whose group is not of the savepoint's
// format: indexed groups in format 2, plain ones in format 1.
func (s *Savepoint) checkGroupKind(sr *state.StreamReader, sec Section) error {
	if sr.Indexed() != s.indexed {
		return fmt.Errorf("offset %d: section is not a group of format %d: %w", sec.Offset, s.meta.Version, state.ErrCorrupt)
	}
	return nil
}

// readOperator reads and decodes one subtask's operator state file.
func (s *Savepoint) readOperator(f *OperatorFile) ([]state.OperatorEntry, error) {
	r := &sectionReader{s: s, name: f.Name}
	defer r.close()
	b, err := r.read(0, f.Size, f.CRC32C, section{kg: -1, what: "operator state"})
	if err != nil {
		return nil, err
	}
	es, err := state.DecodeOperatorEntries(b, 0)
	if err == nil && int64(len(es)) != f.Entries {
		err = fmt.Errorf("%d entries, _metadata says %d: %w", len(es), f.Entries, state.ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("savepoint: %s: %w", s.fs.PathJoin(s.dir, f.Name), err)
	}
	return es, nil
}

func normalizeGroups(kgs []int) []int {
	if kgs == nil {
		return nil
	}
	out := slices.Clone(kgs)
	slices.Sort(out)
	return slices.Compact(out)
}

// keyedScan runs fn over the entries of every selected operator and subtask.
func (s *Savepoint) keyedScan(operatorID string, kgs []int, reuse bool, fn func(op *operator, sub *SubtaskMeta, e state.Entry) bool) error {
	kgs = normalizeGroups(kgs)
	for _, op := range s.ops {
		if operatorID != "" && op.info.ID != operatorID {
			continue
		}
		for i := range op.meta.Subtasks {
			sub := &op.meta.Subtasks[i]
			if sub.Keyed == nil {
				continue
			}
			more, err := s.scanKeyed(sub.Keyed, sectionsIn(sub.Keyed, kgs), reuse, func(e state.Entry, _ error) bool { return fn(op, sub, e) })
			if err != nil || !more {
				return err
			}
		}
	}
	return nil
}

func isTimer(m state.StateMeta) bool {
	return m.Kind == state.KindTimers || state.TimerDomain(m.StateName) != ""
}

// display decodes bytes of a stored type name into a dynamic value; bytes
// of an unknown or empty type, or that do not decode, show as Hex.
func display(typeName string, b []byte) any {
	return displayer(typeName)(b)
}

// displayer resolves a type name's display once, for a scan to call per row:
// unknown types and undecodable bytes show as Hex.
func displayer(typeName string) func([]byte) any {
	f, ok := state.LookupDisplay(typeName)
	if typeName == "" || !ok {
		return func(b []byte) any {
			if typeName == "" && len(b) == 0 {
				return nil
			}
			return state.Hex(bytes.Clone(b))
		}
	}
	return func(b []byte) any {
		v, err := f(b)
		if err != nil {
			return state.Hex(bytes.Clone(b))
		}
		return v
	}
}

// rowDisplay holds the displays of one state's columns.
type rowDisplay struct {
	key, ns, value, userKey func([]byte) any
}

func newRowDisplay(m state.StateMeta) rowDisplay {
	return rowDisplay{key: displayer(m.KeyType), ns: displayer(m.NamespaceType), value: displayer(m.ValueType), userKey: displayer(m.UserKeyType)}
}

// Timers implements state.Catalog.
func (s *Savepoint) Timers(scan state.TimerScan) iter.Seq2[state.TimerRow, error] {
	return s.timers(scan, "")
}

// TimersOfState streams the timers of one timer state (TimerStateReader).
func (s *Savepoint) TimersOfState(scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error] {
	return s.timers(scan, stateName)
}

func (s *Savepoint) timers(scan state.TimerScan, stateName string) iter.Seq2[state.TimerRow, error] {
	return func(yield func(state.TimerRow, error) bool) {
		var stop error
		err := s.keyedScan(scan.OperatorID, scan.KeyGroups, false, func(op *operator, sub *SubtaskMeta, e state.Entry) bool {
			domain := state.TimerDomain(e.State)
			if domain == "" || stateName != "" && e.State != stateName {
				return true
			}
			m := op.byName[e.State]
			keyType := m.KeyType
			if keyType == "" {
				keyType = op.keyType
			}
			ts, err := state.Int64.Decode(e.UserKey)
			if err != nil {
				stop = fmt.Errorf("savepoint: operator %s: timer state %q in key group %d: timestamp: %w", op.info.Name, e.State, e.KeyGroup, err)
				return false
			}
			return yield(state.TimerRow{OperatorID: op.info.ID, OperatorName: op.info.Name, Subtask: sub.Index, KeyGroup: e.KeyGroup,
				StateName: e.State, Key: display(keyType, e.Key), Namespace: display(m.NamespaceType, e.Namespace), Domain: domain, Timestamp: ts}, nil)
		})
		if err == nil {
			err = stop
		}
		if err != nil {
			yield(state.TimerRow{}, err)
		}
	}
}

// OperatorState implements state.Catalog.
func (s *Savepoint) OperatorState(scan state.OperatorScan) iter.Seq2[state.OperatorRow, error] {
	return func(yield func(state.OperatorRow, error) bool) {
		for _, op := range s.ops {
			if scan.OperatorID != "" && op.info.ID != scan.OperatorID {
				continue
			}
			if scan.StateName != "" {
				if m, ok := op.byName[scan.StateName]; !ok || m.Scope != state.ScopeOperator {
					continue
				}
			}
			for _, sub := range op.meta.Subtasks {
				if sub.Operator == nil {
					continue
				}
				es, err := s.readOperator(sub.Operator)
				if err != nil {
					yield(state.OperatorRow{}, err)
					return
				}
				for _, e := range es {
					if scan.StateName != "" && e.State != scan.StateName {
						continue
					}
					m := op.byName[e.State]
					row := state.OperatorRow{OperatorID: op.info.ID, OperatorName: op.info.Name, Subtask: sub.Index,
						StateName: e.State, Kind: e.Kind, Position: e.Position, Value: display(m.ValueType, e.Value)}
					if e.Kind == state.KindBroadcast {
						row.Key = display(m.UserKeyType, e.Key)
					}
					if !yield(row, nil) {
						return
					}
				}
			}
		}
	}
}

// KeyGroupOf implements state.Catalog: the key literal is encoded with the
// state's key type by state.EncodeKeyLiteral, as the live catalog does.
func (s *Savepoint) KeyGroupOf(meta state.StateMeta, key any) (int, bool) {
	op, ok := s.byID[meta.OperatorID]
	if !ok {
		return 0, false
	}
	keyType := meta.KeyType
	if keyType == "" {
		keyType = op.byName[meta.StateName].KeyType
	}
	if keyType == "" {
		keyType = op.keyType
	}
	b, ok := state.EncodeKeyLiteral(keyType, key)
	if !ok {
		return 0, false
	}
	return state.KeyGroupFor(b, op.info.MaxParallelism), true
}

// KeyedEntriesFor yields the keyed entries of one operator in the key groups
// of groups, from every old subtask whose range overlaps them: a restore at
// any parallelism reads its range with it. Key groups come in increasing
// order, entries in Entry order. The slices of an entry are only valid
// during its iteration step. An operator the savepoint does not hold yields
// nothing. KeyedBatchesFor yields the same entries in batches, for
// consumers of millions.
func (s *Savepoint) KeyedEntriesFor(operatorID string, groups state.KeyGroupRange) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		err := s.keyedSections(operatorID, groups, func(f *KeyedFile, secs []Section) (bool, error) {
			return s.scanKeyed(f, secs, true, yield)
		})
		if err != nil {
			yield(state.Entry{}, err)
		}
	}
}

// keyedSections calls fn with each subtask's keyed file of an operator and
// its sections in groups, in subtask order, until fn returns false or an
// error, which it returns.
func (s *Savepoint) keyedSections(operatorID string, groups state.KeyGroupRange, fn func(f *KeyedFile, secs []Section) (bool, error)) error {
	op, ok := s.byID[operatorID]
	if !ok || groups.Len() == 0 {
		return nil
	}
	for _, sub := range op.meta.Subtasks {
		if sub.Keyed == nil || sub.KeyGroups.End < groups.Start || sub.KeyGroups.Start > groups.End {
			continue
		}
		lo, _ := slices.BinarySearchFunc(sub.Keyed.Sections, groups.Start, func(s Section, kg int) int { return s.KeyGroup - kg })
		hi, _ := slices.BinarySearchFunc(sub.Keyed.Sections, groups.End+1, func(s Section, kg int) int { return s.KeyGroup - kg })
		if more, err := fn(sub.Keyed, sub.Keyed.Sections[lo:hi]); err != nil || !more {
			return err
		}
	}
	return nil
}

// OperatorEntriesFor is the operator state of subtask index of an operator
// restored at parallelism, redistributed by state.RedistributeOperatorState:
// at the same parallelism every subtask keeps its own entries; otherwise
// split lists are the old subtasks' elements concatenated in subtask order
// and cut into contiguous runs (Flink's round-robin repartitioner), union
// lists go whole to every subtask, broadcast maps are old subtask 0's.
func (s *Savepoint) OperatorEntriesFor(operatorID string, parallelism, index int) ([]state.OperatorEntry, error) {
	if parallelism < 1 || index < 0 || index >= parallelism {
		return nil, fmt.Errorf("savepoint: subtask %d of parallelism %d", index, parallelism)
	}
	op, ok := s.byID[operatorID]
	if !ok {
		return nil, nil
	}
	old := make([][]state.OperatorEntry, len(op.meta.Subtasks))
	for i, sub := range op.meta.Subtasks {
		if sub.Operator == nil {
			continue
		}
		es, err := s.readOperator(sub.Operator)
		if err != nil {
			return nil, err
		}
		old[i] = es
	}
	return state.RedistributeOperatorState(old, parallelism, index), nil
}
