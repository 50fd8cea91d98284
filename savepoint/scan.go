package savepoint

import (
	"bytes"
	"fmt"
	"iter"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"streamdbg/state"
)

// scan.go is the keyed-row scan of queries: key-group sections are read,
// checked, decoded, filtered (KeyedScan.Keys and Prefilter, on the encoded
// bytes) and displayed in parallel, one section per unit of work, on as
// many goroutines as there are cores; the rows come out in section order.
// Rows are handed over in batches of at most scanBatch: a worker waits
// while its unit holds unitBatches batches the consumer has not taken, and
// at most maxAhead units per worker are claimed ahead of the consumer, so
// the rows held do not grow with the state nor with a section (a key
// group's rows: 78k at 10M entries in 128 key groups). The consumer makes
// the unit it waits for itself, handing its rows straight over, when no
// worker has claimed it yet; a worker's unit it takes batch by batch.

// scanUnit is one section of one subtask of one operator.
type scanUnit struct {
	op  *operator
	sub *SubtaskMeta
	sec Section
}

// unitResult is a unit's rows, batch by batch, and then why it could not
// be read; batches is closed after the last batch, err set before.
type unitResult struct {
	batches chan []state.KeyedRow
	err     error
}

// rowMaker turns entries of one unit into rows; one per goroutine (it
// keeps the displays of the state it last saw).
type rowMaker struct {
	scan state.KeyedScan
	cur  state.StateMeta
	// state is the entry state name cur was set up for.
	state string
	op    *operator
	keys  *state.KeyFilter
	disp  rowDisplay
	pre   func(key, value []byte, keyGroup int) bool
	skip  bool
	buf   []byte
	// ibuf holds a section's block index during a lookup (buf its blocks),
	// refs the index decoded.
	ibuf []byte
	refs []state.BlockRef
	want []bool
	// sr reads every section and block of the unit, keeping its buffers.
	sr state.StreamReader
	// file is the file of the last unit, open.
	file *sectionReader
	// rows is the batch being made; emit hands it over (false: the
	// consumer wants no more), and reuse says that the batch's array may
	// be filled again once emit returns (the consumer is done with it).
	rows  []state.KeyedRow
	emit  func([]state.KeyedRow) bool
	reuse bool
}

// add adds a row to the batch, handing the batch over when it is full;
// false: the consumer wants no more.
func (m *rowMaker) add(row state.KeyedRow) bool {
	m.rows = append(m.rows, row)
	if len(m.rows) < scanBatch {
		return true
	}
	return m.flush()
}

// flush hands the rows made so far over.
func (m *rowMaker) flush() bool {
	if len(m.rows) == 0 {
		return true
	}
	more := m.emit(m.rows)
	if m.reuse {
		clear(m.rows)
		m.rows = m.rows[:0]
	} else {
		m.rows = nil
	}
	return more
}

// keep reports whether the row of e is wanted: its state is scanned, and
// the key filter and prefilter let it through.
func (m *rowMaker) keep(op *operator, e *state.Entry) bool {
	// e.State is the reader's string, the same one until the state
	// changes: comparing it with the last one seen stops at the pointer.
	if op != m.op || e.State != m.state {
		m.switchState(op, e)
	}
	return !m.skip && (m.keys == nil || m.keys.Match(e.Key)) && (m.pre == nil || m.pre(e.Key, e.Value, e.KeyGroup))
}

// switchState sets up the rows of e's state (unless they are set up: the
// same state in another section).
func (m *rowMaker) switchState(op *operator, e *state.Entry) {
	m.state = e.State
	if op == m.op && e.State == m.cur.StateName {
		return
	}
	scan := &m.scan
	m.op = op
	meta, ok := op.byName[e.State]
	if !ok {
		meta = state.StateMeta{StateName: e.State}
	}
	m.cur = meta
	m.skip = scan.StateName != "" && e.State != scan.StateName || scan.StateName == "" && isTimer(meta)
	m.keys = state.NewKeyFilter(meta.KeyType, scan.Keys)
	m.disp = newRowDisplay(meta)
	m.pre = nil
	if scan.Prefilter != nil && !m.skip {
		m.pre = scan.Prefilter(meta)
	}
}

// past reports whether no entry after e in its section can be kept: the
// scan wants one state and e's sorts after it, or e's key is beyond every
// key the scan wants (entries of a state come in key order).
func (m *rowMaker) past(e *state.Entry) bool {
	name := m.scan.StateName
	if name == "" {
		return false
	}
	return m.pastState(e)
}

func (m *rowMaker) pastState(e *state.Entry) bool {
	name := m.scan.StateName
	if e.State > name {
		return true
	}
	return e.State == name && m.keys.Beyond(e.Key)
}

