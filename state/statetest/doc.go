// Package statetest is the conformance suite of keyed state backends: one set
// of datadriven scripts (testdata/, embedded so any package can run them)
// that every state.KeyedBackend must pass with the same transcripts. A
// backend's test calls Run with a constructor; heap and pebble both do.
//
// The scripts drive a backend through its Table and TimerQueue interfaces
// with these commands (arguments in brackets are optional; state= defaults
// to the state registered last, queue= to "event"; ns= is a string
// namespace, ns=(start,end) a window, no ns the void namespace):
//
//	new [max=N] [groups=A-B]             fresh backend (default max=4, all groups)
//	register name= kind= value= [ukey=] [ns=string|window]
//	                                     kinds value list map reducing aggregating;
//	                                     types int64 string float64 bool, avg (aggregating)
//	key k=                               set the current key (its key group is printed)
//	put|get|add [state=] [ns=] [v=]      value, reducing (add sums/concatenates),
//	                                     aggregating (add averages int64 inputs)
//	list-append|list-put v=(...)  list-get
//	map-put uk= v=  map-get uk=  map-delete uk=  map-range [limit=N]
//	clear [state=] [ns=]
//	merge [state=] target= sources=(...)
//	timer-add|timer-delete ts= [ns=] [queue=]  timer-peek  timer-pop [n=N]  timer-len
//	entries [kg=N] [state=]              Entries, decoded by the StateMeta types
//	states                               States, with entry and byte counts
//	snapshot                             Entries of every key group and States, kept
//	restore [groups=A-B] [unfiltered]    a fresh backend restored from the snapshot
//	                                     (key groups in descending order); its
//	                                     entries must equal the snapshot's
//	check-snapshot                       current entries equal the snapshot's?
//
// Errors print as "error", followed by what the suite can check without
// depending on a backend's wording: the Compatible reason of a register that
// changed a type, or "not registered" for state.ErrNotRegistered.
//
// Besides the transcripts the harness asserts on every entries listing:
// strictly increasing state.CompareEntries order, key groups inside the
// backend's range, and each key in the key group state.KeyGroupFor gives it.
//
// Rewrite expected output with `go test ./state/heapstate -rewrite`: the
// on-disk testdata next to this file is then used instead of the embedded
// copy.
package statetest
