package session

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"streamdbg/runtime"
	"streamdbg/state"
)

// WhyQuery says what to explain: a key of a keyed operator (its earliest
// pending window or timer), or one of its windows or timers by time. The
// zero query explains the earliest pending event-time timer of the first
// operator that has windows or timers.
type WhyQuery struct {
	// Operator is a name or uid ("" picks the first keyed operator with
	// timers, windows first).
	Operator string
	// Key is the key as written in queries ('c1', 42); "" means any key.
	Key string
	// Time picks the window that starts or ends at it, or the timer at it
	// (epoch ms); HasTime says it is set.
	Time    int64
	HasTime bool
}

// WhyReport explains why something has not fired.
type WhyReport struct {
	Operator string
	Subtask  int
	Key      any
	// What is what is explained ("window [a, b) of key c1").
	What string
	// Domain and FiresAt say when it fires (HasTimer false: nothing is
	// set to fire it).
	Domain   runtime.TimeDomain
	FiresAt  int64
	HasTimer bool
	// Watermark is the operator subtask's event time; Due says the timer
	// is due and fires with the next step.
	Watermark int64
	Due       bool
	// Channels are the operator subtask's input channels; HoldingBack
	// indexes the one holding its watermark back (-1: none).
	Channels    []WhyChannel
	HoldingBack int
	// Source is the source subtask at the end of the chain of channels
	// that holds the watermark back (nil when nothing does).
	Source *WhyChannel
	// Namespace is the timer's namespace when it is not a window
	// (CLEANUP_LEFT, CLEANUP_RIGHT of an interval join).
	Namespace string
	// Lines are the report as text, one screen.
	Lines []string
}

// WhyChannel is one input channel as why shows it.
type WhyChannel struct {
	Index       int
	Task        string
	FromSubtask int
	// Input is the input of a two-input operator the channel feeds (1 or
	// 2; 0 for one input).
	Input     int
	Watermark int64
	Idle      bool
	Aligned   bool
	// Reads says what a source subtask reads ("partition 3").
	Reads string
	// LastRecordTS is the timestamp of the last record through the channel
	// (or read by the source subtask), when HasRecord.
	LastRecordTS int64
	HasRecord    bool
	// LastWhere is where a source subtask read its last event.
	LastWhere string
	Records   int64
}

func (r *WhyReport) String() string { return strings.Join(r.Lines, "\n") + "\n" }

// ParseWhy parses the arguments of the why command:
//
//	[at OPERATOR] [KEY [TIME]]
//
// KEY is a query literal ('c1', "c1", c1 or 42); TIME is RFC 3339 or epoch
// milliseconds.
func ParseWhy(args string) (WhyQuery, error) {
	var q WhyQuery
	args = strings.TrimSpace(args)
	if rest, ok := strings.CutPrefix(args, "at "); ok {
		rest = strings.TrimSpace(rest)
		op, after, _ := strings.Cut(rest, " ")
		q.Operator, args = unquote(op), strings.TrimSpace(after)
	}
	if args == "" {
		return q, nil
	}
	key, rest := splitWord(args)
	q.Key = unquote(key)
	if rest != "" {
		t, err := parseTime(rest)
		if err != nil {
			return q, fmt.Errorf("why: time %q: %w", rest, err)
		}
		q.Time, q.HasTime = t, true
	}
	return q, nil
}

