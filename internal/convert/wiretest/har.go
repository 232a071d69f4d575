package wiretest

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/converttest"
	"github.com/plateau-perf/plateau/internal/convert/har"
)

// HARRequests turns a HAR's entries into the requests the recorder would
// have seen from the browser (user "recording/1"): method, host, path, raw
// query, the headers a plan sets (Host, HTTP/2 pseudo-headers and
// transport headers left out), the body, and the arrival time since the
// first entry.
func HARRequests(h *har.HAR) []Request {
	var out []Request
	var first time.Time
	for i := range h.Log.Entries {
		e := &h.Log.Entries[i]
		u, err := url.Parse(e.Request.URL)
		if err != nil {
			continue
		}
		if u.Host == "" {
			// A server-side capture records the path; the host is its
			// Host header.
			for _, kv := range e.Request.Headers {
				if strings.EqualFold(kv.Name, "Host") {
					u.Host = kv.Value
				}
			}
		}
		at, _ := time.Parse(time.RFC3339Nano, e.StartedDateTime)
		if first.IsZero() {
			first = at
		}
		q := Request{User: "recording/1", Method: e.Request.Method, Host: u.Host, Path: u.Path, Query: u.RawQuery, Header: http.Header{}, At: at.Sub(first)}
		if q.Path == "" {
			q.Path = "/"
		}
		for _, kv := range e.Request.Headers {
			name := http.CanonicalHeaderKey(kv.Name)
			if strings.HasPrefix(kv.Name, ":") || name == "Host" || Transport(name) {
				continue
			}
			q.Header[name] = append(q.Header[name], kv.Value)
		}
		if e.Request.PostData != nil {
			q.Body = e.Request.PostData.Text
		}
		out = append(out, q)
	}
	return out
}

// HARRules answer each recorded request as the recorded site did: its
// status, content type and body (decoded from base64 when the HAR says),
// by method and path, the responses to one endpoint in their order.
func HARRules(h *har.HAR) []Rule {
	var out []Rule
	idx := map[string]int{}
	for i := range h.Log.Entries {
		e := &h.Log.Entries[i]
		u, err := url.Parse(e.Request.URL)
		if err != nil {
			continue
		}
		p := u.Path
		if p == "" {
			p = "/"
		}
		body := e.Response.Content.Text
		if e.Response.Content.Encoding == "base64" {
			if b, err := base64.StdEncoding.DecodeString(body); err == nil {
				body = string(b)
			}
		}
		status := e.Response.Status
		if status == http.StatusNotModified {
			// The replay sends no conditional headers (the converter
			// leaves them out): the site answers the whole page, the
			// body the browser had from its cache.
			status = http.StatusOK
		}
		resp := Response{Status: status, Header: map[string]string{}, Body: body}
		if ct := e.Response.Content.MimeType; ct != "" {
			resp.Header["Content-Type"] = ct
		}
		k := e.Request.Method + " " + p
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, Rule{Method: e.Request.Method, Path: regexp.MustCompile("^" + regexp.QuoteMeta(p) + "$"), Resp: resp})
		}
		out[j].Seq = append(out[j].Seq, resp)
	}
	return out
}

// HAROutcome is what RunHAR produced.
type HAROutcome struct {
	// Creator is the HAR's creator.name (the browser or tool that wrote it).
	Creator      string
	HAR, Plateau []Request
	// Errors are the replay's failed requests (a check, a correlation).
	Errors int64
	Plan   string
	Report *convert.Report
	Result Result
}

// RunHAR converts a HAR (assets kept, so every entry is a request), runs
// the plan once through a recorder answering as the recorded site did,
// and compares plateau's requests with the HAR's own entries.
func RunHAR(t testing.TB, path string, o Options) *HAROutcome {
	t.Helper()
	return RunHARRewritten(t, path, nil, 0, o)
}

// RunHARRewritten is RunHAR on the HAR's text after rw (the same text for
// the recording compared with and the plan converted), e.g. https → http:
// the recorder does not intercept TLS; maxThink, when set, caps the
// converted plan's think times (har.Options.MaxThink) so a recording
// whose entries lie months apart replays in seconds.
func RunHARRewritten(t testing.TB, path string, rw []Replace, maxThink time.Duration, o Options) *HAROutcome {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rw {
		b = r.Re.ReplaceAll(b, []byte(r.With))
	}
	h, err := har.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out := &HAROutcome{HAR: HARRequests(h), Creator: h.Log.Creator.Name}
	p, rep := har.Convert(h, har.Options{Source: filepath.Base(path), KeepAssets: true, MaxThink: maxThink})
	out.Report = rep
	for _, wl := range p.Workloads {
		tag(wl.Setup, "recording/${__user}")
		tag(wl.Scenario, "recording/${__user}")
		tag(wl.Teardown, "recording/${__user}")
	}
	tag(p.Setup, "recording/1")
	dir := t.TempDir()
	pf, text := converttest.Write(t, dir, p, rep)
	out.Plan = text
	rec := NewRecorder(t, HARRules(h)...)
	d, _ := converttest.Run(t, pf, rep.Secrets, 2*time.Minute, "http.proxy="+rec.URL)
	out.Errors = d.Total.Errors
	reqs, dropped := rec.Requests()
	if dropped > 0 {
		t.Fatalf("recorder dropped %d requests", dropped)
	}
	out.Plateau = reqs
	out.Result = judge(t, "the HAR", path, out.HAR, out.Plateau, o, out.Plan, 25)
	return out
}
