package state

import "testing"

// TestOperatorStoreBytes checks that live operator state counts its bytes
// as a savepoint's _metadata does (encoded key plus value per entry), so
// state_meta agrees on live state and on a savepoint of it.
func TestOperatorStoreBytes(t *testing.T) {
	s := NewOperatorStore("0123456789abcdef0123456789abcdef", "src")
	l, err := SplitList(s, "offsets", Int64)
	if err != nil {
		t.Fatal(err)
	}
	l.Update([]int64{4, 5, 6})
	b, err := Broadcast(s, "rules", String, String)
	if err != nil {
		t.Fatal(err)
	}
	b.Put("vip", "gold")
	want := map[string]int64{}
	for _, e := range s.Entries() {
		want[e.State] += int64(len(e.Key) + len(e.Value))
	}
	if want["offsets"] != 24 || want["rules"] != 7 {
		t.Fatalf("entries hold %v bytes, want offsets 24 and rules 7", want)
	}
	check := func(s *OperatorStore) {
		t.Helper()
		for _, m := range s.States() {
			if m.Bytes != want[m.StateName] {
				t.Errorf("%s: %d bytes, want %d", m.StateName, m.Bytes, want[m.StateName])
			}
		}
	}
	check(s)
	restored := NewOperatorStore("0123456789abcdef0123456789abcdef", "src")
	if err := restored.Restore(s.States(), s.Entries()); err != nil {
		t.Fatal(err)
	}
	check(restored) // restored but not declared yet
}
