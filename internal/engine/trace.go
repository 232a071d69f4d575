package engine

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/secret"
)

// traceBody bounds the request and response bodies a trace shows.
const traceBody = 4 << 10

// tracer writes the trace of a debugging run (plateau run --trace N):
// every request and response with headers, bodies up to traceBody,
// timings, extracted variables and the branches taken — with secret
// values masked as in failure messages. A nil tracer does nothing, so the
// user loop calls it unconditionally; only tracing runs pay for it.
type tracer struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	buf bytes.Buffer
}

func newTracer(w io.Writer) *tracer {
	if w == nil {
		return nil
	}
	return &tracer{w: w}
}

func (t *tracer) flush() {
	if t.err == nil {
		_, t.err = t.w.Write(t.buf.Bytes())
	}
	t.buf.Reset()
}

func (t *tracer) iteration(v *vu) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(&t.buf, "\n=== %s, iteration %d (%s)\n", v.thread, v.iter, time.Now().UTC().Format(time.RFC3339Nano))
	t.flush()
}

func (v *vu) traceBranch(label string, taken bool) {
	t := v.trace
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if taken {
		fmt.Fprintf(&t.buf, "--- %s: %s\n", v.thread, v.redact(label))
	} else {
		fmt.Fprintf(&t.buf, "--- %s: %s: false, else branch\n", v.thread, v.redact(label))
	}
	t.flush()
}

func (t *tracer) request(v *vu, q *request, s *core.Sample) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := &t.buf
	vals := v.secretValues()
	mask := func(s string) string { return secret.String(s, vals) }
	fmt.Fprintf(b, "\n> %s %s   [%s]\n", v.req.Method, mask(s.URL), q.label)
	for _, h := range v.req.Header {
		val := h.Value
		if v.prog.secretHeader(h.Name) {
			val = "***"
		}
		fmt.Fprintf(b, "> %s: %s\n", h.Name, mask(val))
	}
	if len(v.req.Body) > 0 {
		fmt.Fprintf(b, ">\n%s\n", indentBody(mask(bounded(v.req.Body)), "> "))
	}
	r := &v.res
	if r.Err != nil {
		fmt.Fprintf(b, "< error: %s\n", mask(r.Err.Error()))
	} else {
		fmt.Fprintf(b, "< %s %d   (connect %v, first byte %v, total %v, %d bytes)\n", r.Proto, r.Status,
			r.Connect.Round(time.Microsecond), r.TTFB.Round(time.Microsecond), r.Total.Round(time.Microsecond), r.BodySize)
		for k, val := range r.Headers() {
			name := string(k)
			text := string(val)
			if v.prog.secretHeader(name) {
				if n, _, ok := strings.Cut(text, "="); ok && strings.EqualFold(name, "Set-Cookie") {
					text = n + "=***"
				} else {
					text = "***"
				}
			}
			fmt.Fprintf(b, "< %s: %s\n", name, mask(text))
		}
		if len(r.Body) > 0 {
			fmt.Fprintf(b, "<\n%s\n", indentBody(mask(bounded(r.Body)), "< "))
		}
	}
	t.outcome(v, q.extract, s, mask)
	t.flush()
}

// outcome writes the extracted values and the sample's result.
func (t *tracer) outcome(v *vu, xs []extractor, s *core.Sample, mask func(string) string) {
	b := &t.buf
	for i := range xs {
		x := &xs[i]
		val := v.vars[x.slot]
		if v.isSecretSlot(x.slot) {
			val = "***"
		}
		fmt.Fprintf(b, "  extract %s = %s\n", x.name, strconv.Quote(mask(val)))
	}
	if s.Class != core.ErrNone {
		fmt.Fprintf(b, "  FAILED (%s): %s\n", s.Class, s.Message)
	} else {
		b.WriteString("  ok\n")
	}
}

// ws traces a websocket event: what is "connect" (the handshake), "send"
// (sent is the message) or "receive"; got is the matching message
// received (a receive, or a send's reply), nil when none came.
func (t *tracer) ws(v *vu, what string, s *core.Sample, sent, got []byte, xs []extractor) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := &t.buf
	vals := v.secretValues()
	mask := func(s string) string { return secret.String(s, vals) }
	switch what {
	case "connect":
		fmt.Fprintf(b, "\n> WS connect %s   [%s]\n", mask(s.URL), s.Label)
		fmt.Fprintf(b, "< %d   (handshake %v)\n", s.Status, s.Connect.Round(time.Microsecond))
	default:
		fmt.Fprintf(b, "\n> WS %s   [%s]\n", what, s.Label)
	}
	if sent != nil {
		fmt.Fprintf(b, "%s\n", indentBody(mask(bounded(sent)), "> "))
	}
	if got != nil {
		fmt.Fprintf(b, "< message after %v, %d bytes\n%s\n", s.Elapsed.Round(time.Microsecond), s.BytesRecv,
			indentBody(mask(bounded(got)), "< "))
	}
	t.outcome(v, xs, s, mask)
	t.flush()
}

func (v *vu) isSecretSlot(slot int) bool {
	for _, s := range v.prog.secretSlots {
		if s == slot {
			return true
		}
	}
	return false
}

// bounded is a body's first traceBody bytes, valid UTF-8, with a note when
// cut.
func bounded(body []byte) string {
	cut := len(body) > traceBody
	if cut {
		body = body[:traceBody]
	}
	s := strings.ToValidUTF8(string(body), "�")
	if cut {
		for !utf8.ValidString(s) && len(s) > 0 {
			s = s[:len(s)-1]
		}
		s += fmt.Sprintf("\n… (cut at %d bytes)", traceBody)
	}
	return s
}

func indentBody(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
