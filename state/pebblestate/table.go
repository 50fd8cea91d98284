package pebblestate

import (
	"bytes"
	"fmt"

	"streamdbg/state"
)

// table is one registered keyed state. Its buffers make the hot path (Get,
// Put under the current key) allocation-free apart from the codecs.
type table struct {
	b    *Backend
	id   uint16
	desc state.StateDesc
	kind state.Kind
	kbuf []byte // composite key of the current access
	vbuf []byte // encoded value of the current access
	ebuf []byte // one encoded list element
}

var _ state.Table = (*table)(nil)

func (t *table) Desc() state.StateDesc { return t.desc }

// keyFor builds [id][key group][esc key][esc ns] for the current key in
// t.kbuf.
func (t *table) keyFor(ns []byte) ([]byte, error) {
	b := t.b
	if b.closed {
		return nil, errClosed
	}
	if !b.hasKey {
		return nil, fmt.Errorf("pebblestate: state %q accessed with no current key", t.desc.Meta.StateName)
	}
	if !b.groups.Contains(b.keyGroup) {
		return nil, fmt.Errorf("pebblestate: state %q: key group %d of the current key is outside %s",
			t.desc.Meta.StateName, b.keyGroup, b.groups)
	}
	k := appendPrefix(t.kbuf[:0], t.id, b.keyGroup)
	k = append(k, b.keyEsc...)
	k = appendEscaped(k, ns)
	t.kbuf = k
	return k, nil
}

func (t *table) want(op string, kinds ...state.Kind) error {
	for _, k := range kinds {
		if t.kind == k {
			return nil
		}
	}
	return fmt.Errorf("pebblestate: state %q is %s state; %s is not defined on it", t.desc.Meta.StateName, t.kind, op)
}

func (t *table) decode(what string, v []byte) (any, error) {
	x, err := t.desc.Value.DecodeAny(v)
	if err != nil {
		return nil, fmt.Errorf("pebblestate: state %q: %s: %w", t.desc.Meta.StateName, what, err)
	}
	return x, nil
}

// Get returns the value of a value, reducing or aggregating state.
func (t *table) Get(ns []byte) (any, bool, error) {
	if err := t.want("Get", state.KindValue, state.KindReducing, state.KindAggregating); err != nil {
		return nil, false, err
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return nil, false, err
	}
	return t.getValue(k)
}

