// Package querytest_test runs the query language end to end: the orders
// job run in a session, its live state and a savepoint of it queried with
// the same transcripts (testdata/), and BenchmarkQuery over a savepoint of
// a million keyed entries or more (STREAMDBG_BENCH_ENTRIES). It holds only
// tests: it may import fixtures, runtime, runtime/session, savepoint and
// query, which query's own tests may not.
package querytest_test