// row decodes the row of an entry keep let through.
func (m *rowMaker) row(op *operator, sub *SubtaskMeta, e *state.Entry) state.KeyedRow {
	scan := &m.scan
	row := state.KeyedRow{OperatorID: op.info.ID, OperatorName: op.info.Name, Subtask: sub.Index, KeyGroup: e.KeyGroup,
		StateName: e.State, Kind: m.cur.Kind}
	if scan.Skip&state.ColKey == 0 {
		row.Key = m.disp.key(e.Key)
	}
	if scan.Skip&state.ColNamespace == 0 {
		row.Namespace = m.disp.ns(e.Namespace)
	}
	if scan.Skip&state.ColValue == 0 {
		row.Value = m.disp.value(e.Value)
	}
	switch {
	case scan.Skip&state.ColUserKey != 0:
	case m.cur.Kind.IsList():
		if p, err := state.Position.Decode(e.UserKey); err == nil {
			row.UserKey = p
		} else {
			row.UserKey = state.Hex(bytes.Clone(e.UserKey))
		}
	case e.UserKey != nil || m.cur.Kind == state.KindMap:
		// A map key of no bytes (the empty string) is stored as none.
		row.UserKey = m.disp.userKey(e.UserKey)
	}
	return row
}

// sectionBufs keeps section buffers between scans: a point query reads one
// section, and a fresh buffer of a large one costs more than decoding it.
var sectionBufs sync.Pool

func (m *rowMaker) release() {
	if m.file != nil {
		m.file.close()
		m.file = nil
	}
	if m.buf != nil {
		b := m.buf[:0]
		sectionBufs.Put(&b)
		m.buf = nil
	}
}

// unit reads one section and hands its rows over (m.emit), the last ones
// before it returns; more is false when the consumer wants no more. The
// section's bytes are released when it returns: displays copy what they
// keep (DisplayFunc).
func (m *rowMaker) unit(s *Savepoint, u scanUnit) (more bool, err error) {
	defer func() {
		if !m.flush() {
			more = false
		}
	}()
	return m.unitRows(s, u)
}

func (m *rowMaker) unitRows(s *Savepoint, u scanUnit) (bool, error) {
	// The file stays open for the next unit of the same file (sections of
	// one file come one after another): opening one is three system calls.
	r := m.file
	if r == nil || r.s != s || r.name != u.sub.Keyed.Name {
		if r != nil {
			r.close()
		}
		r = &sectionReader{s: s, name: u.sub.Keyed.Name}
		m.file = r
	}
	if err := r.open(); err != nil {
		return false, err
	}
	if m.buf == nil {
		if p, ok := sectionBufs.Get().(*[]byte); ok {
			m.buf = *p
		}
	}
	if s.indexed && u.sec.Size > lookupMinSection && (m.scan.Keys != nil || m.scan.StateName != "") {
		more, done, err := m.lookup(s, r, u)
		if done || err != nil {
			return more, err
		}
	}
	b, err := r.readInto(m.buf, u.sec.Offset, u.sec.Size, u.sec.CRC32C, section{kg: u.sec.KeyGroup})
	if err != nil {
		return false, err
	}
	m.buf = b
	bad := func(err error) error {
		return fmt.Errorf("savepoint: %s: key group %d: %w", s.fs.PathJoin(s.dir, u.sub.Keyed.Name), u.sec.KeyGroup, err)
	}
	// The loop of decodeSection, without a call per entry.
	sr := &m.sr
	sr.ResetBytes(b, u.sec.Offset)
	kg, ok, err := sr.NextKeyGroup()
	if err != nil {
		return false, bad(err)
	}
	if !ok || kg != u.sec.KeyGroup {
		return false, bad(fmt.Errorf("section holds key group %d: %w", kg, state.ErrCorrupt))
	}
	if err := s.checkGroupKind(sr, u.sec); err != nil {
		return false, bad(err)
	}
	var e state.Entry
	// fast is the prefilter the reader may apply itself to the entries
	// that continue the last one returned (its state): set when nothing
	// else decides whether a row of that state is kept. It starts as the
	// one of the state the last unit ended in: the section's first entry
	// comes back whatever the filter says (it starts a block), and a state
	// other than m.state resets it below.
	var fast func(key, value []byte, kg int) bool
	if u.op == m.op && !m.skip && m.keys == nil {
		fast = m.pre
	}
	for {
		ok, err := sr.ReadFiltered(&e, fast)
		if err != nil {
			return false, bad(err)
		}
		if !ok {
			break
		}
		// keep and past, without their calls on the common path.
		if u.op != m.op || e.State != m.state {
			m.switchState(u.op, &e)
			fast = nil
			if !m.skip && m.keys == nil {
				fast = m.pre
			}
		}
		if !m.skip && (m.keys == nil || m.keys.Match(e.Key)) && (m.pre == nil || m.pre(e.Key, e.Value, e.KeyGroup)) {
			if !m.add(m.row(u.op, u.sub, &e)) {
				return false, nil
			}
		} else if m.scan.StateName != "" && m.pastState(&e) {
			// Entries come by state, then key: nothing after this one
			// can match. The rest of the section was checked by its CRC.
			return true, nil
		}
	}
	if n := sr.GroupEntries(); !sr.Done() || n != u.sec.Entries {
		return false, bad(fmt.Errorf("offset %d: %d entries, _metadata says %d, or bytes after them: %w", sr.Offset(), n, u.sec.Entries, state.ErrCorrupt))
	}
	return true, nil
}

