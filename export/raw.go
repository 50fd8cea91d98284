package export

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"

	"streamdbg/savepoint"
	"streamdbg/state"
)

// The fast path for our own savepoints: key groups are read as raw
// sections and decoded in place; strings, integers and JSON go into their
// columns without becoming dynamic values (stored JSON is already JSON
// text). One pass over an operator's sections writes every keyed state's
// file of a range, and the ranges of an operator are written in parallel.

// rawConv appends the stored bytes of one field to its column.
type rawConv func(b []byte, c *colBuf) error

func rawConverter(typeName string, k kind) rawConv {
	switch {
	case typeName == "string" && k == kString:
		return func(b []byte, c *colBuf) error { c.bytes(b); return nil }
	case (typeName == "int64" || typeName == "position") && k == kInt64:
		return func(b []byte, c *colBuf) error {
			v, err := state.Int64.Decode(b)
			if err != nil {
				return err
			}
			c.int64(v)
			return nil
		}
	case strings.HasPrefix(typeName, "json:") && k == kJSON:
		return func(b []byte, c *colBuf) error {
			if len(b) == 0 {
				c.null()
			} else {
				c.bytes(b)
			}
			return nil
		}
	case typeName == "void" || typeName == "":
		json := converter(kJSON)
		return func(b []byte, c *colBuf) error {
			if len(b) == 0 {
				c.null()
				return nil
			}
			return json(state.Hex(b), c)
		}
	}
	conv := converter(k)
	disp, ok := state.LookupDisplay(typeName)
	return func(b []byte, c *colBuf) error {
		var v any = state.Hex(b)
		if ok {
			if d, err := disp(b); err == nil {
				v = d
			}
		}
		return conv(v, c)
	}
}

// rawState is one keyed state's writer of one range.
type rawState struct {
	meta            state.StateMeta
	fl              *file
	key, ns, uk, vl rawConv
}

func exportRaw(ctx context.Context, sp *savepoint.Savepoint, op state.OperatorInfo, metas []state.StateMeta, opDir string, opts Options, rep *Report, mu *sync.Mutex) error {
	ranges := fileRanges(op, opts.KeyGroups)
	errs := make([]error, len(ranges))
	sem := make(chan struct{}, max(1, goruntime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, r := range ranges {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = exportRawRange(ctx, sp, op, metas, opDir, r, opts, rep, mu)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func exportRawRange(ctx context.Context, sp *savepoint.Savepoint, op state.OperatorInfo, metas []state.StateMeta, opDir string, r state.KeyGroupRange, opts Options, rep *Report, mu *sync.Mutex) (err error) {
	states := map[string]*rawState{}
	var order []*rawState
	defer func() {
		if err != nil {
			for _, s := range order {
				s.fl.abort()
			}
		}
	}()
	for _, m := range metas {
		path := filepath.Join(opDir, "state="+PartitionName(m.StateName), fmt.Sprintf("part-kg%05d-%05d.parquet", r.Start, r.End))
		s := keyedSchema(m, false)
		fl, err := createFile(path, s, opts)
		if err != nil {
			return err
		}
		k := s.kinds
		uk := m.UserKeyType
		if m.Kind.IsList() {
			uk = "position"
		}
		rs := &rawState{meta: m, fl: fl, key: rawConverter(m.KeyType, k[2]), ns: rawConverter(m.NamespaceType, k[3]),
			uk: rawConverter(uk, k[4]), vl: rawConverter(m.ValueType, k[5])}
		states[m.StateName] = rs
		order = append(order, rs)
	}
	var cur *rawState
	curName := ""
	var e state.Entry
	n := 0
	for sec, err := range sp.KeyedSections(op.ID, r) {
		if err != nil {
			return readError{err}
		}
		sr := state.NewStreamReaderBytes(sec.Bytes, sec.Offset)
		if kg, ok, err := sr.NextKeyGroup(); err != nil || !ok || kg != sec.KeyGroup {
			return readError{sec.SectionError(fmt.Errorf("section does not hold key group %d: %v: %w", sec.KeyGroup, err, state.ErrCorrupt))}
		}
		kg, sub := int32(sec.KeyGroup), int32(sec.Subtask)
		var count int64
		for {
			ok, err := sr.Read(&e)
			if err != nil {
				return readError{sec.SectionError(err)}
			}
			if !ok {
				break
			}
			count++
			if cur == nil || e.State != curName {
				cur, curName = states[e.State], e.State
			}
			if cur == nil {
				continue // timers and undescribed states: the catalog path
			}
			if n++; n&8191 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			fl := cur.fl
			fl.bySrc[0].int32(kg)
			fl.bySrc[1].int32(sub)
			fields := [4][]byte{e.Key, e.Namespace, e.UserKey, e.Value}
			for i, conv := range [4]rawConv{cur.key, cur.ns, cur.uk, cur.vl} {
				c := fl.bySrc[i+2]
				if i == 2 && e.UserKey == nil && cur.meta.Kind != state.KindMap { // a map key of no bytes is the empty string
					c.null()
					continue
				}
				if err := conv(fields[i], c); err != nil {
					return fmt.Errorf("export: %s, key group %d, key %x: %s: %w", cur.meta.QualifiedName(), e.KeyGroup, e.Key, Columns[i+2], err)
				}
			}
			if err := fl.endRow(); err != nil {
				return err
			}
		}
		if !sr.Done() || count != sec.Entries {
			return readError{sec.SectionError(fmt.Errorf("%d entries, _metadata says %d: %w", count, sec.Entries, state.ErrCorrupt))}
		}
	}
	for _, s := range order {
		if err := s.fl.close(); err != nil {
			return err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range order {
		rep.Files = append(rep.Files, File{Path: s.fl.path, Operator: op.Name, StateName: s.meta.StateName, KeyGroups: r, Rows: s.fl.n})
	}
	return nil
}

func sortFiles(fs []File) {
	slices.SortFunc(fs, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
}
