package runtime

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"streamdbg/state"
)

// Plan is a job's operators chained into tasks, as Flink's JobGraph: an
// operator chains to its input when the edge is forward, the input is its
// only one and both have the same parallelism. KeyBy, rebalance, broadcast
// and a change of parallelism break the chain.
type Plan struct {
	Job            string
	MaxParallelism int
	Tasks          []*Task
	// Operators lists every operator in the order the job added them.
	Operators []*OperatorInfo
	// Warnings are problems that do not stop the job (derived uids).
	Warnings []string
}

// Task is a chain of operators that runs as Parallelism subtasks.
type Task struct {
	Index       int
	Name        string // the chain, e.g. "Source: lines -> tokenize"
	Parallelism int
	Operators   []*OperatorInfo // in chain order (depth first)
	Inputs      []TaskInput
	nodes       []*node
}

// TaskInput is a network edge into a task.
type TaskInput struct {
	From      *Task
	Partition string // "hash", "rebalance", "broadcast", "forward"
	Label     string // e.g. "hash(word)"
	Tag       string // side output of the upstream operator
	// Input is the input of a two-input task the edge feeds: 1 or 2 (0 for
	// the edges of a one-input task).
	Input int
}

// TwoInputs reports whether the task's head operator has two inputs.
func (t *Task) TwoInputs() bool { return len(t.nodes) > 0 && t.nodes[0].two != nil }

// OperatorInfo describes one operator in the plan.
type OperatorInfo struct {
	ID          string // 32 hex digits, from the uid
	UID         string
	Name        string
	Parallelism int
	Task        *Task
	ChainIndex  int
	Keyed       bool // its input is keyed: it has keyed state and timers
	IsSource    bool
	IsSink      bool
	KeyType     string // type of the keys of a keyed operator
	// KeyCodec decodes the keys of a keyed operator (nil otherwise).
	KeyCodec state.AnyCodec
	// TimerNamespaceType names the type of its timers' namespaces
	// ("window" for window operators, "void" otherwise).
	TimerNamespaceType string
	node               *node
}

var uidUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// OptionsError is a parallelism or max parallelism out of range, found
// before the job starts (the CLI reports it as a usage error).
type OptionsError struct{ Msg string }

func (e *OptionsError) Error() string { return "runtime: " + e.Msg }

