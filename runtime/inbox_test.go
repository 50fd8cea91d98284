package runtime

import (
	"bytes"
	"fmt"
	"testing"

	"streamdbg/state"
)

// TestInboxKeys: keys encoded straight into the queue's arena
// (pushKeyed) and keys copied in (pushRecord) stay what they were while
// the arena grows under them and after the queue empties and is reused;
// each keyed element carries its key's group, and a reused element has
// no record, key or watermark of the one before it.
func TestInboxKeys(t *testing.T) {
	var q inbox
	appendKey := func(dst []byte, v any) []byte { return append(dst, v.(string)...) }
	type want struct {
		key   string
		keyed bool
	}
	for round := range 3 {
		var wants []want
		for i := range 700 {
			// Keys up to 300 bytes: the arena outgrows its first arrays.
			k := fmt.Sprintf("r%d-%d-%s", round, i, bytes.Repeat([]byte{'x'}, i%300))
			switch i % 3 {
			case 0:
				q.pushRecord(i%4, Record{Value: k}, []byte(k), state.KeyGroupFor([]byte(k), 128))
				wants = append(wants, want{k, true})
			case 1:
				q.pushKeyed(i%4, Record{Value: k, Timestamp: int64(i), HasTimestamp: true}, appendKey, 128)
				wants = append(wants, want{k, true})
			default:
				q.pushRecord(i%4, Record{Value: k}, nil, 0)
				wants = append(wants, want{k, false})
			}
			if i%97 == 0 {
				q.pushWatermark(1, int64(i))
				wants = append(wants, want{"", false})
			}
		}
		if q.len() != len(wants) {
			t.Fatalf("round %d: %d queued, want %d", round, q.len(), len(wants))
		}
		for i, w := range wants {
			el := q.peek()
			q.head++ // taken in place, as pickRecord does
			if w.key == "" {
				if el.kind != elWatermark || el.key != nil || el.rec.Value != nil {
					t.Fatalf("round %d element %d: %+v, want a bare watermark", round, i, el)
				}
				continue
			}
			if el.kind != elRecord || el.rec.Value != w.key {
				t.Fatalf("round %d element %d: %+v, want the record %q", round, i, el, w.key)
			}
			switch {
			case !w.keyed && el.key != nil:
				t.Fatalf("round %d element %d: key %q, want none", round, i, el.key)
			case w.keyed && string(el.key) != w.key:
				t.Fatalf("round %d element %d: key %q, want %q", round, i, el.key, w.key)
			case w.keyed && int(el.kg) != state.KeyGroupFor([]byte(w.key), 128):
				t.Fatalf("round %d element %d: key group %d, want %d", round, i, el.kg, state.KeyGroupFor([]byte(w.key), 128))
			case !w.keyed && el.wm != 0:
				t.Fatalf("round %d element %d: watermark %d on a record", round, i, el.wm)
			}
		}
		if q.len() != 0 {
			t.Fatalf("round %d: %d left", round, q.len())
		}
	}
}
