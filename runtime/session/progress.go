package session

import (
	"context"
	"sync/atomic"
	"time"

	"streamdbg/internal/numfmt"
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

func (p *Progress) begin(pos int64) {
	if p == nil {
		return
	}
	p.started.Store(time.Now().UnixNano())
	p.records.Store(0)
	p.position.Store(pos)
}

func (p *Progress) report(pos, records int64) {
	if p == nil {
		return
	}
	p.position.Store(pos)
	p.records.Store(records)
}

type progressKey struct{}

// WithProgress returns a context under which NextN and Continue report to
// p while they run. The run stays one command: one stop, one point for
// Back, one evaluation of the watches.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

func progressOf(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

// fmtRecords says how many source records a command read.
func fmtRecords(n int64) string {
	if n == 1 {
		return "1 record"
	}
	return numfmt.Commas(n) + " records"
}
