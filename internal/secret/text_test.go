package secret

import (
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	in := []string{"plateau", "run", "p.yaml", "--set", "vars.api_key=K3Y-VALUE", "--set=vars.pwd=PWD-VALUE",
		"--set", "http.headers.X-Auth-Token=${env.T}", "--listen-token", "LISTEN-TOK", "--listen-token=LISTEN-TOK2",
		"--set", "target=http://bob:PASS-URL@127.0.0.1:1/?access_token=QTOKEN&page=2", "--set", "users=5", "-o", "out"}
	got := strings.Join(Args(in, IsName), " ")
	for _, s := range []string{"K3Y-VALUE", "PWD-VALUE", "LISTEN-TOK", "PASS-URL", "QTOKEN"} {
		if strings.Contains(got, s) {
			t.Errorf("%s left in %s", s, got)
		}
	}
	for _, s := range []string{"vars.api_key=***", "--set=vars.pwd=***", "X-Auth-Token=${env.T}", "--listen-token ***",
		"--listen-token=***", "bob:***@127.0.0.1", "page=2", "users=5", "-o out"} {
		if !strings.Contains(got, s) {
			t.Errorf("%q not in %s", s, got)
		}
	}
	if in[4] != "vars.api_key=K3Y-VALUE" {
		t.Error("Args modified its input")
	}
}
