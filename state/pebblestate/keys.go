package pebblestate

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"streamdbg/state"
)

// Composite keys (see the package doc):
//
//	keyed state  [state id:2][key group:2][esc key][esc namespace][user key]
//	timers       [state id:2][key group:2][esc key][esc namespace][timestamp:8]
//	timer order  [queue id:2][timestamp:8][key group:2][esc key][esc namespace]
//
// esc is an order-preserving escape: 0x00 becomes 0x00 0xff and the component
// ends with 0x00 0x01. Unlike a length prefix it keeps the composite in
// (key, namespace, user key) byte order, so a key group is read in Entry order
// straight from pebble, with nothing buffered or sorted.

const (
	escByte  = 0x00
	escEsc   = 0xff
	escTerm  = 0x01
	idLen    = 2
	kgLen    = 2
	tsLen    = 8
	maxState = 1<<16 - 1
)

// appendEscaped appends b escaped and terminated.
func appendEscaped(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, escByte)
		if i < 0 {
			dst = append(dst, b...)
			return append(dst, escByte, escTerm)
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, escEsc)
		b = b[i+1:]
	}
}

// cutEscaped decodes one escaped component at the start of k. The component
// aliases k when it holds no escaped byte; otherwise it is appended to buf.
// It returns the component, the rest of k and buf (possibly grown).
func cutEscaped(k, buf []byte) (comp, rest, newBuf []byte, err error) {
	i := bytes.IndexByte(k, escByte)
	if i < 0 || i+1 >= len(k) {
		return nil, nil, buf, fmt.Errorf("pebblestate: unterminated key component: %w", state.ErrCorrupt)
	}
	if k[i+1] == escTerm {
		return k[:i:i], k[i+2:], buf, nil
	}
	start := len(buf)
	for {
		i := bytes.IndexByte(k, escByte)
		if i < 0 || i+1 >= len(k) {
			return nil, nil, buf, fmt.Errorf("pebblestate: unterminated key component: %w", state.ErrCorrupt)
		}
		switch k[i+1] {
		case escTerm:
			buf = append(buf, k[:i]...)
			return buf[start:len(buf):len(buf)], k[i+2:], buf, nil
		case escEsc:
			buf = append(buf, k[:i+1]...)
			k = k[i+2:]
		default:
			return nil, nil, buf, fmt.Errorf("pebblestate: bad escape 0x%02x in key: %w", k[i+1], state.ErrCorrupt)
		}
	}
}

func appendID(dst []byte, id uint16) []byte { return binary.BigEndian.AppendUint16(dst, id) }

// appendPrefix appends [id][key group]: the start of one state's key group.
func appendPrefix(dst []byte, id uint16, kg int) []byte {
	return binary.BigEndian.AppendUint16(appendID(dst, id), uint16(kg))
}

// successor returns the smallest key greater than every key with prefix p,
// appended to dst; nil when p is all 0xff.
func successor(dst, p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			dst = append(dst, p[:i+1]...)
			dst[len(dst)-1]++
			return dst
		}
	}
	return nil
}

// keyParts is a decoded keyed-state composite key (after [id][key group]).
type keyParts struct {
	kg      int
	key, ns []byte
	rest    []byte // user key, timestamp or nothing
}

// splitKey decodes a composite keyed-state key. Components may alias k or buf.
func splitKey(k, buf []byte) (p keyParts, newBuf []byte, err error) {
	if len(k) < idLen+kgLen {
		return p, buf, fmt.Errorf("pebblestate: key of %d bytes: %w", len(k), state.ErrCorrupt)
	}
	p.kg = int(binary.BigEndian.Uint16(k[idLen:]))
	k = k[idLen+kgLen:]
	if p.key, k, buf, err = cutEscaped(k, buf); err != nil {
		return p, buf, err
	}
	if p.ns, k, buf, err = cutEscaped(k, buf); err != nil {
		return p, buf, err
	}
	p.rest = k
	return p, buf, nil
}

// List values are the concatenation of their elements, each as
// [uvarint length][encoded element]; pebble's concatenating merger turns an
// append into a blind Merge of one more element.

func appendElement(dst, elem []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(elem)))
	return append(dst, elem...)
}

// nextElement cuts the first element off a list value.
func nextElement(v []byte) (elem, rest []byte, err error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return nil, nil, fmt.Errorf("pebblestate: list element length at %d bytes before end: %w", len(v), state.ErrCorrupt)
	}
	end := w + int(n)
	return v[w:end:end], v[end:], nil
}
