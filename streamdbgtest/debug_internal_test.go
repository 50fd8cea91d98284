package streamdbgtest

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"streamdbg/runtime"
	"streamdbg/tui"
)

// TestDebugOpensAtCurrentPoint: the debugger opens on the job where the
// test is (its position, its state), traced, and the test goes on after
// it quits.
func TestDebugOpensAtCurrentPoint(t *testing.T) {
	job := runtime.NewJob("debugged")
	src := runtime.FromSlice(job, "in", []string(nil), runtime.WatermarkStrategy[string]{}, runtime.UID("in"))
	runtime.JSONSink(runtime.Map(src, "upper", func(s string) (string, error) { return strings.ToUpper(s), nil }, runtime.UID("upper")), "out", runtime.UID("out"))
	d := New(t, job)
	in := Input[string](d, "in")
	out := Output[string](d, "out")
	in.Push("a")
	in.Push("b")
	screen := &syncBuffer{}
	keys, typing := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.debugOn(tui.Options{Input: keys, Output: screen, NoColor: true, Width: 100, Height: 30})
	}()
	// Quit once the screen shows the job where the test left it.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(screen.text(), "record 2") {
		if time.Now().After(deadline) {
			t.Fatalf("the debugger's screen does not show record 2:\n%s", screen.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(screen.text(), "debugged") {
		t.Fatalf("the debugger's screen does not name the job:\n%s", screen.text())
	}
	typing.Write([]byte("q"))
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the debugger did not quit on q")
	}
	typing.Close()
	if !d.sess.Tracing() {
		t.Fatal("the debugger's session is not traced")
	}
	in.Push("c")
	out.ExpectInOrder("A", "B", "C")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.Strip(s.b.String())
}
