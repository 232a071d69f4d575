package accesslog

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/nginxtest"
)

func TestPresetsMatchDemo(t *testing.T) {
	t.Parallel()
	if Presets["plateau"] != sut.AccessLogFormat || Presets["plateau_external"] != sut.ExternalLogFormat {
		t.Fatal("presets plateau / plateau_external differ from internal/demo/sut's formats")
	}
}

// TestDemoFrontWithExternalLog runs the demo stack (front, back, external
// services) on loopback, reads allergies through the front, and imports the
// front's access log joined with its external-call log.
func TestDemoFrontWithExternalLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	serve := func(s func(context.Context, net.Listener) error) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = s(ctx, ln) })
		return "http://" + ln.Addr().String()
	}
	ext, err := sut.NewExternal(sut.ExternalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	extURL := serve(ext.Serve)
	const patients = 200
	back, err := sut.NewBack(ctx, sut.BackConfig{DBPath: filepath.Join(dir, "cave.db"), Seed: 1, Patients: patients})
	if err != nil {
		t.Fatal(err)
	}
	backURL := serve(back.Serve)
	accessLog, extLog := filepath.Join(dir, "front.log"), filepath.Join(dir, "front-external.log")
	front, err := sut.NewFront(sut.FrontConfig{Secret: "s", BackURLs: []string{backURL}, ExternalURL: extURL,
		AccessLog: accessLog, ExternalLog: extLog, FlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	frontURL := serve(front.Serve)
	resp, err := http.Post(frontURL+"/token", "application/json", strings.NewReader(`{"user":"perf"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tok := strings.Split(strings.Split(string(body), `"access_token":"`)[1], `"`)[0]
	const n = 30
	for i, cpr := range sut.CPRs(1, patients)[:n] {
		req, _ := http.NewRequest(http.MethodGet, frontURL+"/allergies?cpr="+cpr, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel()
	wg.Wait() // every Serve has flushed and closed its logs

	d, err := importLogs(t, importer.Options{Workers: 2},
		Config{Path: accessLog, Server: "lar-1", Format: "plateau", External: extLog, ChunkSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	want := oracleJoin(t, accessLog, extLog)
	gross, _, grossMean := agg(t, d, "lar-1", "GET /allergies")
	netN, _, netMean := agg(t, d, "lar-1", "GET /allergies"+NetSuffix)
	if gross != n || netN != n {
		t.Errorf("%d requests, %d net, want %d", gross, netN, n)
	}
	w := want["GET /allergies"]
	if math.Abs(grossMean-w[0]) > 1e-9 || math.Abs(netMean-w[1]) > 1e-6 {
		t.Errorf("mean %.6f net %.6f ms, oracle %.6f %.6f", grossMean, netMean, w[0], w[1])
	}
	if !(netMean < grossMean) {
		t.Errorf("net mean %.3f not below gross %.3f: the join found no external calls", netMean, grossMean)
	}
	if c, _, _ := agg(t, d, "lar-1", "POST /token"); c != 1 {
		t.Errorf("%d token requests, want 1", c)
	}
	// The net-of-downstream view is derived from the same requests: TOTAL
	// counts each request once.
	if d.Total.Count != n+1 {
		t.Errorf("TOTAL has %d samples, want %d requests (net labels must not be counted again)", d.Total.Count, n+1)
	}
}

// TestNginx runs Debian's nginx on loopback in front of a Go backend that
// sleeps a known time, with $request_time in its log format, and imports
// the log.
func TestNginx(t *testing.T) {
	t.Parallel()
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/slow/"):
			time.Sleep(20 * time.Millisecond)
		case r.URL.Path == "/fail":
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprint(w, "ok")
	})}
	bln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go backend.Serve(bln)
	defer backend.Close()
	logPath := filepath.Join(t.TempDir(), "access.log")
	ng := nginxtest.Start(t, nginxtest.Config{
		HTTP: "access_log off;\n  log_format timed '$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $request_time';",
		Server: fmt.Sprintf("access_log %s timed;\n    location /missing { return 404; }\n    location / { proxy_pass http://%s; }",
			logPath, bln.Addr().String())})
	addr := ng.Addr
	sent := map[string]int{}
	get := func(path string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := range 40 {
		get(fmt.Sprintf("/slow/%d", 1000+i))
		sent["GET /slow/{id}"]++
		if i%4 == 0 {
			get("/fail")
			sent["GET /fail"]++
		}
		if i%10 == 0 {
			get("/missing")
			sent["GET /missing"]++
		}
	}
	// nginx writes each line when the request ends; stop it to be sure.
	ng.Stop() // flushes the log

	d, err := importLogs(t, importer.Options{}, Config{Path: logPath, Server: "nginx", Format: "combined_rt"})
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range sent {
		n, errs, mean := agg(t, d, "nginx", label)
		if n != int64(want) {
			t.Errorf("%s: %d requests, sent %d", label, n, want)
		}
		switch label {
		case "GET /slow/{id}":
			if mean < 20 || mean > 200 || errs != 0 {
				t.Errorf("%s: mean %.3f ms errors %d, want ≥ 20 ms (the backend sleeps 20 ms) and none", label, mean, errs)
			}
		default:
			if errs != n {
				t.Errorf("%s: %d of %d counted as errors", label, errs, n)
			}
		}
	}
}
