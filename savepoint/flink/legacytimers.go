package flink

import (
	"bytes"
	"fmt"
	"iter"
	"slices"

	"streamdbg/state"
)

// This file reads the timers that Flink jobs before 1.10 with heap timers
// (RocksDB's default then) wrote into an operator's raw keyed state: per
// key group an InternalTimerServiceSerializationProxy (a versioned header,
// then per timer service its name, key and namespace serializer snapshots,
// event-time timers and processing-time timers, each timer as key,
// namespace and timestamp: InternalTimersSnapshotReaderWriters, version 2).

// versionedIdentifier starts what PostVersionedIOReadableWritable writes.
var versionedIdentifier = []byte{0xf1, 0xcd, 0x85, 0x9f}

type legacyTimerService struct {
	name           string
	key, namespace serializer
}

// legacyTimers is what the raw keyed state of one subtask holds, if it is
// timers.
type legacyTimers struct {
	services []legacyTimerService
	err      error
}

// legacyTimersOf reads (once) which timer services a raw keyed state
// handle holds, from its first key group that holds any.
func (sp *Savepoint) legacyTimersOf(h *keyGroupsHandle) *legacyTimers {
	sp.mu.Lock()
	lt, ok := sp.legacy[h]
	sp.mu.Unlock()
	if ok {
		return lt
	}
	lt = &legacyTimers{}
	for e, err := range sp.legacyTimerEntries(h, 128, nil) {
		if err != nil {
			lt.err = err
			break
		}
		if e.services != nil {
			lt.services = e.services
			break
		}
	}
	if lt.err == nil && lt.services == nil {
		lt.err = fmt.Errorf("flink: raw keyed state holds no timer services: %w", ErrUnsupported)
	}
	sp.mu.Lock()
	if sp.legacy == nil {
		sp.legacy = map[*keyGroupsHandle]*legacyTimers{}
	}
	sp.legacy[h] = lt
	sp.mu.Unlock()
	return lt
}

// legacyEntry is one timer, or (services set) the services of a key group.
type legacyEntry struct {
	services []legacyTimerService
	keyGroup int
	service  int
	event    bool
	timer    timer
}

// legacyTimerEntries reads the key groups of a raw keyed state handle as
// legacy timers: first each key group's services, then its timers. At
// most maxGroups key groups are read (those in kgs only, when not nil).
func (sp *Savepoint) legacyTimerEntries(h *keyGroupsHandle, maxGroups int, kgs []int) iter.Seq2[legacyEntry, error] {
	return func(yield func(legacyEntry, error) bool) {
		if h.stream == nil {
			yield(legacyEntry{}, fmt.Errorf("flink: raw keyed state without a stream handle: %w", ErrCorrupt))
			return
		}
		sec, c, err := h.stream.open()
		if err != nil {
			yield(legacyEntry{}, err)
			return
		}
		defer c.Close()
		sorted := sortedOffsets(h.offsets)
		read := 0
		for i, off := range h.offsets {
			kg := h.first + i
			// Raw keyed state has no header: the first key group may
			// start at 0.
			if off < 0 || (kgs != nil && !slices.Contains(kgs, kg)) {
				continue
			}
			end := sectionEnd(sorted, off, sec.size())
			if end <= off {
				continue
			}
			if read++; read > maxGroups {
				return
			}
			b, err := sp.readSection(sec, off, end)
			if err != nil {
				yield(legacyEntry{}, err)
				return
			}
			if !readLegacyKeyGroup(newDecoder(sec.name(), off, b), kg, yield) {
				return
			}
		}
	}
}

// readLegacyKeyGroup decodes one key group's timer services; false when
// the consumer stopped or an error was yielded.
func readLegacyKeyGroup(d *decoder, kg int, yield func(legacyEntry, error) bool) bool {
	if !bytes.Equal(d.take(4), versionedIdentifier) {
		if d.err != nil {
			return yield(legacyEntry{}, d.err)
		}
		return yield(legacyEntry{}, &FormatError{File: d.file, Offset: d.base, Msg: "raw keyed state is not Flink's timers (written by the operator itself, without meta information)", Err: ErrUnsupported})
	}
	if v := d.i32(); d.err == nil && v != 2 {
		d.off -= 4
		d.failErr(ErrUnsupported, "timer service serialization version %d not supported (2 is)", v)
	}
	n := d.count("timer service", 2+6+6+8)
	var services []legacyTimerService
	for range n {
		s := legacyTimerService{name: d.utf()}
		s.key = readVersionedSnapshot(d, 0)
		s.namespace = readVersionedSnapshot(d, 0)
		if d.err != nil {
			return yield(legacyEntry{}, d.err)
		}
		services = append(services, s)
		si := len(services) - 1
		if !yield(legacyEntry{services: slices.Clone(services[:si+1])}, nil) {
			return false
		}
		for _, event := range []bool{true, false} {
			k := d.count("timer", max(s.key.fixedLen()+s.namespace.fixedLen()+8, 8))
			for range k {
				key := s.key.decode(d)
				ns := s.namespace.decode(d)
				ts := d.i64()
				if d.err != nil {
					return yield(legacyEntry{}, d.err)
				}
				if !yield(legacyEntry{keyGroup: kg, service: si, event: event, timer: timer{timestamp: ts, key: key, namespace: ns}}, nil) {
					return false
				}
			}
		}
	}
	if d.err != nil {
		return yield(legacyEntry{}, d.err)
	}
	if d.remaining() != 0 {
		d.fail("%d bytes after the timer services of key group %d", d.remaining(), kg)
		return yield(legacyEntry{}, d.err)
	}
	return true
}

// legacyTimerMetas lists the timer states of legacy raw timers.
func legacyTimerMetas(id, name string, lt *legacyTimers) []state.StateMeta {
	var out []state.StateMeta
	for _, s := range lt.services {
		for _, domain := range []string{"event", "processing"} {
			out = append(out, state.StateMeta{
				OperatorID: id, OperatorName: name, StateName: "_timer_state/" + domain + "_" + s.name,
				Scope: state.ScopeKeyed, Kind: state.KindTimers, KeyType: typeOf(s.key),
				NamespaceType: typeOf(s.namespace), ValueType: "timestamp",
			})
		}
	}
	return out
}

// legacyTimerRows streams the legacy timers of one subtask as timer rows,
// of the timer state stateName (as legacyTimerMetas names it) only when it
// is not "".
func (sp *Savepoint) legacyTimerRows(op *operatorMeta, subtask int, h *keyGroupsHandle, kgs []int, stateName string, yield func(state.TimerRow, error) bool) bool {
	name := sp.opName(op)
	var services []legacyTimerService // the current key group's
	for e, err := range sp.legacyTimerEntries(h, len(h.offsets), kgs) {
		if err != nil {
			return yield(state.TimerRow{}, err)
		}
		if e.services != nil {
			services = e.services
			continue
		}
		domain := "processing"
		if e.event {
			domain = "event"
		}
		timerState := "_timer_state/" + domain + "_" + services[e.service].name
		if stateName != "" && stateName != timerState {
			continue
		}
		row := state.TimerRow{OperatorID: op.id, OperatorName: name, Subtask: subtask, KeyGroup: e.keyGroup, StateName: timerState,
			Key: e.timer.key, Namespace: e.timer.namespace, Domain: domain, Timestamp: e.timer.timestamp}
		if !yield(row, nil) {
			return false
		}
	}
	return true
}
