package streamdbgtest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"streamdbg/runtime"
)

// Record is an output record with its event timestamp and the subtask
// that emitted it.
type Record[T any] struct {
	Value T
	// Timestamp is the record's event time in epoch milliseconds, when
	// HasTimestamp (records of processing-time timers have none).
	Timestamp    int64
	HasTimestamp bool
	Subtask      int
}

// Time is the record's timestamp as a time (the zero time without one).
func (r Record[T]) Time() time.Time {
	if !r.HasTimestamp {
		return time.Time{}
	}
	return time.UnixMilli(r.Timestamp).UTC()
}

// At makes the Record of v with timestamp ts in epoch milliseconds, for
// comparing with ReadRecords.
func At[T any](v T, ts int64) Record[T] {
	return Record[T]{Value: v, Timestamp: ts, HasTimestamp: true}
}

type outputKey struct{ operator, tag string }

func (k outputKey) String() string {
	if k.tag == "" {
		return fmt.Sprintf("sink %q", k.operator)
	}
	return fmt.Sprintf("side output %q of %q", k.tag, k.operator)
}

// outBuffer holds the records of one sink or side output that the test
// has not read yet, in emission order. Readers of the same output share
// it: reading consumes.
type outBuffer struct {
	recs     []Record[any]
	overflow bool
}

// stamp orders the records the job emits: the executor's source reads
// when it emitted one, and its place among those of the same read. A
// replay (back, a restart, Session().SetTrace) emits the same records
// with the same stamps again.
type stamp struct{ reads, seq int64 }

func (a stamp) after(b stamp) bool { return a.reads > b.reads || a.reads == b.reads && a.seq > b.seq }

// capture is the driver's runtime.Options.Capture. Each record reaches
// the readers once: one a replay emits again (its stamp is not after the
// last one delivered) is dropped.
func (d *Driver) capture(c runtime.Captured) {
	r := d.sess.Executor().Reads()
	if r != d.cur.reads {
		d.cur = stamp{reads: r}
	}
	d.cur.seq++
	if !d.cur.after(d.delivered) {
		return
	}
	d.delivered = d.cur
	k := outputKey{c.Operator, c.Tag}
	b := d.outputs[k]
	if b == nil {
		b = &outBuffer{}
		d.outputs[k] = b
	}
	if len(b.recs) >= d.cfg.maxUnread {
		b.overflow = true
		return
	}
	b.recs = append(b.recs, Record[any]{Value: c.Value, Timestamp: c.Timestamp, HasTimestamp: c.HasTimestamp, Subtask: c.Subtask})
}

// Out reads the records of one sink or side output, in emission order.
type Out[T any] struct {
	d   *Driver
	key outputKey
}

// Output reads the records the sink named sink receives. T must be the
// type of the records the sink consumes.
func Output[T any](d *Driver, sink string) *Out[T] {
	d.t.Helper()
	var names []string
	for _, s := range d.job.Sinks() {
		names = append(names, s.Name)
		if s.Name != sink {
			continue
		}
		if want := reflect.TypeFor[T](); s.Type != want {
			d.t.Fatalf("streamdbgtest: Output[%s](%q): sink %q receives %s, not %s", typeName[T](), sink, sink, s.Type, want)
		}
		return &Out[T]{d: d, key: outputKey{operator: sink}}
	}
	d.t.Fatalf("streamdbgtest: Output[%s](%q): job %q has no such sink; its sinks are %s", typeName[T](), sink, d.job.Name, quoted(names))
	return nil
}

// SideOutput reads the records operator emits to its side output tag,
// whether the job reads that side output or not (as Flink's harnesses'
// getSideOutput). T must be their type.
func SideOutput[T any](d *Driver, operator, tag string) *Out[T] {
	d.t.Helper()
	if !slices.Contains(d.job.Operators(), operator) {
		d.t.Fatalf("streamdbgtest: SideOutput[%s](%q, %q): job %q has no operator %q; its operators are %s", typeName[T](), operator, tag, d.job.Name, operator, quoted(d.job.Operators()))
	}
	for _, s := range d.job.SideOutputs() {
		if s.Operator == operator && s.Tag == tag && s.Type != reflect.TypeFor[T]() && s.Type.Kind() != reflect.Interface {
			d.t.Fatalf("streamdbgtest: SideOutput[%s](%q, %q): side output %q of %q holds %s, not %s", typeName[T](), operator, tag, tag, operator, s.Type, reflect.TypeFor[T]())
		}
	}
	return &Out[T]{d: d, key: outputKey{operator: operator, tag: tag}}
}