// BuildPlan chains the job's operators into tasks, with parallelism p when
// p > 0 (otherwise the job's default).
func BuildPlan(j *Job, parallelism, maxParallelism int) (*Plan, error) {
	if j.err != nil {
		return nil, j.err
	}
	if len(j.nodes) == 0 {
		return nil, fmt.Errorf("runtime: job %q has no operators", j.Name)
	}
	def := j.Parallelism
	if parallelism > 0 {
		def = parallelism
	}
	if def <= 0 {
		def = 1
	}
	maxP := j.MaxParallelism
	if maxParallelism > 0 {
		maxP = maxParallelism
	}
	if maxP <= 0 {
		maxP = state.DefaultMaxParallelism
	}
	if maxP > state.MaxKeyGroups {
		// Refused before anything is allocated per key group (it took 1 GB
		// at 10^8; a savepoint could not even be written above this).
		return nil, &OptionsError{Msg: fmt.Sprintf("max parallelism %d is more than %d, the most key groups Flink (and a savepoint) allows", maxP, state.MaxKeyGroups)}
	}
	p := &Plan{Job: j.Name, MaxParallelism: maxP}
	var par func(n *node) int
	par = func(n *node) int {
		if n.parallelism > 0 {
			return n.parallelism
		}
		if n.inheritParallelism && len(n.inputs) > 0 {
			return par(n.inputs[0].from)
		}
		return def
	}
	infos := make(map[*node]*OperatorInfo, len(j.nodes))
	uids := map[string]*node{}
	for _, n := range j.nodes {
		if par(n) > maxP {
			return nil, &OptionsError{Msg: fmt.Sprintf("operator %q: parallelism %d exceeds max parallelism %d", n.name, par(n), maxP)}
		}
		uid := n.uid
		if uid == "" {
			uid = fmt.Sprintf("%s-%d", strings.Trim(uidUnsafe.ReplaceAllString(strings.ToLower(n.name), "-"), "-"), n.id)
			n.uidDerived = true
			p.Warnings = append(p.Warnings, fmt.Sprintf("operator %q has no uid; using %q, derived from its position: its state will not restore if the job's shape changes", n.name, uid))
		}
		if other, dup := uids[uid]; dup {
			return nil, fmt.Errorf("runtime: operators %q and %q have the same uid %q", other.name, n.name, uid)
		}
		uids[uid] = n
		info := &OperatorInfo{ID: state.OperatorID(uid), UID: uid, Name: n.name, Parallelism: par(n),
			Keyed: n.keyed(), IsSource: n.source != nil, IsSink: n.isSink, node: n}
		if info.Keyed {
			info.KeyType = n.inputs[0].key.Codec.TypeName()
			info.KeyCodec = n.inputs[0].key.Codec
		}
		info.TimerNamespaceType = state.VoidCodec.TypeName()
		if n.timerNamespace != nil {
			info.TimerNamespaceType = n.timerNamespace.TypeName()
		}
		for _, in := range n.inputs {
			if in.part == forward && par(in.from) != par(n) {
				in.part = rebalance
			}
		}
		infos[n] = info
		p.Operators = append(p.Operators, info)
	}
	chainsTo := func(e *edge) bool {
		return e.part == forward && len(e.to.inputs) == 1 && par(e.from) == par(e.to) && !e.from.isSink
	}
	taskOf := map[*node]*Task{}
	for _, n := range j.nodes {
		if len(n.inputs) == 1 && chainsTo(n.inputs[0]) {
			continue // chained into its input's task
		}
		t := &Task{Index: len(p.Tasks), Parallelism: par(n)}
		var walk func(n *node)
		walk = func(n *node) {
			info := infos[n]
			info.Task, info.ChainIndex = t, len(t.nodes)
			t.nodes = append(t.nodes, n)
			t.Operators = append(t.Operators, info)
			taskOf[n] = t
			for _, e := range n.outputs {
				if chainsTo(e) {
					walk(e.to)
				}
			}
		}
		walk(n)
		t.Name = chainName(n, chainsTo)
		p.Tasks = append(p.Tasks, t)
	}
	for _, t := range p.Tasks {
		head := t.nodes[0]
		for _, e := range head.inputs {
			in := TaskInput{From: taskOf[e.from], Partition: e.part.String(), Label: e.label, Tag: e.tag}
			if head.two != nil {
				in.Input = e.input + 1
			}
			t.Inputs = append(t.Inputs, in)
		}
	}
	return p, nil
}

func chainName(n *node, chainsTo func(*edge) bool) string {
	var next []string
	for _, e := range n.outputs {
		if chainsTo(e) {
			next = append(next, chainName(e.to, chainsTo))
		}
	}
	switch len(next) {
	case 0:
		return n.name
	case 1:
		return n.name + " -> " + next[0]
	}
	return n.name + " -> (" + strings.Join(next, ", ") + ")"
}

// Operator finds an operator by name or uid.
func (p *Plan) Operator(nameOrUID string) (*OperatorInfo, bool) {
	for _, o := range p.Operators {
		if o.Name == nameOrUID || o.UID == nameOrUID {
			return o, true
		}
	}
	return nil, false
}

// OperatorNames lists the operators' names in job order.
func (p *Plan) OperatorNames() []string {
	out := make([]string, len(p.Operators))
	for i, o := range p.Operators {
		out[i] = o.Name
	}
	return out
}

// String prints the plan, one task per line with its network inputs:
//
//	Source: lines -> tokenize  ×1
//	count -> out  ×2  ← hash(word) from "Source: lines -> tokenize"
func (p *Plan) String() string {
	var b strings.Builder
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "%s  ×%d", t.Name, t.Parallelism)
		for _, in := range t.Inputs {
			label := in.Label
			if label == "" {
				label = in.Partition
			}
			if in.Tag != "" {
				label += " [" + in.Tag + "]"
			}
			if in.Input > 0 {
				label = fmt.Sprintf("input %d: %s", in.Input, label)
			}
			fmt.Fprintf(&b, "  ← %s from %q", label, in.From.Name)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Fingerprint identifies the job's shape: operators by uid with their
// kinds, in job order. Savepoints record it.
func (p *Plan) Fingerprint() string {
	parts := make([]string, 0, len(p.Operators))
	for _, o := range p.Operators {
		parts = append(parts, o.UID)
	}
	slices.Sort(parts)
	return state.OperatorID(strings.Join(parts, "\x00"))
}
