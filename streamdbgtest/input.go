package streamdbgtest

import (
	"fmt"
	"reflect"
	"time"

	"streamdbg/runtime"
)

// In is a source of the job that the test feeds: it reads only what the
// test pushes, and stays open until Close.
type In[T any] struct {
	d      *Driver
	name   string
	pushed int
	done   bool
}

// Input takes over the source named source: from now on it reads only
// what the test pushes. T must be the source's record type. Take sources
// over before the job reads or processes anything (the first push, Run or
// AdvanceProcessingTime); looking at state before is fine.
func Input[T any](d *Driver, source string) *In[T] {
	d.t.Helper()
	var info *runtime.SourceInfo
	for _, s := range d.job.Sources() {
		if s.Name == source {
			info = &s
		}
	}
	if info == nil {
		d.t.Fatalf("streamdbgtest: Input[%s](%q): job %q has no such source; its sources are %s", typeName[T](), source, d.job.Name, quoted(sourceNames(d.job)))
	}
	if want := reflect.TypeFor[T](); info.Type != want {
		d.t.Fatalf("streamdbgtest: Input[%s](%q): source %q reads %s, not %s", typeName[T](), source, source, info.Type, want)
	}
	if in, ok := d.inputs[source]; ok {
		return in.(*In[T])
	}
	if d.stepped {
		d.t.Fatalf("streamdbgtest: Input[%s](%q) after the job read or processed something: take the sources over before the first push, Run or AdvanceProcessingTime", typeName[T](), source)
	}
	if d.started() {
		// Nothing ran yet (state was only looked at): the job starts
		// again with this source taken over too.
		d.stop()
	}
	in := &In[T]{d: d, name: source}
	d.inputs[source] = in
	d.order = append(d.order, source)
	d.sched.driven[source] = true
	return in
}

func sourceNames(j *runtime.Job) []string {
	var out []string
	for _, s := range j.Sources() {
		out = append(out, s.Name)
	}
	return out
}

// Push sends v through the job, as the debugger's next does: when Push
// returns, v and everything it caused (records, state, timers, watermarks
// downstream) are processed. Its timestamp is the one the source's
// watermark strategy assigns, if any.
func (in *In[T]) Push(v T) {
	in.d.t.Helper()
	in.push(readEvent{kind: runtime.EventRecord, value: v})
}

// PushAt is Push with the record's event timestamp ts. When the source's
// watermark strategy assigns timestamps itself, ts must be the one it
// assigns (the test fails otherwise: the strategy would replace it).
func (in *In[T]) PushAt(v T, ts time.Time) {
	in.d.t.Helper()
	in.push(readEvent{kind: runtime.EventRecord, value: v, ts: ts.UnixMilli(), hasTS: true})
}

// PushAll pushes each of vs in turn.
func (in *In[T]) PushAll(vs ...T) {
	in.d.t.Helper()
	for _, v := range vs {
		in.Push(v)
	}
}

// Watermark sends the watermark ts from the source, as a watermark
// control record in a fixture does; one that does not move the source's
// event time forward changes nothing (as in Flink).
func (in *In[T]) Watermark(ts time.Time) {
	in.d.t.Helper()
	in.push(readEvent{kind: runtime.EventWatermark, wm: ts.UnixMilli()})
}

// Idle marks the source idle, as {"$idle": true} does: downstream
// subtasks stop waiting for its watermark until it sends a record or a
// watermark again.
func (in *In[T]) Idle() {
	in.d.t.Helper()
	in.push(readEvent{kind: runtime.EventIdle})
}

// Close ends the source's input: it emits the end of event time (windows
// and event-time timers fire) and reads nothing more.
func (in *In[T]) Close() {
	in.d.t.Helper()
	if in.done {
		in.d.t.Fatalf("streamdbgtest: source %q is closed already", in.name)
	}
	in.d.start()
	in.done = true
	for sub := range in.d.parallelismOf(in.name) {
		if in.d.failure != nil {
			break // ExpectFailure's
		}
		in.d.read(in.name, sub, readEvent{kind: readEnd})
	}
}

func (in *In[T]) push(ev readEvent) {
	in.d.t.Helper()
	if in.done {
		in.d.t.Fatalf("streamdbgtest: push to source %q after its Close", in.name)
	}
	in.pushed++
	ev.where = caller()
	in.d.read(in.name, 0, ev)
}

func (in *In[T]) closed() bool { return in.done }

// newSource makes the sources of the subtasks of the taken-over source.
func (in *In[T]) newSource(int) any {
	s := &in.d.sched
	name := in.name
	return func() runtime.Source[T] { return &feed[T]{s: s, name: name} }
}

// feed is one subtask of a taken-over source: it serves the read the
// schedule just named.
type feed[T any] struct {
	s    *schedule
	name string
}

func (f *feed[T]) Next() (runtime.SourceEvent[T], bool, error) {
	ev := f.s.log[f.s.cur]
	if ev.source != f.name {
		// INVARIANT: the executor reads the subtask the schedule named.
		return runtime.SourceEvent[T]{}, false, fmt.Errorf("streamdbgtest: source %q read the event of source %q", f.name, ev.source)
	}
	switch ev.kind {
	case readEnd:
		return runtime.SourceEvent[T]{}, false, nil
	case runtime.EventRecord:
		return runtime.SourceEvent[T]{Kind: runtime.EventRecord, Value: ev.value.(T), Timestamp: ev.ts, HasTimestamp: ev.hasTS, Where: ev.where}, true, nil
	}
	return runtime.SourceEvent[T]{Kind: ev.kind, Watermark: ev.wm, Where: ev.where}, true, nil
}

// DescribeInput says what the source reads, in the debugger's views.
func (f *feed[T]) DescribeInput() string { return "records the test pushes" }

func typeName[T any]() string { return reflect.TypeFor[T]().String() }

func quoted(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", s)
	}
	if out == "" {
		return "none"
	}
	return out
}
