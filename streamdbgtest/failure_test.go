package streamdbgtest_test

import (
	"errors"
	"strings"
	"testing"

	rt "streamdbg/runtime"
	"streamdbg/state"
	"streamdbg/streamdbgtest"
)

var errNegative = errors.New("negative amount")

// balance keeps a running balance per account; a negative amount is an
// error, an amount of 13 a panic.
type balance struct{ sum *state.ValueState[int64] }

func (b *balance) Open(ctx rt.RuntimeContext) (err error) {
	b.sum, err = state.Value("balance", state.Int64).Bind(ctx)
	return err
}

func (b *balance) Close() error { return nil }

func (b *balance) Map(amount int64) (int64, error) {
	switch {
	case amount < 0:
		return 0, errNegative
	case amount == 13:
		panic("unlucky")
	}
	s, _, err := b.sum.Value()
	if err != nil {
		return 0, err
	}
	return s + amount, b.sum.Update(s + amount)
}

func balanceHarness(t testing.TB) *streamdbgtest.Harness[string, int64, int64] {
	return streamdbgtest.Keyed(t, func(in *rt.KeyedStream[string, int64]) *rt.Stream[int64] {
		return rt.RichMap(in, "balance", &balance{}, rt.UID("balance"))
	}, func(int64) string { return "acct" })
}

// TestExpectFailure: a test asserts that its function rejects a record:
// the failure names the operator, the record and the key and wraps the
// function's error (or the panic), and the state the failure left is
// read back (before: any job failure failed the test, with no way to
// expect one).
func TestExpectFailure(t *testing.T) {
	h := balanceHarness(t)
	h.Push(5)
	f := h.ExpectFailure(func() { h.Push(-1) })
	if !errors.Is(f, errNegative) || f.Operator != "balance" || f.Record != "-1" || f.Key != `"acct"` {
		t.Fatalf("failure %+v (%v)", f, f)
	}
	if got := h.ReadAll(); len(got) != 1 || got[0] != 5 {
		t.Fatalf("output %v, want the 5 before the failure", got)
	}
	if n, _ := streamdbgtest.ValueState[int64](h.Driver, "balance", "balance").Get("acct"); n != 5 {
		t.Fatalf("balance after the failure %d, want 5", n)
	}

	p := balanceHarness(t)
	if f := p.ExpectFailure(func() { p.Push(13) }); !strings.Contains(f.Error(), "unlucky") || f.Stack == "" {
		t.Fatalf("panic failure %v, stack %q", f, f.Stack)
	}

	for _, c := range []struct {
		name string
		body func(h *streamdbgtest.Harness[string, int64, int64])
		want string
	}{
		{"no failure", func(h *streamdbgtest.Harness[string, int64, int64]) { h.ExpectFailure(func() { h.Push(1) }) },
			`ExpectFailure: job "harness" did not fail`},
		{"push after the failure", func(h *streamdbgtest.Harness[string, int64, int64]) {
			h.ExpectFailure(func() { h.Push(-1) })
			h.Push(1)
		}, `failed (operator "balance"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := fatal(t, func(ft testing.TB) { c.body(balanceHarness(ft)) })
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "takes no more input") && c.name != "no failure" {
				t.Fatalf("%q does not say %q", msg, c.want)
			}
		})
	}
}
