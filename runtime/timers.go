package runtime

import (
	"slices"

	"streamdbg/state"
)

// timerService is one operator's timers in one subtask, as Flink's
// InternalTimerServiceImpl: an event-time and a processing-time queue in
// the operator's keyed backend (opened when first used), and one physical
// timer in the subtask's processing-time service, at the earliest
// processing-time timer. A timer deleted later does not move the physical
// timer: it fires, finds nothing due, and is set again at the earliest
// remaining timer.
type timerService struct {
	event, proc state.TimerQueue
	pts         *procTimeService
	owner       int        // the operator's index in its chain
	phys        *physTimer // Flink's nextTimer; nil when none is set
}

// addProcessing registers a processing-time timer and moves the physical
// timer earlier when the new timer is the earliest.
func (s *timerService) addProcessing(t state.Timer) (bool, error) {
	next := int64(MaxWatermark)
	if h, ok, err := s.proc.Peek(); err != nil {
		return false, err
	} else if ok {
		next = h.Timestamp
	}
	added, err := s.proc.Add(t)
	if err != nil || !added {
		return added, err
	}
	if t.Timestamp < next {
		if s.phys != nil {
			s.pts.cancel(s.phys)
		}
		s.phys = s.pts.register(t.Timestamp, s.owner)
	}
	return true, nil
}

// remove deletes t from q and reports whether it was there.
func remove(q state.TimerQueue, t state.Timer) (bool, error) {
	n := q.Len()
	if err := q.Delete(t); err != nil {
		return false, err
	}
	return q.Len() < n, nil
}

// due pops the earliest timer of q if it is due at time.
func due(q state.TimerQueue, time int64) (state.Timer, bool, error) {
	if q == nil {
		return state.Timer{}, false, nil
	}
	t, ok, err := q.Peek()
	if err != nil || !ok || t.Timestamp > time {
		return state.Timer{}, false, err
	}
	_, _, err = q.Pop()
	return t, err == nil, err
}

// physicalFired is called when the service's physical timer fires: the
// timers due at its time fire next, and a timer they register may set a
// new physical timer.
func (s *timerService) physicalFired() { s.phys = nil }

// rearm sets the physical timer at the earliest processing-time timer when
// none is set (after firing, and after a restore).
func (s *timerService) rearm() error {
	if s.phys != nil || s.proc == nil {
		return nil
	}
	t, ok, err := s.proc.Peek()
	if err != nil || !ok {
		return err
	}
	s.phys = s.pts.register(t.Timestamp, s.owner)
	return nil
}

// procTimeService is a subtask's processing-time service (Flink's
// ProcessingTimeService): the physical timers of its operators' timer
// services, fired in time order (ties in registration order) as the
// virtual clock passes them. A timer is due once the clock is past its
// time, or at its time when it was set before the clock moved there: one
// set for the current time waits for the clock to move, as Flink fires a
// timer 1 ms after its time (ProcessingTimeServiceUtil).
type procTimeService struct {
	timers []*physTimer // active timers, by (time, seq)
	seq    int64
	moved  int64 // seq when the clock last moved
}

// physTimer is one physical processing-time timer.
type physTimer struct {
	time, seq int64
	owner     int
}

func (p *procTimeService) register(time int64, owner int) *physTimer {
	p.seq++
	t := &physTimer{time: time, seq: p.seq, owner: owner}
	i, _ := slices.BinarySearchFunc(p.timers, t, comparePhys)
	p.timers = slices.Insert(p.timers, i, t)
	return t
}

func comparePhys(a, b *physTimer) int {
	if a.time != b.time {
		if a.time < b.time {
			return -1
		}
		return 1
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (p *procTimeService) cancel(t *physTimer) {
	if i := slices.Index(p.timers, t); i >= 0 {
		p.timers = slices.Delete(p.timers, i, i+1)
	}
}

// clockMoved notes that the clock moved: timers set so far are due at
// its new time.
func (p *procTimeService) clockMoved() { p.moved = p.seq }

// next pops the earliest physical timer due at now.
func (p *procTimeService) next(now int64) (*physTimer, bool) {
	if !p.pending(now) {
		return nil, false
	}
	t := p.timers[0]
	p.timers = slices.Delete(p.timers, 0, 1)
	return t, true
}

// pending reports whether a physical timer is due at now.
func (p *procTimeService) pending(now int64) bool {
	if len(p.timers) == 0 {
		return false
	}
	t := p.timers[0]
	return t.time < now || t.time == now && t.seq <= p.moved
}

// times lists the times of the active physical timers, earliest first.
func (p *procTimeService) times() []int64 {
	out := make([]int64, len(p.timers))
	for i, t := range p.timers {
		out[i] = t.time
	}
	return out
}
