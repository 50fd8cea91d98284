package window

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"streamdbg/state"
)

// Window is a time window [Start, End): the namespace of window state.
type Window = state.Window

// GlobalWindow is the one window of the global assigner; its max timestamp
// is MaxInt64 (Flink's GlobalWindow).
var GlobalWindow = Window{Start: math.MinInt64, End: math.MaxInt64}

// AssignerContext is what an assigner may ask while it assigns an element
// (Flink's WindowAssigner.WindowAssignerContext).
type AssignerContext interface {
	CurrentProcessingTime() int64
}

// Assigner puts an element into windows (Flink's WindowAssigner).
type Assigner interface {
	// AssignWindows returns the windows of element, whose timestamp is ts
	// (event-time assigners; processing-time ones ask ctx for the time).
	AssignWindows(element any, ts int64, ctx AssignerContext) ([]Window, error)
	// DefaultTrigger is the trigger used unless the stream sets one.
	DefaultTrigger() Trigger
	// EventTime reports whether windows follow event time (watermarks,
	// lateness) rather than processing time.
	EventTime() bool
	// Validate checks the assigner's parameters when the job is built.
	Validate() error
	String() string
}

// MergingAssigner is an assigner whose windows merge (sessions).
type MergingAssigner interface {
	Assigner
	// MergeWindows groups windows that merge; each Merge lists two or more
	// distinct windows and the window that covers them.
	MergeWindows(ws []Window) []Merge
}

// Merge is one merge decided by a MergingAssigner.
type Merge struct {
	Result Window
	Merged []Window
}

// forSubtask is implemented by assigners that keep something per operator
// subtask (a stagger offset): the window operator asks for its own copy.
type forSubtask interface {
	forSubtask(seed uint64) Assigner
}

// StartWithOffset is Flink's TimeWindow.getWindowStartWithOffset: the
// start of the window of size that contains ts when windows start at
// offset (negative offsets too) plus multiples of size.
func StartWithOffset(ts, offset, size int64) int64 {
	r := (ts - offset) % size
	if r < 0 {
		return ts - (r + size)
	}
	return ts - r
}

// WindowStagger shifts the windows of each operator subtask so that they do
// not all fire at the same moment (Flink's WindowStagger).
type WindowStagger uint8

const (
	// Aligned windows start at the same time in every subtask.
	Aligned WindowStagger = iota
	// Random shifts each subtask's windows by an offset in [0, size),
	// drawn once per subtask. Flink draws it at random; streamdbg derives
	// it from the operator's uid and the subtask index, so runs repeat.
	Random
	// Natural shifts each subtask's windows so that the first window
	// starts when the subtask's first element arrives (processing time).
	Natural
)

func (s WindowStagger) String() string {
	return [...]string{"ALIGNED", "RANDOM", "NATURAL"}[s]
}

// staggerOffset computes s's offset for the first element, at processing
// time now.
func (s WindowStagger) offset(now, size int64, seed uint64) int64 {
	switch s {
	case Random:
		return int64(seed % uint64(size))
	case Natural:
		return max(0, now-StartWithOffset(now, 0, size))
	}
	return 0
}

// staggerCache holds a subtask's stagger offset once the first element set
// it.
type staggerCache struct {
	seed   uint64
	offset int64
	set    bool
}

func (c *staggerCache) get(s WindowStagger, now, size int64) int64 {
	if c == nil {
		return s.offset(now, size, 0)
	}
	if !c.set {
		c.offset, c.set = s.offset(now, size, c.seed), true
	}
	return c.offset
}

// Tumbling assigns fixed-size, non-overlapping windows aligned to the epoch
// plus Offset (|Offset| < Size; UTC+8 daily windows use -8h) and the
// subtask's stagger offset.
type Tumbling struct {
	Size, Offset time.Duration
	Stagger      WindowStagger
	Processing   bool
	stagger      *staggerCache
}

// TumblingEventTime is Flink's TumblingEventTimeWindows.of(size).
func TumblingEventTime(size time.Duration) Tumbling { return Tumbling{Size: size} }

// TumblingProcessingTime is Flink's TumblingProcessingTimeWindows.of(size).
func TumblingProcessingTime(size time.Duration) Tumbling {
	return Tumbling{Size: size, Processing: true}
}

// Staggered is Flink's of(size, offset, stagger): the stagger offset is
// taken at the first element and kept (each window operator subtask keeps
// its own).
func (a Tumbling) Staggered(s WindowStagger) Tumbling {
	a.Stagger, a.stagger = s, &staggerCache{}
	return a
}

func (a Tumbling) forSubtask(seed uint64) Assigner {
	a.stagger = &staggerCache{seed: seed}
	return a
}

