package statetest

import (
	"bytes"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"streamdbg/state"
)

//go:embed testdata
var testdata embed.FS

// Run runs every script of the suite against backends made by newBackend.
func Run(t *testing.T, newBackend func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend) {
	files, err := fs.ReadDir(testdata, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	disk := onDiskTestdata()
	for _, f := range files {
		t.Run(strings.TrimSuffix(f.Name(), path.Ext(f.Name())), func(t *testing.T) {
			h := &harness{newBackend: newBackend}
			defer h.close(t)
			if disk != "" {
				datadriven.RunTest(t, filepath.Join(disk, f.Name()), h.run)
				return
			}
			b, err := testdata.ReadFile("testdata/" + f.Name())
			if err != nil {
				t.Fatal(err)
			}
			datadriven.RunTestFromString(t, string(b), h.run)
		})
	}
}

// onDiskTestdata is the source directory of the scripts when datadriven's
// -rewrite flag is set and the source tree is there, else "".
func onDiskTestdata() string {
	f := flag.Lookup("rewrite")
	if f == nil || f.Value.String() != "true" {
		return ""
	}
	_, file, _, ok := goruntime.Caller(0)
	if !ok {
		return ""
	}
	dir := filepath.Join(filepath.Dir(file), "testdata")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

const (
	operatorID   = "0123456789abcdef0123456789abcdef"
	operatorName = "op"
)

// binding is a table the script registered.
type binding struct {
	table state.Table
	desc  state.StateDesc
}

type snapshot struct {
	metas   []state.StateMeta
	entries []state.Entry
}

type harness struct {
	newBackend func(t *testing.T, maxParallelism int, groups state.KeyGroupRange) state.KeyedBackend
	max        int
	groups     state.KeyGroupRange
	b          state.KeyedBackend
	tables     map[string]*binding
	last       string
	queues     map[string]state.TimerQueue
	snap       *snapshot
	// marks are the incremental checkpoints a script took, with the
	// entries the backend had then.
	marks map[string]markedState
}

type markedState struct {
	mark    state.Mark
	entries []state.Entry
}

func (h *harness) close(t *testing.T) {
	if h.b != nil {
		if err := h.b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		h.b = nil
	}
}

// open replaces the backend with a fresh one.
func (h *harness) open(t *testing.T, maxParallelism int, groups state.KeyGroupRange) {
	h.close(t)
	h.max, h.groups = maxParallelism, groups
	h.b = h.newBackend(t, maxParallelism, groups)
	h.tables, h.queues, h.last = map[string]*binding{}, map[string]state.TimerQueue{}, ""
	if got := h.b.KeyGroups(); got != groups {
		t.Fatalf("KeyGroups() = %v, want %v", got, groups)
	}
}

func (h *harness) backend(t *testing.T) state.KeyedBackend {
	if h.b == nil {
		h.open(t, 4, state.KeyGroupRange{Start: 0, End: 3})
	}
	return h.b
}

func (h *harness) run(t *testing.T, td *datadriven.TestData) string {
	b := h.backend(t)
	switch td.Cmd {
	case "new":
		max := 4
		td.MaybeScanArgs(t, "max", &max)
		h.open(t, max, parseGroups(t, td, state.KeyGroupRange{Start: 0, End: max - 1}))
		return fmt.Sprintf("backend max=%d groups=%s", max, h.groups)
	case "register":
		return h.register(t, td)
	case "key":
		var k string
		td.ScanArgs(t, "k", &k)
		kg := state.KeyGroupFor([]byte(k), h.max)
		b.SetCurrentKey([]byte(k), kg)
		if got, gkg := b.CurrentKey(); string(got) != k || gkg != kg {
			t.Fatalf("CurrentKey() = %q, %d; want %q, %d", got, gkg, k, kg)
		}
		if !h.groups.Contains(kg) {
			return fmt.Sprintf("key %s kg=%d (outside %s)", k, kg, h.groups)
		}
		return fmt.Sprintf("key %s kg=%d", k, kg)
	case "put":
		s := h.state(t, td)
		return result(s.table.Put(nsArg(td), value(t, s, td)))
	case "get":
		s := h.state(t, td)
		v, ok, err := s.table.Get(nsArg(td))
		switch {
		case err != nil:
			return errText(err)
		case !ok:
			return "none"
		}
		return show(v)
	case "add":
		return h.add(t, td)
	case "list-append":
		s := h.state(t, td)
		for _, v := range values(t, s, td) {
			if err := s.table.ListAppend(nsArg(td), v); err != nil {
				return errText(err)
			}
		}
		return "ok"
	case "list-put":
		s := h.state(t, td)
		return result(s.table.ListPut(nsArg(td), values(t, s, td)))
	case "list-get":
		s := h.state(t, td)
		vs, err := s.table.ListGet(nsArg(td))
		if err != nil {
			return errText(err)
		}
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = show(v)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case "map-put":
		s := h.state(t, td)
		return result(s.table.MapPut(nsArg(td), userKey(t, s, td), value(t, s, td)))
	case "map-get":
		s := h.state(t, td)
		v, ok, err := s.table.MapGet(nsArg(td), userKey(t, s, td))
		switch {
		case err != nil:
			return errText(err)
		case !ok:
			return "none"
		}
		return show(v)
	case "map-delete":
		s := h.state(t, td)
		return result(s.table.MapDelete(nsArg(td), userKey(t, s, td)))
	case "map-range":
		s := h.state(t, td)
		limit := -1
		td.MaybeScanArgs(t, "limit", &limit)
		var out strings.Builder
		n := 0
		err := s.table.MapRange(nsArg(td), func(uk []byte, v any) bool {
			fmt.Fprintf(&out, "%s → %s\n", display(t, s.desc.Meta.UserKeyType, uk), show(v))
			n++
			return n != limit
		})
		if err != nil {
			return errText(err)
		}
		if n == 0 {
			return "empty"
		}
		return out.String()
	case "clear":
		s := h.state(t, td)
		return result(s.table.Clear(nsArg(td)))
	case "merge":
		s := h.state(t, td)
		target, _ := td.Arg("target")
		sources, _ := td.Arg("sources")
		srcs := make([][]byte, len(sources.Vals))
		for i, v := range sources.Vals {
			srcs[i] = []byte(v)
		}
		return result(s.table.MergeNamespaces([]byte(target.SingleVal(t)), srcs))
	case "timer-add", "timer-delete":
		q := h.queue(t, td)
		var ts int64
		td.ScanArgs(t, "ts", &ts)
		key, kg := b.CurrentKey()
		tm := state.Timer{Timestamp: ts, KeyGroup: kg, Key: slices.Clone(key), Namespace: nsArg(td)}
		if td.Cmd == "timer-delete" {
			return result(q.Delete(tm))
		}
		added, err := q.Add(tm)
		switch {
		case err != nil:
			return errText(err)
		case !added:
			return "duplicate"
		}
		return "added"
	case "timer-peek":
		tm, ok, err := h.queue(t, td).Peek()
		switch {
		case err != nil:
			return errText(err)
		case !ok:
			return "none"
		}
		return showTimer(tm)
	case "timer-pop":
		q := h.queue(t, td)
		n := q.Len()
		td.MaybeScanArgs(t, "n", &n)
		var out strings.Builder
		for range n {
			tm, ok, err := q.Pop()
			if err != nil {
				return errText(err)
			}
			if !ok {
				out.WriteString("none\n")
				break
			}
			out.WriteString(showTimer(tm) + "\n")
		}
		fmt.Fprintf(&out, "len=%d", q.Len())
		return out.String()
	case "timer-len":
		return fmt.Sprintf("len=%d", h.queue(t, td).Len())
	case "entries":
		return h.entries(t, td)
	case "states":
		return h.states(t)
	case "snapshot":
		metas, entries := h.collect(t)
		h.snap = &snapshot{metas: metas, entries: entries}
		return fmt.Sprintf("%d entries in %d states", len(entries), len(metas))
	case "restore":
		return h.restore(t, td)
	case "mark", "rollback", "release", "check-mark":
		return h.incremental(t, td)
	case "check-snapshot":
		if h.snap == nil {
			t.Fatal("check-snapshot before snapshot")
		}
		_, entries := h.collect(t)
		return h.diff(t, h.snap.entries, entries)
	}
	t.Fatalf("unknown command %q", td.Cmd)
	return ""
}

func parseGroups(t *testing.T, td *datadriven.TestData, def state.KeyGroupRange) state.KeyGroupRange {
	var g string
	if !td.MaybeScanArgs(t, "groups", &g) {
		return def
	}
	a, b, ok := strings.Cut(g, "-")
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("groups=%s: want A-B", g)
	}
	return state.KeyGroupRange{Start: start, End: end}
}

func result(err error) string {
	if err != nil {
		return errText(err)
	}
	return "ok"
}

func errText(err error) string {
	if errors.Is(err, state.ErrNotRegistered) {
		return "error: not registered"
	}
	return "error"
}

// state returns the binding named by state=, or the last registered.
func (h *harness) state(t *testing.T, td *datadriven.TestData) *binding {
	name := h.last
	td.MaybeScanArgs(t, "state", &name)
	s, ok := h.tables[name]
	if !ok {
		t.Fatalf("state %q not registered in this script", name)
	}
	return s
}

func (h *harness) queue(t *testing.T, td *datadriven.TestData) state.TimerQueue {
	name := "event"
	td.MaybeScanArgs(t, "queue", &name)
	if q, ok := h.queues[name]; ok {
		return q
	}
	q, err := h.b.Timers(name, state.StateMeta{OperatorID: operatorID, OperatorName: operatorName,
		KeyType: state.String.TypeName(), NamespaceType: state.String.TypeName()})
	if err != nil {
		t.Fatalf("Timers(%q): %v", name, err)
	}
	h.queues[name] = q
	return q
}

// nsArg encodes ns=: absent is the void namespace, one value a string, two
// values a window.
func nsArg(td *datadriven.TestData) []byte {
	a, ok := td.Arg("ns")
	switch {
	case !ok:
		return nil
	case len(a.Vals) == 2:
		s, err1 := strconv.ParseInt(a.Vals[0], 10, 64)
		e, err2 := strconv.ParseInt(a.Vals[1], 10, 64)
		if err1 == nil && err2 == nil {
			return state.WindowCodec.Append(nil, state.Window{Start: s, End: e})
		}
	}
	return []byte(strings.Join(a.Vals, ","))
}

// avg is the accumulator of the aggregating state of the scripts.
type avg struct {
	Sum   int64 `json:"sum"`
	Count int64 `json:"count"`
}

type avgFunc struct{}

func (avgFunc) CreateAccumulator() avg         { return avg{} }
func (avgFunc) Add(in int64, acc avg) avg      { return avg{acc.Sum + in, acc.Count + 1} }
func (avgFunc) Result(acc avg) float64         { return float64(acc.Sum) / float64(acc.Count) }
func (avgFunc) Merge(a, b avg) avg             { return avg{a.Sum + b.Sum, a.Count + b.Count} }
func (f avgFunc) addAny(in int64, acc any) any { return f.Add(in, acc.(avg)) }
func (f avgFunc) resultAny(acc any) float64    { return f.Result(acc.(avg)) }
func (f avgFunc) createAny() any               { return f.CreateAccumulator() }
func (avgFunc) describe(name string) state.StateDesc {
	return state.Aggregating[int64, avg, float64](name, state.JSON[avg](), avgFunc{}).Desc()
}

// codecs are the value and user key types scripts can name.
var codecs = map[string]struct {
	codec state.AnyCodec
	parse func(string) (any, error)
}{
	"int64":   {state.Erase(state.Int64), func(s string) (any, error) { return strconv.ParseInt(s, 10, 64) }},
	"string":  {state.Erase(state.String), func(s string) (any, error) { return s, nil }},
	"float64": {state.Erase(state.Float64), func(s string) (any, error) { return strconv.ParseFloat(s, 64) }},
	"bool":    {state.Erase(state.Bool), func(s string) (any, error) { return strconv.ParseBool(s) }},
}

func (h *harness) register(t *testing.T, td *datadriven.TestData) string {
	var name, kindName, valueType string
	td.ScanArgs(t, "name", &name)
	td.ScanArgs(t, "kind", &kindName)
	td.ScanArgs(t, "value", &valueType)
	kind, err := state.ParseKind(kindName)
	if err != nil {
		t.Fatal(err)
	}
	var d state.StateDesc
	switch {
	case kind == state.KindAggregating:
		if valueType != "avg" {
			t.Fatalf("aggregating state takes value=avg")
		}
		d = avgFunc{}.describe(name)
	default:
		c, ok := codecs[valueType]
		if !ok {
			t.Fatalf("unknown value type %q", valueType)
		}
		d = state.StateDesc{Meta: state.StateMeta{StateName: name, Kind: kind, ValueType: valueType}, Value: c.codec}
		switch kind {
		case state.KindList:
			d.Meta.UserKeyType = state.Position.TypeName()
		case state.KindMap:
			var uk string
			td.ScanArgs(t, "ukey", &uk)
			ukc, ok := codecs[uk]
			if !ok {
				t.Fatalf("unknown user key type %q", uk)
			}
			d.UserKey, d.Meta.UserKeyType = ukc.codec, uk
		case state.KindReducing:
			switch valueType {
			case "int64":
				d.Merge = func(a, b any) any { return a.(int64) + b.(int64) }
			case "string":
				d.Merge = func(a, b any) any { return a.(string) + b.(string) }
			default:
				t.Fatalf("reducing state takes int64 (sum) or string (concatenation)")
			}
		}
	}
	ns := "string"
	td.MaybeScanArgs(t, "ns", &ns)
	switch ns {
	case "string":
		d.Namespace = state.Erase(state.String)
	case "window":
		d.Namespace = state.Erase(state.WindowCodec)
	default:
		t.Fatalf("ns=%s: want string or window", ns)
	}
	d.Meta.NamespaceType = ns
	d.Meta.OperatorID, d.Meta.OperatorName, d.Meta.Scope = operatorID, operatorName, state.ScopeKeyed
	d.Meta.KeyType = state.String.TypeName()

	tbl, err := h.b.Register(d)
	if err != nil {
		return h.registerErr(t, d.Meta, err)
	}
	if got := tbl.Desc().Meta; got.StateName != name || got.Kind != kind || got.ValueType != d.Meta.ValueType {
		t.Fatalf("Desc().Meta = %+v, want the registered %+v", got, d.Meta)
	}
	h.tables[name] = &binding{table: tbl, desc: d}
	h.last = name
	return "ok"
}

// registerErr checks that a refused register names the state and the
// reason Compatible gives against what was registered or restored before.
func (h *harness) registerErr(t *testing.T, declared state.StateMeta, err error) string {
	var prev []state.StateMeta
	if s, ok := h.tables[declared.StateName]; ok {
		prev = append(prev, s.desc.Meta)
	}
	if h.snap != nil {
		prev = append(prev, h.snap.metas...)
	}
	for _, m := range prev {
		if m.StateName != declared.StateName {
			continue
		}
		if why := m.Compatible(declared); why != "" {
			msg := err.Error()
			if !strings.Contains(msg, why) || !strings.Contains(msg, declared.StateName) {
				t.Errorf("register %s: error %q does not name the state and say %q", declared.StateName, msg, why)
			}
			return fmt.Sprintf("error: %s: %s", declared.StateName, why)
		}
	}
	return errText(err)
}

func value(t *testing.T, s *binding, td *datadriven.TestData) any {
	var v string
	td.ScanArgs(t, "v", &v)
	return parse(t, s.desc.Meta.ValueType, v)
}

func values(t *testing.T, s *binding, td *datadriven.TestData) []any {
	a, ok := td.Arg("v")
	if !ok {
		return nil
	}
	vs := make([]any, 0, len(a.Vals))
	for _, v := range a.Vals {
		vs = append(vs, parse(t, s.desc.Meta.ValueType, v))
	}
	return vs
}

func userKey(t *testing.T, s *binding, td *datadriven.TestData) []byte {
	var uk string
	td.ScanArgs(t, "uk", &uk)
	if s.desc.UserKey == nil {
		return []byte(uk) // not map state: the backend must refuse the call
	}
	return s.desc.UserKey.AppendAny(nil, parse(t, s.desc.Meta.UserKeyType, uk))
}

func parse(t *testing.T, typ, text string) any {
	c, ok := codecs[typ]
	if !ok {
		t.Fatalf("cannot parse values of type %q", typ)
	}
	v, err := c.parse(text)
	if err != nil {
		t.Fatalf("%s value %q: %v", typ, text, err)
	}
	return v
}

// add folds v into reducing or aggregating state, as ReducingState.Add and
// AggregatingState.Add do.
func (h *harness) add(t *testing.T, td *datadriven.TestData) string {
	s := h.state(t, td)
	ns := nsArg(td)
	old, ok, err := s.table.Get(ns)
	if err != nil {
		return errText(err)
	}
	var v any
	switch s.desc.Meta.Kind {
	case state.KindReducing:
		v = value(t, s, td)
		if ok {
			v = s.desc.Merge(old, v)
		}
	case state.KindAggregating:
		var in int64
		td.ScanArgs(t, "v", &in)
		f := avgFunc{}
		if !ok {
			old = f.createAny()
		}
		v = f.addAny(in, old)
	default:
		t.Fatalf("add on %s state", s.desc.Meta.Kind)
	}
	if err := s.table.Put(ns, v); err != nil {
		return errText(err)
	}
	if s.desc.Meta.Kind == state.KindAggregating {
		return fmt.Sprintf("%s result=%s", show(v), show(avgFunc{}.resultAny(v)))
	}
	return show(v)
}

// collect reads every key group's entries, copied, and the metas.
func (h *harness) collect(t *testing.T) ([]state.StateMeta, []state.Entry) {
	var all []state.Entry
	for kg := h.groups.Start; kg <= h.groups.End; kg++ {
		all = append(all, h.read(t, kg, "")...)
	}
	metas := h.b.States()
	if !slices.IsSortedFunc(metas, func(a, b state.StateMeta) int { return strings.Compare(a.StateName, b.StateName) }) {
		t.Errorf("States() not ordered by name")
	}
	return metas, all
}

// read copies the entries of one key group and checks their invariants. An
// iteration error fails the test unless errs is set.
func (h *harness) read(t *testing.T, kg int, name string) []state.Entry {
	es, err := h.readErr(t, kg, name)
	if err != nil {
		t.Fatalf("Entries(%d, %q): %v", kg, name, err)
	}
	return es
}

func (h *harness) readErr(t *testing.T, kg int, name string) ([]state.Entry, error) {
	var es []state.Entry
	for e, err := range h.b.Entries(kg, name) {
		if err != nil {
			h.checkBatches(t, kg, name, es, err)
			return es, err
		}
		if e.KeyGroup != kg || (name != "" && e.State != name) {
			t.Fatalf("Entries(%d, %q) yielded kg %d state %q", kg, name, e.KeyGroup, e.State)
		}
		if got := state.KeyGroupFor(e.Key, h.max); got != kg {
			t.Fatalf("entry of key %q in kg %d; the key belongs in kg %d", e.Key, kg, got)
		}
		c := state.Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace),
			UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)}
		if n := len(es); n > 0 && state.CompareEntries(es[n-1], c) >= 0 {
			t.Fatalf("Entries(%d, %q) out of order:\n  %s\nthen\n  %s", kg, name, rawEntry(es[n-1]), rawEntry(c))
		}
		es = append(es, c)
	}
	h.checkBatches(t, kg, name, es, nil)
	return es, nil
}

