package sut

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// server is a running service under test.
type server struct {
	URL  string
	stop func() // cancels Serve and waits for it; safe to call twice
}

// startServer runs serveFn on an ephemeral 127.0.0.1 port until the test ends
// or stop is called, and fails the test if Serve returns an error.
func startServer(t testing.TB, serveFn func(context.Context, net.Listener) error) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveFn(ctx, ln) }()
	stopped := false
	s := &server{URL: "http://" + ln.Addr().String()}
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("serve did not return 10 s after cancel")
		}
	}
	t.Cleanup(s.stop)
	return s
}

// fastServices are external services quick enough for tests.
func fastServices() []ServiceConfig {
	l := Latency{Kind: LatencyUniform, Min: 500 * time.Microsecond, Max: 2 * time.Millisecond}
	return []ServiceConfig{{Name: "audit", Latency: l}, {Name: "consent", Latency: l}, {Name: "relation", Latency: l}}
}

// stack is a front with its backs and external services.
type stack struct {
	dir                  string
	front                *server
	backs                []*server
	external             *server
	frontLog, extCallLog string
	backLogs             []string
	secret               string
}

type stackOpts struct {
	backs    int
	patients int
	services []ServiceConfig
	parallel bool
	flush    time.Duration
	timeout  time.Duration // front's external-call timeout
}

// startStack starts external services, opts.backs backs sharing one database
// of opts.patients patients (DefaultSeed) and one front, all logging to a
// temporary folder.
func startStack(t testing.TB, opts stackOpts) *stack {
	t.Helper()
	if opts.backs == 0 {
		opts.backs = 1
	}
	if opts.patients == 0 {
		opts.patients = 2000
	}
	if opts.services == nil {
		opts.services = fastServices()
	}
	dir := t.TempDir()
	st := &stack{dir: dir, secret: "test-secret-0123456789"}
	ext, err := NewExternal(ExternalConfig{Services: opts.services, Seed: 1, AccessLog: filepath.Join(dir, "external-access.log")})
	if err != nil {
		t.Fatal(err)
	}
	st.external = startServer(t, ext.Serve)
	dbPath := filepath.Join(dir, "cave.db")
	var backURLs []string
	for i := range opts.backs {
		logPath := filepath.Join(dir, "back"+string(rune('1'+i))+"-access.log")
		b, err := NewBack(context.Background(), BackConfig{DBPath: dbPath, Seed: DefaultSeed, Patients: opts.patients, AccessLog: logPath, FlushInterval: opts.flush})
		if err != nil {
			t.Fatal(err)
		}
		s := startServer(t, b.Serve)
		st.backs = append(st.backs, s)
		st.backLogs = append(st.backLogs, logPath)
		backURLs = append(backURLs, s.URL)
	}
	st.frontLog = filepath.Join(dir, "front-access.log")
	st.extCallLog = filepath.Join(dir, "front-external.log")
	names := make([]string, len(opts.services))
	for i, s := range opts.services {
		names[i] = s.Name
	}
	f, err := NewFront(FrontConfig{
		Secret: st.secret, BackURLs: backURLs, ExternalURL: st.external.URL,
		ExternalServices: names, ParallelExternal: opts.parallel, ExternalTimeout: opts.timeout,
		AccessLog: st.frontLog, ExternalLog: st.extCallLog, FlushInterval: opts.flush,
	})
	if err != nil {
		t.Fatal(err)
	}
	st.front = startServer(t, f.Serve)
	return st
}

// stopAll stops front, backs and external services in dependency order, so
// every log is flushed and closed.
func (s *stack) stopAll() {
	s.front.stop()
	for _, b := range s.backs {
		b.stop()
	}
	s.external.stop()
}

// token gets a bearer token from front.
func getToken(t testing.TB, front string) string {
	t.Helper()
	resp, err := http.Post(front+"/token", "application/json", strings.NewReader(`{"user":"perf"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /token: status %d", resp.StatusCode)
	}
	var tr tokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		t.Fatal(err)
	}
	if tr.AccessToken == "" || tr.TokenType != "Bearer" || tr.ExpiresIn != 3600 {
		t.Fatalf("token response %+v", tr)
	}
	return tr.AccessToken
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   string
}

// get sends GET url with the given headers (name, value pairs).
func get(t testing.TB, url string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// readLines returns the lines of path; a missing file has none.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// formatRE turns an nginx-style log_format string into an anchored regexp
// with one named group per variable, the way a log importer reads it: each
// $variable matches a run of non-space characters and everything else is
// literal.
func formatRE(t testing.TB, format string) *regexp.Regexp {
	t.Helper()
	vars := regexp.MustCompile(`\$[a-z0-9_]+`)
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range vars.FindAllStringIndex(format, -1) {
		b.WriteString(regexp.QuoteMeta(format[last:m[0]]))
		b.WriteString("(?P<" + format[m[0]+1:m[1]] + `>\S+)`)
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(format[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// fields parses line with re and returns its named groups, failing the test
// when the line does not match.
func fields(t testing.TB, re *regexp.Regexp, line string) map[string]string {
	t.Helper()
	m := re.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("log line %q does not match %s", line, re)
	}
	out := map[string]string{}
	for i, n := range re.SubexpNames() {
		if n != "" {
			out[n] = m[i]
		}
	}
	return out
}