func (a Tumbling) AssignWindows(_ any, ts int64, ctx AssignerContext) ([]Window, error) {
	now := ctx.CurrentProcessingTime()
	if a.Processing {
		ts = now
	}
	size := a.Size.Milliseconds()
	offset := a.Offset.Milliseconds()
	if a.Stagger != Aligned {
		offset = (offset + a.stagger.get(a.Stagger, now, size)) % size
	}
	s := StartWithOffset(ts, offset, size)
	return []Window{{Start: s, End: s + size}}, nil
}

func (a Tumbling) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a Tumbling) EventTime() bool         { return !a.Processing }
func (a Tumbling) Validate() error {
	if err := resolution("tumbling window size", a.Size, a.Offset); err != nil {
		return err
	}
	if a.Size <= 0 || abs(a.Offset) >= a.Size {
		return fmt.Errorf("tumbling windows must satisfy abs(offset) < size: size %s, offset %s", a.Size, a.Offset)
	}
	return nil
}
func (a Tumbling) String() string {
	return fmt.Sprintf("Tumbling%sWindows(%s)", domainName(a.Processing), a.Size)
}

// MaxWindowsPerElement bounds how many sliding windows one element may
// belong to (Size/Slide): beyond it an element would allocate millions of
// windows and their state.
const MaxWindowsPerElement = 10_000_000

// Sliding assigns windows of Size that start every Slide (plus Offset,
// |Offset| < Slide); an element belongs to Size/Slide windows.
type Sliding struct {
	Size, Slide, Offset time.Duration
	Processing          bool
}

// SlidingEventTime is Flink's SlidingEventTimeWindows.of(size, slide).
func SlidingEventTime(size, slide time.Duration) Sliding { return Sliding{Size: size, Slide: slide} }

// SlidingProcessingTime is Flink's SlidingProcessingTimeWindows.of(size, slide).
func SlidingProcessingTime(size, slide time.Duration) Sliding {
	return Sliding{Size: size, Slide: slide, Processing: true}
}

func (a Sliding) AssignWindows(_ any, ts int64, ctx AssignerContext) ([]Window, error) {
	if a.Processing {
		ts = ctx.CurrentProcessingTime()
	}
	size, slide := a.Size.Milliseconds(), a.Slide.Milliseconds()
	out := make([]Window, 0, min(size/slide, MaxWindowsPerElement))
	for s := StartWithOffset(ts, a.Offset.Milliseconds(), slide); s > ts-size; s -= slide {
		out = append(out, Window{Start: s, End: s + size})
	}
	return out, nil
}

func (a Sliding) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a Sliding) EventTime() bool         { return !a.Processing }
func (a Sliding) Validate() error {
	if err := resolution("sliding window", a.Size, a.Slide, a.Offset); err != nil {
		return err
	}
	if a.Size <= 0 || abs(a.Offset) >= a.Slide {
		return fmt.Errorf("sliding windows must satisfy abs(offset) < slide and size > 0: size %s, slide %s, offset %s", a.Size, a.Slide, a.Offset)
	}
	if n := a.Size / a.Slide; n > MaxWindowsPerElement {
		return fmt.Errorf("sliding windows of size %s every %s put each element in %d windows; at most %d are allowed", a.Size, a.Slide, n, MaxWindowsPerElement)
	}
	return nil
}
func (a Sliding) String() string {
	return fmt.Sprintf("Sliding%sWindows(%s, %s)", domainName(a.Processing), a.Size, a.Slide)
}

// Session assigns each element the window [ts, ts+Gap); windows that
// intersect merge, so a session ends after Gap without elements.
type Session struct {
	Gap        time.Duration
	Processing bool
}

// EventTimeSession is Flink's EventTimeSessionWindows.withGap(gap).
func EventTimeSession(gap time.Duration) Session { return Session{Gap: gap} }

// ProcessingTimeSession is Flink's ProcessingTimeSessionWindows.withGap(gap).
func ProcessingTimeSession(gap time.Duration) Session {
	return Session{Gap: gap, Processing: true}
}

func (a Session) AssignWindows(_ any, ts int64, ctx AssignerContext) ([]Window, error) {
	if a.Processing {
		ts = ctx.CurrentProcessingTime()
	}
	return []Window{{Start: ts, End: ts + a.Gap.Milliseconds()}}, nil
}

func (a Session) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a Session) EventTime() bool         { return !a.Processing }
func (a Session) Validate() error {
	if a.Gap <= 0 {
		return fmt.Errorf("session windows must satisfy 0 < size: gap %s", a.Gap)
	}
	return resolution("session gap", a.Gap)
}
func (a Session) String() string {
	return fmt.Sprintf("%sSessionWindows(%s)", domainName(a.Processing), a.Gap)
}

// MergeWindows is Flink's TimeWindow.mergeWindows.
func (a Session) MergeWindows(ws []Window) []Merge { return MergeTimeWindows(ws) }

// DynamicSession is a session assigner whose gap depends on the element
// (Flink's Dynamic*SessionWindows with a SessionWindowTimeGapExtractor).
type DynamicSession struct {
	// Gap extracts an element's session gap; it must be positive.
	Gap        func(element any) (time.Duration, error)
	Processing bool
}

