package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files in dir.
func writeTestCert(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// startNginxH2 runs Debian's nginx on loopback serving HTTP/2 over TLS
// (and HTTP/1.1 to clients that do not offer h2), logging the protocol of
// each request. It returns the https base URL and the access log's path;
// stop ends nginx (which flushes the log).
func startNginxH2(t *testing.T) (base, logPath string, stop func()) {
	t.Helper()
	nginx := ""
	for _, p := range []string{"nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if lp, err := exec.LookPath(p); err == nil {
			nginx = lp
			break
		}
	}
	if nginx == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed under CI; run scripts/install-test-deps.sh")
		}
		t.Skip("nginx is not installed; run scripts/install-test-deps.sh")
	}
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nginx binds it
	logPath = filepath.Join(dir, "access.log")
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  log_format proto '$server_protocol $request_method $request_uri $status $connection';
  server {
    listen %[2]s ssl http2;
    ssl_certificate %[3]s;
    ssl_certificate_key %[4]s;
    access_log %[5]s proto;
    location / { return 200 'hello from nginx'; }
  }
}
`, dir, addr, cert, key, logPath)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-c", confPath, "-p", dir, "-e", filepath.Join(dir, "error.log"))
	cmd.Stderr = os.Stderr // "listen … http2" is deprecated in nginx ≥ 1.25 but still works; 1.22 (Debian 12) knows only it
	if err := cmd.Start(); err != nil {
		t.Fatalf("nginx cannot start: %v", err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not listen on %s: %s", addr, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "https://" + addr, logPath, stop
}

const h2Plan = `name: h2
target: https://127.0.0.1:1
http:
  version: "2"
  insecure: true
  connections: shared
  max_concurrent_streams: 3
workloads:
  w:
    scenario:
      - request:
          name: over h2
          url: /h2?u=${__user}
          check: {body: hello from nginx}
      - request:
          name: over h1
          url: /h1
          http_version: "1.1"
    load: {users: 6, iterations: 5}
`

// The engine's HTTP/2 requests reach nginx as HTTP/2.0 — nginx's own log
// says so, and counts them — while a request with http_version 1.1 in the
// same plan still goes as HTTP/1.1; the 6 users share connections of at
// most 3 streams.
func TestHTTP2AgainstNginx(t *testing.T) {
	base, logPath, stop := startNginxH2(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, h2Plan, base)
	stop()
	h2n, h2err := labelAgg(d, "over h2")
	h1n, h1err := labelAgg(d, "over h1")
	if h2n != 30 || h1n != 30 || h2err != 0 || h1err != 0 {
		t.Fatalf("samples: h2 %d (%d errors), h1 %d (%d errors); want 30 and 30 without errors", h2n, h2err, h1n, h1err)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	byProto := map[string]int{}
	h2conns := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[3] != "200" {
			t.Fatalf("unexpected log line %q", line)
		}
		path := f[2][:3]
		byProto[f[0]+" "+path]++
		if f[0] == "HTTP/2.0" {
			h2conns[f[4]] = true
		}
	}
	if byProto["HTTP/2.0 /h2"] != 30 || byProto["HTTP/1.1 /h1"] != 30 || len(byProto) != 2 {
		t.Fatalf("nginx logged %v; want 30 HTTP/2.0 /h2 and 30 HTTP/1.1 /h1", byProto)
	}
	// 6 users, at most 3 streams a connection: at least 2 connections,
	// and far fewer than one per request.
	if len(h2conns) < 2 || len(h2conns) > 12 {
		t.Fatalf("HTTP/2 requests used %d connections; want 2..12", len(h2conns))
	}
}

// A plan with version 2 against a Go h2c server (cleartext, prior
// knowledge): every request arrives as HTTP/2.0, and a stream the server
// resets is a sample of class h2_stream_reset.
func TestH2CPlan(t *testing.T) {
	srv := newH2CTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, `name: h2c
target: http://127.0.0.1:1
http: {version: "2"}
workloads:
  w:
    scenario:
      - request: {name: ok, url: /ok}
      - request: {name: reset, url: /reset}
    load: {users: 2, iterations: 4}
`, srv.url)
	okN, okErr := labelAgg(d, "ok")
	rN, rErr := labelAgg(d, "reset")
	if okN != 8 || okErr != 0 || rN != 8 || rErr != 8 {
		t.Fatalf("ok %d/%d errors, reset %d/%d errors; want 8/0 and 8/8", okN, okErr, rN, rErr)
	}
	resets := int64(0)
	for k, a := range d.Run {
		if k.Label != "reset" {
			continue
		}
		for ek, n := range a.Errs {
			if ek.Class == core.ErrH2StreamReset {
				resets += n
			}
		}
	}
	if resets != 8 {
		t.Fatalf("h2_stream_reset samples: %d, want 8", resets)
	}
	if got := srv.h2.Load(); got != 16 || srv.other.Load() != 0 {
		t.Fatalf("server saw %d HTTP/2 and %d other requests; want 16 and 0", got, srv.other.Load())
	}
}

type h2cTestServer struct {
	url       string
	h2, other atomic.Int64
}

func newH2CTestServer(t *testing.T) *h2cTestServer {
	s := &h2cTestServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &p, ErrorLog: log.New(io.Discard, "", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *h2cTestServer) count(r *http.Request) {
	if r.ProtoMajor == 2 {
		s.h2.Add(1)
	} else {
		s.other.Add(1)
	}
}
