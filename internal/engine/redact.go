package engine

import (
	"strings"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/secret"
)

// secretValues returns the secret values this user may have sent or may
// see echoed, longest first: values of secret headers of the current
// request (and the credential after "Bearer "/"Basic "), the values of the
// cookies the user's jar sends with it, values of secret
// variables (named secret, or feeding a secret header, cookie, field or
// parameter: plan.SecretSet) and the plan's literal secrets. The slice is
// scratch, valid until the next call. Only failures call it.
func (v *vu) secretValues() []string {
	out := v.secVal[:0]
	for _, h := range v.hdrs {
		if v.prog.secretHeader(h.Name) && h.Value != "" {
			out = append(out, h.Value)
			if _, tok, ok := strings.Cut(h.Value, " "); ok && len(tok) >= secret.MinLen {
				out = append(out, tok) // "Bearer <token>"
			}
		}
	}
	// The jar's cookies for this request: set by a server or by the
	// plan's cookies:, each a credential whatever its name.
	if v.client != nil && v.req.URL != "" {
		n := len(out)
		out = v.client.CookieValues(v.req.URL, out)
		for i := n; i < len(out); {
			if len(out[i]) < secret.MinLen {
				out = append(out[:i], out[i+1:]...)
				continue
			}
			i++
		}
	}
	for _, slot := range v.prog.secretSlots {
		if val := v.vars[slot]; len(val) >= secret.MinLen {
			out = append(out, val)
		}
	}
	out = append(out, v.prog.secretLits...)
	// Longest first, so a value holding another is masked whole. The list
	// is short: insertion sort, no allocation.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	v.secVal = out
	return out
}

// redact masks every secret value in a failure message, whole or cut at
// its edges. A server that echoes a token in its error body must not put it
// into the sample log, the intervals or the report.
func (v *vu) redact(msg string) string { return secret.String(msg, v.secretValues()) }

// Excerpt bounds: an error body's first excerptMax bytes are quoted; the
// first excerptWindow bytes are masked before the cut, so a secret that
// starts in the excerpt is masked whole even if it ends beyond it.
const (
	excerptMax    = 120
	excerptWindow = 8 << 10
)

// excerpt quotes the start of an error response's body, which usually says
// why ("consent: Service Unavailable"), on one line and bounded. Secrets
// are masked before the body is cut (secret.Cut), never after.
func (v *vu) excerpt(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	b := body
	if len(b) > excerptWindow {
		b = b[:excerptWindow]
	}
	out := make([]byte, 0, len(b)+6)
	for _, r := range string(b) {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			out = append(out, ' ')
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	text := strings.TrimRight(string(out), " ")
	vals := v.secretValues()
	if len(body) > excerptWindow {
		text = secret.Edges(text+"…", vals) // the window's edge may split a secret
		text = strings.TrimSuffix(text, "…")
	}
	text = secret.Cut(text, excerptMax, vals)
	if text == "" {
		return ""
	}
	return ": " + text
}
