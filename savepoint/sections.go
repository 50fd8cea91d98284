package savepoint

import (
	"fmt"
	"iter"
	"slices"

	"streamdbg/state"
)

// KeyedSection is one key group of one subtask's keyed file: one group of
// the snapshot stream (state.NewStreamReaderBytes reads it), checked against
// its CRC32C. Tools that work on whole key groups (diff, modify, export)
// read these instead of decoded entries.
type KeyedSection struct {
	Subtask int
	Section
	// File is the keyed file's path, for error messages.
	File string
	// Bytes are the section's bytes, only valid during their iteration step.
	Bytes []byte
}

// KeyedSections yields the sections of one operator whose key groups are in
// groups, in key-group order, reading the next one while the current one is
// used. An operator the savepoint does not hold yields nothing.
func (s *Savepoint) KeyedSections(operatorID string, groups state.KeyGroupRange) iter.Seq2[KeyedSection, error] {
	return func(yield func(KeyedSection, error) bool) {
		op, ok := s.byID[operatorID]
		if !ok || groups.Len() == 0 {
			return
		}
		for _, sub := range op.meta.Subtasks {
			if sub.Keyed == nil || sub.KeyGroups.End < groups.Start || sub.KeyGroups.Start > groups.End {
				continue
			}
			lo, _ := slices.BinarySearchFunc(sub.Keyed.Sections, groups.Start, func(s Section, kg int) int { return s.KeyGroup - kg })
			hi, _ := slices.BinarySearchFunc(sub.Keyed.Sections, groups.End+1, func(s Section, kg int) int { return s.KeyGroup - kg })
			path := s.fs.PathJoin(s.dir, sub.Keyed.Name)
			stopped := false
			_, err := s.scanSections(sub.Keyed, sub.Keyed.Sections[lo:hi], true, func(sec Section, b []byte) (bool, error) {
				if !yield(KeyedSection{Subtask: sub.Index, Section: sec, File: path, Bytes: b}, nil) {
					stopped = true
					return false, nil
				}
				return true, nil
			})
			if err != nil {
				yield(KeyedSection{}, err)
				return
			}
			if stopped {
				return
			}
		}
	}
}

// SectionError names a section in an error about its decoding.
func (k KeyedSection) SectionError(err error) error {
	return fmt.Errorf("savepoint: %s: key group %d: %w", k.File, k.KeyGroup, err)
}
