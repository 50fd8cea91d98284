package state

// RedistributeOperatorState gives subtask index of parallelism its operator
// state from the per-subtask entries of a snapshot, as Flink's
// RoundRobinOperatorStateRepartitioner does:
//
//   - at the same parallelism every subtask keeps its own split list and
//     broadcast entries;
//   - split lists: the elements of all old subtasks, concatenated in subtask
//     order, are cut into parallelism contiguous runs whose lengths differ by
//     at most one (the first runs are the longer ones);
//   - union lists: every subtask gets every element of every old subtask,
//     also at the same parallelism (Flink's getUnionListState contract);
//   - broadcast maps: new subtask i gets the map of old subtask
//     i mod old parallelism (Flink's repartitionBroadcastState: each
//     subtask reads its own old state, the extra ones of a scale-up read
//     the old ones round-robin), so every old copy is used and all must
//     be equal.
//
// Positions are renumbered from 0 per state.
func RedistributeOperatorState(old [][]OperatorEntry, parallelism, index int) []OperatorEntry {
	same := len(old) == parallelism
	var names []string
	byState := map[string][][]OperatorEntry{}
	kinds := map[string]Kind{}
	for sub, es := range old {
		for _, e := range es {
			if _, ok := byState[e.State]; !ok {
				names = append(names, e.State)
				byState[e.State] = make([][]OperatorEntry, len(old))
			}
			byState[e.State][sub] = append(byState[e.State][sub], e)
			kinds[e.State] = e.Kind
		}
	}
	var out []OperatorEntry
	for _, name := range names {
		per := byState[name]
		if same && kinds[name] != KindUnionList {
			out = append(out, per[index]...)
			continue
		}
		switch kinds[name] {
		case KindBroadcast:
			out = append(out, per[index%len(per)]...)
		case KindUnionList:
			for _, es := range per {
				out = append(out, es...)
			}
		default:
			var all []OperatorEntry
			for _, es := range per {
				all = append(all, es...)
			}
			base, extra := len(all)/parallelism, len(all)%parallelism
			start := index*base + min(index, extra)
			n := base
			if index < extra {
				n++
			}
			out = append(out, all[start:start+n]...)
		}
	}
	return renumber(out)
}

func renumber(es []OperatorEntry) []OperatorEntry {
	pos := map[string]int{}
	for i := range es {
		es[i].Position = pos[es[i].State]
		pos[es[i].State]++
	}
	return es
}
