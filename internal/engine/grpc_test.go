package engine_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/proto/grpc/grpctest"
	"github.com/plateau-perf/plateau/internal/nginxtest"
)

const grpcPlan = `name: grpc
target: http://127.0.0.1:1
vars: {token: s3cr3t-token-value}
workloads:
  w:
    scenario:
      - grpc:
          name: say
          method: plateau.test.Echo/Say
          proto: %[1]s
          message: {text: "u${__user}", delay_ms: 10, inner: {user_id: "${__iteration}"}}
          metadata: {authorization: "Bearer ${token}", x-echo: "e${__user}"}
          extract: {seq: {json: $.seq}, echoed: {header: x-echoed}}
          check: {regex: '"text":"u[0-9]+"', json_exists: [$.seq]}
      - grpc:
          name: echo seq
          method: plateau.test.Echo/Say
          proto: %[1]s
          message: {text: "${echoed}/${seq}"}
          check: {json_match: {$.text: '^e[0-9]+/[0-9]+$'}}
      - grpc:
          name: count
          method: plateau.test.Echo/Count
          message: {n: 4, interval_ms: 5}
          check: {min_messages: 4, json: {"$[3].i": 4}}
      - grpc:
          name: not found
          method: plateau.test.Echo/Say
          proto: %[1]s
          message: {code: 5}
      - grpc:
          name: accepted not found
          method: plateau.test.Echo/Say
          proto: %[1]s
          message: {code: 5}
          check: {code: [OK, NOT_FOUND]}
      - grpc:
          name: deadline
          method: plateau.test.Echo/Say
          proto: %[1]s
          message: {delay_ms: 2000}
          timeout: 30ms
    load: {users: 3, iterations: 4}
`

