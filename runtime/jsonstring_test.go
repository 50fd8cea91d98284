package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"streamdbg/runtime"
)

// marshalString is what encoding/json writes for s: the expected bytes.
func marshalString(t testing.TB, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAppendJSONStringMatchesMarshal(t *testing.T) {
	cases := []string{
		"", "word", "straße", "流", "данные", `say "hi"`, `back\slash`,
		"\x00\x01\x1f", "\b\f\n\r\t", "<a href='x'>&amp;</a>", "\x7f",
		"line\u2028sep\u2029", "\xff", "a\xc3", "\xed\xa0\x80", "ok\xe2\x82", "🙂 emoji",
		strings.Repeat("ab", 100) + "\x02",
	}
	for b := 0; b < 256; b++ {
		cases = append(cases, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for _, s := range cases {
		got := string(runtime.AppendJSONString([]byte("prefix"), s))
		want := "prefix" + marshalString(t, s)
		if got != want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
	// strconv.AppendQuote, which the example jobs used before, is not
	// JSON: the case this test exists for.
	var v string
	if err := json.Unmarshal(runtime.AppendJSONString(nil, "a\x01\a"), &v); err != nil || v != "a\x01\a" {
		t.Errorf("round trip of a control character: %q, %v", v, err)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00", "\u2028", "\xff\xfe", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := runtime.AppendJSONString(nil, s)
		if want := marshalString(t, s); string(got) != want {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("AppendJSONString(%q) is not UTF-8: %q", s, got)
		}
	})
}

// BenchmarkAppendJSONString encodes the same words both ways into the same
// bytes: AppendJSONString into a reused buffer, and json.Marshal (baseline,
// which allocates its result) appended to a reused buffer.
func BenchmarkAppendJSONString(b *testing.B) {
	words := []string{"flink", "state", "w1a2b", "straße", "данные", "checkpoint", "a", "key_662"}
	var buf []byte
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			for _, w := range words {
				buf = runtime.AppendJSONString(buf[:0], w)
			}
		}
	})
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			for _, w := range words {
				m, _ := json.Marshal(w)
				buf = append(buf[:0], m...)
			}
		}
	})
}
