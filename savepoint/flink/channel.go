package flink

import "fmt"

// skipChannelState reads past the two channel-state collections of a
// subtask (input channels, then result subpartitions: the in-flight
// records of an unaligned checkpoint, ChannelStateHandleSerializer) and
// lists them on the operator: they are data in transit, not state, and
// this reader does not show them. Each handle: the subtask index (Flink
// 1.15 and later; older versions lack it), two ints (gate and channel, or
// partition and subpartition), an int count of long offsets, a long size,
// a stream handle.
func skipChannelState(d *decoder, op *operatorMeta) {
	// INVARIANT: the retry below rewinds only its own error; one from
	// before (a truncated keyed handle) stands.
	if d.err != nil {
		return
	}
	for _, what := range []string{"input channel", "result subpartition"} {
		start := d.off
		n, ok := skipChannelHandles(d, what, true)
		if !ok && d.err != nil {
			// The layout without the subtask index.
			d.off, d.err = start, nil
			n, _ = skipChannelHandles(d, what, false)
		}
		if d.err != nil {
			return
		}
		if n > 0 {
			op.addUnsupported(fmt.Sprintf("in-flight data of an unaligned checkpoint (%d %s state handles) not shown", n, what))
		}
	}
}

func skipChannelHandles(d *decoder, what string, withSubtask bool) (int, bool) {
	n := d.count(what+" state handle", 4+4+4+8+1)
	for range n {
		if withSubtask {
			d.i32()
		}
		d.i32()
		d.i32()
		d.take(8 * d.count("channel state offset", 8))
		if size := d.i64(); size < 0 && d.err == nil {
			d.fail("%s state handle of %d bytes", what, size)
		}
		h := parseStreamHandle(d, 0)
		if d.err == nil && h == nil {
			d.fail("%s state handle without its stream", what)
		}
		if d.err != nil {
			return 0, false
		}
	}
	return n, d.err == nil
}