// DynamicEventTimeSession is Flink's EventTimeSessionWindows.withDynamicGap.
func DynamicEventTimeSession[T any](gap func(T) time.Duration) DynamicSession {
	return DynamicSession{Gap: typedGap(gap)}
}

// DynamicProcessingTimeSession is Flink's
// ProcessingTimeSessionWindows.withDynamicGap.
func DynamicProcessingTimeSession[T any](gap func(T) time.Duration) DynamicSession {
	return DynamicSession{Gap: typedGap(gap), Processing: true}
}

func typedGap[T any](gap func(T) time.Duration) func(any) (time.Duration, error) {
	if gap == nil {
		return nil
	}
	return func(e any) (time.Duration, error) {
		v, ok := e.(T)
		if !ok {
			var want T
			return 0, fmt.Errorf("dynamic session gap: element is a %T, the gap extractor takes a %T", e, want)
		}
		return gap(v), nil
	}
}

func (a DynamicSession) AssignWindows(element any, ts int64, ctx AssignerContext) ([]Window, error) {
	if a.Processing {
		ts = ctx.CurrentProcessingTime()
	}
	gap, err := a.Gap(element)
	if err != nil {
		return nil, err
	}
	if gap.Milliseconds() <= 0 {
		return nil, fmt.Errorf("dynamic session time gap must satisfy 0 < gap: the gap of this element is %s", gap)
	}
	return []Window{{Start: ts, End: ts + gap.Milliseconds()}}, nil
}

func (a DynamicSession) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a DynamicSession) EventTime() bool         { return !a.Processing }
func (a DynamicSession) Validate() error {
	if a.Gap == nil {
		return errors.New("dynamic session windows need a gap extractor")
	}
	return nil
}
func (a DynamicSession) String() string {
	return fmt.Sprintf("Dynamic%sSessionWindows()", domainName(a.Processing))
}

// MergeWindows is Flink's TimeWindow.mergeWindows.
func (a DynamicSession) MergeWindows(ws []Window) []Merge { return MergeTimeWindows(ws) }

// MergeTimeWindows sorts windows by start and merges runs of windows that
// intersect the cover of the run so far (Flink's TimeWindow.mergeWindows).
// Identical windows count once, so a window identical to another merges
// nothing.
func MergeTimeWindows(ws []Window) []Merge {
	sorted := slices.Clone(ws)
	slices.SortFunc(sorted, compareWindows)
	sorted = slices.Compact(sorted)
	var out []Merge
	var cur Merge
	flush := func() {
		if len(cur.Merged) > 1 {
			out = append(out, cur)
		}
	}
	for i, w := range sorted {
		if i > 0 && cur.Result.Intersects(w) {
			cur.Result = cur.Result.Cover(w)
			cur.Merged = append(cur.Merged, w)
			continue
		}
		if i > 0 {
			flush()
		}
		cur = Merge{Result: w, Merged: []Window{w}}
	}
	if len(sorted) > 0 {
		flush()
	}
	return out
}

func compareWindows(a, b Window) int {
	if a.Start != b.Start {
		return cmpInt(a.Start, b.Start)
	}
	return cmpInt(a.End, b.End)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Global puts every element into the one global window; it never fires
// unless given a trigger (Flink's GlobalWindows), or, with EndOfStream, at
// the end of the input (GlobalWindows.createWithEndOfStreamTrigger).
type Global struct {
	EndOfStream bool
}

// GlobalWithEndOfStream is Flink's GlobalWindows.createWithEndOfStreamTrigger.
func GlobalWithEndOfStream() Global { return Global{EndOfStream: true} }

func (Global) AssignWindows(any, int64, AssignerContext) ([]Window, error) {
	return []Window{GlobalWindow}, nil
}

func (g Global) DefaultTrigger() Trigger {
	if g.EndOfStream {
		return EndOfStreamTrigger{}
	}
	return Never{}
}
func (Global) EventTime() bool { return false }
func (Global) Validate() error { return nil }
func (Global) String() string  { return "GlobalWindows" }

func domainName(processing bool) string {
	if processing {
		return "ProcessingTime"
	}
	return "EventTime"
}

func defaultTrigger(processing bool) Trigger {
	if processing {
		return ProcessingTimeTrigger{}
	}
	return EventTimeTrigger{}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// resolution refuses durations finer than a millisecond (event time is in
// milliseconds): they would truncate to another window than asked.
func resolution(what string, ds ...time.Duration) error {
	for _, d := range ds {
		if d%time.Millisecond != 0 {
			return fmt.Errorf("%s %s is below the millisecond resolution of event time", what, d)
		}
	}
	return nil
}

// subtaskSeed is the Random stagger's seed of one operator subtask.
func subtaskSeed(uid string, subtask int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", uid, subtask)
	return h.Sum64()
}