// checkBatches checks that a backend's EntryBatches(kg, name) yields the
// entries es and error err that Entries yielded (nil slices included),
// each batch copied at its own step, in batches of 1 to BatchEntries;
// and that a consumer may stop after the first batch.
func (h *harness) checkBatches(t *testing.T, kg int, name string, es []state.Entry, err error) {
	eb, ok := h.b.(state.EntryBatcher)
	if !ok {
		return
	}
	matchBatches(t, eb, kg, name, es, err)
	for range eb.EntryBatches(kg, name) {
		break
	}
}

func (h *harness) entries(t *testing.T, td *datadriven.TestData) string {
	var name string
	td.MaybeScanArgs(t, "state", &name)
	kgs := []int{}
	if kg := -1; td.MaybeScanArgs(t, "kg", &kg) {
		kgs = append(kgs, kg)
	} else {
		for kg := h.groups.Start; kg <= h.groups.End; kg++ {
			kgs = append(kgs, kg)
		}
	}
	metas := map[string]state.StateMeta{}
	for _, m := range h.b.States() {
		metas[m.StateName] = m
	}
	var out strings.Builder
	for _, kg := range kgs {
		es, err := h.readErr(t, kg, name)
		for _, e := range es {
			out.WriteString(showEntry(t, metas[e.State], e) + "\n")
		}
		if err != nil {
			out.WriteString(errText(err) + "\n")
		}
	}
	if out.Len() == 0 {
		return "empty"
	}
	return out.String()
}