// splitWord cuts the first word, a quoted one whole.
func splitWord(s string) (string, string) {
	if len(s) > 0 && (s[0] == '\'' || s[0] == '"') {
		if i := strings.IndexByte(s[1:], s[0]); i >= 0 {
			return s[:i+2], strings.TrimSpace(s[i+2:])
		}
	}
	w, rest, _ := strings.Cut(s, " ")
	return w, strings.TrimSpace(rest)
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// pending is one timer of the operator subtask.
type pending struct {
	subtask int
	domain  runtime.TimeDomain
	ts      int64
	key     []byte
	keyShow any
	window  *state.Window
	// ns is a timer namespace that is not a window, shown (the interval
	// join's CLEANUP_LEFT and CLEANUP_RIGHT).
	ns string
}

// Why explains why a window or timer of a keyed operator has not fired:
// when it fires, the operator subtask's watermark, and which input channel
// holds it back, up to the source subtask (its partition, its last record,
// idle or not).
func (s *Session) Why(q WhyQuery) (*WhyReport, error) {
	if s.exec == nil {
		return nil, errors.New("session: closed")
	}
	ex := s.exec
	info, err := whyOperator(ex.Plan(), q.Operator)
	if err != nil {
		return nil, err
	}
	views := ex.Subtasks()
	var keyBytes []byte
	if q.Key != "" {
		var lit any = q.Key
		if n, err := strconv.ParseInt(q.Key, 10, 64); err == nil {
			lit = n
		}
		k, ok := state.EncodeKeyLiteral(info.KeyType, lit)
		if !ok {
			return nil, fmt.Errorf("why: %q is not a key of operator %q (keys are %s)", q.Key, info.Name, info.KeyType)
		}
		keyBytes = k
	}
	var all []pending
	var windows []windowOf // windows with contents, for keys without timers
	for _, v := range views {
		if v.Task != info.Task {
			continue
		}
		op := operatorView(v, info)
		if op == nil || op.Keyed == nil {
			continue
		}
		groups := v.KeyGroups
		if keyBytes != nil {
			kg := state.KeyGroupFor(keyBytes, ex.Plan().MaxParallelism)
			if !groups.Contains(kg) {
				continue
			}
			groups = state.KeyGroupRange{Start: kg, End: kg}
		}
		ps, ws, err := keyTimers(op, v.Index, groups, keyBytes)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
		windows = append(windows, ws...)
	}
	if q.HasTime {
		all = slices.DeleteFunc(all, func(p pending) bool {
			return p.ts != q.Time && (p.window == nil || (p.window.Start != q.Time && p.window.End != q.Time))
		})
		windows = slices.DeleteFunc(windows, func(w windowOf) bool { return w.w.Start != q.Time && w.w.End != q.Time })
	}
	r := &WhyReport{Operator: info.Name, HoldingBack: -1}
	// The earliest event-time timer first: it is what the watermark holds.
	slices.SortStableFunc(all, func(a, b pending) int {
		if a.domain != b.domain {
			return int(a.domain) - int(b.domain)
		}
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	switch {
	case len(all) > 0:
		p := all[0]
		r.Subtask, r.Key, r.Domain, r.FiresAt, r.HasTimer = p.subtask, p.keyShow, p.domain, p.ts, true
		r.What = describeTarget(p.window, p.keyShow, p.ts)
		if p.ns != "" {
			r.What = fmt.Sprintf("timer %s at %s of key %v", p.ns, state.FormatMillis(p.ts), p.keyShow)
			r.Namespace = p.ns
		}
	case len(windows) > 0:
		w := windows[0]
		r.Subtask, r.Key = w.subtask, w.key
		r.What = describeTarget(&w.w, w.key, 0)
	default:
		what := "operator " + strconv.Quote(info.Name)
		if q.Key != "" {
			what = fmt.Sprintf("key %s of %s", q.Key, what)
		}
		if q.HasTime {
			what += " at " + state.FormatMillis(q.Time)
		}
		r.Lines = []string{what + " has nothing pending: no window in flight and no timer set (it fired already, or no record reached it)."}
		return r, nil
	}
	targets := map[string]bool{}
	for _, p := range all {
		targets[describeTarget(p.window, p.keyShow, p.ts)] = true
	}
	for _, w := range windows {
		targets[describeTarget(&w.w, w.key, 0)] = true
	}
	s.explain(r, views, info, len(targets))
	return r, nil
}

type windowOf struct {
	subtask int
	w       state.Window
	key     any
}

// whyOperator picks the operator to explain.
func whyOperator(p *runtime.Plan, name string) (*runtime.OperatorInfo, error) {
	if name != "" {
		info, ok := p.Operator(name)
		if !ok {
			return nil, fmt.Errorf("why: no operator %q (operators: %s)", name, strings.Join(p.OperatorNames(), ", "))
		}
		if !info.Keyed {
			return nil, fmt.Errorf("why: operator %q is not keyed: it has no windows or timers", info.Name)
		}
		return info, nil
	}
	for _, o := range p.Operators {
		if o.Keyed && o.TimerNamespaceType == "window" {
			return o, nil
		}
	}
	for _, o := range p.Operators {
		if o.Keyed {
			return o, nil
		}
	}
	return nil, errors.New("why: the job has no keyed operator, so no windows or timers")
}

func operatorView(v runtime.SubtaskView, info *runtime.OperatorInfo) *runtime.OperatorView {
	for i := range v.Operators {
		if v.Operators[i].Info == info {
			return &v.Operators[i]
		}
	}
	return nil
}

// keyTimers lists the timers (and windows with contents) of one operator
// subtask in groups, of key when not nil.
func keyTimers(op *runtime.OperatorView, subtask int, groups state.KeyGroupRange, key []byte) ([]pending, []windowOf, error) {
	var out []pending
	var ws []windowOf
	windowNS := op.Info.TimerNamespaceType == "window"
	keyCodec := op.Info.KeyCodec
	show := func(k []byte) any {
		if keyCodec == nil {
			return state.Hex(k)
		}
		v, err := keyCodec.Display(k)
		if err != nil {
			return state.Hex(k)
		}
		return v
	}
	declared := map[string]bool{}
	for _, m := range op.Keyed.Describe() {
		declared[m.StateName] = true
	}
	for kg := groups.Start; kg <= groups.End; kg++ {
		for _, q := range []struct {
			name string
			d    runtime.TimeDomain
		}{{"event_timers", runtime.EventTime}, {"processing_timers", runtime.ProcessingTime}} {
			if !declared[state.TimerStateName(q.name)] {
				continue
			}
			for e, err := range op.Keyed.Entries(kg, state.TimerStateName(q.name)) {
				if err != nil {
					return nil, nil, err
				}
				if key != nil && !bytes.Equal(e.Key, key) {
					continue
				}
				ts, err := state.Int64.Decode(e.UserKey)
				if err != nil {
					return nil, nil, err
				}
				p := pending{subtask: subtask, domain: q.d, ts: ts, key: bytes.Clone(e.Key), keyShow: show(e.Key)}
				if windowNS {
					if w, err := state.WindowCodec.Decode(e.Namespace); err == nil {
						p.window = &w
					}
				} else if op.Info.TimerNamespaceType == state.String.TypeName() {
					if ns, err := state.String.Decode(e.Namespace); err == nil {
						p.ns = ns
					}
				}
				out = append(out, p)
			}
		}
		if !windowNS || key == nil || !declared["window-contents"] {
			continue
		}
		seen := map[state.Window]bool{}
		for e, err := range op.Keyed.Entries(kg, "window-contents") {
			if err != nil {
				return nil, nil, err
			}
			if !bytes.Equal(e.Key, key) {
				continue
			}
			if w, err := state.WindowCodec.Decode(e.Namespace); err == nil && !seen[w] {
				seen[w] = true
				ws = append(ws, windowOf{subtask: subtask, w: w, key: show(e.Key)})
			}
		}
	}
	return out, ws, nil
}

func describeTarget(w *state.Window, key any, ts int64) string {
	if w != nil {
		if w.Start == math.MinInt64 && w.End == math.MaxInt64 {
			return fmt.Sprintf("the global window of key %v", key)
		}
		return fmt.Sprintf("window %s of key %v", w, key)
	}
	return fmt.Sprintf("timer at %s of key %v", state.FormatMillis(ts), key)
}

// explain fills in why r's target has not fired.
func (s *Session) explain(r *WhyReport, views []runtime.SubtaskView, info *runtime.OperatorInfo, pendingN int) {
	var sv *runtime.SubtaskView
	for i := range views {
		if views[i].Task == info.Task && views[i].Index == r.Subtask {
			sv = &views[i]
		}
	}
	op := operatorView(*sv, info)
	r.Watermark = op.Watermark
	where := fmt.Sprintf("%s[%d]", info.Name, r.Subtask)
	add := func(f string, a ...any) { r.Lines = append(r.Lines, fmt.Sprintf(f, a...)) }
	add("%s in %s has not fired.", capitalize(r.What), where)
	switch r.Namespace {
	case runtime.CleanupLeftTimer:
		add("It is the interval join's cleanup of its first input: when it fires, the elements it was set for leave %s, as no element of the second input can join them any more.", runtime.LeftBufferState)
	case runtime.CleanupRightTimer:
		add("It is the interval join's cleanup of its second input: when it fires, the elements it was set for leave %s, as no element of the first input can join them any more.", runtime.RightBufferState)
	}
	if !r.HasTimer {
		add("No timer is set for it: its trigger fires it on elements only, or never (a global window without a trigger).")
		return
	}
	if r.Domain == runtime.ProcessingTime {
		now := s.exec.ProcessingTime()
		add("It fires at processing time %s; the clock is at %s.", state.FormatMillis(r.FiresAt), state.FormatMillis(now))
		if r.FiresAt > now {
			add("Processing time only moves when told: advance %s (command advance, or a {\"$advance_processing_time\"} record).", time.Duration(r.FiresAt-now)*time.Millisecond)
		} else {
			r.Due = true
			add("It is due: it fires with the next step.")
		}
		return
	}
	add("It fires when the watermark reaches %s; %s's watermark is %s.", state.FormatMillis(r.FiresAt), where, state.FormatMillis(r.Watermark))
	if r.Watermark >= r.FiresAt {
		r.Due = true
		add("It is due: it fires with the next step.")
		return
	}
	// Follow the channel holding the watermark back up to a source.
	cur := sv
	first := true
	for hop := 0; cur != nil && hop < 8; hop++ {
		if cur.Source != nil {
			src := cur.Source
			ch := WhyChannel{Task: cur.Task.Name, FromSubtask: cur.Index, Watermark: src.Watermark, Idle: src.Idle, Reads: src.Reads,
				LastRecordTS: src.LastRecordTS, HasRecord: src.HasRecordTS, LastWhere: src.LastRecordWhere}
			r.Source = &ch
			if first {
				add("The operator is chained to its source, %s[%d]%s: watermark %s, %s.", cur.Task.Name, cur.Index, reads(src.Reads), state.FormatMillis(src.Watermark), sourceState(ch))
			}
			break
		}
		if first {
			if cur.Task.TwoInputs() {
				add("The watermark is the minimum over both inputs, an idle input left out; each input's is the minimum over its active channels:")
			} else {
				add("The watermark is the minimum over the active input channels:")
			}
			add("  ch  from                               watermark                 last record here          status")
			for _, c := range cur.Channels {
				wc := WhyChannel{Index: c.Index, Task: c.From.Name, FromSubtask: c.FromSubtask, Input: c.Input, Watermark: c.Watermark, Idle: c.Idle, Aligned: c.Aligned,
					LastRecordTS: c.LastRecordTS, HasRecord: c.HasRecordTS, Records: c.Records}
				if up := subtaskOf(views, c.From, c.FromSubtask); up != nil && up.Source != nil {
					wc.Reads, wc.LastWhere = up.Source.Reads, up.Source.LastRecordWhere
				}
				r.Channels = append(r.Channels, wc)
				mark, note := "  ", ""
				if c.Index == cur.HoldingBack {
					mark, note = "▸ ", "  ← holds it back"
				}
				from := fmt.Sprintf("%s[%d]%s", c.From.Name, c.FromSubtask, reads(wc.Reads))
				if c.Input > 0 {
					from = fmt.Sprintf("input %d: %s", c.Input, from)
				}
				add("%s%-3d %-34s %-25s %-25s %s%s", mark, c.Index, from,
					state.FormatMillis(c.Watermark), lastRecord(wc), channelStatus(c.ChannelStatus), note)
			}
			r.HoldingBack = cur.HoldingBack
			first = false
		}
		if cur.HoldingBack < 0 {
			if cur.Idle {
				add("All input channels are idle: the watermark waits for one to become active again.")
			} else {
				add("No active channel is aligned yet: the watermark waits for them to catch up.")
			}
			return
		}
		c := cur.Channels[cur.HoldingBack]
		if ties := tiedAtMinimum(cur); ties > 1 {
			add("%d active channels are at %s: event time has not reached %s yet; the window fires once the input passes it.",
				ties, state.FormatMillis(c.Watermark), state.FormatMillis(r.FiresAt))
			return
		}
		next := subtaskOf(views, c.From, c.FromSubtask)
		if next == nil {
			break
		}
		if next.Source == nil {
			add("Channel %d comes from %s[%d], whose own watermark is held back by its channel %d.", c.Index, c.From.Name, c.FromSubtask, next.HoldingBack)
		}
		cur = next
	}
	if r.Source != nil {
		src := r.Source
		if src.Idle {
			add("%s[%d] is idle but still holds the watermark back: its channels realign once it catches up.", src.Task, src.FromSubtask)
		} else {
			add("%s[%d]%s holds the watermark back at %s:", src.Task, src.FromSubtask, reads(src.Reads), state.FormatMillis(src.Watermark))
			add("it has sent nothing later than %s.", lastRecordOr(src))
			add("If it has nothing to send, mark it idle:")
			add("a {\"$idle\": true} record in its input, or WatermarkStrategy.WithIdleness in the job.")
		}
	}
	if pendingN > 1 {
		add("(%d windows or timers are pending here; why KEY [TIME] picks one.)", pendingN)
	}
}

// tiedAtMinimum counts the active aligned channels at the lowest
// watermark: more than one means no single channel holds the rest back.
func tiedAtMinimum(v *runtime.SubtaskView) int {
	n := 0
	low := v.Channels[v.HoldingBack].Watermark
	for _, c := range v.Channels {
		if c.Aligned && !c.Idle && c.Watermark == low {
			n++
		}
	}
	return n
}

func subtaskOf(views []runtime.SubtaskView, t *runtime.Task, index int) *runtime.SubtaskView {
	for i := range views {
		if views[i].Task == t && views[i].Index == index {
			return &views[i]
		}
	}
	return nil
}

func reads(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

func lastRecord(c WhyChannel) string {
	if !c.HasRecord {
		return "none"
	}
	return state.FormatMillis(c.LastRecordTS)
}

func lastRecordOr(c *WhyChannel) string {
	s := "its last record at " + lastRecord(*c)
	if !c.HasRecord {
		s = "any record"
	}
	if c.LastWhere != "" {
		s += " (read at " + c.LastWhere + ")"
	}
	return s
}

func channelStatus(c runtime.ChannelStatus) string {
	switch {
	case c.Idle:
		return "idle"
	case !c.Aligned:
		return "active, catching up"
	}
	return "active"
}

func sourceState(c WhyChannel) string {
	st := "active"
	if c.Idle {
		st = "idle"
	}
	return fmt.Sprintf("last record %s, %s", lastRecord(c), st)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
