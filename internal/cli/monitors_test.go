package cli

import (
	"strings"
	"testing"
	"time"
)

func TestParseMonitorFlags(t *testing.T) {
	got, err := parseMonitorFlags([]string{"host", "process:name=back,match=demo serve back,children=true",
		"prometheus:name=node,url=http://127.0.0.1:9100/metrics,series=node_cpu_seconds_total|node_load1,interval=5s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Kind != "host" || got[0].Name != "host" ||
		got[1].Match != "demo serve back" || !got[1].Children || got[1].Name != "back" ||
		len(got[2].Series) != 2 || got[2].Interval != 5*time.Second {
		t.Errorf("parsed %+v", got)
	}
	// role= says what the target is to the test, as a plan's role: does.
	if r, err := parseMonitorFlags([]string{"host:name=generator-host,role=generator"}); err != nil || len(r) != 1 || r[0].Role != "generator" {
		t.Errorf("role: %+v, %v", r, err)
	}
	for _, c := range []struct{ in, want string }{
		{"proces:name=x", "unknown kind"},
		{"process:name=x", "match"},
		{"process:match", "not key=value"},
		{"process:match=x,colour=red", `unknown key "colour"`},
		{"process:pid=abc", "pid"},
		{"host:name=gen,role=driver", `unknown role "driver"`},
	} {
		if _, err := parseMonitorFlags([]string{c.in}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}
