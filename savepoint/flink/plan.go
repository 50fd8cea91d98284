package flink

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"streamdbg/state"
)

// This file names the operators of a Flink SQL job's savepoint from the
// job's compiled plan (COMPILE PLAN JSON). An exec node {"id": 4, "type":
// "stream-exec-group-aggregate_1"} creates its transformations with uids
// "<id>_<transformation>" (4_group-aggregate), so an operator's id is the
// murmur3 of one of them: the plan is matched to the savepoint by trying
// the transformation names a node can have.

// maxPlanSize bounds the plan file read into memory.
const maxPlanSize = 64 << 20

// planNode is what this reader uses of an exec node.
type planNode struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Description string          `json:"description"`
	OutputType  json.RawMessage `json:"outputType"`
	State       []planState     `json:"state"`
	UID         json.RawMessage `json:"uid"`
	raw         map[string]any  // the whole node, for key columns
	inputs      []*planNode     // from the edges, in order
	output      []planField     // parsed OutputType
}

type planState struct {
	Index int    `json:"index"`
	TTL   string `json:"ttl"`
	Name  string `json:"name"`
}

type planEdge struct {
	Source int `json:"source"`
	Target int `json:"target"`
}

// planField is one column of a node's row type.
type planField struct {
	name string
	root typeRoot // rootUnknown when the type text is not understood
}

// opPlan is what a plan says of one operator of the savepoint.
type opPlan struct {
	node      *planNode
	uid       string
	primary   bool          // the node's main transformation, not a helper one
	keys      [][]planField // candidates for the key's columns (keyColumns)
	inputRows [][]planField
}

