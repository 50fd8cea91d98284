package state

// WriteRun writes the leading entries of es that have es[0]'s state (all
// of es when they share it) to the current group and returns how many it
// wrote: a caller counting entries per state learns where the state
// changes without comparing every entry's itself. The bytes, the checks
// and the errors are exactly those of WriteEntry called on each entry in
// turn; on an error, n entries were written before the bad one. WriteRun
// neither changes nor retains es.
//
// It is for batches of entries (a backend's EntryBatches): the most common
// entry is encoded in a loop that keeps the writer's fields in locals and
// takes the previous key from es instead of copying every key.
func (w *StreamWriter) WriteRun(es []Entry) (n int, err error) {
	if len(es) == 0 {
		return 0, nil
	}
	if err := w.WriteEntry(&es[0]); err != nil {
		return 0, err
	}
	st := es[0].State
	i := 1
	for i < len(es) {
		// A run of the most common entry, as WriteEntry's fast path
		// encodes it (same conditions, same bytes): a new key of the same
		// state inside an open block, no namespace or user key (nor
		// before), one-byte lengths. w.prevState is st here: es[i-1] was
		// written and has state st.
		if w.blockStart >= 0 && len(w.prevNS)|len(w.prevUK) == 0 {
			b := w.buf
			blockStart, target, kg := w.blockStart, w.target, w.group.KeyGroup
			prev := w.prevKey // the previous entry's key: w.prevKey, then es[j-1].Key
			j := i
			var payload int64
			for j < len(es) {
				e := &es[j]
				k, v := e.Key, e.Value
				if e.State != st || e.KeyGroup != kg || len(k) >= 0x80 || len(v) >= 0x80 || len(e.Namespace)|len(e.UserKey) != 0 {
					break
				}
				shared := commonPrefix(k, prev)
				if shared == len(k) || shared < len(prev) && k[shared] < prev[shared] {
					break // out of order or repeated: WriteEntry says so
				}
				b = append(b, flagKey, byte(shared), byte(len(k)-shared))
				b = append(b, k[shared:]...)
				b = append(b, byte(len(v)))
				b = append(b, v...)
				payload += int64(len(k) + len(v))
				prev = k
				j++
				if len(b)-blockStart >= target {
					break
				}
			}
			if j > i {
				w.buf = b
				w.prevKey = append(w.prevKey[:0], prev...)
				w.group.Entries += int64(j - i)
				w.payload += payload
				i = j
				if len(b)-blockStart >= target {
					w.closeBlock()
					if len(w.buf) >= flushTarget {
						if err := w.flush(); err != nil {
							// As WriteEntry: the entry that
							// filled the buffer failed.
							return i - 1, err
						}
					}
				}
				continue
			}
		}
		e := &es[i]
		if e.State != st {
			break
		}
		if err := w.WriteEntry(e); err != nil {
			return i, err
		}
		i++
	}
	return i, nil
}
