// Package export writes the state of a catalog (our savepoints, Flink's,
// live state) as Parquet datasets that engines which scale out can query:
// one dataset per state, Hive-partitioned by operator and state,
//
//	DIR/operator=<name>/state=<name>/part-kg<start>-<end>.parquet
//
// An operator whose name another operator of the catalog shares (Flink
// names every keyBy().flatMap() "Flat Map") is partitioned by its id
// instead (OperatorPartitions): two operators never write one directory.
//
// with the columns key_group, subtask, key, namespace, user_key and value.
// key_group and subtask are INT32; key, namespace, user_key and value are
// typed from StateMeta where the codec is known (int64 → INT64, string →
// STRING, float64 → DOUBLE, bool → BOOLEAN, time → TIMESTAMP, bytes →
// BYTE_ARRAY; Flink's Long, Integer, Short, Byte, String, Double, Float,
// Boolean, byte[] likewise) and JSON text (the JSON logical type) otherwise.
// Every column is optional: NULL where the row has no such field. The
// pages are written by this package (pages.go): data pages v1, PLAIN
// values (key_group and subtask dictionary-encoded), Snappy, exact chunk
// statistics; the schema and the Thrift structures of the metadata are the
// Parquet library's.
//
// A file holds one key-group range (by default each subtask's range of the
// savepoint; Options.KeyGroups restricts an export to one range, so many
// workers can export one savepoint in parallel, and their files together
// are one full export). Operator state (key_group NULL, user_key the list
// position, key the broadcast key) is written by the export whose range
// starts at key group 0.
//
// Files are written beside their target and renamed into place, so a reader
// never sees half a file; a re-run replaces its own files. What cannot be
// read is never written as an empty or partial dataset silently: it is a gap
// on the Report and an error (the files of other states stay).
package export

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"streamdbg/savepoint"
	"streamdbg/state"
)

// Options tune an export.
type Options struct {
	// KeyGroups restricts the export to one range of key groups (nil: all).
	KeyGroups *state.KeyGroupRange
	// RowsPerRowGroup bounds a row group (default 1M rows).
	RowsPerRowGroup int64
}

// File is one written Parquet file.
type File struct {
	Path                string
	Operator, StateName string
	KeyGroups           state.KeyGroupRange // Start -1: operator state
	Rows                int64
}

// Report says what an export wrote and what it could not read.
type Report struct {
	Files []File
	Gaps  []string
}

// ErrIncomplete marks an export that could not read every state.
var ErrIncomplete = errors.New("export: incomplete")

// Err is nil when every state was exported, else an ErrIncomplete listing
// the gaps.
func (r *Report) Err() error {
	if len(r.Gaps) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(r.Gaps, "; "))
}

// Columns are the columns of every exported file, in order.
var Columns = []string{"key_group", "subtask", "key", "namespace", "user_key", "value"}

// PartitionName escapes a partition value as Hive does (%XX for the
// characters Hive escapes), so any operator or state name is one directory.
func PartitionName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// OperatorPartitions maps each operator id of ops to the value of its
// operator= partition (not yet escaped): its name, or its id when another
// operator has the same name, as a query names such an operator.
func OperatorPartitions(ops []state.OperatorInfo) map[string]string {
	n := map[string]int{}
	for _, op := range ops {
		n[op.Name]++
	}
	out := make(map[string]string, len(ops))
	for _, op := range ops {
		out[op.ID] = op.Name
		if n[op.Name] > 1 {
			out[op.ID] = op.ID
		}
	}
	return out
}

// Parquet exports cat into dir.
func Parquet(ctx context.Context, cat state.Catalog, dir string, opts Options) (*Report, error) {
	if opts.RowsPerRowGroup <= 0 {
		opts.RowsPerRowGroup = 1 << 20
	}
	rep := &Report{}
	defer sortFiles(rep.Files)
	ops := cat.Operators()
	parts := OperatorPartitions(ops)
	metas := cat.States()
	sp, ours := cat.(*savepoint.Savepoint)
	var mu sync.Mutex
	for _, op := range ops {
		for _, u := range op.Unsupported {
			rep.Gaps = append(rep.Gaps, fmt.Sprintf("operator %s: %s", op.Name, u))
		}
		raw := map[string]bool{}
		if ours {
			var keyed []state.StateMeta
			for _, m := range metas {
				if m.OperatorID == op.ID && m.Scope == state.ScopeKeyed && m.Kind != state.KindTimers && state.TimerDomain(m.StateName) == "" {
					keyed = append(keyed, m)
					raw[m.StateName] = true
				}
			}
			if len(keyed) > 0 {
				if err := exportRaw(ctx, sp, op, keyed, filepath.Join(dir, "operator="+PartitionName(parts[op.ID])), opts, rep, &mu); err != nil {
					var re readError
					if !errors.As(err, &re) {
						return rep, err
					}
					rep.Gaps = append(rep.Gaps, fmt.Sprintf("operator %s: %v", op.Name, re.err))
				}
			}
		}
		for _, m := range metas {
			if m.OperatorID != op.ID || raw[m.StateName] {
				continue
			}
			if m.Status != "" {
				rep.Gaps = append(rep.Gaps, fmt.Sprintf("%s: %s", m.QualifiedName(), m.Status))
				continue
			}
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			base := filepath.Join(dir, "operator="+PartitionName(parts[op.ID]), "state="+PartitionName(m.StateName))
			var err error
			if m.Scope == state.ScopeOperator {
				if opts.KeyGroups != nil && opts.KeyGroups.Start != 0 {
					continue
				}
				err = exportOperatorState(ctx, cat, op, m, base, opts, rep)
			} else {
				err = exportKeyed(ctx, cat, op, m, base, opts, rep)
			}
			if err != nil {
				var re readError
				if !errors.As(err, &re) {
					return rep, err
				}
				rep.Gaps = append(rep.Gaps, fmt.Sprintf("%s: %v", m.QualifiedName(), re.err))
			}
		}
	}
	return rep, nil
}

