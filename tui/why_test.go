package tui

import (
	"strings"
	"testing"

	"streamdbg/runtime"
)

// TestWhyKey: in order-windows with partition 3 quiet, the plan shows the
// window subtasks' channels (partition 3's marked as holding them back) and
// y explains the selected window operator's stuck window, naming partition 3.
func TestWhyKey(t *testing.T) {
	m := New(newSession(t, "order-windows", runtime.Options{}), Options{NoColor: true})
	m.SetSize(140, 45)
	press(t, m, "4", "7", "N")
	if m.view.Position != 47 {
		t.Fatalf("47N: position %d (%s)", m.view.Position, m.status)
	}
	view := screen(m.View())
	if !strings.Contains(view, "▸[3] 12:00:03.999") {
		t.Fatalf("the plan does not mark channel [3] at 12:00:03.999 as holding the watermark back:\n%s", view)
	}
	press(t, m, "y")
	view = screen(m.View())
	for _, want := range []string{"has not fired", "partition 3", "holds it back", `{"$idle": true}`} {
		if !strings.Contains(view, want) {
			t.Fatalf("y: the screen lacks %q:\n%s", want, view)
		}
	}
	press(t, m, "esc", "n")
	if view = screen(m.View()); !strings.Contains(view, "[3] 12:00:03.999 idle") {
		t.Fatalf("after {\"$idle\": true} the plan does not show channel [3] idle:\n%s", view)
	}
}
