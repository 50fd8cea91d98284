package window

import (
	"fmt"
	"time"

	"streamdbg/state"
)

// Element is a window element with its timestamp, as evictors see it.
type Element struct {
	Value     any
	Timestamp int64
	// HasTimestamp is false for elements without event time.
	HasTimestamp bool
}

// Evictor removes elements from a window before and after the window
// function runs (Flink's Evictor). It returns the elements to keep, in
// order.
type Evictor interface {
	EvictBefore(elems []Element, w Window) []Element
	EvictAfter(elems []Element, w Window) []Element
	String() string
}

// CountEvictor keeps the last Max elements of a window.
type CountEvictor struct {
	Max   int
	After bool // evict after the window function instead of before
}

// KeepLast is Flink's CountEvictor.of(n).
func KeepLast(n int) CountEvictor { return CountEvictor{Max: n} }

func (e CountEvictor) evict(elems []Element) []Element {
	if len(elems) <= e.Max {
		return elems
	}
	return elems[len(elems)-e.Max:]
}

func (e CountEvictor) EvictBefore(elems []Element, _ Window) []Element {
	if e.After {
		return elems
	}
	return e.evict(elems)
}

func (e CountEvictor) EvictAfter(elems []Element, _ Window) []Element {
	if !e.After {
		return elems
	}
	return e.evict(elems)
}

func (e CountEvictor) String() string { return fmt.Sprintf("CountEvictor(%d)", e.Max) }

// TimeEvictor keeps the elements within Keep of the newest element of the
// window (Flink's TimeEvictor: evicts ts <= max ts - Keep).
type TimeEvictor struct {
	Keep  time.Duration
	After bool
}

// KeepWithin is Flink's TimeEvictor.of(d).
func KeepWithin(d time.Duration) TimeEvictor { return TimeEvictor{Keep: d} }

func (e TimeEvictor) evict(elems []Element) []Element {
	maxTS, seen := int64(0), false
	for _, el := range elems {
		if el.HasTimestamp && (!seen || el.Timestamp > maxTS) {
			maxTS, seen = el.Timestamp, true
		}
	}
	if !seen {
		return elems
	}
	cutoff := maxTS - e.Keep.Milliseconds()
	out := elems[:0:0]
	for _, el := range elems {
		if !el.HasTimestamp || el.Timestamp > cutoff {
			out = append(out, el)
		}
	}
	return out
}

func (e TimeEvictor) EvictBefore(elems []Element, _ Window) []Element {
	if e.After {
		return elems
	}
	return e.evict(elems)
}

func (e TimeEvictor) EvictAfter(elems []Element, _ Window) []Element {
	if !e.After {
		return elems
	}
	return e.evict(elems)
}

func (e TimeEvictor) String() string { return fmt.Sprintf("TimeEvictor(%s)", e.Keep) }

// Timestamped is how an evicting window keeps an element in its
// window-contents list: the value with its timestamp.
type Timestamped[T any] struct {
	Value     T
	Timestamp int64
	HasTS     bool
}

// timestampedCodec encodes a flag byte, the timestamp, then the value.
type timestampedCodec[T any] struct{ c state.Codec[T] }

func (c timestampedCodec[T]) TypeName() string { return "timestamped:" + c.c.TypeName() }

func (c timestampedCodec[T]) Append(dst []byte, v Timestamped[T]) []byte {
	var flag byte
	if v.HasTS {
		flag = 1
	}
	dst = append(dst, flag)
	dst = state.Int64.Append(dst, v.Timestamp)
	return c.c.Append(dst, v.Value)
}

func (c timestampedCodec[T]) Decode(b []byte) (Timestamped[T], error) {
	if len(b) < 9 {
		return Timestamped[T]{}, fmt.Errorf("timestamped element: %d bytes: %w", len(b), state.ErrCorrupt)
	}
	ts, _ := state.Int64.Decode(b[1:9])
	v, err := c.c.Decode(b[9:])
	return Timestamped[T]{Value: v, Timestamp: ts, HasTS: b[0] == 1}, err
}

func (c timestampedCodec[T]) Display(b []byte) (any, error) {
	if len(b) < 9 {
		return nil, fmt.Errorf("timestamped element: %d bytes: %w", len(b), state.ErrCorrupt)
	}
	ts, _ := state.Int64.Decode(b[1:9])
	v, err := state.DisplayBytes(c.c.TypeName(), b[9:])
	if err != nil {
		return nil, err
	}
	out := map[string]any{"value": v}
	if b[0] == 1 {
		out["timestamp"] = state.MillisValue(ts)
	}
	return out, nil
}

// DeltaEvictor evicts the elements whose delta to the window's last
// element is at least Threshold (Flink's DeltaEvictor; a delta that is
// NaN compares false and keeps its element).
type DeltaEvictor struct {
	Threshold float64
	// Delta measures how far old is from new (the last element).
	Delta func(old, new any) float64
	After bool
}

// Delta is Flink's DeltaEvictor.of(threshold, deltaFunction).
func Delta[T any](threshold float64, delta func(old, new T) float64) DeltaEvictor {
	return DeltaEvictor{Threshold: threshold, Delta: func(o, n any) float64 { return delta(o.(T), n.(T)) }}
}

func (e DeltaEvictor) evict(elems []Element) []Element {
	if len(elems) == 0 {
		return elems
	}
	last := elems[len(elems)-1].Value
	out := elems[:0:0]
	for _, el := range elems {
		// Flink evicts delta >= threshold: a NaN delta stays.
		if !(e.Delta(el.Value, last) >= e.Threshold) {
			out = append(out, el)
		}
	}
	return out
}

func (e DeltaEvictor) EvictBefore(elems []Element, _ Window) []Element {
	if e.After {
		return elems
	}
	return e.evict(elems)
}

func (e DeltaEvictor) EvictAfter(elems []Element, _ Window) []Element {
	if !e.After {
		return elems
	}
	return e.evict(elems)
}

func (e DeltaEvictor) String() string { return fmt.Sprintf("DeltaEvictor(%v)", e.Threshold) }