// readError is a failure to read a state: a gap, the export goes on.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }

// fileRanges are the key-group ranges of an operator's files: its subtasks'
// ranges, cut to the export's range.
func fileRanges(op state.OperatorInfo, only *state.KeyGroupRange) []state.KeyGroupRange {
	var out []state.KeyGroupRange
	par := max(op.Parallelism, 1)
	maxPar := max(op.MaxParallelism, 1)
	for i := range par {
		r := state.KeyGroupRangeFor(maxPar, par, i)
		if only != nil {
			r.Start, r.End = max(r.Start, only.Start), min(r.End, only.End)
		}
		if r.Start <= r.End {
			out = append(out, r)
		}
	}
	return out
}

// file writes one Parquet file atomically: into a temporary name beside it,
// renamed on close. Rows go into the columns' pages (pages.go), a row group
// every RowsPerRowGroup rows.
type file struct {
	path, tmp string
	f         *os.File
	bw        *bufio.Writer
	off       int64
	schema    *schema
	cols      []*colBuf  // in the schema's column order
	bySrc     [6]*colBuf // per column of Columns
	groups    []format.RowGroup
	inGroup   int64
	perGroup  int64
	n         int64
}

func createFile(path string, s *schema, opts Options) (*file, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".inprogress")
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	fl := &file{path: path, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 1<<20), schema: s, perGroup: opts.RowsPerRowGroup}
	for _, c := range s.cols {
		cb := colBufs.Get().(*colBuf)
		cb.phys, cb.name = physical(s.kinds[c.src]), Columns[c.src]
		cb.dict = s.kinds[c.src] == kInt32
		fl.cols = append(fl.cols, cb)
		fl.bySrc[c.src] = cb
	}
	fl.write([]byte("PAR1"))
	return fl, nil
}

func (fl *file) write(b []byte) {
	fl.bw.Write(b) // errors stay in the bufio.Writer until Flush
	fl.off += int64(len(b))
}

// add appends one row of dynamic values in Columns order, converted to the
// columns' types.
func (fl *file) add(kg, subtask any, key, ns, uk, value any) error {
	vals := [6]any{kg, subtask, key, ns, uk, value}
	for _, c := range fl.schema.cols {
		if err := c.conv(vals[c.src], fl.bySrc[c.src]); err != nil {
			return fmt.Errorf("%s: %w", Columns[c.src], err)
		}
	}
	return fl.endRow()
}

// endRow ends a row every column has a value of.
func (fl *file) endRow() error {
	fl.n++
	for _, c := range fl.cols {
		if c.full() {
			if err := c.flushPage(); err != nil {
				return fmt.Errorf("export: %s: %w", fl.path, err)
			}
		}
	}
	if fl.inGroup++; fl.inGroup >= fl.perGroup {
		return fl.flushGroup()
	}
	return nil
}

// flushGroup writes the row group: each column's chunk in schema order.
func (fl *file) flushGroup() error {
	if fl.inGroup == 0 {
		return nil
	}
	rg := format.RowGroup{NumRows: fl.inGroup, FileOffset: fl.off, Ordinal: int16(len(fl.groups))}
	for _, c := range fl.cols {
		if err := c.flushPage(); err != nil {
			return fmt.Errorf("export: %s: %w", fl.path, err)
		}
		dict, err := c.dictPage()
		if err != nil {
			return fmt.Errorf("export: %s: %w", fl.path, err)
		}
		start := fl.off
		md := format.ColumnMetaData{
			Type:         c.phys,
			Encoding:     []format.Encoding{format.Plain, format.RLE},
			PathInSchema: []string{c.name},
			Codec:        format.Snappy,
			NumValues:    c.values,
			Statistics:   c.statistics(),
		}
		if dict != nil {
			md.Encoding = append(md.Encoding, format.RLEDictionary)
			md.DictionaryPageOffset = fl.off
			fl.write(dict)
		}
		md.DataPageOffset = fl.off
		c.chunk.writeTo(fl.bw)
		fl.off += int64(c.chunk.len())
		md.TotalUncompressedSize = c.uncompressed
		md.TotalCompressedSize = fl.off - start
		rg.Columns = append(rg.Columns, format.ColumnChunk{FileOffset: start, MetaData: md})
		rg.TotalByteSize += md.TotalUncompressedSize
		rg.TotalCompressedSize += md.TotalCompressedSize
		c.resetChunk()
	}
	fl.groups = append(fl.groups, rg)
	fl.inGroup = 0
	return nil
}

