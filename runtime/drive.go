package runtime

import (
	"fmt"
	"reflect"
	"strings"
)

// SourceSchedule decides when sources read, for a caller that feeds some
// sources itself and reads between its own checks (streamdbgtest). The
// executor asks it before every source read; because it is asked by the
// read's index, which checkpoints keep, back and recovery replay the same
// reads in the same order.
type SourceSchedule interface {
	// Due names the source subtask whose event is the executor's read-th
	// source read (from 0; a read that finds the end of the input counts).
	// source "" lets the executor choose among the sources the schedule
	// does not drive, as it does without a schedule. ok=false: no source
	// reads now, and Next returns ErrNoInput unless every source ended.
	Due(read int64) (source string, subtask int, ok bool)
	// Driven reports whether the schedule alone says when the source named
	// reads: the executor never chooses it by itself.
	Driven(source string) bool
}

// Captured is a record a sink received (Tag "") or an operator emitted to
// the side output Tag (Options.Capture).
type Captured struct {
	Operator     string
	Subtask      int
	Tag          string
	Value        any
	Timestamp    int64
	HasTimestamp bool
}

func (e *Executor) capture(ctx *OperatorContext, tag string, v any, r Record) {
	e.opts.Capture(Captured{Operator: ctx.inst.info.Name, Subtask: ctx.st.index, Tag: tag, Value: plainValue(v),
		Timestamp: r.Timestamp, HasTimestamp: r.HasTimestamp})
}

// Reads is the number of source reads so far, those that found the end of
// an input included: the index a SourceSchedule is asked for next.
func (e *Executor) Reads() int64 { return e.reads }

// SourceInfo describes a source of a job.
type SourceInfo struct {
	Name        string
	Parallelism int // 0: the job's default
	// Type is the type of the source's records.
	Type reflect.Type
}

// Sources lists the job's sources in declaration order.
func (j *Job) Sources() []SourceInfo {
	var out []SourceInfo
	for _, n := range j.nodes {
		if n.source != nil {
			out = append(out, SourceInfo{Name: n.name, Parallelism: n.parallelism, Type: n.recordType})
		}
	}
	return out
}

// SinkInfo describes a sink of a job.
type SinkInfo struct {
	Name string
	// Type is the type of the records the sink consumes.
	Type reflect.Type
}

// Sinks lists the job's sinks in declaration order.
func (j *Job) Sinks() []SinkInfo {
	var out []SinkInfo
	for _, n := range j.nodes {
		if n.isSink {
			out = append(out, SinkInfo{Name: n.name, Type: n.recordType})
		}
	}
	return out
}

// SideOutputInfo is a side output a job reads (runtime.SideOutput).
type SideOutputInfo struct {
	Operator, Tag string
	Type          reflect.Type
}

// SideOutputs lists the side outputs the job reads (runtime.SideOutput),
// by operator and tag.
func (j *Job) SideOutputs() []SideOutputInfo {
	var out []SideOutputInfo
	for _, n := range j.nodes {
		for _, s := range n.sideOutputs {
			out = append(out, SideOutputInfo{Operator: n.name, Tag: s.Tag, Type: s.Type})
		}
	}
	return out
}

// Operators lists the names of the job's operators in declaration order.
func (j *Job) Operators() []string {
	out := make([]string, len(j.nodes))
	for i, n := range j.nodes {
		out[i] = n.name
	}
	return out
}

// replaceSources applies Options.Sources to the plan's source nodes.
func replaceSources(j *Job, with map[string]any) (map[*node]sourceFactory, error) {
	if len(with) == 0 {
		return nil, nil
	}
	out := map[*node]sourceFactory{}
	for name, f := range with {
		var n *node
		for _, c := range j.nodes {
			if c.source != nil && c.name == name {
				n = c
			}
		}
		if n == nil {
			var names []string
			for _, s := range j.Sources() {
				names = append(names, fmt.Sprintf("%q", s.Name))
			}
			return nil, fmt.Errorf("runtime: no source %q to replace; the job's sources are %s", name, strings.Join(names, ", "))
		}
		sf, ok := n.replaceSource(f)
		if !ok {
			return nil, fmt.Errorf("runtime: source %q reads %s; its replacement is a %T, not a func() runtime.Source[%s]", name, n.recordType, f, n.recordType)
		}
		out[n] = sf
	}
	return out, nil
}
