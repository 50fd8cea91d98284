package runtime_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"streamdbg/runtime"
	"streamdbg/runtime/internal/optest"
)

// backends runs f once per keyed state backend.
func backends(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range runtime.Backends {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}

func identity(in *runtime.Stream[string]) *runtime.Stream[string] {
	return runtime.Map(in, "map", func(s string) (string, error) { return s, nil }, runtime.UID("map"))
}

func expectOutput(t *testing.T, got, want []optest.Element) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("output:\n got %v\nwant %v", got, want)
	}
}

// watermarkAndStatusForwarding is the body Flink's OneInputStreamTaskTest
// and TwoInputStreamTaskTest share: four channels, watermarks forwarded as
// the minimum over the active ones, statuses forwarded once per change.
// ch maps Flink's (input gate, channel) to the harness's channel number;
// second is the record sent on the last channel.
func watermarkAndStatusForwarding(t *testing.T, h *optest.Harness[string], second string) {
	ch := func(gate, c int) int { return gate*2 + c }
	var want []optest.Element
	check := func() { t.Helper(); expectOutput(t, h.Output(""), want) }

	h.ProcessWatermarkOn(ch(0, 0), 0)
	h.ProcessWatermarkOn(ch(0, 1), 0)
	h.ProcessWatermarkOn(ch(1, 0), 0)
	check() // not every channel has a watermark yet
	h.ProcessWatermarkOn(ch(1, 1), 0)
	want = append(want, optest.WM(0))
	check()

	// records are not held back by watermarks
	if err := h.TryProcessElement(ch(0, 0), "Hello", 0, true); err != nil {
		t.Fatal(err)
	}
	if err := h.TryProcessElement(ch(1, 1), second, 0, true); err != nil {
		t.Fatal(err)
	}
	want = append(want, optest.Rec("Hello", 0), optest.Rec(second, 0))
	check()

	h.ProcessWatermarkOn(ch(0, 0), 4)
	h.ProcessWatermarkOn(ch(0, 1), 3)
	h.ProcessWatermarkOn(ch(1, 0), 3)
	h.ProcessWatermarkOn(ch(1, 1), 2)
	want = append(want, optest.WM(2)) // the minimum, after the records
	check()

	h.ProcessWatermarkOn(ch(1, 1), 4)
	want = append(want, optest.WM(3))
	check()

	h.ProcessWatermarkOn(ch(0, 1), 4)
	h.ProcessWatermarkOn(ch(1, 0), 4)
	want = append(want, optest.WM(4))
	check()

	// idle channels do not count for the minimum
	h.ProcessStatus(ch(0, 1), true)
	h.ProcessStatus(ch(1, 0), true)
	h.ProcessWatermarkOn(ch(0, 0), 6)
	h.ProcessWatermarkOn(ch(1, 1), 5)
	h.ProcessStatus(ch(1, 1), true)
	want = append(want, optest.WM(5), optest.WM(6))
	check()

	// all idle: the operator's idle status is forwarded
	h.ProcessStatus(ch(0, 0), true)
	want = append(want, optest.Idle)
	check()

	// active again: forwarded once
	h.ProcessStatus(ch(1, 0), false)
	h.ProcessStatus(ch(0, 1), false)
	want = append(want, optest.Active)
	check()

	records := 0
	for _, e := range h.Output("") {
		if e.Kind == optest.Record {
			records++
		}
	}
	if records != 2 {
		t.Fatalf("%d records in the output, want 2", records)
	}
}

// TestOneInputStreamTaskTest ports the watermark forwarding cases of
// Flink's OneInputStreamTaskTest.
func TestOneInputStreamTaskTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWatermarkAndStreamStatusForwarding": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := optest.New(t, optest.Config{Channels: 4, Backend: backend}, func(h *optest.Harness[string], in *runtime.Stream[string]) {
					optest.Collect(h, "", identity(in))
				})
				watermarkAndStatusForwarding(t, h, "Ciao")
			})
		},
		"testWatermarksNotForwardedWithinChainWhenIdle": func(t *testing.T) {
			backends(t, watermarksNotForwardedWithinChainWhenIdle)
		},
	})
}

// TestTwoInputStreamTaskTest ports the watermark forwarding case of Flink's
// TwoInputStreamTaskTest. Until streamdbg has two-input operators the two
// inputs are two unioned streams of one operator: one valve over the
// channels of both inputs gives the same forwarded watermarks and statuses
// as Flink's valve per input combined by the operator.
func TestTwoInputStreamTaskTest(t *testing.T) {
	optest.Run(t, map[string]func(t *testing.T){
		"testWatermarkAndWatermarkStatusForwarding": func(t *testing.T) {
			backends(t, func(t *testing.T, backend string) {
				h := optest.New(t, optest.Config{Inputs: []int{2, 2}, Backend: backend}, func(h *optest.Harness[string], in *runtime.Stream[string]) {
					optest.Collect(h, "", identity(in))
				})
				watermarkAndStatusForwarding(t, h, "42")
			})
		},
	})
}

