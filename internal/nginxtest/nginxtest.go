// Package nginxtest runs a throw-away nginx (Debian's package) on a
// loopback port for a test, as a child process removed when the test ends.
// A missing nginx skips the test, except under CI=true, where it fails it
// (scripts/install-test-deps.sh installs it).
package nginxtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Config is what differs between the tests' servers.
type Config struct {
	// TLS listens with "ssl http2" on a self-signed certificate for
	// 127.0.0.1 (HTTP/1.1 to clients that do not offer h2).
	TLS bool
	// H2C listens with "http2" and no TLS: HTTP/2 with prior knowledge
	// only (cleartext HTTP/1.1 clients are refused). Ignored with TLS.
	H2C bool
	// HTTP holds extra directives of the http block (log formats, limits).
	HTTP string
	// Server holds the server block's directives after listen (access
	// log, locations, more listen directives).
	Server string
	// WorkerConnections is nginx's worker_connections; 0 means 256. nginx
	// inherits the test process's open-file limit, so raise that first
	// for more than about a thousand.
	WorkerConnections int
}

// Server is a running nginx.
type Server struct {
	// Addr is 127.0.0.1:port.
	Addr string
	// Dir is nginx's prefix directory (configuration, pid, error log).
	Dir     string
	cmd     *exec.Cmd
	stopped bool
}

// PID is the nginx process (master_process is off: it serves too).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Start writes the configuration and starts nginx (one process), and
// waits until it listens.
func Start(t testing.TB, c Config) *Server {
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
	var cert, key string
	if c.TLS {
		cert, key = SelfSignedCert(t, dir)
	}
	// The port is found free, closed, then bound by nginx: on a busy
	// machine another socket can take it in between. nginx then fails
	// with "Address already in use"; start again on another port.
	for attempt := 1; ; attempt++ {
		s, err := start(nginx, dir, c, cert, key)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		if !errors.Is(err, errAddrInUse) || attempt == 3 {
			t.Fatal(err)
		}
	}
}

var errAddrInUse = errors.New("address already in use")

func start(nginx, dir string, c Config, cert, key string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: ln.Addr().String(), Dir: dir}
	ln.Close() // nginx binds it
	listen := s.Addr
	if c.H2C {
		listen = s.Addr + " http2"
	}
	if c.TLS {
		// "listen … http2" is deprecated in nginx ≥ 1.25 but still works;
		// 1.22 (Debian 12) knows only it.
		listen = fmt.Sprintf("%s ssl http2;\n    ssl_certificate %s;\n    ssl_certificate_key %s", s.Addr, cert, key)
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  %[2]s
  server {
    listen %[3]s;
    %[4]s
  }
}
`, dir, c.HTTP, listen, c.Server)
	if c.WorkerConnections > 0 {
		conf = strings.Replace(conf, "worker_connections 256;", fmt.Sprintf("worker_connections %d;", c.WorkerConnections), 1)
	}
	confPath := filepath.Join(dir, "nginx.conf")
	logPath := filepath.Join(dir, "error.log")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	_ = os.Remove(logPath) // a failed attempt's
	s.cmd = exec.Command(nginx, "-c", confPath, "-p", dir, "-e", logPath)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx cannot start: %w", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", s.Addr); err == nil {
			c.Close()
			return s, nil
		}
		b, _ := os.ReadFile(logPath)
		if bytes.Contains(b, []byte("Address already in use")) {
			_ = s.cmd.Process.Kill()
			s.Stop()
			return nil, fmt.Errorf("nginx on %s: %w", s.Addr, errAddrInUse)
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("nginx did not listen on %s: %s", s.Addr, b)
		}
	}
}

// Stop ends nginx and waits for it, which flushes its logs. Stopping twice
// is harmless.
func (s *Server) Stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
}

// SelfSignedCert writes a self-signed certificate for 127.0.0.1 (and
// localhost) and its key as PEM files in dir.
func SelfSignedCert(t testing.TB, dir string) (certPath, keyPath string) {
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
