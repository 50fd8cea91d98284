package savepoint

import (
	"fmt"
	"maps"
	"slices"

	"streamdbg/state"
)

// Verify reads every section of every state file, checks it against its
// CRC32C, decodes every entry, checks the block index of every format 2
// section (so that point lookups find what a full read finds), and checks that the entries and bytes of
// each state are what the StateMeta table says: what `savepoint check`
// runs before it calls a savepoint restorable. Errors are marked
// ErrChecksum, state.ErrCorrupt or ErrInvalid and name the file.
func (s *Savepoint) Verify() error {
	type count struct{ entries, bytes int64 }
	for _, op := range s.ops {
		got := map[string]*count{}
		add := func(name string, bytes int64) {
			c := got[name]
			if c == nil {
				c = &count{}
				got[name] = c
			}
			c.entries++
			c.bytes += bytes
		}
		for _, sub := range op.meta.Subtasks {
			if f := sub.Keyed; f != nil {
				count := func(e state.Entry, _ error) bool {
					add(e.State, int64(e.Size()))
					return true
				}
				var sr state.StreamReader
				if _, err := s.scanSections(f, f.Sections, true, func(sec Section, b []byte) (bool, error) {
					if more, err := s.decodeSection(&sr, f, sec, b, count); err != nil || !more {
						return more, err
					}
					return true, s.checkIndex(f, sec, b)
				}); err != nil {
					return err
				}
			}
			if f := sub.Operator; f != nil {
				es, err := s.readOperator(f)
				if err != nil {
					return err
				}
				for _, e := range es {
					add(e.State, int64(len(e.Key)+len(e.Value)))
				}
			}
		}
		// In name order: the same savepoint always names the same state.
		for _, m := range op.states {
			c := got[m.StateName]
			if c == nil {
				c = &count{}
			}
			if m.Entries != c.entries || m.Bytes != c.bytes {
				return fmt.Errorf("%w: operator %s (%s): state %q has %d entries of %d bytes, the StateMeta table says %d and %d", ErrInvalid, op.info.ID, op.info.Name, m.StateName, c.entries, c.bytes, m.Entries, m.Bytes)
			}
			delete(got, m.StateName)
		}
		if names := slices.Sorted(maps.Keys(got)); len(names) > 0 {
			name := names[0]
			return fmt.Errorf("%w: operator %s (%s): %d entries of state %q, which the StateMeta table does not list", ErrInvalid, op.info.ID, op.info.Name, got[name].entries, name)
		}
	}
	return nil
}

// checkIndex checks what point lookups rely on in a format 2 section whose
// bytes b were checked whole: its index's checksum in _metadata, and each
// block's length field and checksum in the index. (decodeSection checked
// that the index describes the blocks.)
func (s *Savepoint) checkIndex(f *KeyedFile, sec Section, b []byte) error {
	if !s.indexed {
		return nil
	}
	path := s.fs.PathJoin(s.dir, f.Name)
	idx := b[int64(len(b))-sec.IndexSize:]
	if got := state.CRC32C(idx); got != sec.IndexCRC32C {
		return fmt.Errorf("savepoint: %s: key group %d: block index at offset %d (%d bytes): %w (crc32c %08x, _metadata says %08x)",
			path, sec.KeyGroup, sec.Offset+sec.Size-sec.IndexSize, sec.IndexSize, ErrChecksum, got, sec.IndexCRC32C)
	}
	if err := state.CheckIndexedGroup(b, sec.Offset, sec.KeyGroup, sec.Entries, sec.IndexSize); err != nil {
		return fmt.Errorf("savepoint: %s: key group %d: %w", path, sec.KeyGroup, err)
	}
	return nil
}
