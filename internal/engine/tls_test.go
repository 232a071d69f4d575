package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// testPKI is a CA, a server certificate for the name "plateau-test.local"
// only (not 127.0.0.1: the client must send that name by SNI) and a client
// certificate, all signed by the CA, written as PEM files.
type testPKI struct {
	dir                          string
	caPool                       *x509.CertPool
	server                       tls.Certificate
	caPEM, clientCert, clientKey string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), caPool: x509.NewCertPool()}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "plateau test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.caPool.AddCert(ca)
	issue := func(serial int64, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	sDER, sKey := issue(2, &x509.Certificate{Subject: pkix.Name{CommonName: "plateau-test.local"},
		DNSNames: []string{"plateau-test.local"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	p.server = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := issue(3, &x509.Certificate{Subject: pkix.Name{CommonName: "load generator"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	write := func(name, typ string, b []byte) string {
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	kb, _ := x509.MarshalECPrivateKey(cKey)
	p.caPEM = write("ca.pem", "CERTIFICATE", caDER)
	p.clientCert = write("client.pem", "CERTIFICATE", cDER)
	p.clientKey = write("client-key.pem", "EC PRIVATE KEY", kb)
	return p
}

// An mTLS server that rejects clients without a certificate signed by the
// CA: a plan with http.tls (CA bundle, client certificate, SNI name) gets
// through over HTTP/1.1 and HTTP/2; the same plan without the client
// certificate fails every request with class tls.
func TestMutualTLSClientCertificateCABundleSNI(t *testing.T) {
	pki := newTestPKI(t)
	var seen, sni atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 1 && r.TLS.PeerCertificates[0].Subject.CommonName == "load generator" {
			seen.Add(1)
		}
		if r.TLS.ServerName == "plateau-test.local" {
			sni.Add(1)
		}
		w.Write([]byte(r.Proto))
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: pki.caPool}
	srv.StartTLS()
	defer srv.Close()

	plan := `name: mtls
target: https://127.0.0.1:1
http:
  tls:
    ca: ` + pki.caPEM + `
    cert: ` + pki.clientCert + `
    key: ` + pki.clientKey + `
    server_name: plateau-test.local
workloads:
  w:
    scenario:
      - request: {name: h1, url: /one, check: {body: HTTP/1.1}}
      - request: {name: h2, url: /two, http_version: "2", check: {body: HTTP/2.0}}
    load: {users: 2, iterations: 3}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	for _, label := range []string{"h1", "h2"} {
		if n, errs := labelAgg(d, label); n != 6 || errs != 0 {
			t.Fatalf("%s: %d samples, %d errors; want 6 and 0", label, n, errs)
		}
	}
	if seen.Load() != 12 || sni.Load() != 12 {
		t.Fatalf("server saw the client certificate %d times and the SNI name %d times; want 12", seen.Load(), sni.Load())
	}

	// Without the client certificate the server refuses the handshake.
	noCert := strings.Replace(strings.Replace(plan, "    cert: "+pki.clientCert+"\n", "", 1), "    key: "+pki.clientKey+"\n", "", 1)
	d, _, _ = runPlan(t, ctx, noCert, srv.URL)
	for _, label := range []string{"h1", "h2"} {
		n, errs := labelAgg(d, label)
		if n != 6 || errs != 6 {
			t.Fatalf("without a certificate, %s: %d samples, %d errors; want 6 and 6", label, n, errs)
		}
		for k, a := range d.Run {
			for ek := range a.Errs {
				if k.Label == label && ek.Class != core.ErrTLS && ek.Class != core.ErrReset {
					t.Fatalf("%s failed as %v (%s); want tls", label, ek.Class, ek.Message)
				}
			}
		}
	}
	if seen.Load() != 12 {
		t.Fatalf("a request without a certificate got through")
	}
}
