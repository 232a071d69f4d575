package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// folioAnswers answers like FOLIO's Okapi for the check-in/check-out
// plan (the same answers as internal/convert/wiretest's folio rules): a
// login returning a token header and the user; items, loans, users and
// service points with the ids the plan extracts.
var folioAnswers = []struct {
	method string
	path   *regexp.Regexp
	status int
	header map[string]string
	body   string
}{
	{"POST", regexp.MustCompile(`^/authn/login$|^/bl-users/login$`), 201, map[string]string{"x-okapi-token": "tok", "Content-Type": "application/json"}, `{"user":{"id":"user-1"}}`},
	{"", regexp.MustCompile(`^/inventory/items$`), 200, nil, `{"items":[{"id":"item-1"}],"totalRecords":1}`},
	{"POST", regexp.MustCompile(`^/circulation/check-in-by-barcode$`), 200, nil, `{"item":{"id":"item-1"},"loan":{"id":"loan-1","lostItemPolicyId":"lip-1","userId":"user-1"}}`},
	{"POST", regexp.MustCompile(`^/circulation/check-out-by-barcode$`), 201, nil, "{\n  \"id\" : \"loan-2\",\n  \"userId\" : \"user-1\"\n}"},
	{"", regexp.MustCompile(`^/users$`), 200, nil, `{"users":[{"id":"user-1","username":"u1","patronGroup":"pg-1"}],"totalRecords":1}`},
	{"", regexp.MustCompile(`^/service-points$`), 200, nil, `{"servicepoints":[{"id":"sp-1"}],"totalRecords":1}`},
	{"", regexp.MustCompile(`^/groups$`), 200, nil, `{"usergroups":[{"group":"staff","id":"pg-1"}],"totalRecords":1}`},
	{"", regexp.MustCompile(`^/configurations/entries$`), 200, nil, `{"configs":[],"totalRecords":0}`},
	{"", regexp.MustCompile(`^/staff-slips-storage/staff-slips$`), 200, nil, `{"staffSlips":[{"id":"slip-1"}],"totalRecords":1}`},
	{"", regexp.MustCompile(`^/automated-patron-blocks/`), 200, nil, `{"automatedPatronBlocks":[]}`},
	{"", regexp.MustCompile(`^/(accounts|circulation/requests|circulation/loans|manualblocks|proxiesfor|lost-item-fees-policies|note-links/.*)$`), 200, nil, `{"totalRecords":0}`},
}

// chanListener hands connections accepted elsewhere (CONNECT tunnels) to
// an http.Server.
type chanListener struct {
	ch   chan net.Conn
	once sync.Once
	done chan struct{}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *chanListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// folioStandIn is FOLIO on loopback behind a forward proxy that never
// forwards: JMeter, given the proxy, sends every request of the plan to
// it whatever host the plan names; the plan's https is a CONNECT tunnel
// the stand-in ends itself, with httptest's certificate (JMeter trusts
// any server certificate by default). It counts the requests it answers,
// and those it has no answer for (answered {}).
func folioStandIn(t *testing.T) (proxy *httptest.Server, served, unknown *atomic.Int64) {
	served, unknown = new(atomic.Int64), new(atomic.Int64)
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer served.Add(1)
		time.Sleep(time.Millisecond)
		for _, a := range folioAnswers {
			if (a.method == "" || a.method == r.Method) && a.path.MatchString(r.URL.Path) {
				for k, v := range a.header {
					w.Header().Set(k, v)
				}
				if w.Header().Get("Content-Type") == "" {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(a.status)
				fmt.Fprint(w, a.body)
				return
			}
		}
		// Anything else, as the harness's recorder answers it.
		unknown.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "{}")
	})
	tlsSrv := httptest.NewUnstartedServer(app)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	tunnels := &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}
	inner := &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = inner.Serve(tls.NewListener(tunnels, tlsSrv.TLS)) }()
	t.Cleanup(func() { _ = inner.Close() })
	proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			app.ServeHTTP(w, r) // plain http through the proxy: an absolute URI
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "no hijack", http.StatusInternalServerError)
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			return
		}
		if _, err := buf.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || buf.Flush() != nil {
			conn.Close()
			return
		}
		select {
		case tunnels.ch <- conn:
		case <-tunnels.done:
			conn.Close()
		}
	}))
	t.Cleanup(proxy.Close)
	return proxy, served, unknown
}