// FindPlan returns the compiled plan that belongs to a savepoint directory
// by convention: plan.json beside it (in its parent) or inside it; "" when
// there is none.
func FindPlan(dir string) string {
	for _, p := range []string{filepath.Join(filepath.Dir(filepath.Clean(dir)), "plan.json"), filepath.Join(dir, "plan.json")} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// ApplyPlanFile names the savepoint's operators from a compiled plan file.
func (sp *Savepoint) ApplyPlanFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("flink: plan: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPlanSize+1))
	if err != nil {
		return fmt.Errorf("flink: plan %s: %w", path, err)
	}
	if len(b) > maxPlanSize {
		return fmt.Errorf("flink: plan %s is larger than %d bytes: %w", path, maxPlanSize, ErrUnsupported)
	}
	if err := sp.ApplyPlan(b); err != nil {
		return fmt.Errorf("flink: plan %s: %w", path, err)
	}
	return nil
}

// ApplyPlan names the savepoint's operators from a compiled plan's JSON:
// each operator whose id is the murmur3 of one of a node's transformation
// uids gets the node's description as its name and the uid; the keys of
// its states get the names of the node's key columns (grouping, partition,
// unique or join keys, as named in the node's input type), and rows of its
// states that have exactly the input's column types get the input's column
// names. Operators the plan does not match keep their names.
//
// Call it before reading states: it resets what was read.
func (sp *Savepoint) ApplyPlan(planJSON []byte) error {
	var doc struct {
		Nodes []json.RawMessage `json:"nodes"`
		Edges []planEdge        `json:"edges"`
	}
	if err := json.Unmarshal(planJSON, &doc); err != nil {
		return fmt.Errorf("not a compiled plan: %w", markErr(err, ErrCorrupt))
	}
	if doc.Nodes == nil {
		return fmt.Errorf("not a compiled plan: no nodes: %w", ErrCorrupt)
	}
	nodes := map[int]*planNode{}
	var order []*planNode
	for _, raw := range doc.Nodes {
		n := &planNode{}
		if err := json.Unmarshal(raw, n); err != nil {
			return fmt.Errorf("node: %w", markErr(err, ErrCorrupt))
		}
		if err := json.Unmarshal(raw, &n.raw); err != nil {
			return fmt.Errorf("node %d: %w", n.ID, markErr(err, ErrCorrupt))
		}
		n.output = parseRowType(n.OutputType)
		nodes[n.ID] = n
		order = append(order, n)
	}
	for _, e := range doc.Edges {
		if t, ok := nodes[e.Target]; ok {
			if s, ok := nodes[e.Source]; ok {
				t.inputs = append(t.inputs, s)
			}
		}
	}
	names := transformationNames(order)
	byID := map[string]*opPlan{}
	for _, n := range order {
		own := nodeTransformation(n.Type)
		cands := append([]string{own}, names...)
		if uid := planUID(n.UID); uid != "" {
			byID[state.OperatorID(uid)] = &opPlan{node: n, uid: uid, primary: true}
		}
		for _, t := range cands {
			uid := fmt.Sprintf("%d_%s", n.ID, t)
			id := state.OperatorID(uid)
			if _, ok := byID[id]; !ok {
				byID[id] = &opPlan{node: n, uid: uid, primary: t == own}
			}
		}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.plan = map[string]*opPlan{}
	matched := map[*planNode]int{}
	for _, op := range sp.md.operators {
		if p, ok := byID[op.id]; ok {
			matched[p.node]++
		}
	}
	for i, op := range sp.md.operators {
		p, ok := byID[op.id]
		if !ok {
			continue
		}
		if matched[p.node] == 1 {
			p.primary = true // the node's only operator is its main one
		}
		p.keys = keyColumns(p.node)
		for _, in := range p.node.inputs {
			p.inputRows = append(p.inputRows, in.output)
		}
		sp.plan[op.id] = p
		info := &sp.operators[i]
		info.UID = p.uid
		info.Name = p.node.Description
		if info.Name == "" {
			info.Name = p.node.Type
		}
		if !p.primary {
			info.Name += " [" + strings.TrimPrefix(p.uid, fmt.Sprint(p.node.ID)+"_") + "]"
		}
		var notes []string
		for _, s := range p.node.State {
			notes = append(notes, fmt.Sprintf("plan state %s (TTL %s)", s.Name, s.TTL))
		}
		info.Notes = append([]string{"compiled plan node " + fmt.Sprint(p.node.ID) + " " + p.node.Type}, notes...)
	}
	// What was read was named without the plan.
	sp.keyed = map[*keyGroupsHandle]*keyedHeader{}
	sp.operator = map[*operatorStateHandle]*operatorHeader{}
	sp.metas, sp.listed = nil, false
	return nil
}

func planUID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// nodeTransformation is the transformation name an exec node type gives
// its main operator: stream-exec-group-aggregate_1 → group-aggregate.
func nodeTransformation(typ string) string {
	t := typ
	for _, p := range []string{"stream-exec-", "batch-exec-"} {
		t = strings.TrimPrefix(t, p)
	}
	if i := strings.LastIndexByte(t, '_'); i > 0 {
		t = t[:i]
	}
	return t
}

// helperTransformations are the names of the transformations exec nodes
// create besides their main one (sinks, sources, interval joins and others
// chain several operators).
var helperTransformations = []string{
	"source", "sink", "constraint-validator", "upsert-materialize", "partitioner", "timestamp-inserter",
	"watermark-assigner", "changelog-normalize", "calc", "rank", "limit", "sort-limit",
	"filter-left", "filter-right", "pad-left", "pad-right", "local-group-aggregate", "global-group-aggregate",
	"local-window-aggregate", "global-window-aggregate", "window-aggregate", "row-time-sort", "proc-time-sort",
	"exchange", "process", "table-function", "async-lookup", "lookup", "union", "sink-materializer",
}

// transformationNames lists every name to try: the main ones of the
// plan's node types and the helper ones.
func transformationNames(nodes []*planNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, nodeTransformation(n.Type))
	}
	out = append(out, helperTransformations...)
	slices.Sort(out)
	return slices.Compact(out)
}

