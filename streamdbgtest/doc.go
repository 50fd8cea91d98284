// Package streamdbgtest drives a stream job from Go tests, over the same
// runtime and session the debugger uses: what TopologyTestDriver is to
// Kafka Streams and the operator test harnesses are to Flink.
//
//	d := streamdbgtest.New(t, job)
//	lines := streamdbgtest.Input[string](d, "Source: lines") // the test feeds this source
//	out := streamdbgtest.Output[Count](d, "out")
//	lines.Push("a b a")                                      // runs through the job before it returns
//	out.ExpectInOrder(Count{"a", 1}, Count{"b", 1}, Count{"a", 2})
//	n, _ := streamdbgtest.ValueState[int64](d, "count", "count").Get("a")
//
// A source taken over with Input reads only what the test pushes, and
// stays open until the test closes it, so inputs can be pushed between
// assertions. The other sources read their own input when the test calls
// Run. Outputs are collected as the job emits them, without tracing;
// readers are typed, and a wrong type argument fails the test with a
// message that names the source, sink or state and both types. Keyed runs
// one keyed function without a job of one's own, as Flink's
// KeyedOneInputStreamOperatorTestHarness does. Snapshot and Restore take
// a savepoint (in memory) and start the job from it, at any parallelism.
// A job failure fails the test, unless the test expects it
// (ExpectFailure). Debug opens the terminal debugger on the current point when the test
// runs with -streamdbg.debug (and a failing test opens it by itself).
//
// Determinism: the driver decides which source reads at each source read
// of the executor, by the read's index; checkpoints keep that index, so
// back, restore and recovery replay the same reads in the same order.
//
// This package never changes the job it is given: the test's inputs
// replace sources through runtime.Options.Sources, for each run.
package streamdbgtest