func (t *table) getValue(k []byte) (any, bool, error) {
	v, c, ok, err := t.b.get(k)
	if !ok {
		return nil, false, err
	}
	x, err := t.decode("value", v)
	c.Close()
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// Put sets the value of a value, reducing or aggregating state; nil clears
// it, as Flink's update(null).
func (t *table) Put(ns []byte, v any) error {
	if err := t.want("Put", state.KindValue, state.KindReducing, state.KindAggregating); err != nil {
		return err
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return err
	}
	if v == nil {
		return t.b.del(k)
	}
	t.vbuf = t.desc.Value.AppendAny(t.vbuf[:0], v)
	return t.b.set(k, t.vbuf)
}

// ListGet decodes every element of the list.
func (t *table) ListGet(ns []byte) ([]any, error) {
	if err := t.want("ListGet", state.KindList); err != nil {
		return nil, err
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return nil, err
	}
	v, c, ok, err := t.b.get(k)
	if !ok {
		return nil, err
	}
	defer c.Close()
	var out []any
	for len(v) > 0 {
		var elem []byte
		if elem, v, err = nextElement(v); err != nil {
			return nil, fmt.Errorf("pebblestate: state %q: %w", t.desc.Meta.StateName, err)
		}
		x, err := t.decode("list element", elem)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// ListAppend appends one element with a blind merge: the list is not read.
func (t *table) ListAppend(ns []byte, v any) error {
	if err := t.want("ListAppend", state.KindList); err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("pebblestate: state %q: cannot add nil to a list", t.desc.Meta.StateName)
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return err
	}
	t.vbuf = t.appendElementOf(t.vbuf[:0], v)
	return t.b.merge(k, t.vbuf)
}

// appendElementOf appends v as a list element: its length, then its encoding.
func (t *table) appendElementOf(dst []byte, v any) []byte {
	t.ebuf = t.desc.Value.AppendAny(t.ebuf[:0], v)
	return appendElement(dst, t.ebuf)
}

// ListPut replaces the list; an empty list clears it.
func (t *table) ListPut(ns []byte, vs []any) error {
	if err := t.want("ListPut", state.KindList); err != nil {
		return err
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return t.b.del(k)
	}
	t.vbuf = t.vbuf[:0]
	for _, v := range vs {
		if v == nil {
			return fmt.Errorf("pebblestate: state %q: cannot add nil to a list", t.desc.Meta.StateName)
		}
		t.vbuf = t.appendElementOf(t.vbuf, v)
	}
	return t.b.set(k, t.vbuf)
}

// mapKey builds the key of one map entry in t.kbuf.
func (t *table) mapKey(op string, ns, userKey []byte) ([]byte, error) {
	if err := t.want(op, state.KindMap); err != nil {
		return nil, err
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return nil, err
	}
	k = append(k, userKey...)
	t.kbuf = k
	return k, nil
}

// MapGet returns the value under userKey.
func (t *table) MapGet(ns, userKey []byte) (any, bool, error) {
	k, err := t.mapKey("MapGet", ns, userKey)
	if err != nil {
		return nil, false, err
	}
	return t.getValue(k)
}

// MapPut sets the value under userKey; each map entry is its own pebble key.
func (t *table) MapPut(ns, userKey []byte, v any) error {
	k, err := t.mapKey("MapPut", ns, userKey)
	if err != nil {
		return err
	}
	if v == nil {
		return t.b.del(k)
	}
	t.vbuf = t.desc.Value.AppendAny(t.vbuf[:0], v)
	return t.b.set(k, t.vbuf)
}

// MapDelete removes userKey.
func (t *table) MapDelete(ns, userKey []byte) error {
	k, err := t.mapKey("MapDelete", ns, userKey)
	if err != nil {
		return err
	}
	return t.b.del(k)
}

// MapRange calls fn for each entry under ns in user key byte order. fn gets
// its own copy of the user key and may write to the table.
func (t *table) MapRange(ns []byte, fn func(userKey []byte, v any) bool) error {
	if err := t.want("MapRange", state.KindMap); err != nil {
		return err
	}
	k, err := t.keyFor(ns)
	if err != nil {
		return err
	}
	var rerr error
	err = t.b.scan(bytes.Clone(k), func(key, val []byte) bool {
		x, err := t.decode("map value", val)
		if err != nil {
			rerr = err
			return false
		}
		return fn(bytes.Clone(key[len(k):]), x)
	})
	if err != nil {
		return err
	}
	return rerr
}

// Clear removes everything under ns for the current key.
func (t *table) Clear(ns []byte) error {
	k, err := t.keyFor(ns)
	if err != nil {
		return err
	}
	if t.kind != state.KindMap {
		return t.b.del(k)
	}
	return t.b.deletePrefix(bytes.Clone(k))
}

// MergeNamespaces folds sources into target and clears the sources.
func (t *table) MergeNamespaces(target []byte, sources [][]byte) error {
	tk, err := t.keyFor(target)
	if err != nil {
		return err
	}
	tk = bytes.Clone(tk)
	switch t.kind {
	case state.KindValue, state.KindReducing, state.KindAggregating:
		if t.desc.Merge == nil {
			return fmt.Errorf("pebblestate: merge namespaces of state %q: %s state has no merge function", t.desc.Meta.StateName, t.kind)
		}
		return t.mergeValues(tk, target, sources)
	case state.KindList:
		for _, src := range sources {
			if bytes.Equal(src, target) {
				continue
			}
			sk, err := t.keyFor(src)
			if err != nil {
				return err
			}
			v, c, ok, err := t.b.get(sk)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			// INVARIANT: a list value is a concatenation of elements, so
			// merging it whole appends all of source's elements.
			err = t.b.merge(tk, v)
			c.Close()
			if err != nil {
				return err
			}
			if err := t.b.del(sk); err != nil {
				return err
			}
		}
		return nil
	case state.KindMap:
		for _, src := range sources {
			if bytes.Equal(src, target) {
				continue
			}
			sk, err := t.keyFor(src)
			if err != nil {
				return err
			}
			sk = bytes.Clone(sk)
			var kbuf []byte
			var werr error
			err = t.b.scan(sk, func(key, val []byte) bool {
				kbuf = append(append(kbuf[:0], tk...), key[len(sk):]...)
				if werr = t.b.set(kbuf, val); werr == nil {
					werr = t.b.del(key)
				}
				return werr == nil
			})
			if err != nil {
				return err
			}
			if werr != nil {
				return werr
			}
		}
		return t.b.maybeCommit()
	}
	return t.want("MergeNamespaces")
}

func (t *table) mergeValues(tk, target []byte, sources [][]byte) error {
	acc, ok, err := t.getValue(tk)
	if err != nil {
		return err
	}
	for _, src := range sources {
		if bytes.Equal(src, target) {
			continue
		}
		sk, err := t.keyFor(src)
		if err != nil {
			return err
		}
		v, found, err := t.getValue(sk)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if ok {
			acc = t.desc.Merge(acc, v)
		} else {
			acc, ok = v, true
		}
		if err := t.b.del(sk); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	t.vbuf = t.desc.Value.AppendAny(t.vbuf[:0], acc)
	return t.b.set(tk, t.vbuf)
}