// take removes and returns the unread records.
func (o *Out[T]) take(n int) []Record[T] {
	o.d.t.Helper()
	b := o.d.outputs[o.key]
	if b == nil {
		return nil
	}
	if b.overflow {
		o.d.t.Fatalf("streamdbgtest: %s has more than %d unread records: read them as the test goes (or raise MaxUnread)", o.key, o.d.cfg.maxUnread)
	}
	if n < 0 || n > len(b.recs) {
		n = len(b.recs)
	}
	out := make([]Record[T], n)
	for i, r := range b.recs[:n] {
		v, ok := r.Value.(T)
		if !ok && r.Value != nil {
			o.d.t.Fatalf("streamdbgtest: %s emitted a %T (%v), not a %s", o.key, r.Value, r.Value, typeName[T]())
		}
		out[i] = Record[T]{Value: v, Timestamp: r.Timestamp, HasTimestamp: r.HasTimestamp, Subtask: r.Subtask}
	}
	b.recs = append(b.recs[:0:0], b.recs[n:]...)
	return out
}

// ReadAll returns the records since the last read, in emission order.
func (o *Out[T]) ReadAll() []T {
	o.d.t.Helper()
	recs := o.take(-1)
	out := make([]T, len(recs))
	for i, r := range recs {
		out[i] = r.Value
	}
	return out
}

// ReadRecords is ReadAll with each record's timestamp and subtask.
func (o *Out[T]) ReadRecords() []Record[T] {
	o.d.t.Helper()
	return o.take(-1)
}

// Next returns the next unread record; false when there is none.
func (o *Out[T]) Next() (T, bool) {
	o.d.t.Helper()
	recs := o.take(1)
	if len(recs) == 0 {
		var zero T
		return zero, false
	}
	return recs[0].Value, true
}

// Len is the number of unread records.
func (o *Out[T]) Len() int {
	if b := o.d.outputs[o.key]; b != nil {
		return len(b.recs)
	}
	return 0
}

// ExpectInOrder reads all unread records and fails the test unless they
// are want, in this order.
func (o *Out[T]) ExpectInOrder(want ...T) {
	o.d.t.Helper()
	got := o.ReadAll()
	if len(got) == len(want) && reflect.DeepEqual(got, want) || len(got) == 0 && len(want) == 0 {
		return
	}
	o.d.t.Fatalf("streamdbgtest: %s: got %d records, want %d in this order\n%s", o.key, len(got), len(want), diffList(got, want))
}

// ExpectAnyOrder reads all unread records and fails the test unless they
// are want as a multiset (the same records, as often, in any order): the
// order of records of different subtasks is the scheduler's, not the
// job's.
func (o *Out[T]) ExpectAnyOrder(want ...T) {
	o.d.t.Helper()
	got := o.ReadAll()
	missing, extra := multisetDiff(got, want)
	if len(missing) == 0 && len(extra) == 0 {
		return
	}
	o.d.t.Fatalf("streamdbgtest: %s: got %d records, want %d in any order; missing %s; unexpected %s", o.key, len(got), len(want), fmtList(missing), fmtList(extra))
}

// multisetDiff returns the records of want not in got and those of got
// not in want, counting repeats.
func multisetDiff[T any](got, want []T) (missing, extra []T) {
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && reflect.DeepEqual(g, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	for i, g := range got {
		if !used[i] {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

func fmtList[T any](vs []T) string {
	if len(vs) == 0 {
		return "none"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%+v", v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// diffList lists got and want side by side, marking the lines that
// differ.
func diffList[T any](got, want []T) string {
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		g, w := "-", "-"
		same := i < len(got) && i < len(want) && reflect.DeepEqual(got[i], want[i])
		if i < len(got) {
			g = fmt.Sprintf("%+v", got[i])
		}
		if i < len(want) {
			w = fmt.Sprintf("%+v", want[i])
		}
		mark := "  "
		if !same {
			mark = "≠ "
		}
		fmt.Fprintf(&b, "%s%3d  got %-40s want %s\n", mark, i, g, w)
	}
	return b.String()
}
