package h2

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
)

// startNginx runs nginx (one worker) serving HTTP/2 over TLS with a
// certificate made here; it returns the address.
func startNginx(b *testing.B) string {
	nginx := ""
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if lp, err := exec.LookPath(p); err == nil {
			nginx = lp
			break
		}
	}
	if nginx == "" {
		if os.Getenv("CI") == "true" {
			b.Fatal("nginx is not installed under CI")
		}
		b.Skip("nginx is not installed")
	}
	dir := b.TempDir()
	cert, key := writeCert(b, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  http2_max_concurrent_streams 128;
  keepalive_requests 10000000;
  server {
    listen %[2]s ssl http2;
    ssl_certificate %[3]s;
    ssl_certificate_key %[4]s;
    location / { return 200 'ok'; }
  }
}
`, dir, addr, cert, key)
	cp := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(cp, []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(nginx, "-c", cp, "-p", dir, "-e", filepath.Join(dir, "error.log"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			b.Fatalf("nginx did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkH2VsH2load: 50 streams on one HTTP/2 connection to nginx,
// plateau's client (GOMAXPROCS 1) against h2load -c1 -m50 (one thread).
// Reports req/s and CPU µs per request of both.
func BenchmarkH2VsH2load(b *testing.B) {
	addr := startNginx(b)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := NewPool(Config{InsecureSkipVerify: true, MaxConcurrentStreams: 50, MaxBody: 64})
	defer p.Close()
	url := "https://" + addr + "/"
	var next sync.WaitGroup
	n := b.N
	per := (n + 49) / 50
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	for range 50 {
		next.Add(1)
		go func() {
			defer next.Done()
			c := NewClient(p, nil)
			req := httpc.Request{URL: url}
			var res httpc.Result
			for range per {
				if err := c.Do(context.Background(), &req, &res); err != nil || res.Status != 200 {
					b.Error(err, res.Status)
					return
				}
			}
		}()
	}
	next.Wait()
	el, cpu := time.Since(t0), cpuTime()-cpu0
	b.StopTimer()
	total := float64(per * 50)
	b.ReportMetric(total/el.Seconds(), "req/s")
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-µs/req")
	if p.Conns() != 1 {
		b.Fatalf("%d connections, want 1", p.Conns())
	}
	h2load, err := exec.LookPath("h2load")
	if err != nil {
		b.Logf("h2load not installed (internal/engine/proto/h2/testdata/install-deps.sh): no peer figure")
		return
	}
	reqs := max(int(total), 1000)
	cmd := exec.Command(h2load, "-n", strconv.Itoa(reqs), "-c", "1", "-m", "50", "-t", "1", url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("h2load: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`finished in ([0-9.]+)(m?s), ([0-9.]+) req/s`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("h2load output not understood:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[3]), 64)
	ps := cmd.ProcessState
	hcpu := ps.UserTime() + ps.SystemTime()
	b.ReportMetric(rps, "h2load-req/s")
	b.ReportMetric(float64(hcpu.Microseconds())/float64(reqs), "h2load-cpu-µs/req")
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(b testing.TB, dir string) (certPath, keyPath string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certPath, keyPath
}