// keyColumns lists the candidates for a node's key columns in its input
// type: its grouping, partial or final grouping, unique keys, partition
// fields or left join keys, whichever it has. The key serializer's field
// types pick among them (nameKey).
func keyColumns(n *planNode) [][]planField {
	if len(n.inputs) == 0 {
		return nil
	}
	in := n.inputs[0].output
	var out [][]planField
	for _, path := range [][]string{
		{"grouping"}, {"partialAggGrouping"}, {"finalAggGrouping"}, {"uniqueKeys"}, {"partition", "fields"},
		{"partitionSpec", "fields"}, {"overSpec", "partition", "fields"}, {"matchSpec", "partition", "fields"},
		{"joinSpec", "leftKeys"}, {"intervalJoinSpec", "joinSpec", "leftKeys"}, {"leftJoinKeys"},
	} {
		v, ok := lookupPath(n.raw, path)
		if !ok {
			continue
		}
		idx, ok := intList(v)
		if !ok {
			continue
		}
		cols := make([]planField, 0, len(idx))
		for _, k := range idx {
			if k < 0 || k >= len(in) {
				cols = nil
				break
			}
			cols = append(cols, in[k])
		}
		if cols != nil {
			out = append(out, cols)
		}
	}
	return out
}

func lookupPath(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func intList(v any) ([]int, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]int, 0, len(l))
	for _, x := range l {
		f, ok := x.(float64)
		if !ok || f != float64(int(f)) {
			return nil, false
		}
		out = append(out, int(f))
	}
	return out, true
}

// parseRowType reads a node's outputType: the SQL text
// "ROW<`a` INT, `b` STRING NOT NULL>" or the JSON form
// {"type": "ROW", "fields": [{"name": "a", "fieldType": "INT"}]}.
func parseRowType(raw json.RawMessage) []planField {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return parseRowText(text)
	}
	var obj struct {
		Type   string `json:"type"`
		Fields []struct {
			Name      string          `json:"name"`
			FieldType json.RawMessage `json:"fieldType"`
		} `json:"fields"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Type != "ROW" {
		return nil
	}
	out := make([]planField, len(obj.Fields))
	for i, f := range obj.Fields {
		out[i] = planField{name: f.Name, root: jsonTypeRoot(f.FieldType)}
	}
	return out
}

func jsonTypeRoot(raw json.RawMessage) typeRoot {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return textTypeRoot(text)
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if r, ok := rootNames[obj.Type]; ok {
			return r
		}
		return textTypeRoot(obj.Type)
	}
	return rootUnknown
}

// parseRowText splits a ROW<...> type's text into its fields.
func parseRowText(s string) []planField {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, " NOT NULL")
	if !strings.HasPrefix(s, "ROW<") || !strings.HasSuffix(s, ">") {
		return nil
	}
	body := s[4 : len(s)-1]
	var out []planField
	for _, part := range splitTop(body) {
		part = strings.TrimSpace(part)
		name := ""
		if strings.HasPrefix(part, "`") {
			end := 1
			for end < len(part) {
				if part[end] == '`' {
					if end+1 < len(part) && part[end+1] == '`' {
						name += "`"
						end += 2
						continue
					}
					break
				}
				name += string(part[end])
				end++
			}
			part = strings.TrimSpace(part[min(end+1, len(part)):])
		} else if i := strings.IndexByte(part, ' '); i > 0 {
			name, part = part[:i], part[i+1:]
		}
		out = append(out, planField{name: name, root: textTypeRoot(part)})
	}
	return out
}

