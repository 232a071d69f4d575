package metrics

import "testing"

func TestNormalizeMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"read tcp 127.0.0.1:54321->127.0.0.1:8080: read: connection reset by peer", "read tcp 127.0.0.1:8080: read: connection reset by peer"},
		{"reading response body: read tcp 127.0.0.1:40112->127.0.0.1:8080: read: connection reset by peer",
			"reading response body: read tcp 127.0.0.1:8080: read: connection reset by peer"},
		{"dial tcp 127.0.0.1:1: connect: connection refused", "dial tcp 127.0.0.1:1: connect: connection refused"},
		{"sending request: write tcp [::1]:5123->[::1]:80: write: broken pipe", "sending request: write tcp [::1]:80: write: broken pipe"},
		{"dial tcp: lookup x.test on 127.0.0.53:53: no such host", "dial tcp: lookup x.test on 127.0.0.53:53: no such host"},
		{`reading response head: malformed response: bad status line "\x8f\x01\xfe\x92\x00\x17abc"`,
			"reading response head: malformed response: bad status line (binary data)"},
		{`reading response head: malformed response: bad status line "SSH-2.0-OpenSSH_9.2"`,
			`reading response head: malformed response: bad status line "SSH-2.0-OpenSSH_9.2"`},
		{"HTTP 503: try again", "HTTP 503: try again"},
		{`body does not contain "ok"`, `body does not contain "ok"`},
		{"Non HTTP response code: java.net.SocketException", "Non HTTP response code: java.net.SocketException"},
	} {
		if got := NormalizeMessage(tc.in); got != tc.want {
			t.Errorf("NormalizeMessage(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// Messages that differ only by the ephemeral port are one.
	a := NewAgg()
	for port := 40000; port < 40500; port++ {
		a.AddError(ErrKey{Class: 3, Status: 200, Message: "reading response body: read tcp 127.0.0.1:" +
			itoa(port) + "->127.0.0.1:8080: read: connection reset by peer"}, 1)
	}
	if len(a.Errs) != 1 {
		t.Errorf("500 resets grouped into %d entries, want 1", len(a.Errs))
	}
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func BenchmarkNormalizeMessageUnchanged(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = NormalizeMessage("HTTP 503: Service Unavailable")
	}
}

// FuzzNormalizeMessage: never panics, is idempotent (a normalised message
// groups with itself), and never grows a message by more than the
// "(binary data)" marks it puts in.
func FuzzNormalizeMessage(f *testing.F) {
	f.Add("read tcp 127.0.0.1:54321->127.0.0.1:8080: read: connection reset by peer")
	f.Add(`malformed response: bad status line "\x8f\x01"`)
	f.Add("write tcp [::1]:5->[::1]:80: broken pipe")
	f.Fuzz(func(t *testing.T, m string) {
		n := NormalizeMessage(m)
		if NormalizeMessage(n) != n {
			t.Errorf("not idempotent: %q → %q → %q", m, n, NormalizeMessage(n))
		}
	})
}