const (
	expectWatermarks = "EXPECT_FORWARDED_WATERMARKS_MARKER"
	noWatermarks     = "NO_FORWARDED_WATERMARKS_MARKER"
)

// failOnWatermark passes records on and fails when it gets a watermark
// after the no-watermarks marker (until the expect marker).
type failOnWatermark struct{ refuse bool }

func (*failOnWatermark) Open(*runtime.OperatorContext) error { return nil }
func (*failOnWatermark) Close() error                        { return nil }

func (f *failOnWatermark) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	switch r.Value.(string) {
	case expectWatermarks:
		f.refuse = false
	case noWatermarks:
		f.refuse = true
	}
	ctx.Emit(r.Value)
	return nil
}

func (f *failOnWatermark) ProcessWatermark(_ *runtime.OperatorContext, wm int64) error {
	if f.refuse {
		return errors.New("watermark " + strconv.FormatInt(wm, 10) + " forwarded while idle")
	}
	return nil
}

// watermarkGenerator emits each numeric record's value as a watermark
// after the record and forwards none of its input's watermarks.
type watermarkGenerator struct{}

func (watermarkGenerator) Open(*runtime.OperatorContext) error { return nil }
func (watermarkGenerator) Close() error                        { return nil }
func (watermarkGenerator) OwnsWatermarks() bool                { return true }

func (watermarkGenerator) ProcessElement(ctx *runtime.OperatorContext, r runtime.Record) error {
	v := r.Value.(string)
	ctx.Emit(v)
	if v != expectWatermarks && v != noWatermarks {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		ctx.EmitWatermark(n)
	}
	return nil
}

func watermarksNotForwardedWithinChainWhenIdle(t *testing.T, backend string) {
	h := optest.New(t, optest.Config{Backend: backend}, func(h *optest.Harness[string], in *runtime.Stream[string]) {
		head := runtime.AddOperator[string, string](in, "head", func() runtime.Operator { return &failOnWatermark{} }, runtime.UID("head"))
		gen := runtime.AddOperator[string, string](head, "generate", func() runtime.Operator { return watermarkGenerator{} }, runtime.UID("generate"))
		tail := runtime.AddOperator[string, string](gen, "tail", func() runtime.Operator { return &failOnWatermark{} }, runtime.UID("tail"))
		optest.Collect(h, "", tail)
	})
	if n := len(h.Executor().Plan().Tasks); n != 3 {
		t.Fatalf("plan has %d tasks, want source, router and one chain head -> generate -> tail:\n%s", n, h.Executor().Plan())
	}
	in := func(v string) { t.Helper(); h.ProcessElementNoTS(v) }

	// active: generated watermarks are forwarded, the input's are not
	in(expectWatermarks)
	in("10")
	h.ProcessWatermark(15)
	in("20")
	in("30")
	want := []optest.Element{optest.RecNoTS(expectWatermarks), optest.RecNoTS("10"), optest.WM(10),
		optest.RecNoTS("20"), optest.WM(20), optest.RecNoTS("30"), optest.WM(30)}
	expectOutput(t, h.Output(""), want)

	// idle: no watermark reaches any operator of the chain
	h.ProcessStatus(0, true)
	in(noWatermarks)
	in("40")
	in("50")
	in("60")
	h.ProcessWatermark(65)
	want = append(want, optest.Idle, optest.RecNoTS(noWatermarks), optest.RecNoTS("40"), optest.RecNoTS("50"), optest.RecNoTS("60"))
	expectOutput(t, h.Output(""), want)

	// active again: generated watermarks are forwarded again
	h.ProcessStatus(0, false)
	in(expectWatermarks)
	in("70")
	in("80")
	in("90")
	want = append(want, optest.Active, optest.RecNoTS(expectWatermarks), optest.RecNoTS("70"), optest.WM(70),
		optest.RecNoTS("80"), optest.WM(80), optest.RecNoTS("90"), optest.WM(90))
	expectOutput(t, h.Output(""), want)

	records := 0
	for _, e := range h.Output("") {
		if e.Kind == optest.Record {
			records++
		}
	}
	if records != 12 {
		t.Fatalf("%d records, want 12", records)
	}
}
