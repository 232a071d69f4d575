package har_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/converttest"
	"github.com/plateau-perf/plateau/internal/convert/har"
	"github.com/plateau-perf/plateau/internal/demo/sut"
)

// serve runs a server on 127.0.0.1 until the test ends.
func serve(t *testing.T, fn func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = fn(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

// demoFront starts a demo back (200 patients) and a front signing tokens
// with secret; it returns the front's URL.
func demoFront(t *testing.T, dir, secret string) string {
	t.Helper()
	b, err := sut.NewBack(context.Background(), sut.BackConfig{DBPath: filepath.Join(dir, "cave.db"), Seed: sut.DefaultSeed, Patients: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	back := serve(t, b.Serve)
	f, err := sut.NewFront(sut.FrontConfig{Secret: secret, BackURLs: []string{back}})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, f.Serve)
}

// recorder is a recording proxy: it forwards to the front and writes each
// exchange as a HAR entry, as a browser's developer tools would. It serves
// /app.js itself (a static asset of the page).
type recorder struct {
	front   string
	mu      sync.Mutex
	entries []har.Entry
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, _ := io.ReadAll(r.Body)
	var status int
	var respHeader http.Header
	var respBody []byte
	if r.URL.Path == "/app.js" {
		status, respHeader, respBody = 200, http.Header{"Content-Type": {"application/javascript"}}, []byte("console.log(1)")
	} else {
		req, _ := http.NewRequest(r.Method, rc.front+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		respBody, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		status, respHeader = resp.StatusCode, resp.Header
	}
	for k, vs := range respHeader {
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
	_, _ = w.Write(respBody)

	e := har.Entry{StartedDateTime: start.UTC().Format(time.RFC3339Nano), Time: float64(time.Since(start)) / float64(time.Millisecond)}
	e.Request.Method = r.Method
	e.Request.URL = "http://" + r.Host + r.URL.RequestURI()
	e.Request.HTTPVersion = "HTTP/1.1"
	e.Request.Headers = append(e.Request.Headers, har.NameVal{Name: "Host", Value: r.Host})
	for k, vs := range r.Header {
		for _, v := range vs {
			e.Request.Headers = append(e.Request.Headers, har.NameVal{Name: k, Value: v})
		}
	}
	if len(body) > 0 {
		e.Request.PostData = &har.PostData{MimeType: r.Header.Get("Content-Type"), Text: string(body)}
	}
	e.Response.Status = status
	for k, vs := range respHeader {
		for _, v := range vs {
			e.Response.Headers = append(e.Response.Headers, har.NameVal{Name: k, Value: v})
		}
	}
	e.Response.Content.MimeType = respHeader.Get("Content-Type")
	e.Response.Content.Text = string(respBody)
	rc.mu.Lock()
	rc.entries = append(rc.entries, e)
	rc.mu.Unlock()
}

// TestDemoRecording records a session against the demo service through a
// recording proxy (log in, load the page's script, read three patients'
// allergies with the bearer token and an API key), converts the HAR and runs
// the plan against a demo front that signs tokens with another secret: the
// recorded token is worthless there, so the run has 0 errors only because
// the token is correlated (extracted from the login response and sent back).
func TestDemoRecording(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{front: demoFront(t, t.TempDir(), "recording-secret-0123456789")}
	proxy := serve(t, func(ctx context.Context, ln net.Listener) error {
		s := &http.Server{Handler: rec}
		go func() { <-ctx.Done(); _ = s.Close() }()
		return s.Serve(ln)
	})
	const apiKey = "recorded-api-key-7f3a9c"
	client := &http.Client{Timeout: 5 * time.Second}
	do := func(method, path, body string, hdr ...string) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, proxy+path, strings.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(do("POST", "/token", `{"user":"perf"}`, "Content-Type", "application/json"), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v", err)
	}
	do("GET", "/app.js", "")
	time.Sleep(250 * time.Millisecond) // the user reads the page
	cprs := sut.CPRs(sut.DefaultSeed, 3)
	for _, cpr := range cprs {
		do("GET", "/allergies?cpr="+cpr, "", "Authorization", "Bearer "+tok.AccessToken, "X-Api-Key", apiKey)
	}
	var doc har.HAR
	doc.Log.Entries = rec.entries
	raw, err := json.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}

	h, err := har.Parse(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := har.Convert(h, har.Options{Source: "session.har"})
	pf, text := converttest.Write(t, dir, p, rep)
	t.Logf("converted plan:\n%s", text)

	// Secrets never reach the plan.
	for _, secret := range []string{tok.AccessToken, apiKey} {
		if strings.Contains(text, secret) {
			t.Errorf("the plan holds a recorded secret %q", secret)
		}
	}
	// The token is correlated: extracted from POST /token, used by the reads.
	var found *convert.Correlation
	for i, k := range rep.Correlations {
		if k.How == "json $.access_token" {
			found = &rep.Correlations[i]
		}
	}
	if found == nil || len(found.UsedBy) != 3 {
		t.Fatalf("no correlation of $.access_token used by the 3 reads: %+v", rep.Correlations)
	}
	// The asset is filtered, the API key read from the environment.
	c := rep.Count()
	if c.NotNeeded != 1 || c.Converted != 4 || c.Enabled != 5 {
		t.Errorf("counts %+v, want 4 requests converted and 1 asset not needed", c)
	}
	var envKey string
	for _, e := range rep.Env {
		if strings.Contains(e.What, "X-Api-Key") {
			envKey = e.Env
		}
	}
	if envKey == "" {
		t.Fatalf("X-Api-Key not read from the environment: %+v", rep.Env)
	}
	var md bytes.Buffer
	if _, err := rep.WriteTo(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Correlations") || !strings.Contains(md.String(), envKey) {
		t.Errorf("report lacks the correlation or the environment variable:\n%s", md.String())
	}

	// Run it against a front with another signing secret.
	runFront := demoFront(t, t.TempDir(), "another-secret-9876543210")
	d, res := converttest.Run(t, pf, map[string]string{envKey: apiKey}, time.Minute, "target="+runFront)
	if d.Total.Count != 4 || d.Total.Errors != 0 {
		t.Fatalf("run: %d requests, %d errors (want 4 and 0); result %+v", d.Total.Count, d.Total.Errors, res)
	}

	// Without the correlation the recorded token is rejected: the check is
	// not vacuous.
	stale := strings.ReplaceAll(text, "Bearer ${access_token}", "Bearer "+tok.AccessToken)
	if stale == text {
		t.Fatal("plan has no Bearer ${access_token} header")
	}
	sdir := t.TempDir()
	spf := filepath.Join(sdir, "plan.yaml")
	if err := writeFile(spf, stale); err != nil {
		t.Fatal(err)
	}
	d2, _ := converttest.Run(t, spf, map[string]string{envKey: apiKey}, time.Minute, "target="+runFront)
	if d2.Total.Errors != 3 {
		t.Errorf("with the recorded token: %d errors, want 3 (401 on each read)", d2.Total.Errors)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