func (h *harness) states(t *testing.T) string {
	var out strings.Builder
	metas := h.b.States()
	for i, m := range metas {
		if i > 0 && metas[i-1].StateName >= m.StateName {
			t.Errorf("States() not ordered by name: %q then %q", metas[i-1].StateName, m.StateName)
		}
		fmt.Fprintf(&out, "%s kind=%s key=%s ns=%s uk=%s value=%s entries=%d bytes=%d\n",
			m.StateName, m.Kind, m.KeyType, m.NamespaceType, or(m.UserKeyType, "·"), or(m.ValueType, "·"), m.Entries, m.Bytes)
	}
	if out.Len() == 0 {
		return "none"
	}
	return out.String()
}

func (h *harness) restore(t *testing.T, td *datadriven.TestData) string {
	if h.snap == nil {
		t.Fatal("restore before snapshot")
	}
	groups := parseGroups(t, td, h.groups)
	unfiltered := td.HasArg("unfiltered")
	var in []state.Entry
	// Key groups in descending order: a restore must not rely on their order.
	for _, e := range h.snap.entries {
		if unfiltered || groups.Contains(e.KeyGroup) {
			in = append(in, e)
		}
	}
	slices.SortStableFunc(in, func(a, b state.Entry) int { return b.KeyGroup - a.KeyGroup })
	outcome := func() string {
		_, got := h.collect(t)
		var want []state.Entry
		for _, e := range h.snap.entries {
			if groups.Contains(e.KeyGroup) {
				want = append(want, e)
			}
		}
		return fmt.Sprintf("restored %d entries into groups %s: %s", len(in), groups, h.diff(t, want, got))
	}
	// A backend that restores from batches must end up where Restore
	// does, error included: the same entries in batches of 1 to 3.
	batched := ""
	h.open(t, h.max, groups)
	if br, ok := h.b.(state.BatchRestorer); ok {
		err := br.RestoreBatches(h.snap.metas, func(yield func([]state.Entry, error) bool) {
			for i, k := 0, 0; i < len(in); k++ {
				n := min(1+k%3, len(in)-i)
				if !yield(slices.Clone(in[i:i+n]), nil) {
					return
				}
				i += n
			}
		})
		batched = errText(err)
		if err == nil {
			batched = outcome()
		}
		h.open(t, h.max, groups)
	}
	err := h.b.Restore(h.snap.metas, func(yield func(state.Entry, error) bool) {
		for _, e := range in {
			if !yield(e, nil) {
				return
			}
		}
	})
	got := errText(err)
	if err == nil {
		got = outcome()
	}
	if batched != "" && batched != got {
		t.Errorf("RestoreBatches: %s\nRestore: %s", batched, got)
	}
	return got
}

