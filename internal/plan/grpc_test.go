package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echoProto is the gRPC example's service, also the test service.
var echoProto, _ = filepath.Abs(filepath.Join("..", "..", "examples", "grpc-echo", "echo.proto"))

func grpcPlan(steps string) string {
	return "name: g\ntarget: http://127.0.0.1:9\nworkloads:\n  w:\n    load: {users: 1, iterations: 1}\n    scenario:\n" + steps
}

func TestGRPCStep(t *testing.T) {
	t.Parallel()
	src := grpcPlan(`      - grpc:
          method: plateau.test.Echo/Say
          proto: ` + echoProto + `
          message: {text: "${__user}", delay_ms: 5, inner: {userId: 7}, tags: [a], at_unknown_ok: null}
          metadata: {authorization: "Bearer abcdef123", x-trace: "${__iteration}"}
          timeout: 2s
          extract: {seq: {json: $.seq}}
          check: {code: [OK, not_found], json: {$.text: "1"}}
      - grpc:
          name: count
          target: grpcs://localhost
          method: /plateau.test.Echo/Count
          check: {min_messages: 3}
`)
	_, err := Parse("g.yaml", []byte(src), t.TempDir(), Options{})
	if err == nil || !strings.Contains(err.Error(), `has no field "at_unknown_ok"`) {
		t.Fatalf("unknown field: %v", err)
	}
	p, err := Parse("g.yaml", []byte(strings.Replace(src, ", at_unknown_ok: null", "", 1)), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := p.Workloads[0].Scenario[0].GRPC
	if g.Name != "plateau.test.Echo/Say" || g.Desc == nil || g.Desc.FullName() != "plateau.test.Echo.Say" || g.Timeout.Seconds() != 2 {
		t.Errorf("step %+v", g)
	}
	if g.Message == nil || !strings.Contains(g.Message.Raw, `"text":"${__user}"`) || len(g.Metadata) != 2 || len(g.Checks[0].Code) != 2 {
		t.Errorf("message %+v metadata %+v checks %+v", g.Message, g.Metadata, g.Checks)
	}
	g2 := p.Workloads[0].Scenario[1].GRPC
	if g2.Name != "count" || g2.Desc != nil || g2.Method != "plateau.test.Echo/Count" || g2.Checks[0].MinMessages != 3 {
		t.Errorf("reflection step %+v", g2)
	}
	if got := strings.Join(p.Labels(), ","); got != "plateau.test.Echo/Say,count,count first message,count message" {
		t.Errorf("labels %s", got)
	}
	if got := strings.Join(p.CheckNames(), ","); got != "plateau.test.Echo/Say,count" {
		t.Errorf("check names %s", got)
	}
	s := p.SecretSet()
	if !strings.Contains(strings.Join(s.Literals, ","), "abcdef123") {
		t.Errorf("the authorization metadata is not secret: %v", s.Literals)
	}

	// The plan as written into a run directory: secret metadata, the
	// variables feeding it and secret message members are masked.
	src = grpcPlan(`      - grpc:
          method: a.B/C
          metadata: {authorization: "Bearer ${tok}", x-api-key: k-123456, x-plain: visible}
          message: {password: hunter22, user: bob}
`)
	src = strings.Replace(src, "name: g\n", "name: g\nvars: {tok: t-98765}\nsecrets: [x-api-key]\n", 1)
	p, err = Parse("g.yaml", []byte(src), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	red := string(p.RedactedSource())
	for _, secret := range []string{"t-98765", "k-123456", "hunter22"} {
		if strings.Contains(red, secret) {
			t.Errorf("redacted plan holds %q:\n%s", secret, red)
		}
	}
	if !strings.Contains(red, "visible") || !strings.Contains(red, "bob") {
		t.Errorf("redacted too much:\n%s", red)
	}
}

func TestGRPCTarget(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:50051":      "127.0.0.1:50051 false",
		"grpc://127.0.0.1:5":   "127.0.0.1:5 false",
		"http://localhost":     "localhost:80 false",
		"grpcs://localhost":    "localhost:443 true",
		"https://[::1]:8443/":  "[::1]:8443 true",
		"localhost":            "error",
		"ftp://localhost:21":   "error",
		"grpc://localhost:1/a": "error",
		"grpc://:5":            "error",
		":5":                   "error",
	} {
		addr, tls, err := ParseGRPCTarget(in)
		got := addr + " " + map[bool]string{true: "true", false: "false"}[tls]
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestGRPCBad: every problem of grpc steps, each at its place; a .proto
// syntax error at the .proto file's line and column.
func TestGRPCBad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.proto")
	if err := os.WriteFile(bad, []byte("syntax = \"proto3\";\npackage bad;\nmessage A {\n  string name = 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := grpcPlan(`      - grpc:
          method: Say
      - grpc:
          method: plateau.test.Echo/Shout
          proto: ` + echoProto + `
      - grpc:
          method: plateau.test.Echo/Upload
          proto: ` + echoProto + `
      - grpc:
          method: plateau.test.Echo/Say
          proto: ` + echoProto + `
          target: ftp://x:1
          message: {txt: hi, inner: {user: 1}}
          metadata: {Authorization: x}
          extract: {c: {css: a}}
          check: [{status: 200}, {code: [OKAY]}]
      - grpc:
          method: bad.S/Get
          proto: bad.proto
      - grpc:
          method: bad.S/Get
          proto: missing.proto
      - grpc:
          proto: ` + echoProto + `
      - request:
          url: /x
          check: {code: [OK]}
`)
	_, err := Parse("g.yaml", []byte(src), dir, Options{})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v", err)
	}
	text := err.Error()
	for _, want := range []string{
		`g.yaml:8:19: grpc: method "Say" is not package.Service/Method`,
		`g.yaml:10:19: grpc: service plateau.test.Echo has no method Shout (methods: Say, Count, Upload)`,
		`g.yaml:13:19: grpc: plateau.test.Echo/Upload is client streaming`,
		`g.yaml:18:19: grpc target "ftp://x:1": scheme ftp is not grpc, grpcs, http or https`,
		`g.yaml:19:21: grpc message: plateau.test.SayRequest has no field "txt" (did you mean "text"?)`,
		`g.yaml:19:38: grpc message: plateau.test.Inner has no field "user"`,
		`g.yaml:20:21: grpc metadata: bad key "Authorization"`,
		`g.yaml:21:20: extract c: a grpc step extracts with json, regex, left+right or header`,
		`g.yaml:22:19: check: status applies to HTTP`,
		`g.yaml:22:34: check: code "OKAY" is not a gRPC status code`,
		bad + `:5:1: syntax error: expecting ';'`,
		`g.yaml:25:18: grpc proto: 1 problem(s) in the .proto files`,
		`g.yaml:28:18: grpc proto: stat`,
		`g.yaml:30:11: grpc: missing method`,
		`g.yaml:33:18: check: code, min_messages and max_messages apply to grpc steps`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing error %q", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
