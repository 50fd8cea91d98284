package session

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"streamdbg/runtime"
)

// Progress is how far a long run (NextN, Continue) got. It is the one part
// of a session that may be read from another goroutine while the run owns
// the session: a UI renders it while the run goes on.
type Progress struct {
	position atomic.Int64
	records  atomic.Int64
	started  atomic.Int64 // unix nanoseconds
}

// Position is the number of source events read so far.
func (p *Progress) Position() int64 { return p.position.Load() }

// Records is the number of source events this run read so far.
func (p *Progress) Records() int64 { return p.records.Load() }

// Rate is source events per second since the run started.
func (p *Progress) Rate() float64 {
	start := p.started.Load()
	if start == 0 {
		return 0
	}
	d := time.Since(time.Unix(0, start)).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(p.records.Load()) / d
}

type progressKey struct{}

// WithProgress returns a context under which NextN and Continue run by the
// command table (Execute) report to p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressChunk is the number of source events between two reports: small
// enough for a 10 Hz progress line, large enough that the per-stop work
// (watches, trace) does not dominate.
const progressChunk = 500

// runReporting runs n source events (n < 0: until the end) in chunks,
// reporting to the Progress in ctx after each; without one it is NextN or
// Continue. The chunks' stops are merged into one.
func (s *Session) runReporting(ctx context.Context, n int) (*Stop, error) {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	if p == nil {
		if n < 0 {
			return s.Continue(ctx)
		}
		return s.NextN(ctx, n)
	}
	p.started.Store(time.Now().UnixNano())
	p.records.Store(0)
	p.position.Store(s.Position())
	start := s.Position()
	var merged *Stop
	for {
		chunk := progressChunk
		if n >= 0 {
			left := n - int(s.Position()-start)
			if left <= 0 {
				break
			}
			chunk = min(chunk, left)
		}
		st, err := s.NextN(ctx, chunk)
		if err != nil {
			return merged, err
		}
		p.position.Store(s.Position())
		p.records.Store(s.Position() - start)
		merged = mergeStops(merged, st)
		if st.Reason != ReasonNext {
			return merged, nil
		}
	}
	if merged == nil {
		return s.NextN(ctx, 0)
	}
	merged.Message = fmtRecords(s.Position() - start)
	return merged, nil
}

func fmtRecords(n int64) string {
	if n == 1 {
		return "1 record"
	}
	return strconv.FormatInt(n, 10) + " records"
}

// mergeStops appends b's steps and events to a, keeping the last
// MaxEvents events; b's reason, message and position win.
func mergeStops(a, b *Stop) *Stop {
	if a == nil {
		return b
	}
	events := append(append([]runtime.TraceEvent(nil), a.Events...), b.Events...)
	trunc := a.Truncated + b.Truncated
	if over := len(events) - MaxEvents; over > 0 {
		trunc += over
		events = events[over:]
	}
	out := *b
	out.Steps = a.Steps + b.Steps
	out.Events = events
	out.Truncated = trunc
	if b.Steps == 0 {
		out.Last = a.Last
	}
	return &out
}
