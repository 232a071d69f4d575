package core

import "testing"

func TestEscapeBytes(t *testing.T) {
	for _, c := range []struct {
		in, want string
		escaped  bool
	}{
		{"GET /café", "GET /café", false},
		{"GET /caf\xe9", `GET /caf\xe9`, true},
		{"\xff\xfe", `\xff\xfe`, true},
		{"a\\xz", "a\\xz", false},
		{"end\\x", "end\\x", false},
		{"", "", false},
	} {
		got := EscapeBytes(c.in)
		if got != c.want || HasEscapedBytes(got) != c.escaped {
			t.Errorf("EscapeBytes(%q) = %q (escaped %v), want %q (%v)", c.in, got, HasEscapedBytes(got), c.want, c.escaped)
		}
	}
}