// TestRunFOLIOCheckInCheckOut runs FOLIO's public check-in/check-out plan
// (reference 001's workflow, internal/convert/wiretest/testdata/folio-cico,
// provenance in its README) as it is — its own properties, its own
// headerless CSV files, its Groovy script and BeanShell functions — in
// JMeter under plateau, against a loopback stand-in. The report's total
// equals JMeter's own dashboard, and every HTTP sample in JMeter's results
// is a request the stand-in answered.
func TestRunFOLIOCheckInCheckOut(t *testing.T) {
	home, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	t.Parallel()
	proxy, served, unknown := folioStandIn(t)
	port := proxy.URL[strings.LastIndexByte(proxy.URL, ':')+1:]
	src := "../convert/wiretest/testdata/folio-cico"
	plan := filepath.Join(t.TempDir(), "folio-cico")
	if err := os.CopyFS(plan, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// JMeter's -H/-P, through the JVM's own environment variable: the
	// proxy is a Java system property, not a JMeter property.
	code, out, errOut := runCLICtx(ctx, "run", filepath.Join(plan, "circulation_checkInCheckOut_orchid.jmx"),
		"-J", "HOSTNAME=folio.test", "-J", "VUSERS=2", "-J", "DURATION=40", "-J", "RAMP_UP=1",
		"-e", "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort="+port+" -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort="+port,
		"--monitor", "host", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	jtl := filepath.Join(dir, "tool", "results.jtl")
	f, err := os.Open(jtl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("JTL: %v, %d rows", err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var httpSamples int
	labels := map[string]bool{}
	for _, row := range rows[1:] {
		if strings.HasPrefix(row[col["URL"]], "https://folio.test") {
			httpSamples++
			labels[row[col["label"]]] = true
		}
	}
	if n := served.Load(); int64(httpSamples) != n || n < 20 {
		t.Errorf("JMeter's results hold %d HTTP samples, the stand-in answered %d requests", httpSamples, n)
		for _, row := range rows[:min(len(rows), 30)] {
			t.Logf("JTL: %q", row)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "tool", "jmeter.log"))
		t.Logf("jmeter.log: %s", log[max(0, len(log)-6000):])
	}
	// The pages' requests ran, not only the logins (the plan's Groovy
	// script draws check-in or check-out each iteration).
	var pages int
	for l := range labels {
		if strings.Contains(l, "(Get_check_in_page)") || strings.Contains(l, "(Get_checkout_page)") {
			pages++
		}
	}
	if pages == 0 {
		t.Errorf("no request of the check-in or check-out pages: %v", labels)
	}
	t.Logf("%d requests, %d HTTP labels, %d answered with the stand-in's default {}", served.Load(), len(labels), unknown.Load())
	// JMeter's dashboard of the same results.
	dash := filepath.Join(t.TempDir(), "dash")
	cmd := exec.CommandContext(ctx, "java", "-jar", filepath.Join(home, "bin", "ApacheJMeter.jar"), "-g", jtl, "-o", dash,
		"-j", filepath.Join(t.TempDir(), "g.log"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jmeter -g: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(dash, "statistics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stats map[string]struct {
		N      int64   `json:"sampleCount"`
		Errors int64   `json:"errorCount"`
		Min    float64 `json:"minResTime"`
		Max    float64 `json:"maxResTime"`
	}
	if err := json.Unmarshal(b, &stats); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, dir)
	rowsBy := map[string][4]float64{}
	for _, l := range s.Labels {
		rowsBy[l.Label] = [4]float64{float64(l.Samples), float64(l.Errors), l.MinMs, l.MaxMs}
	}
	compared := 0
	for name, st := range stats {
		label := name
		if name == "Total" {
			label = "TOTAL"
		}
		got, ok := rowsBy[label]
		want := [4]float64{float64(st.N), float64(st.Errors), st.Min, st.Max}
		if !ok || got != want {
			t.Errorf("%s: report (count, errors, min, max) %v, JMeter's dashboard %v", name, got, want)
		}
		compared++
	}
	if compared < 10 {
		t.Errorf("%d labels compared with JMeter's dashboard", compared)
	}
}
