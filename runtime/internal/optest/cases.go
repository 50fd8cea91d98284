package optest

import (
	"slices"
	"testing"
)

// Run runs each case as a subtest named after its Flink test method, in
// name order.
func Run(t *testing.T, cases map[string]func(t *testing.T)) {
	t.Helper()
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t.Run(n, cases[n])
	}
}
