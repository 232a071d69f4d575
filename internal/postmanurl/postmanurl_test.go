package postmanurl

import (
	"bytes"
	"testing"
)

// The wants are what newman 6.2.2's own modules produce for the same text
// (postman-collection's Url parsed twice, as the runtime does after
// substituting variables, then postman-url-encoder's toNodeUrl; the form
// encoding through Node's querystring and postman-request's RFC 3986 pass).
// wiretest.TestPostmanEncodingMatchesNode recomputes them with the real
// modules over these and random texts.
var urlCases = []struct{ in, want string }{
	{"http://Example.COM/a b/c|d^e[f]%zz%2F/ü?x=1 2&y=a+b&z=%&w=\\\\&q=\"'<>`{}|^#frag",
		"http://example.com/a%20b/c|d^e[f]%zz%2F/%C3%BC?x=1%202&y=a+b&z=%&w=\\\\&q=%22%27%3C%3E`{}|^"},
	{"example.com", "http://example.com/"},
	{"  http:\\\\\\\\h\\\\p\\\\q?a\\\\b", "http://h//p//q?a\\\\b"},
	{"http://h?", "http://h/?"},
	{"http://h/p?&a&&b=", "http://h/p?&a&&b="},
	{"HTTPS://h:8080/x?a=ü%41", "https://h:8080/x?a=%C3%BC%41"},
	{"http://bücher.de/p", "http://xn--bcher-kva.de/p"},
	{"http://u:p@h/p", "http://h/p"},
	{"http://h/p:id/x?y#z?w", "http://h/p:id/x?y"},
	{"http:///h/p", "http://h/p"},
	{"http://0/x", "http://0.0.0.0/x"},
	{"http://0x7f.1:80/", "http://127.0.0.1:80/"},
	{"http://1.2.3.4.5/", "http://1.2.3.4.5/"},
	{"http://a%41.test/", "http://aa.test/"},
}

func TestAppendURL(t *testing.T) {
	for _, c := range urlCases {
		if got := string(AppendURL(nil, []byte(c.in))); got != c.want {
			t.Errorf("AppendURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormEscape(t *testing.T) {
	for in, want := range map[string]string{
		"http://Example.COM/a b/c|d^e[f]%zz%2F/ü?x=1 2&y=a+b&z=%&w=\\\\&q=\"'<>`{}|^#frag": "http%3A%2F%2FExample.COM%2Fa%20b%2Fc%7Cd%5Ee%5Bf%5D%25zz%252F%2F%C3%BC%3Fx%3D1%202%26y%3Da%2Bb%26z%3D%25%26w%3D%5C%5C%26q%3D%22%27%3C%3E%60%7B%7D%7C%5E%23frag",
		"a-b.c_d~e!f*g(h)i'j": "a-b.c_d~e%21f%2Ag%28h%29i%27j",
		"":                    "",
	} {
		if got := FormEscapeString(in); got != want {
			t.Errorf("FormEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAppendURLAllocs: the engine calls AppendURL for every request of a
// Postman plan, into a buffer it keeps.
func TestAppendURLAllocs(t *testing.T) {
	for _, in := range []string{"http://api.test/users/42/orders?q=a b&x=1#f", "http://127.0.0.1:8080/a|b?c"} {
		buf, raw := make([]byte, 0, 256), []byte(in)
		if n := testing.AllocsPerRun(100, func() { buf = AppendURL(buf[:0], raw) }); n != 0 {
			t.Errorf("AppendURL(%q) allocates %v times per call, want 0", in, n)
		}
	}
}

// FuzzAppendURL: any text gives a URL that can go on a request line (no
// space, control or non-ASCII byte), with a scheme and a path, and the
// same once more when it has a host (the runtime's encoding is idempotent
// on its output).
func FuzzAppendURL(f *testing.F) {
	for _, c := range urlCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendURL(nil, []byte(s))
		i := bytes.Index(out, []byte("://"))
		if i < 0 || bytes.IndexByte(out[i+3:], '/') < 0 {
			t.Fatalf("AppendURL(%q) = %q: no scheme or path", s, out)
		}
		rest := out[i+3:]
		rest = rest[bytes.IndexByte(rest, '/'):]
		for _, c := range rest {
			if c <= ' ' || c >= 0x7f || c == '#' {
				t.Fatalf("AppendURL(%q) = %q: byte %q on the request line", s, out, c)
			}
		}
		host := out[i+3 : i+3+bytes.IndexByte(out[i+3:], '/')]
		if len(host) == 0 || bytes.ContainsAny(host, "@\\ \t") {
			return // an empty host reads differently once written; user info is left out
		}
		if again := AppendURL(nil, out); !bytes.Equal(again, out) {
			t.Fatalf("AppendURL not idempotent: %q → %q → %q", s, out, again)
		}
	})
}
