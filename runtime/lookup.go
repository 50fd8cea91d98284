package runtime

import (
	"bytes"
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"streamdbg/state"
)

// KeyedState is one keyed state of one operator of an executor, read by
// key between steps: what typed readers of state in tests
// (streamdbgtest) are built on. Queries read the same state as rows.
type KeyedState struct {
	e    *Executor
	info *OperatorInfo
	name string
	// Desc is the state as the operator declared it: kind and codecs.
	Desc state.StateDesc
	// KeyType is the Go type of the operator's keys (nil when unknown).
	KeyType reflect.Type
}

// operatorNamed finds an operator of the plan by name; the error lists
// the operators there are.
func (e *Executor) operatorNamed(name string) (*OperatorInfo, error) {
	for _, o := range e.plan.Operators {
		if o.Name == name {
			return o, nil
		}
	}
	names := make([]string, len(e.plan.Operators))
	for i, o := range e.plan.Operators {
		names[i] = fmt.Sprintf("%q", o.Name)
	}
	return nil, fmt.Errorf("runtime: the job has no operator %q; its operators are %s", name, strings.Join(names, ", "))
}

// KeyedState returns the keyed state stateName of the operator named
// operator, as the operator declared it.
func (e *Executor) KeyedState(operator, stateName string) (*KeyedState, error) {
	info, err := e.operatorNamed(operator)
	if err != nil {
		return nil, err
	}
	if !info.Keyed {
		return nil, fmt.Errorf("runtime: operator %q has no keyed state: its input is not keyed", operator)
	}
	insts := e.instances(info)
	for _, inst := range insts {
		if t, ok := inst.tables[stateName]; ok {
			ks := &KeyedState{e: e, info: info, name: stateName, Desc: t.Desc()}
			if len(info.node.inputs) > 0 {
				ks.KeyType = info.node.inputs[0].key.Type
			}
			return ks, nil
		}
	}
	var names []string
	for _, inst := range insts {
		for n := range inst.tables {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("runtime: operator %q declared no keyed state %q (it declared none)", operator, stateName)
	}
	return nil, fmt.Errorf("runtime: operator %q declared no keyed state %q; it declared %s", operator, stateName, strings.Join(quoteAll(names), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// At calls fn with the state's table under key (a value of the operator's
// key type), in the subtask that holds key: fn reads with the table's Get,
// ListGet, MapGet or MapRange. The backend's current key is put back after.
func (k *KeyedState) At(key any, fn func(t state.Table) error) error {
	if k.KeyType != nil && reflect.TypeOf(key) != k.KeyType {
		return fmt.Errorf("runtime: operator %q: key %v is a %T, but the operator's keys are %s", k.info.Name, key, key, k.KeyType)
	}
	kb, kg, inst, err := k.e.locateKey(k.info, key)
	if err != nil {
		return err
	}
	t, ok := inst.tables[k.name]
	if !ok {
		return fmt.Errorf("runtime: operator %q subtask %d declared no keyed state %q", k.info.Name, inst.ctx.st.index, k.name)
	}
	prevKey, prevKG := inst.keyed.CurrentKey()
	prevKey = bytes.Clone(prevKey)
	inst.keyed.SetCurrentKey(kb, kg)
	defer inst.keyed.SetCurrentKey(prevKey, prevKG)
	return fn(t)
}

// locateKey encodes key with the operator's key codec and finds the
// instance that holds its key group.
func (e *Executor) locateKey(info *OperatorInfo, key any) ([]byte, int, *opInstance, error) {
	codec := info.node.inputs[0].key.Codec
	var kb []byte
	if err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("runtime: operator %q: key %v (%T) cannot be encoded as %s: %v", info.Name, key, key, codec.TypeName(), r)
			}
		}()
		kb = codec.AppendAny(nil, key)
		return nil
	}(); err != nil {
		return nil, 0, nil, err
	}
	kg := state.KeyGroupFor(kb, e.plan.MaxParallelism)
	insts := e.instances(info)
	return kb, kg, insts[state.SubtaskFor(e.plan.MaxParallelism, len(insts), kg)], nil
}

// TimerEntry is a timer of an operator, its key and namespace decoded to
// their Go types.
type TimerEntry struct {
	Subtask   int
	KeyGroup  int
	Domain    TimeDomain
	Timestamp int64
	Key       any
	Namespace any // nil for the void namespace
}

// Timers lists the timers of the operator named operator, event time
// first, each domain in firing order (timestamp, key group, key).
func (e *Executor) Timers(operator string) ([]TimerEntry, error) {
	info, err := e.operatorNamed(operator)
	if err != nil {
		return nil, err
	}
	if !info.Keyed {
		return nil, nil
	}
	type sorted struct {
		TimerEntry
		key []byte
	}
	var all []sorted
	for _, inst := range e.instances(info) {
		rng := inst.ctx.st.groups
		for kg := rng.Start; kg <= rng.End; kg++ {
			for en, err := range inst.keyed.Entries(kg, "") {
				if err != nil {
					return nil, fmt.Errorf("runtime: timers of operator %q: %w", operator, err)
				}
				dom := state.TimerDomain(en.State)
				if dom == "" {
					continue
				}
				ts, err := state.Int64.Decode(en.UserKey)
				if err != nil {
					return nil, fmt.Errorf("runtime: timers of operator %q: timestamp: %w", operator, err)
				}
				t := TimerEntry{Subtask: inst.ctx.st.index, KeyGroup: en.KeyGroup, Timestamp: ts, Domain: EventTime}
				if dom == "processing" {
					t.Domain = ProcessingTime
				}
				if t.Key, err = inst.keyCodec.DecodeAny(en.Key); err != nil {
					return nil, fmt.Errorf("runtime: timers of operator %q: key: %w", operator, err)
				}
				if ns := info.node.timerNamespace; ns != nil && len(en.Namespace) > 0 {
					if t.Namespace, err = ns.DecodeAny(en.Namespace); err != nil {
						return nil, fmt.Errorf("runtime: timers of operator %q: namespace: %w", operator, err)
					}
				}
				all = append(all, sorted{t, bytes.Clone(en.Key)})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b sorted) int {
		return cmp.Or(cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Timestamp, b.Timestamp),
			cmp.Compare(a.KeyGroup, b.KeyGroup), bytes.Compare(a.key, b.key))
	})
	out := make([]TimerEntry, len(all))
	for i, s := range all {
		out[i] = s.TimerEntry
	}
	return out, nil
}
