package window

import (
	"fmt"
	"math"
	"slices"
	"time"

	"streamdbg/state"
)

// Window is a time window [Start, End): the namespace of window state.
type Window = state.Window

// GlobalWindow is the one window of the global assigner.
var GlobalWindow = Window{Start: math.MinInt64, End: math.MaxInt64}

// Assigner puts an element into windows (Flink's WindowAssigner).
type Assigner interface {
	// AssignWindows returns the windows of an element with timestamp ts
	// (event-time assigners) at processing time now.
	AssignWindows(ts, now int64) []Window
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
	// windows and the window that covers them.
	MergeWindows(ws []Window) []Merge
}

// Merge is one merge decided by a MergingAssigner.
type Merge struct {
	Result Window
	Merged []Window
}

// windowStart is Flink's TimeWindow.getWindowStartWithOffset: the start of
// the window of size that contains ts, for negative times too.
func windowStart(ts, offset, size int64) int64 {
	r := (ts - offset) % size
	if r < 0 {
		return ts - (r + size)
	}
	return ts - r
}

func positive(what string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s %s must be positive", what, d)
	}
	if d < time.Millisecond {
		return fmt.Errorf("%s %s is below the millisecond resolution of event time", what, d)
	}
	return nil
}

// Tumbling assigns fixed-size, non-overlapping windows aligned to the epoch
// (plus Offset).
type Tumbling struct {
	Size, Offset time.Duration
	Processing   bool
}

// TumblingEventTime is Flink's TumblingEventTimeWindows.of(size).
func TumblingEventTime(size time.Duration) Tumbling { return Tumbling{Size: size} }

// TumblingProcessingTime is Flink's TumblingProcessingTimeWindows.of(size).
func TumblingProcessingTime(size time.Duration) Tumbling {
	return Tumbling{Size: size, Processing: true}
}

func (a Tumbling) AssignWindows(ts, now int64) []Window {
	if a.Processing {
		ts = now
	}
	size := a.Size.Milliseconds()
	s := windowStart(ts, a.Offset.Milliseconds(), size)
	return []Window{{Start: s, End: s + size}}
}

func (a Tumbling) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a Tumbling) EventTime() bool         { return !a.Processing }
func (a Tumbling) Validate() error {
	if err := positive("tumbling window size", a.Size); err != nil {
		return err
	}
	if a.Offset < 0 || a.Offset >= a.Size {
		return fmt.Errorf("tumbling window offset %s must be in [0, size %s)", a.Offset, a.Size)
	}
	return nil
}
func (a Tumbling) String() string {
	return fmt.Sprintf("Tumbling%sWindows(%s)", domainName(a.Processing), a.Size)
}

// Sliding assigns windows of Size that start every Slide; an element
// belongs to Size/Slide windows.
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

func (a Sliding) AssignWindows(ts, now int64) []Window {
	if a.Processing {
		ts = now
	}
	size, slide := a.Size.Milliseconds(), a.Slide.Milliseconds()
	var out []Window
	for s := windowStart(ts, a.Offset.Milliseconds(), slide); s > ts-size; s -= slide {
		out = append(out, Window{Start: s, End: s + size})
	}
	return out
}

func (a Sliding) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a Sliding) EventTime() bool         { return !a.Processing }
func (a Sliding) Validate() error {
	if err := positive("sliding window size", a.Size); err != nil {
		return err
	}
	if err := positive("sliding window slide", a.Slide); err != nil {
		return err
	}
	if a.Offset < 0 || a.Offset >= a.Slide {
		return fmt.Errorf("sliding window offset %s must be in [0, slide %s)", a.Offset, a.Slide)
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

func (a Session) AssignWindows(ts, now int64) []Window {
	if a.Processing {
		ts = now
	}
	return []Window{{Start: ts, End: ts + a.Gap.Milliseconds()}}
}

func (a Session) DefaultTrigger() Trigger { return defaultTrigger(a.Processing) }
func (a Session) EventTime() bool         { return !a.Processing }
func (a Session) Validate() error         { return positive("session gap", a.Gap) }
func (a Session) String() string {
	return fmt.Sprintf("%sSessionWindows(%s)", domainName(a.Processing), a.Gap)
}

// MergeWindows is Flink's TimeWindow.mergeWindows.
func (a Session) MergeWindows(ws []Window) []Merge { return MergeTimeWindows(ws) }

// MergeTimeWindows sorts windows by start and merges runs of windows that
// intersect the cover of the run so far (Flink's TimeWindow.mergeWindows).
func MergeTimeWindows(ws []Window) []Merge {
	sorted := slices.Clone(ws)
	slices.SortFunc(sorted, func(a, b Window) int {
		if a.Start != b.Start {
			return cmpInt(a.Start, b.Start)
		}
		return cmpInt(a.End, b.End)
	})
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
// unless given a trigger (Flink's GlobalWindows).
type Global struct{}

func (Global) AssignWindows(int64, int64) []Window { return []Window{GlobalWindow} }
func (Global) DefaultTrigger() Trigger             { return Never{} }
func (Global) EventTime() bool                     { return false }
func (Global) Validate() error                     { return nil }
func (Global) String() string                      { return "GlobalWindows" }

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
