package session_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"streamdbg/fixtures"
	"streamdbg/runtime"
	"streamdbg/runtime/session"
)

// orderWindowTotals sums the order-windows fixture's amounts per customer
// for the window [start, start+10s), straight from the file.
func orderWindowTotals(t *testing.T, start time.Time) map[string]int64 {
	t.Helper()
	in, err := fixtures.Embedded("order-windows.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range in.Lines {
		var o struct {
			Customer string
			Amount   int64
			TS       string
		}
		if json.Unmarshal(line, &o) != nil || o.TS == "" {
			continue
		}
		ts, err := time.Parse(time.RFC3339, o.TS)
		if err != nil {
			t.Fatal(err)
		}
		if !ts.Before(start) && ts.Before(start.Add(10*time.Second)) {
			out[o.Customer] += o.Amount
		}
	}
	return out
}

func windowOutputs(t *testing.T, out []byte) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Customer    string `json:"customer"`
			WindowStart string `json:"window_start"`
			Total       int64  `json:"total"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("output %q: %v", sc.Text(), err)
		}
		got[r.Customer+" "+r.WindowStart] = r.Total
	}
	return got
}

// TestWhyQuietPartition: in order-windows, partition 3 goes quiet after its
// record of 12:00:04; the first window of every customer stays unfired
// while the other partitions are at 12:00:10 and beyond, why names
// partition 3 as what holds the watermark back, and the partition's
// {"$idle": true} record releases the windows.
func TestWhyQuietPartition(t *testing.T) {
	for _, backend := range runtime.Backends {
		t.Run(backend, func(t *testing.T) {
			var out bytes.Buffer
			s := openSession(t, buildJob(t, "order-windows"), session.Options{Options: runtime.Options{Backend: backend, Output: &out}})
			defer s.Close()
			// Lines 1-47: partition 3's line 48 is {"$idle": true}.
			if _, err := s.NextN(context.Background(), 47); err != nil {
				t.Fatal(err)
			}
			if err := s.Executor().Flush(); err != nil {
				t.Fatal(err)
			}
			if out.Len() != 0 {
				t.Fatalf("a window fired while partition 3 is quiet: %s", out.String())
			}
			r, err := s.Why(session.WhyQuery{Key: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			text := r.String()
			if !r.HasTimer || r.Due || r.FiresAt != time.Date(2026, 3, 1, 12, 0, 9, 999e6, time.UTC).UnixMilli() {
				t.Fatalf("the window should wait for 12:00:09.999:\n%s", text)
			}
			if r.Source == nil || r.Source.Reads != "partition 3" || r.Source.FromSubtask != 3 || r.Source.Idle {
				t.Fatalf("why does not name partition 3 (active) as what holds the watermark back:\n%s", text)
			}
			if r.Source.LastRecordTS != time.Date(2026, 3, 1, 12, 0, 4, 0, time.UTC).UnixMilli() || r.Source.LastWhere != "order-windows.jsonl:20" {
				t.Fatalf("partition 3's last record: %d at %q, want 12:00:04 at line 20:\n%s", r.Source.LastRecordTS, r.Source.LastWhere, text)
			}
			if r.HoldingBack != 3 || len(r.Channels) != 4 || r.Channels[3].Watermark != time.Date(2026, 3, 1, 12, 0, 3, 999e6, time.UTC).UnixMilli() {
				t.Fatalf("channel 3 should hold the watermark at 12:00:03.999:\n%s", text)
			}
			for _, want := range []string{"Window [2026-03-01T12:00:00.000Z, 2026-03-01T12:00:10.000Z) of key c1", "partition 3", "holds it back", `{"$idle": true}`} {
				if !strings.Contains(text, want) {
					t.Fatalf("the report lacks %q:\n%s", want, text)
				}
			}
			if n := len(r.Lines); n > 20 {
				t.Fatalf("the report takes %d lines, more than a screen:\n%s", n, text)
			}

			// Line 48: {"$idle": true} in partition 3 releases the windows.
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
			if err := s.Executor().Flush(); err != nil {
				t.Fatal(err)
			}
			got := windowOutputs(t, out.Bytes())
			want := orderWindowTotals(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			if len(got) != len(want) || len(want) != 3 {
				t.Fatalf("after partition 3 went idle: outputs %v, want the 3 first windows %v", got, want)
			}
			for c, total := range want {
				if got[c+" 2026-03-01T12:00:00Z"] != total {
					t.Fatalf("customer %s: total %d, want %d (outputs %v)", c, got[c+" 2026-03-01T12:00:00Z"], total, got)
				}
			}
			r, err = s.Why(session.WhyQuery{Key: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Channels[3].Idle || r.HoldingBack == 3 || r.Source != nil || !strings.Contains(r.String(), "event time has not reached") {
				t.Fatalf("after the idle record, partition 3 is idle and nothing single holds the next window back:\n%s", r)
			}
		})
	}
}

// TestWhyCommand runs why through the command table.
func TestWhyCommand(t *testing.T) {
	s := openSession(t, buildJob(t, "order-windows"), session.Options{})
	defer s.Close()
	if _, err := s.NextN(context.Background(), 47); err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(context.Background(), "why at total 'c2' 2026-03-01T12:00:10Z")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "of key c2") || !strings.Contains(res.Text, "partition 3") {
		t.Fatalf("why at total 'c2' <end>:\n%s", res.Text)
	}
	if _, err := s.Execute(context.Background(), "why at nosuch"); err == nil || !strings.Contains(err.Error(), "no operator") {
		t.Fatalf("why at an unknown operator: %v", err)
	}
	res, err = s.Execute(context.Background(), "why c9")
	if err != nil || !strings.Contains(res.Text, "nothing pending") {
		t.Fatalf("why of a key without windows: %q, %v", res.Text, err)
	}
}

func TestParseWhy(t *testing.T) {
	for _, c := range []struct {
		in   string
		want session.WhyQuery
		err  bool
	}{
		{"", session.WhyQuery{}, false},
		{"c1", session.WhyQuery{Key: "c1"}, false},
		{"'a b'", session.WhyQuery{Key: "a b"}, false},
		{"at total", session.WhyQuery{Operator: "total"}, false},
		{"at total \"c1\" 1000", session.WhyQuery{Operator: "total", Key: "c1", Time: 1000, HasTime: true}, false},
		{"c1 2026-03-01T12:00:10Z", session.WhyQuery{Key: "c1", Time: 1772366410000, HasTime: true}, false},
		{"c1 soon", session.WhyQuery{}, true},
	} {
		got, err := session.ParseWhy(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseWhy(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}
