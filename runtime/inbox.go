package runtime

import "streamdbg/state"

// inbox is a subtask's input queue: records, watermarks and watermark
// statuses from all input channels in arrival order. Encoded keys of hash-partitioned records live
// in one arena that is reset whenever the queue empties, so queueing a
// keyed record allocates nothing in the steady state.
type inbox struct {
	els   []inElem
	head  int
	arena []byte
}

type inElem struct {
	rec     Record
	key     []byte
	wm      int64
	channel int32
	kg      int32
	kind    elemKind
	idle    bool
}

// work is a record element of st's queue as the work item of its head
// operator.
func (el *inElem) work(st *subtask) work {
	return work{kind: wRecord, rec: el.rec, key: el.key, kg: el.kg, input: st.channels[el.channel].input}
}

type elemKind uint8

const (
	elRecord elemKind = iota
	elWatermark
	elStatus
)

func (q *inbox) len() int { return len(q.els) - q.head }

func (q *inbox) reset() {
	if q.head == len(q.els) && q.head > 0 {
		clear(q.els)
		q.els, q.head, q.arena = q.els[:0], 0, q.arena[:0]
	}
}

func (q *inbox) pushRecord(channel int, r Record, key []byte, kg int) {
	q.reset()
	var k []byte
	if key != nil {
		if cap(q.arena)-len(q.arena) < len(key) {
			// A new arena: keys already queued keep pointing at the old one.
			q.arena = make([]byte, 0, max(4096, 2*cap(q.arena), len(key)))
		}
		start := len(q.arena)
		q.arena = append(q.arena, key...)
		k = q.arena[start:len(q.arena):len(q.arena)]
	}
	q.els = append(q.els, inElem{channel: int32(channel), rec: r, key: k, kg: int32(kg)})
}

// pushKeyed queues a record whose key appendKey encodes straight into the
// arena, with the key's group of maxParallelism key groups.
func (q *inbox) pushKeyed(channel int, r Record, appendKey func([]byte, any) []byte, maxParallelism int) {
	q.reset()
	start := len(q.arena)
	// A grown arena is a new array: keys already queued keep pointing at
	// the old one, which is never written again.
	q.arena = appendKey(q.arena, r.Value)
	q.pushArenaKey(channel, r, start, maxParallelism)
}

// pushArenaKey queues r with the key the arena holds from start (a key
// appended after a reset; emitSlot encodes typed keys so).
func (q *inbox) pushArenaKey(channel int, r Record, start, maxParallelism int) {
	k := q.arena[start:len(q.arena):len(q.arena)]
	el := q.grow()
	el.rec, el.key, el.channel, el.kg = r, k, int32(channel), int32(state.KeyGroupFor(k, maxParallelism))
	el.kind, el.wm, el.idle = elRecord, 0, false
}

// grow adds an element at the end and returns it, to be filled in place
// (appending a whole element literal copies it once more). Its pointer
// fields are nil (reset clears the queue before it is reused); the caller
// sets every other field.
func (q *inbox) grow() *inElem {
	if n := len(q.els); n < cap(q.els) {
		q.els = q.els[:n+1]
	} else {
		q.els = append(q.els, inElem{})
	}
	return &q.els[len(q.els)-1]
}

func (q *inbox) pushWatermark(channel int, wm int64) {
	q.reset()
	q.els = append(q.els, inElem{channel: int32(channel), kind: elWatermark, wm: wm})
}

func (q *inbox) pushStatus(channel int, idle bool) {
	q.reset()
	q.els = append(q.els, inElem{channel: int32(channel), kind: elStatus, idle: idle})
}

// peek returns the oldest element; the queue must not be empty.
func (q *inbox) peek() *inElem { return &q.els[q.head] }

func (q *inbox) pop() inElem {
	el := q.els[q.head]
	q.els[q.head] = inElem{}
	q.head++
	return el
}

// queued returns the elements waiting, oldest first (for views).
func (q *inbox) queued() []inElem { return q.els[q.head:] }

// take removes and returns the oldest queued element that match accepts,
// keeping the others in order.
func (q *inbox) take(match func(inElem) bool) (inElem, bool) {
	for i := q.head; i < len(q.els); i++ {
		if !match(q.els[i]) {
			continue
		}
		el := q.els[i]
		copy(q.els[q.head+1:i+1], q.els[q.head:i])
		q.els[q.head] = inElem{}
		q.head++
		return el, true
	}
	return inElem{}, false
}
