package savepoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"streamdbg/state"
)

const (
	// FormatName is the "format" field of every _metadata.
	FormatName = "streamdbg-savepoint"
	// FormatVersion is the version this package writes. It reads
	// versions 1 and 2: version 2 sections are indexed groups (blocks
	// with an index, state.NewIndexedStreamWriter), so that a point
	// lookup reads and checks only the blocks that can hold its key;
	// version 1 sections are plain groups.
	FormatVersion = 2
	// minVersion is the oldest version this package reads.
	minVersion = 1
	// MetadataFile is the name of the metadata file in a savepoint directory.
	MetadataFile = "_metadata"

	// maxMetadata bounds the _metadata file a reader accepts.
	maxMetadata = 64 << 20
	// maxPosition bounds the position and source offsets a reader accepts:
	// 2^53 records is far beyond any input, and position+1 cannot overflow.
	maxPosition = 1 << 53

	// maxSection bounds one section (one key group of one subtask, or one
	// operator-state file); writers refuse larger ones, readers never
	// allocate more. At the default 128 key groups it allows 8 GiB of keyed
	// state per state file; a job with more raises its max parallelism.
	// (It was 1 GiB: a sparse 36 KB file then made a query allocate 1 GB.)
	maxSection = 64 << 20
	// minIndex is the size of the smallest block index: its length
	// field, the block count and one ref of a block (flags, state name
	// length, key length, size, entries, CRC32C).
	minIndex = 4 + 1 + 1 + 1 + 1 + 1 + 1 + 4
)

var (
	// ErrChecksum marks state bytes that do not match their checksum in
	// _metadata, including files shorter or longer than recorded.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrInvalid marks a _metadata that is not a complete, consistent
	// savepoint of this format.
	ErrInvalid = errors.New("savepoint: invalid")
	// ErrExists is returned by Write when the target directory exists.
	ErrExists = errors.New("savepoint: target exists")
)

// Metadata is the content of _metadata: everything about a savepoint except
// the state bytes. It is JSON, indented, with fields in a fixed order.
type Metadata struct {
	Format         string    `json:"format"`
	Version        int       `json:"version"`
	JobName        string    `json:"job_name"`
	JobFingerprint string    `json:"job_fingerprint"`
	CheckpointID   int64     `json:"checkpoint_id"`
	Created        time.Time `json:"created"`
	// Position is the number of source events read when the snapshot was
	// taken; ProcessingTime the virtual processing-time clock (epoch ms).
	Position       int64            `json:"position"`
	ProcessingTime int64            `json:"processing_time"`
	Sources        []SourcePosition `json:"sources"`
	Operators      []OperatorMeta   `json:"operators"`
	States         []StateRecord    `json:"states"`
}