func (fl *file) close() error {
	err := fl.flushGroup()
	if err == nil {
		m := *fl.schema.template
		m.NumRows, m.RowGroups = fl.n, fl.groups
		var footer []byte
		if footer, err = thrift.Marshal(new(thrift.CompactProtocol), &m); err == nil {
			fl.write(footer)
			fl.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
			fl.write([]byte("PAR1"))
			err = fl.bw.Flush()
		}
	}
	if err == nil {
		err = fl.f.Sync()
	}
	if cerr := fl.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(fl.tmp, fl.path)
	}
	fl.release()
	if err != nil {
		os.Remove(fl.tmp)
		return fmt.Errorf("export: %s: %w", fl.path, err)
	}
	return nil
}

func (fl *file) abort() {
	fl.release()
	fl.f.Close()
	os.Remove(fl.tmp)
}

// release gives the columns' buffers back for the next file.
func (fl *file) release() {
	for _, c := range fl.cols {
		c.release()
	}
	fl.cols, fl.bySrc = nil, [6]*colBuf{}
}

func exportKeyed(ctx context.Context, cat state.Catalog, op state.OperatorInfo, m state.StateMeta, base string, opts Options, rep *Report) error {
	timers := m.Kind == state.KindTimers || state.TimerDomain(m.StateName) != ""
	s := keyedSchema(m, timers)
	for _, r := range fileRanges(op, opts.KeyGroups) {
		path := filepath.Join(base, fmt.Sprintf("part-kg%05d-%05d.parquet", r.Start, r.End))
		fl, err := createFile(path, s, opts)
		if err != nil {
			return err
		}
		kgs := make([]int, 0, r.Len())
		for kg := r.Start; kg <= r.End; kg++ {
			kgs = append(kgs, kg)
		}
		err = func() error {
			n := 0
			fail := func(kg int, key any, err error) error {
				return fmt.Errorf("export: %s, key group %d, key %v: %w", m.QualifiedName(), kg, key, err)
			}
			if timers {
				for t, err := range savepoint.TimersOfState(cat, state.TimerScan{OperatorID: op.ID, KeyGroups: kgs}, m.StateName) {
					if err != nil {
						return readError{err}
					}
					if err := fl.add(int32(t.KeyGroup), int32(t.Subtask), t.Key, t.Namespace, t.Timestamp, nil); err != nil {
						return fail(t.KeyGroup, t.Key, err)
					}
				}
				return nil
			}
			for row, err := range cat.Keyed(state.KeyedScan{OperatorID: op.ID, StateName: m.StateName, KeyGroups: kgs}) {
				if err != nil {
					return readError{err}
				}
				if row.StateName != m.StateName {
					continue
				}
				if n++; n&4095 == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
				if err := fl.add(int32(row.KeyGroup), int32(row.Subtask), row.Key, row.Namespace, row.UserKey, row.Value); err != nil {
					return fail(row.KeyGroup, row.Key, err)
				}
			}
			return nil
		}()
		if err != nil {
			fl.abort()
			return err
		}
		if err := fl.close(); err != nil {
			return err
		}
		rep.Files = append(rep.Files, File{Path: path, Operator: op.Name, StateName: m.StateName, KeyGroups: r, Rows: fl.n})
	}
	return nil
}

func exportOperatorState(ctx context.Context, cat state.Catalog, op state.OperatorInfo, m state.StateMeta, base string, opts Options, rep *Report) error {
	s := operatorSchema(m)
	path := filepath.Join(base, "part-operator.parquet")
	fl, err := createFile(path, s, opts)
	if err != nil {
		return err
	}
	for row, err := range cat.OperatorState(state.OperatorScan{OperatorID: op.ID, StateName: m.StateName}) {
		if err != nil {
			fl.abort()
			return readError{err}
		}
		if row.StateName != m.StateName {
			continue
		}
		var key, uk any
		if row.Kind == state.KindBroadcast {
			key = row.Key
		} else {
			uk = int64(row.Position)
		}
		if err := fl.add(nil, int32(row.Subtask), key, nil, uk, row.Value); err != nil {
			fl.abort()
			return fmt.Errorf("export: %s, subtask %d: %w", m.QualifiedName(), row.Subtask, err)
		}
	}
	if err := fl.close(); err != nil {
		return err
	}
	rep.Files = append(rep.Files, File{Path: path, Operator: op.Name, StateName: m.StateName, KeyGroups: state.KeyGroupRange{Start: -1, End: -1}, Rows: fl.n})
	return nil
}
