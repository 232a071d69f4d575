package core

import "testing"

func TestReadableExcerpt(t *testing.T) {
	for in, want := range map[string]bool{
		"SSH-2.0-OpenSSH_9.2": true, "HTTP/1.1 2000 OK": true, "ok": true, "1234": true,
		`|\`: false, "yΣ": false, "\x8f\x01abc": false, "abc\x00": false, "42": false,
	} {
		if got := ReadableExcerpt([]byte(in)); got != want {
			t.Errorf("ReadableExcerpt(%q) = %v, want %v", in, got, want)
		}
	}
}
