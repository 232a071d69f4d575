package secret

import (
	"strings"
	"testing"
	"testing/quick"
)

func TestString(t *testing.T) {
	t.Parallel()
	const tok = "eyJhbGciOiJIUzI1NiJ9.payload.sig-0123456789"
	vals := NewValues(tok, "hunter2-long", "ab").List()
	for _, tc := range []struct{ name, in, want string }{
		{"whole", "got " + tok + " back", "got *** back"},
		{"twice", tok + "," + tok, "***,***"},
		{"cut at end", "HTTP 401: got " + tok[:20] + "…", "HTTP 401: got ***…"},
		{"cut at end without mark", "got " + tok[:9], "got ***"},
		{"cut at start", tok[30:] + " trailing", "*** trailing"},
		{"too short to tell", "got " + tok[:7], "got " + tok[:7]},
		{"json escaped", `{"p":"hunter2-long"}`, `{"p":"***"}`},
		{"short value ignored", "ab cd", "ab cd"},
		{"nothing", "plain text", "plain text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := String(tc.in, vals); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Cut masks before cutting: no cut of a text holding a secret shows 8
// bytes of it, wherever the secret sits and wherever the cut falls.
func TestCutNeverShowsASecret(t *testing.T) {
	t.Parallel()
	const tok = "Zq8xK2mN4pL7rT1vW9yB3cD6fG0hJ5kQ"
	vals := NewValues(tok).List()
	f := func(pre uint8, post uint8, max uint8) bool {
		text := strings.Repeat("a", int(pre)) + tok + strings.Repeat("b", int(post))
		got := Cut(text, int(max)+1, vals)
		for i := 0; i+8 <= len(tok); i++ {
			if strings.Contains(got, tok[i:i+8]) {
				t.Logf("Cut(pre %d, post %d, max %d) = %q", pre, post, max, got)
				return false
			}
		}
		return len(got) <= int(max)+1+len("…")
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

// The old order — cut, then mask — leaves the cut secret: the reason for Cut.
func TestCutThenMaskLeaks(t *testing.T) {
	t.Parallel()
	tok := strings.Repeat("k", 10) + "0123456789abcdefghij"
	text := strings.Repeat(" ", 100) + tok
	cut := text[:120]
	if strings.Contains(strings.ReplaceAll(cut, tok, Mask), tok[:20]) == false {
		t.Fatal("the premise is wrong: cutting first should keep a prefix")
	}
	if got := Cut(text, 120, []string{tok}); strings.Contains(got, tok[:8]) {
		t.Errorf("Cut = %q", got)
	}
}

// FuzzCut: whatever the text and the cut, no 8-byte piece of the secret
// survives, and nothing panics.
func FuzzCut(f *testing.F) {
	f.Add("prefix Zq8xK2mN4pL7rT1vW9yB3cD6 suffix", 20)
	f.Add("Zq8xK2mN4pL7rT1vW9yB3cD6", 5)
	f.Fuzz(func(t *testing.T, text string, max int) {
		const tok = "Zq8xK2mN4pL7rT1vW9yB3cD6"
		if max < 0 || max > 1<<16 {
			return
		}
		got := Cut(text, max, []string{tok})
		if strings.Contains(text, tok) {
			for i := 0; i+8 <= len(tok); i++ {
				if strings.Contains(got, tok[i:i+8]) && !strings.Contains(strings.ReplaceAll(text, tok, ""), tok[i:i+8]) {
					t.Errorf("Cut(%q, %d) = %q shows %q", text, max, got, tok[i:i+8])
				}
			}
		}
	})
}
