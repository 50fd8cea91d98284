package state

import (
	"bytes"
	"cmp"
	"strings"
)

// Entry is one unit of keyed state in its backend-independent form: what
// snapshots write, restores read and queries decode.
//
//   - value, reducing, aggregating: one entry per (key, namespace); UserKey nil.
//   - list: one entry per element; UserKey is the position (Position codec).
//   - map: one entry per map key; UserKey is the encoded map key.
//   - timers: one entry per timer; UserKey is the timestamp (Int64 codec),
//     Value empty.
type Entry struct {
	State     string
	KeyGroup  int
	Key       []byte
	Namespace []byte
	UserKey   []byte
	Value     []byte
}

// CompareEntries orders entries as every snapshot stream must: by key group,
// state name, key, namespace, user key.
func CompareEntries(a, b Entry) int {
	if c := cmp.Compare(a.KeyGroup, b.KeyGroup); c != 0 {
		return c
	}
	if c := strings.Compare(a.State, b.State); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return bytes.Compare(a.UserKey, b.UserKey)
}

// Size is the number of payload bytes of the entry, as counted in StateMeta.Bytes.
func (e Entry) Size() int {
	return len(e.Key) + len(e.Namespace) + len(e.UserKey) + len(e.Value)
}

// TimerStateName is the state name under which a timer queue's entries are
// snapshotted (Flink names them "_timer_state/<name>").
func TimerStateName(queue string) string { return "_timer_state/" + queue }

// TimerDomain maps a timer state name to its domain ("event" or
// "processing"), or "" when the name is not a timer state.
func TimerDomain(stateName string) string {
	q, ok := strings.CutPrefix(stateName, "_timer_state/")
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(q, "event"):
		return "event"
	case strings.HasPrefix(q, "processing"):
		return "processing"
	}
	return q
}