// diff compares the snapshot's entries in this backend's key groups with got.
func (h *harness) diff(t *testing.T, snap, got []state.Entry) string {
	var want []state.Entry
	for _, e := range snap {
		if h.groups.Contains(e.KeyGroup) {
			want = append(want, e)
		}
	}
	same := func(a, b state.Entry) bool { return state.CompareEntries(a, b) == 0 && bytes.Equal(a.Value, b.Value) }
	if slices.EqualFunc(want, got, same) {
		return "entries identical"
	}
	var out strings.Builder
	out.WriteString("entries differ:\n")
	for _, e := range want {
		if !slices.ContainsFunc(got, func(g state.Entry) bool { return same(e, g) }) {
			out.WriteString("- " + rawEntry(e) + "\n")
		}
	}
	for _, e := range got {
		if !slices.ContainsFunc(want, func(w state.Entry) bool { return same(e, w) }) {
			out.WriteString("+ " + rawEntry(e) + "\n")
		}
	}
	return out.String()
}

func rawEntry(e state.Entry) string {
	return fmt.Sprintf("kg=%d %s key=%x ns=%x uk=%x v=%x", e.KeyGroup, e.State, e.Key, e.Namespace, e.UserKey, e.Value)
}

// showEntry decodes an entry by the type names of its StateMeta, as a
// savepoint reader without the job's code would.
func showEntry(t *testing.T, m state.StateMeta, e state.Entry) string {
	if m.StateName == "" {
		t.Fatalf("entry of state %q, which States() does not list", e.State)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kg=%d %s key=%s", e.KeyGroup, e.State, display(t, m.KeyType, e.Key))
	if len(e.Namespace) > 0 {
		fmt.Fprintf(&b, " ns=%s", display(t, m.NamespaceType, e.Namespace))
	}
	if e.UserKey != nil || m.Kind == state.KindMap || m.Kind.IsList() || m.Kind == state.KindTimers {
		fmt.Fprintf(&b, " uk=%s", display(t, m.UserKeyType, e.UserKey))
	}
	if m.Kind != state.KindTimers {
		fmt.Fprintf(&b, " v=%s", display(t, m.ValueType, e.Value))
	} else if len(e.Value) != 0 {
		t.Errorf("timer entry with a value: %s", rawEntry(e))
	}
	return b.String()
}

func display(t *testing.T, typ string, b []byte) string {
	if typ == state.Int64.TypeName() || typ == state.Position.TypeName() {
		// Timestamps and positions read better as numbers than as times.
		n, err := state.Int64.Decode(b)
		if err != nil {
			t.Fatalf("%s %x: %v", typ, b, err)
		}
		return strconv.FormatInt(n, 10)
	}
	v, err := state.DisplayBytes(typ, b)
	if err != nil {
		t.Fatalf("%s %x: %v", typ, b, err)
	}
	return show(v)
}

func showTimer(tm state.Timer) string {
	s := fmt.Sprintf("ts=%d kg=%d key=%s", tm.Timestamp, tm.KeyGroup, tm.Key)
	if len(tm.Namespace) > 0 {
		s += fmt.Sprintf(" ns=%s", tm.Namespace)
	}
	return s
}

// show formats a Go or dynamic value.
func show(v any) string {
	if m, ok := v.(map[string]any); ok {
		v = m // already dynamic: ToDynamic would turn its times into strings
	} else {
		v = state.ToDynamic(v)
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case state.Hex:
		return x.String()
	case map[string]any:
		if s, ok := x["start"].(time.Time); ok {
			if e, ok := x["end"].(time.Time); ok && len(x) == 2 {
				return fmt.Sprintf("[%d,%d)", s.UnixMilli(), e.UnixMilli())
			}
		}
		b, _ := json.Marshal(x)
		return string(b)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// incremental runs the commands of incremental checkpoints: mark name=A
// takes one and keeps the entries of that moment; rollback returns to it;
// release forgets it; check-mark compares MarkedEntries with what was kept.
func (h *harness) incremental(t *testing.T, td *datadriven.TestData) string {
	ib, ok := h.b.(state.IncrementalBackend)
	if !ok {
		t.Fatalf("%T is not an IncrementalBackend", h.b)
	}
	var name string
	td.ScanArgs(t, "name", &name)
	if h.marks == nil {
		h.marks = map[string]markedState{}
	}
	if td.Cmd == "mark" {
		m, err := ib.Mark()
		if err != nil {
			return errText(err)
		}
		_, entries := h.collect(t)
		h.marks[name] = markedState{mark: m, entries: entries}
		return fmt.Sprintf("mark %s: %d entries", name, len(entries))
	}
	ms, ok := h.marks[name]
	if !ok {
		t.Fatalf("no mark %q in this script", name)
	}
	switch td.Cmd {
	case "rollback":
		if err := ib.RollBack(ms.mark); err != nil {
			return errText(err)
		}
		_, entries := h.collect(t)
		return "rolled back: " + h.diff(t, ms.entries, entries)
	case "release":
		ib.Release(ms.mark)
		return "released"
	}
	var got []state.Entry
	for kg := h.groups.Start; kg <= h.groups.End; kg++ {
		for e, err := range ib.MarkedEntries(ms.mark, kg) {
			if err != nil {
				if errors.Is(err, state.ErrUnknownMark) {
					return "error: unknown mark"
				}
				return errText(err)
			}
			got = append(got, cloneEntry(e))
		}
	}
	return h.diff(t, ms.entries, got)
}

func cloneEntry(e state.Entry) state.Entry {
	return state.Entry{State: e.State, KeyGroup: e.KeyGroup, Key: bytes.Clone(e.Key), Namespace: bytes.Clone(e.Namespace),
		UserKey: bytes.Clone(e.UserKey), Value: bytes.Clone(e.Value)}
}
