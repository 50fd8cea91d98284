package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// orderTS reads an order's ts straight from the payments job's fixture.
func orderTS(t *testing.T, id string) int64 {
	t.Helper()
	in, err := fixtures.Embedded("payments/orders.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range in.Lines {
		var o struct{ Order, TS string }
		if err := json.Unmarshal(l, &o); err != nil {
			t.Fatal(err)
		}
		if o.Order == id {
			ts, err := time.Parse(time.RFC3339Nano, o.TS)
			if err != nil {
				t.Fatal(err)
			}
			return ts.UnixMilli()
		}
	}
	t.Fatalf("no order %s in the fixture", id)
	return 0
}

// TestWhyIntervalJoinCleanup: why explains the interval join's cleanup
// timer of a buffered order: it fires at the order's ts + 10 min, the
// join's watermark is the lower of its two inputs', and the channel of the
// input behind is the one that holds it back.
func TestWhyIntervalJoinCleanup(t *testing.T) {
	for _, backend := range runtime.Backends {
		t.Run(backend, func(t *testing.T) {
			s := openSession(t, buildJob(t, "payments"), session.Options{Options: runtime.Options{Backend: backend}})
			defer s.Close()
			if _, err := s.NextN(context.Background(), 30); err != nil {
				t.Fatal(err)
			}
			r, err := s.Why(session.WhyQuery{Operator: "join", Key: "o3"})
			if err != nil {
				t.Fatal(err)
			}
			text := r.String()
			if !r.HasTimer || r.Namespace != runtime.CleanupLeftTimer || r.FiresAt != orderTS(t, "o3")+10*60*1000 || r.Due {
				t.Fatalf("want the pending CLEANUP_LEFT timer at o3's ts + 10 min:\n%s", text)
			}
			if !strings.Contains(text, runtime.LeftBufferState) || r.Watermark >= r.FiresAt {
				t.Fatalf("the report does not explain the cleanup of LEFT_BUFFER below the watermark:\n%s", text)
			}
			if len(r.Channels) != 2 || r.Channels[0].Input != 1 || r.Channels[1].Input != 2 {
				t.Fatalf("want one channel per input (orders, payments):\n%s", text)
			}
			low := 0
			if r.Channels[1].Watermark < r.Channels[0].Watermark {
				low = 1
			}
			if r.HoldingBack != low || r.Watermark != r.Channels[low].Watermark {
				t.Fatalf("channel %d (watermark %d) should hold the join's watermark %d back:\n%s", low, r.Channels[low].Watermark, r.Watermark, text)
			}
			if want := []string{"Source: orders", "Source: payments"}[low]; r.Source == nil || r.Source.Task != want {
				t.Fatalf("why should name %s as what holds the watermark back:\n%s", want, text)
			}
			if _, err := s.Run(context.Background(), session.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			r, err = s.Why(session.WhyQuery{Operator: "join", Key: "o3"})
			if err != nil {
				t.Fatal(err)
			}
			if r.HasTimer || !strings.Contains(r.String(), "nothing pending") {
				t.Fatalf("at the end of input every cleanup timer has fired:\n%s", r)
			}
		})
	}
}
