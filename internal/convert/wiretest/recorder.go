// Package wiretest is the differential harness of the converters: one .jmx
// runs under real JMeter and, converted, under plateau, each against a
// recording HTTP server on loopback that answers like the system under test
// would; the two request streams are then compared per virtual user and in
// distribution (Compare).
//
// The recorder is an HTTP forward proxy that never forwards: JMeter runs
// with -H/-P and plateau with http.proxy pointing at it, so every request
// of the plan reaches it whatever host the plan names, and nothing leaves
// the machine. Each side's requests carry a user key header the harness
// adds to both plans (UserHeader).
package wiretest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// UserHeader carries the virtual user key ("group/N") the harness adds to
// every request on both sides; the recorder strips it from the headers it
// keeps.
const UserHeader = "X-Wiretest-User"

// maxRecorded bounds the requests one recorder keeps (memory); further
// requests are counted in Dropped.
const maxRecorded = 200_000

// serviceTime is how long the recorder takes to answer, as a system under
// test does. Both tools see the same, so no difference between them comes
// from it; without it a plan with no timers sends as fast as loopback
// allows, and on an idle machine plateau's side outran maxRecorded (260k
// requests from 3 users in 6 s) where a busy one stayed under it.
const serviceTime = time.Millisecond

// Request is one recorded request.
type Request struct {
	User   string // the UserHeader value, "" when absent
	Method string
	Host   string // as requested (absolute-form URI or Host header)
	Path   string
	Query  string // raw query
	// URI is the request target as it came on the request line, byte for
	// byte (absolute form through the proxy): Path is decoded.
	URI    string
	Header http.Header
	Body   string
	At     time.Duration // arrival since the recorder started
}

// Response is a canned answer. Body may hold {{n}} (the recorder's request
// number, from 1), {{user}} (the user key) and {{q:name}} (a query value of
// the request).
type Response struct {
	Status int
	Header map[string]string
	Body   string
}

// Rule answers requests whose method (empty: any) and path match.
type Rule struct {
	Method string
	Path   *regexp.Regexp
	Resp   Response
	// Seq, when set, answers the rule's matches in turn (the last one
	// repeats): a recording's responses to the same endpoint, in order.
	Seq []Response
}

// Recorder records every request and answers by its rules (first match;
// otherwise 200 with "{}" as JSON).
type Recorder struct {
	URL   string // http://127.0.0.1:port
	Port  string
	rules []Rule

	mu      sync.Mutex
	seqN    map[int]int // matches so far of each rule with a Seq
	start   time.Time
	reqs    []Request
	n       int
	dropped int
}

// NewRecorder starts a recorder on 127.0.0.1; it stops with the test.
func NewRecorder(t testing.TB, rules ...Rule) *Recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{rules: rules, start: time.Now()}
	r.Port = fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	r.URL = "http://127.0.0.1:" + r.Port
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

// transport headers are set by each tool's HTTP client, not by the plan;
// they are not compared.
var transport = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Content-Length": true,
	"Accept-Encoding": true, "Te": true, UserHeader: true,
}

// defaultUA reports a User-Agent a tool sends when the plan sets none
// (JMeter's HttpClient, k6's, Postman's runtime, plateau's): not compared; one the plan sets is.
func defaultUA(v string) bool {
	return v == "plateau" || strings.HasPrefix(v, "Apache-HttpClient/") || strings.HasPrefix(v, "Grafana k6/") || strings.HasPrefix(v, "k6/") || strings.HasPrefix(v, "PostmanRuntime/")
}

// Transport reports whether a header is one the harness does not compare
// (set by the HTTP client, not the plan).
func Transport(name string) bool { return transport[http.CanonicalHeaderKey(name)] }

func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	host := req.URL.Host
	if host == "" {
		host = req.Host
	}
	h := http.Header{}
	for k, v := range req.Header {
		if !transport[k] && !(k == "User-Agent" && len(v) == 1 && defaultUA(v[0])) {
			h[k] = v
		}
	}
	rec := Request{User: req.Header.Get(UserHeader), Method: req.Method, Host: host, Path: req.URL.Path,
		Query: req.URL.RawQuery, URI: req.RequestURI, Header: h, Body: string(body)}
	r.mu.Lock()
	rec.At = time.Since(r.start)
	r.n++
	n := r.n
	if len(r.reqs) < maxRecorded {
		r.reqs = append(r.reqs, rec)
	} else {
		r.dropped++
	}
	r.mu.Unlock()
	if req.Method == http.MethodConnect {
		// TLS is not intercepted: the plan must be run over http.
		http.Error(w, "wiretest: CONNECT not supported; run the plan over http", http.StatusBadGateway)
		return
	}
	resp := Response{Status: 200, Header: map[string]string{"Content-Type": "application/json"}, Body: "{}"}
	for i, ru := range r.rules {
		if (ru.Method == "" || ru.Method == req.Method) && (ru.Path == nil || ru.Path.MatchString(req.URL.Path)) {
			resp = ru.Resp
			if len(ru.Seq) > 0 {
				r.mu.Lock()
				if r.seqN == nil {
					r.seqN = map[int]int{}
				}
				k := r.seqN[i]
				r.seqN[i]++
				r.mu.Unlock()
				resp = ru.Seq[min(k, len(ru.Seq)-1)]
			}
			break
		}
	}
	b := resp.Body
	if strings.Contains(b, "{{") {
		b = strings.ReplaceAll(b, "{{n}}", fmt.Sprint(n))
		b = strings.ReplaceAll(b, "{{user}}", rec.User)
		b = qRe.ReplaceAllStringFunc(b, func(m string) string {
			return req.URL.Query().Get(qRe.FindStringSubmatch(m)[1])
		})
	}
	for k, v := range resp.Header {
		// As written: servers such as Okapi send lower-case names, and a
		// JMeter regex on the headers sees the case.
		w.Header()[k] = []string{strings.ReplaceAll(strings.ReplaceAll(v, "{{n}}", fmt.Sprint(n)), "{{user}}", rec.User)}
	}
	if resp.Status == 0 {
		resp.Status = 200
	}
	time.Sleep(serviceTime)
	w.WriteHeader(resp.Status)
	_, _ = io.WriteString(w, b)
}

var qRe = regexp.MustCompile(`\{\{q:([^}]+)\}\}`)

// Requests returns the recorded requests in arrival order, and how many
// were not kept (over the bound).
func (r *Recorder) Requests() ([]Request, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Request(nil), r.reqs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out, r.dropped
}

// Line is a request as one line of text (for logs and failure messages).
func (q Request) Line() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s", q.User, q.Method, q.Path)
	if q.Query != "" {
		b.WriteString("?" + q.Query)
	}
	keys := make([]string, 0, len(q.Header))
	for k := range q.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " [%s: %s]", k, strings.Join(q.Header[k], ","))
	}
	if q.Body != "" {
		b.WriteString(" body=" + q.Body)
	}
	return b.String()
}
