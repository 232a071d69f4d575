package jsonesc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshal is encoding/json's quoted form of s, with or without HTML escaping.
func marshal(t *testing.T, s string, html bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
}

func check(t *testing.T, s string) {
	t.Helper()
	for _, html := range []bool{false, true} {
		got := `"` + string(Append(nil, s, html)) + `"`
		if want := marshal(t, s, html); got != want {
			t.Fatalf("Append(%q, html %v) = %s, encoding/json %s", s, html, got, want)
		}
	}
}

func TestAppendIsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "a\"b\\c\nd\te\x01f\u2028g é", "<a href='x'>&amp;</a>", "\b\f\r\x00\x1f\x7f",
		"bad \xff\xfe utf8 \xe2\x80", "\u2029end", "日本語"} {
		check(t, s)
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("GET /x")
	f.Add("<&>\u2028\xff\"\\\b\f")
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}
