package query

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// runeJSONString is the rune-by-rune encoder appendJSONString replaced: the
// model it must agree with byte for byte.
func runeJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			b = append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

var jsonStringCases = []string{
	"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr", "\x00\x01\x1f\x7f",
	"<html> & co", "caf\u00e9 \U0001F600", "line\u2028para\u2029end", "bad \xff\xfe utf8 \xe2\x82",
	"\ufffd already", strings.Repeat("long run of plain text ", 20) + "\n",
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range jsonStringCases {
		checkJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCases {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

// checkJSONString: the bytes are the model's, after what b held, and a JSON
// string that decodes to s with invalid UTF-8 replaced.
func checkJSONString(t *testing.T, s string) {
	prefix := []byte("x:")
	got := appendJSONString(append([]byte(nil), prefix...), s)
	want := runeJSONString(append([]byte(nil), prefix...), s)
	if string(got) != string(want) {
		t.Fatalf("%q: %q, want %q", s, got, want)
	}
	var back string
	if err := json.Unmarshal(got[len(prefix):], &back); err != nil {
		t.Fatalf("%q: %q is not a JSON string: %v", s, got, err)
	}
	// Each byte of invalid UTF-8 is one U+FFFD, as ranging over s gives.
	var runes []rune
	for _, r := range s {
		runes = append(runes, r)
	}
	if back != string(runes) {
		t.Fatalf("%q decodes to %q, want %q", s, back, string(runes))
	}
}

// BenchmarkAppendJSONString encodes the same mostly plain strings (the
// values of a query's text columns) with appendJSONString and with the
// rune-by-rune encoder it replaced (baseline), into a reused buffer.
func BenchmarkAppendJSONString(b *testing.B) {
	strs := []string{"key_0001234", "customer_0042", "{\"product\":\"p17\",\"amount\":340}", "caf\u00e9 au lait", "a longer description of an order, with punctuation; and more"}
	n := 0
	for _, s := range strs {
		n += len(s)
	}
	for _, v := range []struct {
		name string
		fn   func([]byte, string) []byte
	}{{"runs", appendJSONString}, {"baseline-runes", runeJSONString}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf = buf[:0]
				for _, s := range strs {
					buf = v.fn(buf, s)
				}
			}
		})
	}
}