// splitTop splits at commas outside <>, () and backticks.
func splitTop(s string) []string {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			quoted = !quoted
		case quoted:
		case c == '<' || c == '(':
			depth++
		case c == '>' || c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

// textTypeRoot maps a SQL type's text to its root.
func textTypeRoot(t string) typeRoot {
	t = strings.ToUpper(strings.TrimSpace(t))
	word := t
	if i := strings.IndexAny(t, "(< "); i >= 0 {
		word = t[:i]
	}
	switch word {
	case "INT", "INTEGER":
		return rootInteger
	case "BIGINT":
		return rootBigint
	case "SMALLINT":
		return rootSmallint
	case "TINYINT":
		return rootTinyint
	case "BOOLEAN":
		return rootBoolean
	case "DOUBLE":
		return rootDouble
	case "FLOAT":
		return rootFloat
	case "DECIMAL":
		return rootDecimal
	case "STRING", "VARCHAR":
		return rootVarchar
	case "CHAR":
		return rootChar
	case "BYTES", "VARBINARY":
		return rootVarbinary
	case "BINARY":
		return rootBinary
	case "DATE":
		return rootDate
	case "TIME":
		return rootTime
	case "TIMESTAMP":
		switch {
		case strings.Contains(t, "LOCAL TIME ZONE"):
			return rootTimestampLTZ
		case strings.Contains(t, "TIME ZONE"):
			return rootTimestampTZ
		}
		return rootTimestamp
	case "TIMESTAMP_LTZ":
		return rootTimestampLTZ
	case "ARRAY":
		return rootArray
	case "MAP":
		return rootMap
	case "MULTISET":
		return rootMultiset
	case "ROW":
		return rootRow
	case "RAW":
		return rootRaw
	}
	if r, ok := rootNames[word]; ok {
		return r
	}
	return rootUnknown
}

// matchRoots reports whether a row's field types are these roots.
func matchRoots(types []*ltype, roots []typeRoot) bool {
	if len(types) != len(roots) || len(types) == 0 {
		return false
	}
	for i, t := range types {
		r := t.root
		if r == rootDistinct && t.source != nil {
			r = t.source.root
		}
		if r != roots[i] || roots[i] == rootUnknown {
			return false
		}
	}
	return true
}

func fieldRoots(f []planField) []typeRoot {
	out := make([]typeRoot, len(f))
	for i, x := range f {
		out[i] = x.root
	}
	return out
}

func fieldNamesOf(f []planField) []string {
	out := make([]string, len(f))
	for i, x := range f {
		out[i] = x.name
	}
	return out
}

// applyToHeader returns a keyed header whose key and state serializers
// name their rows' fields from the plan.
func (p *opPlan) applyToHeader(h *keyedHeader) *keyedHeader {
	out := *h
	out.key = p.nameKey(h.key)
	out.states = make([]*stateMeta, len(h.states))
	for i, m := range h.states {
		c := *m
		c.value = p.nameValues(m.value, 0)
		if ts, ok := c.value.(*timerSer); ok {
			c.value = &timerSer{key: p.nameKey(ts.key), namespace: ts.namespace}
		}
		out.states[i] = &c
	}
	return &out
}

func (p *opPlan) nameKey(s serializer) serializer {
	rs, ok := s.(*rowDataSer)
	if !ok {
		return s
	}
	for _, cols := range p.keys {
		if matchRoots(rs.layout.types, fieldRoots(cols)) {
			return rs.withNames(fieldNamesOf(cols))
		}
	}
	return s
}

// nameValues names the rows inside a value serializer that have exactly
// the column types of one of the node's inputs.
func (p *opPlan) nameValues(s serializer, depth int) serializer {
	if depth > maxNesting {
		return s
	}
	n := func(x serializer) serializer { return p.nameValues(x, depth+1) }
	switch x := s.(type) {
	case *rowDataSer:
		if x.layout.names != nil {
			return x
		}
		for _, in := range p.inputRows {
			if matchRoots(x.layout.types, fieldRoots(in)) {
				return x.withNames(fieldNamesOf(in))
			}
		}
	case *listSer:
		return &listSer{elem: n(x.elem)}
	case *mapSer:
		return &mapSer{key: n(x.key), value: n(x.value)}
	case *ttlSer:
		return &ttlSer{value: n(x.value)}
	case *externalSer:
		return &externalSer{dataType: x.dataType, internal: n(x.internal)}
	case *streamElementSer:
		return &streamElementSer{value: n(x.value)}
	case *lockableSer:
		return &lockableSer{elem: n(x.elem)}
	case *sortedMapSer:
		return &sortedMapSer{key: n(x.key), value: n(x.value)}
	case *linkedListSer:
		return &linkedListSer{elem: n(x.elem), nullMask: x.nullMask}
	case *tupleSer:
		f := make([]serializer, len(x.fields))
		for i, e := range x.fields {
			f[i] = n(e)
		}
		return &tupleSer{class: x.class, fields: f}
	}
	return s
}