// Bounds of the rows a scan holds ahead of its consumer: maxAhead units
// claimed per worker, each holding at most unitBatches batches of scanBatch
// rows waiting and one being made.
const (
	maxAhead    = 2
	unitBatches = 2
	scanBatch   = 2048
)

// scanRows yields the rows of units in order, making them in parallel.
func (s *Savepoint) scanRows(scan state.KeyedScan, units []scanUnit, yield func(state.KeyedRow, error) bool) {
	// direct hands rows straight to yield: the consumer makes them.
	direct := func(rows []state.KeyedRow) bool {
		for _, row := range rows {
			if !yield(row, nil) {
				return false
			}
		}
		return true
	}
	workers := min(goruntime.GOMAXPROCS(0), len(units))
	if workers <= 1 {
		m := &rowMaker{scan: scan, emit: direct, reuse: true}
		defer m.release()
		for _, u := range units {
			more, err := m.unit(s, u)
			if err != nil {
				yield(state.KeyedRow{}, err)
				return
			}
			if !more {
				return
			}
		}
		return
	}
	results := make([]unitResult, len(units))
	for i := range results {
		results[i].batches = make(chan []state.KeyedRow, unitBatches)
	}
	var next atomic.Int64 // the next unit to claim
	// tokens bound the units workers claimed and the consumer did not take
	// in full yet.
	tokens := make(chan struct{}, workers*maxAhead)
	for range cap(tokens) {
		tokens <- struct{}{}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := &rowMaker{scan: scan}
			defer m.release()
			var res *unitResult
			m.emit = func(rows []state.KeyedRow) bool {
				select {
				case res.batches <- rows:
					return true
				case <-stop:
					return false
				}
			}
			for {
				select {
				case <-stop:
					return
				case <-tokens:
				}
				i := int(next.Add(1) - 1)
				if i >= len(units) {
					return
				}
				res = &results[i]
				more, err := m.unit(s, units[i])
				res.err = err
				close(res.batches)
				if !more && err == nil {
					return // stopped
				}
			}
		}()
	}
	// INVARIANT: the workers have returned before scanRows does: they hold
	// no file open and write no result after.
	m := &rowMaker{scan: scan, emit: direct, reuse: true}
	defer func() {
		close(stop)
		wg.Wait()
		m.release()
	}()
	for i := range units {
		// No worker has claimed the unit: make it here, rather than wait
		// for one to.
		if next.CompareAndSwap(int64(i), int64(i+1)) {
			more, err := m.unit(s, units[i])
			if err != nil {
				yield(state.KeyedRow{}, err)
				return
			}
			if !more {
				return
			}
			continue
		}
		res := &results[i]
		for rows := range res.batches {
			if !direct(rows) {
				return
			}
		}
		if res.err != nil {
			yield(state.KeyedRow{}, res.err)
			return
		}
		tokens <- struct{}{}
	}
}

// keyedUnits lists the sections a keyed scan reads, in order.
func (s *Savepoint) keyedUnits(operatorID string, kgs []int) []scanUnit {
	kgs = normalizeGroups(kgs)
	var units []scanUnit
	for _, op := range s.ops {
		if operatorID != "" && op.info.ID != operatorID {
			continue
		}
		for i := range op.meta.Subtasks {
			sub := &op.meta.Subtasks[i]
			if sub.Keyed == nil {
				continue
			}
			for _, sec := range sectionsIn(sub.Keyed, kgs) {
				units = append(units, scanUnit{op: op, sub: sub, sec: sec})
			}
		}
	}
	return units
}

// Keyed implements state.Catalog. Timer states are left out unless
// scan.StateName names one (they are the Timers table).
func (s *Savepoint) Keyed(scan state.KeyedScan) iter.Seq2[state.KeyedRow, error] {
	return func(yield func(state.KeyedRow, error) bool) {
		s.scanRows(scan, s.keyedUnits(scan.OperatorID, scan.KeyGroups), yield)
	}
}
