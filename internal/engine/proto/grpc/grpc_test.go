package grpc_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/grpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/grpc/grpctest"
	"github.com/plateau-perf/plateau/internal/nginxtest"
	"github.com/plateau-perf/plateau/internal/plan/protofile"
)

// method compiles the test service's .proto and returns one of its methods.
func method(t testing.TB, name string) *grpc.Method {
	t.Helper()
	set, err := protofile.Compile([]string{grpctest.Proto()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	md, err := set.Method("plateau.test.Echo/" + name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := grpc.NewMethod(md)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func dial(t *testing.T, addr string, cfg grpc.Config) *grpc.Client {
	t.Helper()
	c, err := grpc.Dial(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return grpc.NewClient(c)
}

func TestUnary(t *testing.T) {
	t.Parallel()
	srv := grpctest.Start(t, grpctest.Options{})
	cl := dial(t, srv.Addr, grpc.Config{})
	say := method(t, "Say")
	var res httpc.Result
	const n = 20
	for i := 0; i < n; i++ {
		o := cl.Do(context.Background(), &grpc.Call{Method: say,
			Message:  []byte(`{"text": "hi", "delay_ms": 5, "tags": ["a", "b"], "inner": {"user_id": "7"}}`),
			Metadata: []string{"x-echo", "e1", "authorization", "Bearer s3cret"}}, &res)
		if o.Code != codes.OK || res.Class != core.ErrNone || res.Err != nil || o.Messages != 1 {
			t.Fatalf("call %d: code %v class %v err %v", i, o.Code, res.Class, res.Err)
		}
		if res.Total < 5*time.Millisecond || res.TTFB != res.Total {
			t.Errorf("total %v ttfb %v: the server waits 5ms", res.Total, res.TTFB)
		}
	}
	if got := srv.Say(codes.OK); got != n {
		t.Errorf("server answered %d calls, want %d", got, n)
	}
	var doc map[string]any
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	// proto field names, unset fields present, int64 as text (protojson).
	if doc["text"] != "hi" || doc["seq"] == nil || doc["inner"].(map[string]any)["user_id"] != "7" || doc["inner"].(map[string]any)["ok"] != false ||
		doc["at"] != "2023-11-14T22:13:20Z" || len(doc["tags"].([]any)) != 2 {
		t.Errorf("body %s", res.Body)
	}
	if res.BodySize != int64(len(res.Body)) || res.BytesSent <= 5 || res.BytesRecv <= 5 {
		t.Errorf("sizes: body %d/%d, sent %d, recv %d", res.BodySize, len(res.Body), res.BytesSent, res.BytesRecv)
	}
	if res.Header("x-echoed") != "e1" || srv.Metadata("authorization") != "Bearer s3cret" {
		t.Errorf("metadata: response x-echoed %q, server saw authorization %q", res.Header("x-echoed"), srv.Metadata("authorization"))
	}
}

func TestServerStreaming(t *testing.T) {
	t.Parallel()
	srv := grpctest.Start(t, grpctest.Options{})
	cl := dial(t, srv.Addr, grpc.Config{})
	var res httpc.Result
	o := cl.Do(context.Background(), &grpc.Call{Method: method(t, "Count"), Message: []byte(`{"n": 5, "interval_ms": 20}`)}, &res)
	if o.Code != codes.OK || o.Messages != 5 || srv.Sent.Load() != 5 || srv.CountCalls.Load() != 1 {
		t.Fatalf("code %v, %d messages (server sent %d in %d calls), err %v", o.Code, o.Messages, srv.Sent.Load(), srv.CountCalls.Load(), res.Err)
	}
	if res.TTFB <= 0 || res.TTFB > res.Total-60*time.Millisecond || res.Total < 80*time.Millisecond {
		t.Errorf("first message after %v, end after %v: four 20ms gaps between them", res.TTFB, res.Total)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(res.Body, &msgs); err != nil || len(msgs) != 5 || msgs[4]["i"] != 5.0 {
		t.Errorf("body %s: %v", res.Body, err)
	}

	// max_body keeps the first whole messages: still JSON.
	cl = dial(t, srv.Addr, grpc.Config{MaxBody: 20})
	o = cl.Do(context.Background(), &grpc.Call{Method: method(t, "Count"), Message: []byte(`{"n": 5}`)}, &res)
	msgs = nil
	if err := json.Unmarshal(res.Body, &msgs); err != nil || len(msgs) != 2 || o.Messages != 5 || res.BodySize != int64(len(`[{"i":1},{"i":2},{"i":3},{"i":4},{"i":5}]`)) {
		t.Errorf("capped body %s (%d of %d bytes, %d messages): %v", res.Body, len(res.Body), res.BodySize, o.Messages, err)
	}
}

func TestStatusCodesAndDeadline(t *testing.T) {
	t.Parallel()
	srv := grpctest.Start(t, grpctest.Options{})
	cl := dial(t, srv.Addr, grpc.Config{})
	say := method(t, "Say")
	var res httpc.Result
	for code, class := range map[codes.Code]core.ErrorClass{
		codes.NotFound: core.ErrGRPCNotFound, codes.Unavailable: core.ErrGRPCUnavailable,
		codes.PermissionDenied: core.ErrGRPCPermissionDenied, codes.Internal: core.ErrGRPCInternal,
	} {
		o := cl.Do(context.Background(), &grpc.Call{Method: say, Message: []byte(`{"code": ` + strconv.Itoa(int(code)) + `}`)}, &res)
		if o.Code != code || res.Class != class || res.Err == nil || res.Err.Error() != "grpc "+core.GRPCCodeName(uint32(code))+": failed as asked" {
			t.Errorf("code %v: got %v class %v err %v", code, o.Code, res.Class, res.Err)
		}
		if srv.Say(code) != 1 {
			t.Errorf("server counted %d calls failed with %v", srv.Say(code), code)
		}
	}
	o := cl.Do(context.Background(), &grpc.Call{Method: say, Message: []byte(`{"delay_ms": 2000}`), Timeout: 50 * time.Millisecond}, &res)
	if o.Code != codes.DeadlineExceeded || res.Class != core.ErrGRPCDeadlineExceeded || res.Total < 50*time.Millisecond || res.Total > time.Second {
		t.Errorf("deadline: code %v class %v after %v", o.Code, res.Class, res.Total)
	}
	// A request that does not fit the input type is not sent.
	before := srv.Say(codes.OK)
	o = cl.Do(context.Background(), &grpc.Call{Method: say, Message: []byte(`{"txet": "x"}`)}, &res)
	if res.Class != core.ErrOther || res.Err == nil || !strings.Contains(res.Err.Error(), "txet") || res.BytesSent != 0 || srv.Say(codes.OK) != before {
		t.Errorf("bad message: code %v class %v err %v sent %d", o.Code, res.Class, res.Err, res.BytesSent)
	}
	// No server: UNAVAILABLE.
	srv.Stop()
	o = cl.Do(context.Background(), &grpc.Call{Method: say, Message: []byte(`{}`)}, &res)
	if o.Code != codes.Unavailable || res.Class != core.ErrGRPCUnavailable {
		t.Errorf("stopped server: code %v class %v err %v", o.Code, res.Class, res.Err)
	}
}

func TestReflection(t *testing.T) {
	t.Parallel()
	srv := grpctest.Start(t, grpctest.Options{Reflection: true})
	cl := dial(t, srv.Addr, grpc.Config{})
	m, err := cl.Conn().Reflect(context.Background(), "plateau.test.Echo/Count")
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != "/plateau.test.Echo/Count" || !m.Streamed || m.In.FullName() != "plateau.test.CountRequest" {
		t.Errorf("method %+v", m)
	}
	var res httpc.Result
	if o := cl.Do(context.Background(), &grpc.Call{Method: m, Message: []byte(`{"n": 3}`)}, &res); o.Messages != 3 || o.Code != codes.OK {
		t.Errorf("call through reflection: %+v %v", o, res.Err)
	}
	for name, want := range map[string]string{
		"plateau.test.Echo/Nope":   "has no method Nope",
		"plateau.test.Nope/Say":    "no service plateau.test.Nope",
		"plateau.test.Echo/Upload": "client streaming",
	} {
		if _, err := cl.Conn().Reflect(context.Background(), name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	plain := grpctest.Start(t, grpctest.Options{})
	cl = dial(t, plain.Addr, grpc.Config{})
	if _, err := cl.Conn().Reflect(context.Background(), "plateau.test.Echo/Say"); err == nil || !strings.Contains(err.Error(), "reflection: grpc UNIMPLEMENTED") {
		t.Errorf("server without reflection: %v", err)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile := nginxtest.SelfSignedCert(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpctest.Start(t, grpctest.Options{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	var res httpc.Result
	cl := dial(t, srv.Addr, grpc.Config{TLS: &tls.Config{RootCAs: pool, ServerName: "localhost"}})
	if o := cl.Do(context.Background(), &grpc.Call{Method: method(t, "Say"), Message: []byte(`{"text": "tls"}`)}, &res); o.Code != codes.OK {
		t.Fatalf("TLS call: %v", res.Err)
	}
	// Plaintext to a TLS server fails, and says so.
	cl = dial(t, srv.Addr, grpc.Config{})
	if o := cl.Do(context.Background(), &grpc.Call{Method: method(t, "Say"), Message: []byte(`{}`)}, &res); o.Code != codes.Unavailable {
		t.Errorf("plaintext to TLS: code %v", o.Code)
	}
}