// SourcePosition is how far a source had read one of its partitions. The
// authoritative copy is the source's operator state; this one is for people.
type SourcePosition struct {
	Source    string `json:"source"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
}

// OperatorMeta describes one operator and where its state is.
type OperatorMeta struct {
	ID             string        `json:"id"`
	UID            string        `json:"uid"`
	Name           string        `json:"name"`
	Parallelism    int           `json:"parallelism"`
	MaxParallelism int           `json:"max_parallelism"`
	Subtasks       []SubtaskMeta `json:"subtasks"`
}

// SubtaskMeta describes one subtask's key groups and state files.
type SubtaskMeta struct {
	Index     int           `json:"index"`
	KeyGroups KeyGroups     `json:"key_groups"`
	Keyed     *KeyedFile    `json:"keyed,omitempty"`
	Operator  *OperatorFile `json:"operator,omitempty"`
}

// KeyGroups is a key-group range as _metadata stores it (inclusive).
type KeyGroups struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Range converts to the state package's range.
func (k KeyGroups) Range() state.KeyGroupRange {
	return state.KeyGroupRange{Start: k.Start, End: k.End}
}

// KeyedFile is a subtask's keyed state file: one section per non-empty key
// group, in key-group order, covering the file exactly.
type KeyedFile struct {
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	Sections []Section `json:"sections"`
}

// Section locates one key group in a keyed file.
type Section struct {
	KeyGroup int    `json:"key_group"`
	Offset   int64  `json:"offset"`
	Size     int64  `json:"size"`
	CRC32C   uint32 `json:"crc32c"`
	Entries  int64  `json:"entries"`
	// IndexSize is the size of the section's block index (its last
	// bytes) and IndexCRC32C their checksum; format 2 only.
	IndexSize   int64  `json:"index_size,omitempty"`
	IndexCRC32C uint32 `json:"index_crc32c,omitempty"`
}

// OperatorFile is a subtask's operator state file: one section, the whole file.
type OperatorFile struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	CRC32C  uint32 `json:"crc32c"`
	Entries int64  `json:"entries"`
}

// StateRecord is one row of the StateMeta table.
type StateRecord struct {
	OperatorID    string `json:"operator_id"`
	OperatorName  string `json:"operator_name"`
	StateName     string `json:"state_name"`
	Scope         string `json:"scope"`
	Kind          string `json:"kind"`
	KeyType       string `json:"key_type,omitempty"`
	NamespaceType string `json:"namespace_type,omitempty"`
	UserKeyType   string `json:"user_key_type,omitempty"`
	ValueType     string `json:"value_type,omitempty"`
	Entries       int64  `json:"entries"`
	Bytes         int64  `json:"bytes"`
}

func recordOf(m state.StateMeta) StateRecord {
	return StateRecord{OperatorID: m.OperatorID, OperatorName: m.OperatorName, StateName: m.StateName,
		Scope: m.Scope.String(), Kind: m.Kind.String(), KeyType: m.KeyType, NamespaceType: m.NamespaceType,
		UserKeyType: m.UserKeyType, ValueType: m.ValueType, Entries: m.Entries, Bytes: m.Bytes}
}

// Meta converts the record back.
func (r StateRecord) Meta() (state.StateMeta, error) {
	scope, err := state.ParseScope(r.Scope)
	if err != nil {
		return state.StateMeta{}, err
	}
	kind, err := state.ParseKind(r.Kind)
	if err != nil {
		return state.StateMeta{}, err
	}
	if kind.Scope() != scope {
		return state.StateMeta{}, fmt.Errorf("kind %s with scope %s", kind, scope)
	}
	return state.StateMeta{OperatorID: r.OperatorID, OperatorName: r.OperatorName, StateName: r.StateName,
		Scope: scope, Kind: kind, KeyType: r.KeyType, NamespaceType: r.NamespaceType, UserKeyType: r.UserKeyType,
		ValueType: r.ValueType, Entries: r.Entries, Bytes: r.Bytes}, nil
}

// keyedFileName and operatorFileName name a subtask's state files.
func keyedFileName(opID string, index int) string { return fmt.Sprintf("%s-%d.keyed", opID, index) }
func operatorFileName(opID string, index int) string {
	return fmt.Sprintf("%s-%d.opstate", opID, index)
}

// checkFileName refuses names that could leave the savepoint directory or
// shadow _metadata.
func checkFileName(name string) error {
	switch {
	case name == "", name == ".", name == "..", name == MetadataFile:
	case strings.ContainsAny(name, "/\\:\x00"), filepath.IsAbs(name), filepath.VolumeName(name) != "":
	case strings.HasPrefix(name, ".."):
	default:
		return nil
	}
	return fmt.Errorf("file name %q is not a plain name inside the savepoint directory", name)
}

func validOperatorID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validate checks everything a reader relies on that _metadata alone can
// tell: the format, operators, key-group ranges, file names, and that the
// sections of every keyed file are in order and cover it exactly.
func (m *Metadata) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if m.Format != FormatName {
		return bad("format %q, want %q", m.Format, FormatName)
	}
	if m.Version < minVersion || m.Version > FormatVersion {
		return bad("format version %d, this reader reads versions %d to %d", m.Version, minVersion, FormatVersion)
	}
	indexed := m.Version >= 2
	ids := map[string]bool{}
	files := map[string]bool{}
	useName := func(n string) error {
		if err := checkFileName(n); err != nil {
			return bad("%v", err)
		}
		if files[n] {
			return bad("file %q listed twice", n)
		}
		files[n] = true
		return nil
	}
	for i, op := range m.Operators {
		if !validOperatorID(op.ID) {
			return bad("operator %d: id %q is not 32 lower-case hex digits", i, op.ID)
		}
		if ids[op.ID] {
			return bad("operator %s listed twice", op.ID)
		}
		if i > 0 && m.Operators[i-1].ID > op.ID {
			return bad("operators not ordered by id")
		}
		ids[op.ID] = true
		if op.MaxParallelism < 1 || op.MaxParallelism > state.MaxKeyGroups {
			return bad("operator %s: max parallelism %d", op.ID, op.MaxParallelism)
		}
		if op.Parallelism < 1 || op.Parallelism > op.MaxParallelism {
			return bad("operator %s: parallelism %d with max parallelism %d", op.ID, op.Parallelism, op.MaxParallelism)
		}
		if len(op.Subtasks) != op.Parallelism {
			return bad("operator %s: %d subtasks, parallelism %d", op.ID, len(op.Subtasks), op.Parallelism)
		}
		for j, sub := range op.Subtasks {
			want := state.KeyGroupRangeFor(op.MaxParallelism, op.Parallelism, j)
			if sub.Index != j || sub.KeyGroups.Range() != want {
				return bad("operator %s: subtask %d: index %d, key groups %v, want index %d, key groups %v",
					op.ID, j, sub.Index, sub.KeyGroups.Range(), j, want)
			}
			if f := sub.Keyed; f != nil {
				if err := useName(f.Name); err != nil {
					return err
				}
				if f.Size < 0 {
					return bad("%s: size %d", f.Name, f.Size)
				}
				var off int64
				prev := -1
				for _, s := range f.Sections {
					switch {
					case s.KeyGroup <= prev || !want.Contains(s.KeyGroup):
						return bad("%s: key group %d out of order or outside %v", f.Name, s.KeyGroup, want)
					case s.Offset != off:
						return bad("%s: key group %d at offset %d, want %d", f.Name, s.KeyGroup, s.Offset, off)
					case s.Size > maxSection:
						return bad("%s: key group %d: %d bytes, more than the %d MiB a section may hold", f.Name, s.KeyGroup, s.Size, maxSection>>20)
					case s.Size <= 0 || s.Size > f.Size-off:
						return bad("%s: key group %d: size %d at offset %d in a file of %d bytes", f.Name, s.KeyGroup, s.Size, s.Offset, f.Size)
					case s.Entries < 1 || s.Entries > s.Size/2:
						return bad("%s: key group %d: %d entries in %d bytes", f.Name, s.KeyGroup, s.Entries, s.Size)
					case indexed && (s.IndexSize < minIndex || s.IndexSize >= s.Size):
						return bad("%s: key group %d: index of %d bytes in a section of %d", f.Name, s.KeyGroup, s.IndexSize, s.Size)
					case !indexed && (s.IndexSize != 0 || s.IndexCRC32C != 0):
						return bad("%s: key group %d: an index in a format %d savepoint", f.Name, s.KeyGroup, m.Version)
					}
					prev, off = s.KeyGroup, off+s.Size
				}
				if off != f.Size {
					return bad("%s: sections cover %d of %d bytes", f.Name, off, f.Size)
				}
			}
			if f := sub.Operator; f != nil {
				if err := useName(f.Name); err != nil {
					return err
				}
				if f.Size > maxSection {
					return bad("%s: %d bytes, more than the %d MiB an operator state file may hold", f.Name, f.Size, maxSection>>20)
				}
				if f.Size < 1 || f.Entries < 0 || f.Entries > f.Size/4 {
					return bad("%s: %d entries in %d bytes", f.Name, f.Entries, f.Size)
				}
			}
		}
	}
	if m.Position < 0 || m.Position > maxPosition {
		return bad("position %d outside [0, 2^53]", m.Position)
	}
	for _, src := range m.Sources {
		if src.Partition < 0 || src.Offset < 0 || src.Offset > maxPosition {
			return bad("source %q partition %d: offset %d", src.Source, src.Partition, src.Offset)
		}
	}
	seen := map[[2]string]bool{}
	for _, r := range m.States {
		if !ids[r.OperatorID] {
			return bad("state %q of unknown operator %q", r.StateName, r.OperatorID)
		}
		k := [2]string{r.OperatorID, r.StateName}
		if seen[k] {
			return bad("state %q of operator %s listed twice", r.StateName, r.OperatorID)
		}
		seen[k] = true
		if _, err := r.Meta(); err != nil {
			return bad("state %q of operator %s: %v", r.StateName, r.OperatorID, err)
		}
		if r.Entries < 0 || r.Bytes < 0 || r.Entries > maxPosition || r.Bytes > maxPosition {
			return bad("state %q of operator %s: %d entries, %d bytes", r.StateName, r.OperatorID, r.Entries, r.Bytes)
		}
	}
	return m.crossCheck(bad)
}

// crossCheck checks that the parts of _metadata add up, so that a savepoint
// with a reference removed (a subtask's state file, a StateMeta row, the
// whole table) is invalid instead of restoring with state missing. The
// writer guarantees, per operator:
//   - every subtask has a keyed file, or none has; every subtask has one
//     when the StateMeta table lists keyed state of the operator;
//   - likewise for operator-state files and operator-scope states;
//   - the entries of the keyed StateMeta rows add up to the entries of the
//     keyed files' sections, and those of the operator-scope rows to the
//     entries of the operator-state files.
//
// (Key-group coverage is checked by validate: each subtask's range is the
// one its index and the parallelism give, so together they cover
// [0, max parallelism) exactly once.)
func (m *Metadata) crossCheck(bad func(string, ...any) error) error {
	type sums struct {
		keyedStates, opStates   int
		keyedRows, opRows       int64
		keyedFiles, opFiles     int
		keyedEntries, opEntries int64
	}
	per := map[string]*sums{}
	for i := range m.Operators {
		op := &m.Operators[i]
		s := &sums{}
		per[op.ID] = s
		for _, sub := range op.Subtasks {
			if f := sub.Keyed; f != nil {
				s.keyedFiles++
				for _, sec := range f.Sections {
					s.keyedEntries += sec.Entries
				}
			}
			if f := sub.Operator; f != nil {
				s.opFiles++
				s.opEntries += f.Entries
			}
		}
	}
	for _, r := range m.States {
		s := per[r.OperatorID]
		if r.Scope == state.ScopeOperator.String() {
			s.opStates++
			s.opRows += r.Entries
		} else {
			s.keyedStates++
			s.keyedRows += r.Entries
		}
	}
	for _, op := range m.Operators {
		s := per[op.ID]
		switch {
		case s.keyedFiles != 0 && s.keyedFiles != op.Parallelism, s.keyedStates > 0 && s.keyedFiles == 0:
			return bad("operator %s (%s): %d of its %d subtasks have a keyed state file, and the StateMeta table lists %d keyed states", op.ID, op.Name, s.keyedFiles, op.Parallelism, s.keyedStates)
		case s.opFiles != 0 && s.opFiles != op.Parallelism, s.opStates > 0 && s.opFiles == 0:
			return bad("operator %s (%s): %d of its %d subtasks have an operator state file, and the StateMeta table lists %d operator states", op.ID, op.Name, s.opFiles, op.Parallelism, s.opStates)
		case s.keyedRows != s.keyedEntries:
			return bad("operator %s (%s): the StateMeta table counts %d keyed entries, its keyed files hold %d", op.ID, op.Name, s.keyedRows, s.keyedEntries)
		case s.opRows != s.opEntries:
			return bad("operator %s (%s): the StateMeta table counts %d operator state entries, its operator state files hold %d", op.ID, op.Name, s.opRows, s.opEntries)
		}
	}
	return nil
}