// A plan of grpc steps against a real grpc-go server: unary calls from the
// .proto file, a server stream found by reflection, status codes as error
// classes, an accepted code, a deadline; every count agrees with the
// server's own, times are at least the server's, and the secret metadata
// reaches the server but no file of the run.
func TestGRPCPlan(t *testing.T) {
	srv := grpctest.Start(t, grpctest.Options{Reflection: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, out := runPlan(t, ctx, fmt.Sprintf(grpcPlan, grpctest.Proto()), "http://"+srv.Addr)
	const calls = 12 // 3 users × 4 iterations
	for _, c := range []struct {
		label  string
		errors int64
		class  core.ErrorClass
	}{
		{"say", 0, 0}, {"echo seq", 0, 0}, {"count", 0, 0}, {"accepted not found", 0, 0},
		{"not found", calls, core.ErrGRPCNotFound}, {"deadline", calls, core.ErrGRPCDeadlineExceeded},
	} {
		n, errs := labelAgg(d, c.label)
		if n != calls || errs != c.errors || c.errors > 0 && classCount(d, c.label, c.class) != c.errors {
			t.Errorf("%s: %d samples, %d errors (%d of class %v); want %d, %d", c.label, n, errs, classCount(d, c.label, c.class), c.class, calls, c.errors)
		}
	}
	if got := srv.Say(codes.OK); got != 2*calls {
		t.Errorf("server answered %d Say calls OK, want %d", got, 2*calls)
	}
	if got := srv.Say(codes.NotFound); got != 2*calls {
		t.Errorf("server failed %d Say calls with NOT_FOUND, want %d", got, 2*calls)
	}
	if srv.CountCalls.Load() != calls || srv.Sent.Load() != 4*calls {
		t.Errorf("server streamed %d calls, %d messages; want %d, %d", srv.CountCalls.Load(), srv.Sent.Load(), calls, 4*calls)
	}
	// Times: the server waited 10ms per say call; the client's mean
	// includes that and the network.
	for k, a := range d.Run {
		if k.Label == "say" {
			serverMean := time.Duration(srv.SayTime.Load() / (2 * calls)) // say and echo seq
			if mean := time.Duration(a.SumUs/a.Count) * time.Microsecond; mean < 10*time.Millisecond || a.MinUs < 10000 {
				t.Errorf("say: mean %v, min %dµs; the server waits 10ms (its mean handling time %v)", mean, a.MinUs, serverMean)
			}
		}
		if k.Label == "deadline" && (a.MinUs < 30000 || a.MaxUs > 1500000) {
			t.Errorf("deadline: %d–%dµs, want from 30ms and well before the server's 2s", a.MinUs, a.MaxUs)
		}
	}
	// The stream's derived labels: one time to first message per call,
	// one sample per message; neither counts as a request.
	first, _ := labelAgg(d, "count first message")
	msgs, _ := labelAgg(d, "count message")
	if first != calls || msgs != srv.Sent.Load() {
		t.Errorf("count first message: %d samples, count message: %d; want %d and the server's %d", first, msgs, calls, srv.Sent.Load())
	}
	var firstMean, countMean int64
	for k, a := range d.Run {
		switch k.Label {
		case "count first message", "count message":
			if !k.Derived {
				t.Errorf("%s is not marked derived", k.Label)
			}
			if k.Label == "count first message" {
				firstMean = a.SumUs / a.Count
			}
		case "count":
			countMean = a.SumUs / a.Count
		}
	}
	if firstMean <= 0 || firstMean >= countMean {
		t.Errorf("mean time to first message %dµs, to the end %dµs: the server sends 4 messages 5ms apart", firstMean, countMean)
	}
	if d.Total.Count != 6*calls {
		t.Errorf("total %d requests, want %d (derived labels are not requests)", d.Total.Count, 6*calls)
	}
	if got := srv.Metadata("authorization"); got != "Bearer s3cr3t-token-value" {
		t.Errorf("server saw authorization %q", got)
	}
	err := filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if filepath.Base(path) == "plan.yaml" {
			return nil // the test writes the plan as loaded; plateau run writes RedactedSource (tested in plan)
		}
		b, err := os.ReadFile(path)
		if strings.Contains(string(b), "s3cr3t-token-value") {
			t.Errorf("%s holds the secret", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TLS from http.tls (the CA bundle and SNI name) for a grpcs target; a
// server without reflection fails a reflection step with
// grpc_unimplemented; cleartext to a TLS server is grpc_unavailable.
func TestGRPCTLSAndFailures(t *testing.T) {
	certFile, keyFile := nginxtest.SelfSignedCert(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpctest.Start(t, grpctest.Options{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, fmt.Sprintf(`name: grpc-tls
target: https://127.0.0.1:1
http:
  tls: {ca: %s, server_name: localhost}
workloads:
  w:
    scenario:
      - grpc: {name: tls, method: plateau.test.Echo/Say, proto: %s, message: {text: hi}, check: {json: {$.text: hi}}}
      - grpc: {name: no reflection, method: plateau.test.Echo/Say}
      - grpc: {name: cleartext, target: "grpc://%s", method: plateau.test.Echo/Say, proto: %[2]s}
      - grpc: {name: bad sni, method: plateau.test.Echo/Say, proto: %[2]s, tls: {server_name: wrong.example}}
    load: {users: 2, iterations: 2}
`, certFile, grpctest.Proto(), srv.Addr), "https://"+srv.Addr)
	for _, c := range []struct {
		label, msg string
		errors     int64
		class      core.ErrorClass
	}{
		{"tls", "", 0, 0},
		{"no reflection", "reflection: grpc UNIMPLEMENTED: unknown service grpc.reflection.", 4, core.ErrGRPCUnimplemented},
		{"cleartext", "grpc UNAVAILABLE: connection error", 4, core.ErrGRPCUnavailable},
		// The step's own tls: replaces http.tls's server name (the CA stays).
		{"bad sni", "grpc UNAVAILABLE: connection error", 4, core.ErrGRPCUnavailable},
	} {
		n, errs := labelAgg(d, c.label)
		if n != 4 || errs != c.errors || c.errors > 0 && classCount(d, c.label, c.class) != c.errors {
			t.Errorf("%s: %d samples, %d errors (%d of class %v); want 4, %d", c.label, n, errs, classCount(d, c.label, c.class), c.class, c.errors)
		}
		for k, a := range d.Run {
			for ek := range a.Errs {
				if k.Label == c.label && !strings.HasPrefix(ek.Message, c.msg) {
					t.Errorf("%s: message %q, want %q…", c.label, ek.Message, c.msg)
				}
			}
		}
	}
	if srv.Say(codes.OK) != 4 {
		t.Errorf("the server answered %d calls, want 4 (the TLS ones)", srv.Say(codes.OK))
	}
}

// A grpc step in the run-level setup is not measured, and what it
// extracts reaches every user's calls.
func TestGRPCSetup(t *testing.T) {
	srv := grpctest.Start(t, grpctest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, fmt.Sprintf(`name: grpc-setup
target: http://127.0.0.1:1
setup:
  - grpc: {name: setup call, method: plateau.test.Echo/Say, proto: %[1]s, message: {text: from-setup},
           extract: {first: {json: $.text}}}
workloads:
  w:
    scenario:
      - grpc: {name: use, method: plateau.test.Echo/Say, proto: %[1]s, message: {text: "${first}-${__user}"},
               check: {regex: '"text":"from-setup-[0-9]"'}}
    load: {users: 3, iterations: 2}
`, grpctest.Proto()), "http://"+srv.Addr)
	if n, _ := labelAgg(d, "setup call"); n != 0 {
		t.Errorf("the setup call was measured %d times", n)
	}
	if n, errs := labelAgg(d, "use"); n != 6 || errs != 0 {
		t.Errorf("use: %d samples, %d errors; want 6, 0", n, errs)
	}
	if srv.Say(codes.OK) != 7 {
		t.Errorf("the server answered %d calls, want 7 (1 in setup)", srv.Say(codes.OK))
	}
}

// A method reflection does not find fails the call (class other), never
// passes it.
func TestGRPCReflectionNotFound(t *testing.T) {
	srv := grpctest.Start(t, grpctest.Options{Reflection: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, `name: grpc-nf
target: http://127.0.0.1:1
workloads:
  w:
    scenario:
      - grpc: {name: nope, method: plateau.test.Echo/Nope}
      - grpc: {name: no service, method: plateau.test.Nope/Say}
    load: {users: 1, iterations: 2}
`, "http://"+srv.Addr)
	for label, msg := range map[string]string{"nope": "reflection: service plateau.test.Echo has no method Nope",
		"no service": "reflection: the server has no service plateau.test.Nope"} {
		n, errs := labelAgg(d, label)
		if n != 2 || errs != 2 || classCount(d, label, core.ErrOther) != 2 {
			t.Errorf("%s: %d samples, %d errors (%d other); want 2 failed, class other", label, n, errs, classCount(d, label, core.ErrOther))
		}
		for k, a := range d.Run {
			for ek := range a.Errs {
				if k.Label == label && ek.Message != msg {
					t.Errorf("%s: message %q, want %q", label, ek.Message, msg)
				}
			}
		}
	}
}
